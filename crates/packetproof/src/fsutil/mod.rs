//! File reading and writing that never loses data and never hangs:
//! - reads are size-limited and refuse anything but a regular file, checked on the
//!   opened descriptor (opened non-blocking, so a FIFO or a device is named and
//!   refused instead of waited on);
//! - writes go through `Dir`: the directory is opened once and the file is
//!   created relative to it (temp file, then rename), refusing symlinks and
//!   anything that is not a regular file, so an interrupted write leaves the old
//!   file or the new one, and a check cannot be raced by a path swap;
//! - `Lock`: an OS lock on a directory, released by the kernel on crash;
//! - `Scratch`: a temporary folder whose writes skip fsync (it is thrown away).

mod dir;
mod lock;
pub(crate) mod scratch;
#[cfg(unix)]
mod signals;

pub(crate) use dir::{is_temp_name, Dir, Replace};
pub(crate) use lock::Lock;
pub(crate) use scratch::Scratch;
#[cfg(unix)]
pub(crate) use signals::Held;

use crate::{canonical, Error, Result};
use serde_json::Value;
use std::io::Read;
use std::path::Path;

/// Default for reads that have no harness.toml at hand.
pub const DEFAULT_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The bytes of the regular file at `path` (symlinks followed), at most `max_bytes`.
/// FIFOs, sockets, devices and directories are refused without blocking.
pub fn read_bytes(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let file = open_regular(path)?;
    // Sized from the file's length (plus one byte to see the end), so it is read into
    // one buffer instead of one that doubles and copies as it fills.
    let length = file.metadata().map_or(0, |meta| meta.len());
    read_rest(Vec::new(), length, file, &path.display().to_string(), max_bytes)
}

/// The rest of a file opened already, read through `reader` after the `read` bytes taken
/// from it (a file is read through the descriptor that was checked, never opened again by
/// its path, which could be swapped meanwhile), at most `max_bytes` in all: sized from
/// the file's `length` (plus one byte to see the end), so it is read into one buffer.
pub(crate) fn read_rest(
    read: Vec<u8>,
    length: u64,
    reader: impl std::io::Read,
    name: &str,
    max_bytes: u64,
) -> Result<Vec<u8>> {
    let mut bytes = read;
    bytes.reserve_exact((length.min(max_bytes).saturating_add(1) as usize).saturating_sub(bytes.len()));
    read_into(bytes, reader, name, max_bytes)
}

/// [`read_bytes`], or `None` when nothing is at `path`.
pub(crate) fn read_optional(path: &Path, max_bytes: u64) -> Result<Option<Vec<u8>>> {
    match read_bytes(path, max_bytes) {
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
        other => other.map(Some),
    }
}

/// A UTF-8 text file, bounded like every read.
pub(crate) fn read_to_string(path: &Path, max_bytes: u64) -> Result<String> {
    let bytes = read_bytes(path, max_bytes)?;
    String::from_utf8(bytes).map_err(|e| {
        Error::refused(path.display(), format!("not UTF-8 (invalid byte at offset {})", e.utf8_error().valid_up_to()))
    })
}

/// Open `path` for reading without blocking and check, on the opened descriptor
/// (not on the path, which could be swapped meanwhile), that it is a regular file.
pub(crate) fn open_regular(path: &Path) -> Result<std::fs::File> {
    let file = open_nonblocking(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.file_type().is_file() {
        return Err(Error::refused(path.display(), format!("is {}, not a regular file", kind(&meta.file_type()))));
    }
    Ok(file)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
    let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    std::fs::OpenOptions::new().read(true).custom_flags(flags.bits() as i32).open(path)
}

/// Open `path` to append to it (created, mode 0644 less the umask, when missing),
/// refusing a symlink and, on the opened descriptor, anything but a regular file:
/// opened non-blocking, so a FIFO is refused instead of waited on.
#[cfg(unix)]
pub(crate) fn open_append(path: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o644)
        .custom_flags(flags.bits() as i32)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        // ELOOP: the last component is a symlink; ENXIO: a FIFO no one reads.
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return Err(Error::refused(path.display(), "is a symlink; only a regular file is appended to"))
        }
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => {
            return Err(Error::refused(path.display(), "is a FIFO; only a regular file is appended to"))
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.file_type().is_file() {
        let what = kind(&meta.file_type());
        return Err(Error::refused(path.display(), format!("is {what}; only a regular file is appended to")));
    }
    Ok(file)
}

