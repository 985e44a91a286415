//! Golden files are (re)written here and nowhere else, through one guarded entry,
//! [`write_golden`]: never under CI (golden files change only by a deliberate local
//! command, and the change is then reviewed), never for a negative case (its
//! hand-broken packet is the point), compiled before anything is written (a
//! refused request leaves its golden files alone), and a file whose bytes would
//! not change is not rewritten.
//!
//! Two callers ask: `packetproof bless [FILTER]` ([`bless`]) and the conformance
//! runner under `PACKETPROOF_BLESS=1` ([`bless_from_test`]).

use crate::corpus::{self, Case};
use crate::env::Env;
use crate::{canonical, fsutil, provider, Config, Error, Result};
use std::path::Path;

/// Who asks for golden files to be written; the refusals say it in their terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requester {
    /// `packetproof bless`.
    Command,
    /// `PACKETPROOF_BLESS=1 cargo test`.
    Test,
    /// `packetproof init`: the first golden files of a new suite's examples. Allowed
    /// under CI: there is no reviewed golden file yet that a write could change.
    Init,
}

/// Bless the cases whose name contains `filter`; returns their names. Refused under CI.
pub fn bless(config: &Config, filter: Option<&str>) -> Result<Vec<String>> {
    refuse_under_ci("bless", Requester::Command)?;
    let matching: Vec<Case> =
        corpus::cases(config)?.into_iter().filter(|c| filter.is_none_or(|f| c.name.contains(f))).collect();
    if matching.is_empty() {
        return Err(Error::Usage(format!(
            "no fixture under {} matches {:?}",
            config.paths.fixtures.display(),
            filter.unwrap_or("")
        )));
    }
    // A case with its own (hand-broken) packet has nothing to bless.
    let (selected, negative): (Vec<Case>, Vec<Case>) = matching.into_iter().partition(|c| c.own_packet().is_none());
    if selected.is_empty() {
        let names: Vec<&str> = negative.iter().map(|c| c.name.as_str()).collect();
        return Err(Error::refused(
            names.join(", "),
            "carries its own runtime-packet.json (a negative case); such cases are never blessed",
        ));
    }
    for case in &selected {
        write_golden(config, case, Requester::Command)?;
    }
    Ok(selected.into_iter().map(|c| c.name).collect())
}

/// `PACKETPROOF_BLESS=1 cargo test [FILTER]` asks the conformance runner to
/// re-bless the cases whose golden packet no longer regenerates.
pub fn requested_by_env() -> Result<bool> {
    Ok(Env::current()?.bless)
}

/// Bless one case from a test; under CI this refuses and says so.
pub fn bless_from_test(config: &Config, case: &Case) -> Result<()> {
    write_golden(config, case, Requester::Test).map(|_| ())
}

/// The one way golden files are written (see the module docs). Returns whether
/// any file changed.
pub fn write_golden(config: &Config, case: &Case, requester: Requester) -> Result<bool> {
    refuse_under_ci(&case.name, requester)?;
    if case.own_packet().is_some() {
        return Err(Error::refused(
            &case.name,
            "carries its own runtime-packet.json (a negative case); it is never blessed",
        ));
    }
    let packet = corpus::produce(case, config)?;
    let agent_request = provider::agent_request(packet.as_object().expect("a compiled packet is an object"));
    std::fs::create_dir_all(&case.golden_dir).map_err(|e| Error::io(&case.golden_dir, e))?;
    let packet_changed = write_if_changed(&case.golden_packet(), canonical::to_pretty(&packet).as_bytes())?;
    let view_changed = write_if_changed(&case.golden_agent_request(), canonical::to_pretty(&agent_request).as_bytes())?;
    Ok(packet_changed || view_changed)
}

fn refuse_under_ci(origin: &str, requester: Requester) -> Result<()> {
    if !Env::current()?.ci {
        return Ok(());
    }
    Err(Error::refused(
        origin,
        match requester {
            Requester::Command => "CI is set: golden files are never written under CI; bless locally and commit",
            Requester::Test => "PACKETPROOF_BLESS is set but so is CI: golden files are never written under CI",
            Requester::Init => return Ok(()),
        },
    ))
}

/// Identical bytes are left alone: the file keeps its timestamp and no watcher fires.
fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool> {
    if crate::fsutil::read_bytes(path, crate::fsutil::DEFAULT_MAX_BYTES).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    fsutil::write_atomic(path, bytes)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An atomic write replaces the file (a new inode); an untouched file keeps its own.
    #[cfg(unix)]
    #[test]
    fn identical_bytes_are_not_rewritten() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("golden.json");
        let inode = |p: &Path| std::fs::metadata(p).unwrap().ino();
        assert!(write_if_changed(&path, b"{}\n").unwrap());
        let first = inode(&path);
        assert!(!write_if_changed(&path, b"{}\n").unwrap(), "identical bytes were rewritten");
        assert_eq!(inode(&path), first);
        assert!(write_if_changed(&path, b"[]\n").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"[]\n");
    }
}
