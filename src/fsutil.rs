//! File reading and writing that never loses data: size-limited reads with clear
//! errors, and atomic writes (temp file in the same directory, then rename), so an
//! interrupted write leaves the old file or the new one, never a partial one.

use crate::{canonical, Error, Result};
use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// Default for reads that have no harness.toml at hand.
pub const DEFAULT_MAX_BYTES: u64 = 16 * 1024 * 1024;

pub fn read_bytes(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::shape(path.display(), "$", "a file, found a directory"));
    }
    if meta.len() > max_bytes {
        return Err(Error::refused(path.display(), format!("{} bytes is over the limit of {max_bytes}", meta.len())));
    }
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

/// Read and strictly parse a JSON file; errors name the file and line:column.
pub fn read_json(path: &Path, max_bytes: u64) -> Result<Value> {
    let bytes = read_bytes(path, max_bytes)?;
    canonical::parse(&bytes).map_err(|e| e.in_file(path.display()))
}

/// Replace `path` atomically with `bytes`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, bytes, Replace::Allowed, || Ok(()))
}

/// Create `path` atomically with `bytes`; refuse if it exists (receipts are never overwritten).
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, bytes, Replace::Refused, || Ok(()))
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replace {
    Allowed,
    Refused,
}

/// The one write path. `before_rename` runs after the bytes are flushed and
/// before the rename; tests use it to simulate a crash at the worst moment.
pub(crate) fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    replace: Replace,
    before_rename: impl FnOnce() -> std::io::Result<()>,
) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(".packetproof-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io(dir, e))?;
    temp.write_all(bytes).map_err(|e| Error::io(temp.path(), e))?;
    temp.as_file().sync_all().map_err(|e| Error::io(temp.path(), e))?;
    before_rename().map_err(|e| Error::io(path, e))?;
    // Dropping `temp` on any error path removes the temp file.
    match replace {
        Replace::Allowed => temp.persist(path).map(drop).map_err(|e| Error::io(path, e.error)),
        Replace::Refused => temp.persist_noclobber(path).map(drop).map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                Error::refused(path.display(), "already exists and is never overwritten")
            } else {
                Error::io(path, e.error)
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn interrupted_write_keeps_the_old_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("evaluation.json");
        write_atomic(&file, b"old").unwrap();
        let crash = || Err(std::io::Error::other("simulated kill between write and rename"));
        let err = write_atomic_with(&file, b"new and longer", Replace::Allowed, crash).unwrap_err();
        assert!(err.to_string().contains("simulated kill"), "{err}");
        assert_eq!(std::fs::read(&file).unwrap(), b"old");
        assert!(leftovers(dir.path()).is_empty(), "temp file left behind");
        write_atomic(&file, b"new").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
    }

    #[test]
    fn interrupted_first_write_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("completion.json");
        let crash = || Err(std::io::Error::other("killed"));
        assert!(write_atomic_with(&file, b"{}", Replace::Refused, crash).is_err());
        assert!(!file.exists());
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn write_new_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("completion.json");
        write_new(&file, b"first").unwrap();
        let err = write_new(&file, b"second").unwrap_err().to_string();
        assert!(err.contains("never overwritten"), "{err}");
        assert_eq!(std::fs::read(&file).unwrap(), b"first");
    }

    #[test]
    fn missing_file_is_a_clear_error() {
        let err = read_json(Path::new("/nonexistent/packet.json"), DEFAULT_MAX_BYTES).unwrap_err().to_string();
        assert!(err.starts_with("/nonexistent/packet.json: "), "{err}");
    }
}
