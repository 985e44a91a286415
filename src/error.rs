//! The one error type of the crate. Check *failures* are not errors: they are
//! [`crate::report::Finding`]s. An `Error` means the input could not be read or
//! the command could not run at all (exit status 2), except [`Error::Failed`]: a
//! command that stops because a check failed (exit status 1).

use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
pub enum Error {
    /// A file could not be read, written or renamed.
    Io { path: PathBuf, source: std::io::Error },
    /// Bytes that are not strict I-JSON (see `canonical`).
    Json { file: String, line: usize, column: usize, message: String },
    /// Well-formed JSON with the wrong shape for what the command expected.
    Shape { file: String, path: String, expected: String },
    /// harness.toml (or another settings file) is malformed or names an unknown setting.
    Config { file: String, message: String },
    /// A refusal that protects data: an existing receipt, a path escaping a run directory.
    Refused { file: String, reason: String },
    /// Input refused with every problem listed (e.g. a compile request).
    Rejected { file: String, findings: Vec<crate::Finding> },
    /// A check failed on input that was read (exit status 1, not 2): a packet
    /// `prepare` refuses, a run `complete` or `attest` refuses, a request `bless`
    /// cannot compile.
    Failed { file: String, findings: Vec<crate::Finding> },
    /// Bad command-line usage.
    Usage(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }

    pub(crate) fn shape(file: impl fmt::Display, path: impl Into<String>, expected: impl Into<String>) -> Self {
        Error::Shape { file: file.to_string(), path: path.into(), expected: expected.into() }
    }

    pub(crate) fn refused(file: impl fmt::Display, reason: impl Into<String>) -> Self {
        Error::Refused { file: file.to_string(), reason: reason.into() }
    }

    /// The exit status of a command that ends with this error: 1 when a check
    /// failed, 2 for bad usage or unreadable input.
    pub fn exit_status(&self) -> u8 {
        match self {
            Error::Failed { .. } => 1,
            _ => 2,
        }
    }

    /// A refusal with findings, as a failed check (exit 1); other errors unchanged.
    pub(crate) fn as_failed_check(self) -> Self {
        match self {
            Error::Rejected { file, findings } => Error::Failed { file, findings },
            other => other,
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
            Error::Refused { file, reason } => write!(f, "{file}: refused: {reason}"),
            Error::Rejected { file, findings } | Error::Failed { file, findings } => {
                write!(f, "{file}: refused with {} problem(s):", findings.len())?;
                findings.iter().try_for_each(|finding| write!(f, "\n  {finding}"))
            }
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