#[cfg(not(unix))]
pub(crate) fn open_append(path: &Path) -> Result<std::fs::File> {
    let file = std::fs::OpenOptions::new().read(true).append(true).create(true).open(path);
    let file = file.map_err(|e| Error::io(path, e))?;
    match file.metadata().map_err(|e| Error::io(path, e))?.is_file() {
        true => Ok(file),
        false => Err(Error::refused(path.display(), "is not a regular file; only a regular file is appended to")),
    }
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// What a file is, for messages: "a directory", "a FIFO", ….
pub fn kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_symlink() {
        "a symlink"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Read at most `max_bytes` (a device or a growing file may lie about its size).
pub fn read_limited(source: impl std::io::Read, name: &str, max_bytes: u64) -> Result<Vec<u8>> {
    read_into(Vec::new(), source, name, max_bytes)
}

fn read_into(mut bytes: Vec<u8>, source: impl std::io::Read, name: &str, max_bytes: u64) -> Result<Vec<u8>> {
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

/// Replace `path` atomically with `bytes`. The directory is the one the user named
/// (symlinks to it are followed); the file itself must be absent or a regular file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let (dir, name) = Dir::open_parent(path)?;
    dir.write(&name, bytes, Replace::Allowed)
}

/// Create `path` atomically with `bytes`; refuse if it exists (receipts are never overwritten).
pub(crate) fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let (dir, name) = Dir::open_parent(path)?;
    dir.write(&name, bytes, Replace::Refused)
}

/// Whether `a` and `b` are one file (same device and inode), following symlinks.
/// Missing files are never the same as anything.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => identity(&a) == identity(&b),
        _ => false,
    }
}

#[cfg(unix)]
pub(crate) fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
pub(crate) fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    // No inode numbers: fall back to size and modification time (best effort).
    let modified = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    (meta.len(), modified.map_or(0, |d| d.as_nanos() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_directory_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_bytes(dir.path(), 10).unwrap_err().to_string();
        assert!(err.contains("is a directory, not a regular file"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_refused_not_read() {
        // /dev/zero would never end; the refusal comes before any byte is read.
        let err = read_bytes(Path::new("/dev/zero"), DEFAULT_MAX_BYTES).unwrap_err().to_string();
        assert!(err.contains("/dev/zero: refused: is a device, not a regular file"), "{err}");
        let err = read_to_string(Path::new("/dev/null"), 10).unwrap_err().to_string();
        assert!(err.contains("is a device"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("packet.json");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, 0o644.into(), 0).unwrap();
        // Without O_NONBLOCK this open would block forever (no writer ever comes).
        let err = read_json(&fifo, DEFAULT_MAX_BYTES).unwrap_err().to_string();
        assert!(err.contains("is a FIFO, not a regular file"), "{err}");
        // A symlink to a regular file is read through; to a FIFO, refused the same way.
        std::fs::write(dir.path().join("real.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real.json"), dir.path().join("link.json")).unwrap();
        assert_eq!(read_json(&dir.path().join("link.json"), 10).unwrap(), serde_json::json!({}));
        std::os::unix::fs::symlink(&fifo, dir.path().join("fifo-link.json")).unwrap();
        assert!(read_bytes(&dir.path().join("fifo-link.json"), 10).unwrap_err().to_string().contains("FIFO"));
    }

    #[test]
    fn text_must_be_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("suffix.txt");
        std::fs::write(&file, b"ok\xff").unwrap();
        assert!(read_to_string(&file, 10).unwrap_err().to_string().contains("not UTF-8"));
        std::fs::write(&file, b"ok").unwrap();
        assert_eq!(read_to_string(&file, 10).unwrap(), "ok");
        assert!(read_to_string(&file, 1).unwrap_err().to_string().contains("limit of 1 bytes"));
    }

    #[test]
    fn same_file_sees_through_links() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        std::fs::write(&a, b"{}").unwrap();
        std::fs::write(dir.path().join("b.json"), b"{}").unwrap();
        assert!(same_file(&a, &dir.path().join(".").join("a.json")));
        assert!(!same_file(&a, &dir.path().join("b.json")));
        assert!(!same_file(&a, &dir.path().join("missing.json")));
    }
}
