//! File reading and writing that never loses data: size-limited reads with clear
//! errors, and atomic writes (temp file in the same directory, then rename), so an
//! interrupted write leaves the old file or the new one, never a partial one.

use crate::{canonical, Error, Result};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::Path;

/// Default for reads that have no harness.toml at hand.
pub const DEFAULT_MAX_BYTES: u64 = 16 * 1024 * 1024;

pub fn read_bytes(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::shape(path.display(), "$", "a file, found a directory"));
    }
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    read_limited(file, &path.display().to_string(), max_bytes)
}

/// Read at most `max_bytes` (a device or a growing file may lie about its size).
pub fn read_limited(source: impl std::io::Read, name: &str, max_bytes: u64) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    source.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| Error::io(name, e))?;
    if bytes.len() as u64 > max_bytes {
        return Err(Error::refused(name, format!("more than the limit of {max_bytes} bytes")));
    }
    Ok(bytes)
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
    // tempfile creates owner-only files; a run's files are read by other accounts
    // (the agent's, CI's), so keep the replaced file's mode, or the usual 0644.
    let permissions = std::fs::metadata(path).map(|m| m.permissions()).unwrap_or_else(|_| default_permissions());
    temp.as_file().set_permissions(permissions).map_err(|e| Error::io(temp.path(), e))?;
    temp.as_file().sync_all().map_err(|e| Error::io(temp.path(), e))?;
    before_rename().map_err(|e| Error::io(path, e))?;
    // Dropping `temp` on any error path removes the temp file.
    let persisted = match replace {
        Replace::Allowed => temp.persist(path).map(drop).map_err(|e| Error::io(path, e.error)),
        Replace::Refused => temp.persist_noclobber(path).map(drop).map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                Error::refused(path.display(), "already exists and is never overwritten")
            } else {
                Error::io(path, e.error)
            }
        }),
    };
    persisted?;
    // The rename is durable only once the directory entry is on disk.
    #[cfg(unix)]
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| Error::io(dir, e))?;
    Ok(())
}

#[cfg(unix)]
fn default_permissions() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::Permissions::from_mode(0o644)
}

#[cfg(not(unix))]
fn default_permissions() -> std::fs::Permissions {
    std::fs::metadata(".").map(|m| m.permissions()).expect("the current directory has metadata")
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

    #[cfg(unix)]
    #[test]
    fn written_files_are_readable_by_others_and_keep_a_replaced_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("agent-request.json");
        write_new(&file, b"{}").unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o644);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&file, b"[]").unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o640);
    }

    #[test]
    fn reads_stop_at_the_limit_whatever_the_file_claims() {
        let err = read_limited(std::io::repeat(b'x'), "/dev/zero", 1024).unwrap_err().to_string();
        assert!(err.contains("more than the limit of 1024 bytes"), "{err}");
        assert_eq!(read_limited(&b"12345"[..], "five", 5).unwrap(), b"12345");
    }

    #[test]
    fn missing_file_is_a_clear_error() {
        let err = read_json(Path::new("/nonexistent/packet.json"), DEFAULT_MAX_BYTES).unwrap_err().to_string();
        assert!(err.starts_with("/nonexistent/packet.json: "), "{err}");
    }
}
