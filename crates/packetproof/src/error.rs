//! The one error type of the crate. Check *failures* are not errors: they are
//! [`crate::report::Finding`]s. An `Error` means the command could not run at all
//! (exit status 2), except [`Error::Failed`]: a command that stops because a check
//! failed (exit status 1). Each kind of failure has its own variant, so that what
//! went wrong (bad usage, unreadable input, git, the exporter, a bug) is a type,
//! not a prefix in a string; [`Error::exit_status`] decides the status of each.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
pub enum Error {
    /// A file could not be read, written or renamed.
    Io { path: PathBuf, source: std::io::Error },
    /// Bytes that are not strict I-JSON (see `canonical`).
    Json { file: String, line: usize, column: usize, message: String },
    /// Well-formed JSON with the wrong shape for what the command expected.
    Shape { file: String, path: crate::jsonpath::JsonPath, expected: String },
    /// harness.toml (or another settings file, such as expect.toml) is missing where
    /// a command needs it, malformed, or names an unknown setting or check.
    Config { file: String, message: String },
    /// An environment variable packetproof reads (`crate::env`) has a value it
    /// refuses; `message` follows the variable's name ("is set but empty").
    Env { variable: String, message: String },
    /// Input that was read has nothing to check: a gate that found nothing must not pass.
    NothingFound { what: String, place: String },
    /// A refusal that protects data: an existing receipt, a path escaping a run directory.
    Refused { file: String, reason: String },
    /// A rule failed on input that was read (exit status 1, not 2), every problem
    /// listed: a compile request `export` refuses (as the reference's validator exits
    /// 1), a packet `prepare`, `wire` or `trace` refuses, a run `complete` or `attest`
    /// refuses, a request `bless` cannot compile.
    Failed { file: String, findings: Vec<crate::Finding> },
    /// A git command packetproof ran (`crate::git`) exited unsuccessfully.
    Git { command: String, dir: PathBuf, message: String },
    /// The suite's `[exporter]` made no packet for `request`: it could not start,
    /// timed out, failed or printed something else, or this command does not run it.
    Exporter { request: String, command: String, reason: String },
    /// The suite's `[evaluator]` gave no evaluation of the answer in `run`: it could
    /// not start, timed out, failed, printed no evaluation document, or is not run here.
    Evaluator { run: String, command: String, reason: String },
    /// A state the code rules out was reached: a packetproof bug, not the user's.
    Internal(String),
    /// Bad command-line usage: a flag refused, an argument naming nothing, a command
    /// run where it cannot work (e.g. `bless --review` off a terminal).
    Usage(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

// Here rather than in `canonical`, which would otherwise depend on this module
// while this one depends on `report` and `report` on `canonical`: a cycle.
impl crate::canonical::ParseError {
    pub fn in_file(self, file: impl fmt::Display) -> Error {
        Error::Json { file: file.to_string(), line: self.line, column: self.column, message: self.message }
    }
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }

    /// A directory walk that failed at an entry (or at `root`), its I/O error kept
    /// as the source (`walkdir` hands back the underlying `io::Error`).
    pub(crate) fn walk(error: walkdir::Error, root: &std::path::Path) -> Self {
        let path = error.path().unwrap_or(root).to_path_buf();
        Error::Io { path, source: error.into() }
    }

    pub fn shape(file: impl fmt::Display, path: crate::jsonpath::JsonPath, expected: impl Into<String>) -> Self {
        Error::Shape { file: file.to_string(), path, expected: expected.into() }
    }

    pub fn refused(file: impl fmt::Display, reason: impl Into<String>) -> Self {
        Error::Refused { file: file.to_string(), reason: reason.into() }
    }

    /// The exit status of a command that ends with this error: 1 when a check
    /// failed; 2 when the command could not run: bad usage (`Usage`, `Env`),
    /// unreadable, invalid or empty input (`Io`, `Json`, `Shape`, `Config`,
    /// `NothingFound`), a refusal that protects data (`Refused`), a
    /// program it drives failing (`Git`, `Exporter`), or a packetproof bug
    /// (`Internal`). Listed one by one so that a new kind must choose.
    pub fn exit_status(&self) -> u8 {
        match self {
            Error::Failed { .. } => crate::report::FAILED,
            Error::Usage(_)
            | Error::Env { .. }
            | Error::Io { .. }
            | Error::Json { .. }
            | Error::Shape { .. }
            | Error::Config { .. }
            | Error::NothingFound { .. }
            | Error::Refused { .. }
            | Error::Git { .. }
            | Error::Exporter { .. }
            | Error::Evaluator { .. }
            | Error::Internal(_) => crate::report::COULD_NOT_RUN,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {}", path.display(), source),
            Error::Json { file, line, column, message } => {
                write!(f, "{file}:{line}:{column}: invalid JSON: {message}")
            }
            Error::Shape { file, path, expected } => write!(f, "{file}: at {path}: expected {expected}"),
            Error::Config { file, message } => write!(f, "{file}: {message}"),
            Error::Env { variable, message } => write!(f, "environment variable {variable} {message}"),
            Error::NothingFound { what, place } => write!(f, "no {what} found in {place}"),
            Error::Refused { file, reason } => write!(f, "{file}: refused: {reason}"),
            Error::Failed { file, findings } => {
                write!(f, "{file}: refused with {} problem(s):", findings.len())?;
                findings.iter().try_for_each(|finding| write!(f, "\n  {finding}"))
            }
            Error::Git { command, dir, message } => {
                write!(f, "git {command} failed in {}: {message}", dir.display())
            }
            Error::Exporter { request, command, reason } => write!(f, "{request}: exporter {command} {reason}"),
            Error::Evaluator { run, command, reason } => write!(f, "{run}: evaluator {command} {reason}"),
            Error::Internal(message) => write!(f, "internal error (a packetproof bug): {message}"),
            Error::Usage(message) => write!(f, "usage: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn text(error: Error) -> String {
        error.to_string()
    }

    #[test]
    fn only_a_failed_check_exits_1() {
        let io = || std::io::Error::other("x");
        let failed = Error::Failed { file: "f".into(), findings: Vec::new() };
        assert_eq!(failed.exit_status(), 1);
        let could_not_run = [
            Error::io("f", io()),
            Error::Json { file: "f".into(), line: 1, column: 1, message: "m".into() },
            Error::shape("f", crate::jsonpath::JsonPath::root(), "e"),
            Error::Config { file: "f".into(), message: "m".into() },
            Error::Env { variable: "V".into(), message: "m".into() },
            Error::NothingFound { what: "w".into(), place: "p".into() },
            Error::refused("f", "r"),
            Error::Git { command: "c".into(), dir: "d".into(), message: "m".into() },
            Error::Exporter { request: "r".into(), command: "c".into(), reason: "r".into() },
            Error::Evaluator { run: "r".into(), command: "c".into(), reason: "r".into() },
            Error::Internal("m".into()),
            Error::Usage("m".into()),
        ];
        for error in could_not_run {
            assert_eq!(error.exit_status(), 2, "{error:?}");
        }
    }

    #[test]
    fn only_usage_says_usage() {
        let git = Error::Git { command: "diff --name-only".into(), dir: "/repo".into(), message: "fatal: bad".into() };
        assert_eq!(text(git), "git diff --name-only failed in /repo: fatal: bad");
        let exporter = Error::Exporter {
            request: "r.json".into(),
            command: r#"["./x"]"#.into(),
            reason: "failed (exit 1)".into(),
        };
        assert_eq!(text(exporter), r#"r.json: exporter ["./x"] failed (exit 1)"#);
        let env = Error::Env { variable: "PACKETPROOF_ROOT".into(), message: "is set but empty".into() };
        assert_eq!(text(env), "environment variable PACKETPROOF_ROOT is set but empty");
        let nothing = Error::NothingFound { what: "fixture".into(), place: "fixtures".into() };
        assert_eq!(text(nothing), "no fixture found in fixtures");
        assert_eq!(text(Error::Internal("state".into())), "internal error (a packetproof bug): state");
        assert_eq!(text(Error::Usage("--x needs --y".into())), "usage: --x needs --y");
    }

    #[test]
    fn a_failed_walk_keeps_its_io_error() {
        let temp = tempfile::tempdir().unwrap();
        let absent = temp.path().join("absent");
        let walked = walkdir::WalkDir::new(&absent).into_iter().next().unwrap().unwrap_err();
        let error = Error::walk(walked, Path::new("fallback"));
        let Error::Io { path, source } = &error else { panic!("{error:?}") };
        assert_eq!((path.as_path(), source.kind()), (absent.as_path(), std::io::ErrorKind::NotFound));
        assert!(std::error::Error::source(&error).is_some());
    }
}
