//! Every environment variable packetproof reads, parsed once and strictly: a value
//! that means nothing is an error naming the variable, never a silent guess.
//!
//! - `CI`: the usual convention (as in insta): unset, empty, `0` and `false` mean
//!   "not under CI"; any other value means CI. Under CI golden files are never written.
//! - `PACKETPROOF_BLESS`: `1` or `true` asks `cargo test` to re-bless stale golden
//!   files; unset, empty, `0` or `false` do not; anything else is an error.
//! - `PACKETPROOF_ROOT`: the project directory (the one holding harness.toml);
//!   when unset it is searched upwards from the current directory. Empty is an error.
//! - `PACKETPROOF_PARENT_PID`: set by the npm package's shim to its own process id: the
//!   binary stops, as on SIGTERM, when that process dies (Linux). Not a positive
//!   integer: an error.

use crate::{Error, Result};
use std::ffi::OsString;
use std::path::PathBuf;

pub(crate) const CI: &str = "CI";
pub(crate) const BLESS: &str = "PACKETPROOF_BLESS";
pub(crate) const ROOT: &str = "PACKETPROOF_ROOT";
pub(crate) const PARENT: &str = "PACKETPROOF_PARENT_PID";

/// Every environment variable a packetproof command reads, with what it means: the one
/// list `packetproof --help` prints, which the README's Environment section is checked
/// against. The colour variables are read by the terminal writer (anstream), not here.
pub const VARIABLES: &[(&str, &str)] = &[
    (ROOT, "the project directory (holding harness.toml)"),
    (CI, "set (not empty, 0 or false): golden files are never written"),
    (BLESS, "1 or true: `cargo test` re-blesses stale golden files"),
    (PARENT, "set by the npm package's shim: stop (as on SIGTERM) when that process dies (Linux)"),
    ("NO_COLOR", "no colours, even on a terminal"),
    ("CLICOLOR_FORCE", "colours even when the output is not a terminal"),
];

/// The environment as packetproof understands it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Env {
    pub ci: bool,
    pub(crate) bless: bool,
    pub(crate) root: Option<PathBuf>,
    /// The process whose death stops this one (`PACKETPROOF_PARENT_PID`).
    pub parent: Option<u32>,
}

impl Env {
    /// The process environment. Read where a decision is made (the command, the
    /// test runner) and passed down, never memoised behind the callers' backs.
    pub fn current() -> Result<Env> {
        Env::parse(|name| std::env::var_os(name))
    }

    /// The environment `lookup` describes.
    pub(crate) fn parse(lookup: impl Fn(&str) -> Option<OsString>) -> Result<Env> {
        let text = |name: &str| -> Result<Option<String>> {
            lookup(name)
                .map(|v| {
                    v.into_string()
                        .map_err(|_| Error::Env { variable: name.into(), message: "is not valid UTF-8".into() })
                })
                .transpose()
        };
        let ci = text(CI)?.is_some_and(|v| !is_off(&v));
        let bless = match text(BLESS)? {
            None => false,
            Some(v) if is_off(&v) => false,
            Some(v) if matches!(v.trim(), "1" | "true") => true,
            Some(v) => {
                let message = format!("is {v:?}; expected 1 or true (bless), or 0, false or empty");
                return Err(Error::Env { variable: BLESS.into(), message });
            }
        };
        let root = match lookup(ROOT) {
            Some(v) if v.is_empty() => {
                return Err(Error::Env { variable: ROOT.into(), message: "is set but empty".into() })
            }
            other => other.map(PathBuf::from),
        };
        let parent = match text(PARENT)? {
            None => None,
            Some(v) => match v.trim().parse::<u32>() {
                Ok(pid) if pid > 0 => Some(pid),
                _ => {
                    let message = format!("is {v:?}; expected a process id (a positive integer)");
                    return Err(Error::Env { variable: PARENT.into(), message });
                }
            },
        };
        Ok(Env { ci, bless, root, parent })
    }
}

/// Empty, `0` and `false` switch a flag off.
fn is_off(value: &str) -> bool {
    matches!(value.trim(), "" | "0" | "false")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Result<Env> {
        Env::parse(|name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v)))
    }

    #[test]
    fn ci_follows_the_insta_convention() {
        for off in ["", "0", "false", " false "] {
            assert!(!env(&[(CI, off)]).unwrap().ci, "{off:?}");
        }
        for on in ["1", "true", "github"] {
            assert!(env(&[(CI, on)]).unwrap().ci, "{on:?}");
        }
        assert!(!env(&[]).unwrap().ci);
    }

    #[test]
    fn the_parent_is_a_process_id() {
        assert_eq!(env(&[(PARENT, "4242")]).unwrap().parent, Some(4242));
        assert_eq!(env(&[]).unwrap().parent, None);
        for bad in ["", "0", "-1", "node"] {
            assert!(env(&[(PARENT, bad)]).unwrap_err().to_string().contains("PACKETPROOF_PARENT_PID"), "{bad:?}");
        }
    }

    #[test]
    fn bless_is_strict() {
        assert!(env(&[(BLESS, "1")]).unwrap().bless && env(&[(BLESS, "true")]).unwrap().bless);
        for off in ["", "0", "false"] {
            assert!(!env(&[(BLESS, off)]).unwrap().bless, "{off:?}");
        }
        let error = env(&[(BLESS, "no")]).unwrap_err().to_string();
        assert_eq!(
            error,
            "environment variable PACKETPROOF_BLESS is \"no\"; expected 1 or true (bless), or 0, false or empty"
        );
    }

    #[test]
    fn an_empty_root_is_an_error() {
        let error = env(&[(ROOT, "")]).unwrap_err();
        assert!(matches!(error, Error::Env { .. }), "{error:?}");
        assert_eq!(error.to_string(), "environment variable PACKETPROOF_ROOT is set but empty");
        assert_eq!(env(&[(ROOT, "/p")]).unwrap().root, Some(PathBuf::from("/p")));
    }
}
