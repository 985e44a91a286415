//! Directory-relative atomic writes. The directory is opened once; every file
//! below it is reached from that descriptor, component by component, refusing
//! symlinks (O_NOFOLLOW), so the check "this stays inside the directory" and the
//! write are one operation: swapping a folder for a symlink between a check and a
//! write (time-of-check/time-of-use) cannot redirect the write.
//!
//! Hand-written on `rustix` (openat, linkat, renameat) because `tempfile` creates
//! and renames by path, and no maintained crate offers "create relative to this
//! directory descriptor, no symlinks, replace only a regular file".

use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Every temp file this crate writes is named `.packetproof-*.tmp`; a crash can
/// leave one behind, and the next step on the directory removes it.
pub(crate) const TEMP_PREFIX: &str = ".packetproof-";
pub(crate) const TEMP_SUFFIX: &str = ".tmp";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Replace {
    /// Replace an existing regular file.
    Allowed,
    /// Refuse if the name exists (receipts are never overwritten).
    Refused,
}

/// An opened directory: files are written relative to it.
#[derive(Debug)]
pub(crate) struct Dir {
    /// As the user named it, for messages.
    shown: PathBuf,
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
}

/// Whether a file name is one of this crate's temp files.
pub(crate) fn is_temp_name(name: &str) -> bool {
    name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX) && name.len() > TEMP_PREFIX.len() + TEMP_SUFFIX.len()
}

impl Dir {
    /// The path as the user named it.
    #[cfg(unix)]
    pub(crate) fn shown(&self) -> &Path {
        &self.shown
    }

    /// The parent directory of `path` and the file's name in it.
    pub(crate) fn open_parent(path: &Path) -> Result<(Dir, String)> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| Error::refused(path.display(), "names no file (or a name that is not UTF-8)"))?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        Ok((Dir::open(parent)?, name.to_owned()))
    }

    /// The stale temp files directly in this directory (a writer killed mid-write).
    pub(crate) fn stale_temps(path: &Path) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(path) else { return Vec::new() };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_str().is_some_and(is_temp_name))
            .map(|e| e.path())
            .collect();
        found.sort();
        found
    }
}

#[cfg(unix)]
mod unix {
    use super::*;
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;
    use std::io::Write;
    use std::os::fd::{AsFd, OwnedFd};
    use std::path::Component;
    use std::sync::atomic::{AtomicU64, Ordering};

    const DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC).union(OFlags::NONBLOCK);

    impl Dir {
        /// Open the directory `path` (a symlink to a directory is followed: the user
        /// named it).
        pub(crate) fn open(path: &Path) -> Result<Dir> {
            let fd = rustix::fs::open(path, DIR_FLAGS, Mode::empty()).map_err(|e| match e {
                Errno::NOTDIR => Error::refused(path.display(), "is not a directory"),
                e => Error::io(path, e.into()),
            })?;
            Ok(Dir { shown: path.to_path_buf(), fd })
        }

        pub(crate) fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
            self.fd.as_fd()
        }

        /// (device, inode) of the directory, to tell whether two paths are one directory.
        pub(crate) fn identity(&self) -> Result<(u64, u64)> {
            let stat = rustix::fs::fstat(&self.fd).map_err(|e| Error::io(&self.shown, e.into()))?;
            Ok((stat.st_dev as u64, stat.st_ino as u64))
        }

        /// Write `bytes` to `name` (relative, `/`-separated, plain components), through
        /// a temp file in the same directory and a rename. Refused: a symlink or a
        /// non-directory anywhere on the way, and an existing entry that is not a
        /// regular file (a device node, a FIFO, a symlink, a directory).
        pub(crate) fn write(&self, name: &str, bytes: &[u8], replace: Replace) -> Result<()> {
            self.write_with(name, bytes, replace, || Ok(()))
        }

        /// [`Dir::write`] with a hook run after the bytes are flushed and before the
        /// rename; tests use it to simulate a crash at the worst moment.
        pub(crate) fn write_with(
            &self,
            name: &str,
            bytes: &[u8],
            replace: Replace,
            before_rename: impl FnOnce() -> std::io::Result<()>,
        ) -> Result<()> {
            // From the temp file's first byte to the rename: Ctrl-C leaves no temp file.
            let _held = crate::fsutil::Held::hold();
            let staged = self.stage(name, bytes, replace)?;
            if let Err(e) = before_rename() {
                staged.discard();
                return Err(Error::io(&staged.shown, e));
            }
            staged.publish()?;
            staged.sync()
        }

        /// Write several files as one change: every target is checked and every temp
        /// file written (and synced) before the first rename, so a refusal or a failed
        /// write leaves all of them as they were; then the renames follow one another,
        /// in the order given. Ctrl-C is held ([`crate::fsutil::Held`]) from the first temp
        /// file to the last rename, so it leaves no temp file and no half-renamed set. Two renames
        /// are still two steps: SIGKILL between them leaves the first file new and the
        /// rest old, so callers put last the file whose presence says the set is done.
        pub(crate) fn write_all(&self, files: &[(&str, &[u8])], replace: Replace) -> Result<()> {
            let _held = crate::fsutil::Held::hold();
            let mut staged: Vec<Staged> = Vec::with_capacity(files.len());
            for (name, bytes) in files {
                match self.stage(name, bytes, replace) {
                    Ok(file) => staged.push(file),
                    Err(e) => {
                        staged.iter().for_each(Staged::discard);
                        return Err(e);
                    }
                }
            }
            for (i, file) in staged.iter().enumerate() {
                if let Err(e) = file.publish() {
                    staged[i + 1..].iter().for_each(Staged::discard);
                    return Err(e);
                }
            }
            staged.iter().try_for_each(Staged::sync)
        }

        /// The directory `name` below this one, reached without following a symlink.
        pub(crate) fn subdir(&self, name: &str) -> Result<Dir> {
            let parts = components(name).map_err(|why| Error::refused(self.shown.join(name).display(), why))?;
            let mut current = rustix::io::dup(&self.fd).map_err(|e| Error::io(&self.shown, e.into()))?;
            for part in parts {
                current = self.open_step(&current, part, name)?;
            }
            Ok(Dir { shown: self.shown.join(name), fd: current })
        }

        /// Check the target `name` and write `bytes` to a temp file beside it.
        fn stage(&self, name: &str, bytes: &[u8], replace: Replace) -> Result<Staged> {
            let shown = self.shown.join(name);
            let (parent, leaf) = self.walk_to_parent(name)?;
            let existing = match rustix::fs::statat(&parent, leaf.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => Some(stat),
                Err(Errno::NOENT) => None,
                Err(e) => return Err(Error::io(&shown, e.into())),
            };
            let mode = match existing {
                Some(stat) if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile => {
                    let what = describe(FileType::from_raw_mode(stat.st_mode));
                    return Err(Error::refused(
                        shown.display(),
                        format!("is {what}; only a regular file is ever replaced"),
                    ));
                }
                Some(_) if replace == Replace::Refused => {
                    return Err(Error::refused(shown.display(), "already exists and is never overwritten"))
                }
                // Keep the replaced file's mode; a new file is readable by other accounts
                // (the agent's, CI's) like any file the Node tools write.
                Some(stat) => Mode::from_raw_mode(stat.st_mode & 0o777),
                None => Mode::from_raw_mode(0o644),
            };
            let durable = crate::fsutil::scratch::durable(&shown);
            let staged = Staged { parent, temp: temp_name(), leaf, shown, replace, durable };
            if let Err(e) = write_temp(&staged.parent, &staged.temp, bytes, mode, durable) {
                staged.discard();
                return Err(staged.failed(e));
            }
            Ok(staged)
        }

        /// Create the directory `name` (relative) if missing, refusing symlinks on the way.
        pub(crate) fn create_dir_all(&self, name: &str) -> Result<()> {
            let mut current = rustix::io::dup(&self.fd).map_err(|e| Error::io(&self.shown, e.into()))?;
            for part in components(name).map_err(|why| Error::refused(self.shown.join(name).display(), why))? {
                match rustix::fs::mkdirat(&current, part, Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(Error::io(self.shown.join(name), e.into())),
                }
                current = self.open_step(&current, part, name)?;
            }
            Ok(())
        }

        /// Remove this crate's temp files directly in this directory (left by a writer
        /// that was killed). Call it only while holding the directory's [`crate::fsutil::Lock`],
        /// so no live writer's temp file is removed. Returns the names removed.
        pub(crate) fn remove_stale_temps(&self) -> Result<Vec<String>> {
            let dup = rustix::io::dup(&self.fd).map_err(|e| Error::io(&self.shown, e.into()))?;
            let entries = rustix::fs::Dir::new(dup).map_err(|e| Error::io(&self.shown, e.into()))?;
            let mut removed = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|e| Error::io(&self.shown, e.into()))?;
                let Ok(name) = entry.file_name().to_str() else { continue };
                if !is_temp_name(name) {
                    continue;
                }
                match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => removed.push(name.to_owned()),
                    Err(e) => return Err(Error::io(self.shown.join(name), e.into())),
                }
            }
            removed.sort();
            Ok(removed)
        }

        /// The directory holding `name`'s last component, reached without following
        /// any symlink, and that component.
        fn walk_to_parent(&self, name: &str) -> Result<(OwnedFd, String)> {
            let parts = components(name).map_err(|why| Error::refused(self.shown.join(name).display(), why))?;
            let (leaf, dirs) = parts.split_last().expect("components are never empty");
            let mut current = rustix::io::dup(&self.fd).map_err(|e| Error::io(&self.shown, e.into()))?;
            for part in dirs {
                current = self.open_step(&current, part, name)?;
            }
            Ok((current, (*leaf).to_owned()))
        }

        fn open_step(&self, from: &OwnedFd, part: &str, name: &str) -> Result<OwnedFd> {
            rustix::fs::openat(from, part, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty()).map_err(|e| match e {
                Errno::LOOP | Errno::NOTDIR => Error::refused(
                    self.shown.join(name).display(),
                    format!("{part:?} on the way is a symlink or not a directory; writes never follow symlinks"),
                ),
                e => Error::io(self.shown.join(name), e.into()),
            })
        }
    }

    /// A file written to its temp name beside its target, ready to be renamed into place.
    struct Staged {
        parent: OwnedFd,
        temp: String,
        leaf: String,
        shown: PathBuf,
        replace: Replace,
        durable: bool,
    }

    impl Staged {
        fn publish(&self) -> Result<()> {
            publish(&self.parent, &self.temp, &self.leaf, self.replace).map_err(|e| {
                self.discard();
                self.failed(e)
            })
        }

        /// The rename is durable only once the directory entry is on disk.
        fn sync(&self) -> Result<()> {
            if !self.durable {
                return Ok(());
            }
            rustix::fs::fsync(&self.parent).map_err(|e| Error::io(&self.shown, e.into()))
        }

        fn discard(&self) {
            let _ = rustix::fs::unlinkat(&self.parent, self.temp.as_str(), AtFlags::empty());
        }

        fn failed(&self, e: std::io::Error) -> Error {
            match e.kind() {
                std::io::ErrorKind::AlreadyExists => {
                    Error::refused(self.shown.display(), "already exists and is never overwritten")
                }
                _ => Error::io(&self.shown, e),
            }
        }
    }

    /// Plain relative components: no `..`, no `.`, no root, nothing empty.
    fn components(name: &str) -> std::result::Result<Vec<&str>, &'static str> {
        let path = Path::new(name);
        if name.is_empty() || path.is_absolute() {
            return Err("is not a relative file name");
        }
        let mut parts = Vec::new();
        for component in path.components() {
            match component {
                Component::Normal(part) => parts.push(part.to_str().ok_or("is not UTF-8")?),
                _ => return Err("contains `..`, `.` or a root; it must stay inside its directory"),
            }
        }
        if parts.is_empty() {
            return Err("is not a relative file name");
        }
        Ok(parts)
    }

    fn temp_name() -> String {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        format!("{TEMP_PREFIX}{}-{nanos:x}-{n}{TEMP_SUFFIX}", std::process::id())
    }

    fn write_temp(parent: &OwnedFd, temp: &str, bytes: &[u8], mode: Mode, durable: bool) -> std::io::Result<()> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(parent, temp, flags, mode)?;
        // The umask may have narrowed the mode at creation; set it exactly.
        rustix::fs::fchmod(&fd, mode)?;
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes)?;
        if durable {
            file.sync_all()?;
        }
        Ok(())
    }

    /// Move the temp file into place: a rename replaces, a hard link refuses an
    /// existing name (then the temp name is removed).
    fn publish(parent: &OwnedFd, temp: &str, leaf: &str, replace: Replace) -> std::io::Result<()> {
        match replace {
            Replace::Allowed => rustix::fs::renameat(parent, temp, parent, leaf).map_err(Into::into),
            Replace::Refused => {
                rustix::fs::linkat(parent, temp, parent, leaf, AtFlags::empty())?;
                rustix::fs::unlinkat(parent, temp, AtFlags::empty()).map_err(Into::into)
            }
        }
    }

    fn describe(file_type: FileType) -> &'static str {
        match file_type {
            FileType::Directory => "a directory",
            FileType::Symlink => "a symlink",
            FileType::Fifo => "a FIFO",
            FileType::Socket => "a socket",
            FileType::CharacterDevice | FileType::BlockDevice => "a device",
            _ => "not a regular file",
        }
    }
}

#[cfg(not(unix))]
mod portable {
    //! Without directory descriptors: the same checks by path (best effort).
    use super::*;
    use std::io::Write;

    impl Dir {
        pub(crate) fn open(path: &Path) -> Result<Dir> {
            let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
            if !meta.is_dir() {
                return Err(Error::refused(path.display(), "is not a directory"));
            }
            Ok(Dir { shown: path.to_path_buf() })
        }

        pub(crate) fn identity(&self) -> Result<(u64, u64)> {
            let meta = std::fs::metadata(&self.shown).map_err(|e| Error::io(&self.shown, e))?;
            Ok(crate::fsutil::identity(&meta))
        }

        pub(crate) fn write(&self, name: &str, bytes: &[u8], replace: Replace) -> Result<()> {
            self.write_with(name, bytes, replace, || Ok(()))
        }

        pub(crate) fn write_with(
            &self,
            name: &str,
            bytes: &[u8],
            replace: Replace,
            before_rename: impl FnOnce() -> std::io::Result<()>,
        ) -> Result<()> {
            let path = self.shown.join(name);
            if let Ok(meta) = std::fs::symlink_metadata(&path) {
                if !meta.is_file() {
                    return Err(Error::refused(path.display(), "is not a regular file; only one is ever replaced"));
                }
                if replace == Replace::Refused {
                    return Err(Error::refused(path.display(), "already exists and is never overwritten"));
                }
            }
            let dir = path.parent().unwrap_or(&self.shown);
            let mut temp = tempfile::Builder::new()
                .prefix(TEMP_PREFIX)
                .suffix(TEMP_SUFFIX)
                .tempfile_in(dir)
                .map_err(|e| Error::io(dir, e))?;
            temp.write_all(bytes).map_err(|e| Error::io(&path, e))?;
            if crate::fsutil::scratch::durable(&path) {
                temp.as_file().sync_all().map_err(|e| Error::io(&path, e))?;
            }
            before_rename().map_err(|e| Error::io(&path, e))?;
            match replace {
                Replace::Allowed => temp.persist(&path).map(drop).map_err(|e| Error::io(&path, e.error)),
                Replace::Refused => temp.persist_noclobber(&path).map(drop).map_err(|e| Error::io(&path, e.error)),
            }
        }

        /// One file after the other (best effort: without directory descriptors the
        /// checks and renames are by path).
        pub(crate) fn write_all(&self, files: &[(&str, &[u8])], replace: Replace) -> Result<()> {
            files.iter().try_for_each(|(name, bytes)| self.write(name, bytes, replace))
        }

        pub(crate) fn subdir(&self, name: &str) -> Result<Dir> {
            Dir::open(&self.shown.join(name))
        }

        pub(crate) fn create_dir_all(&self, name: &str) -> Result<()> {
            let path = self.shown.join(name);
            std::fs::create_dir_all(&path).map_err(|e| Error::io(&path, e))
        }

        pub(crate) fn remove_stale_temps(&self) -> Result<Vec<String>> {
            let mut removed = Vec::new();
            for path in Dir::stale_temps(&self.shown) {
                std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
                removed.push(path.file_name().unwrap_or_default().to_string_lossy().into_owned());
            }
            Ok(removed)
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<PathBuf> {
        Dir::stale_temps(dir)
    }

    #[test]
    fn interrupted_write_keeps_the_old_file_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        dir.write("evaluation.json", b"old", Replace::Allowed).unwrap();
        let crash = || Err(std::io::Error::other("simulated kill between write and rename"));
        let err = dir.write_with("evaluation.json", b"new and longer", Replace::Allowed, crash).unwrap_err();
        assert!(err.to_string().contains("simulated kill"), "{err}");
        assert_eq!(std::fs::read(tmp.path().join("evaluation.json")).unwrap(), b"old");
        assert!(leftovers(tmp.path()).is_empty(), "temp file left behind");
        dir.write("evaluation.json", b"new", Replace::Allowed).unwrap();
        assert_eq!(std::fs::read(tmp.path().join("evaluation.json")).unwrap(), b"new");
    }

    #[test]
    fn interrupted_first_write_leaves_no_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        let crash = || Err(std::io::Error::other("killed"));
        assert!(dir.write_with("completion.json", b"{}", Replace::Refused, crash).is_err());
        assert!(!tmp.path().join("completion.json").exists());
        assert!(leftovers(tmp.path()).is_empty());
    }

    /// Files written as one: when the last cannot be written, none is replaced.
    #[test]
    fn a_set_of_files_is_replaced_whole_or_not_at_all() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        dir.write_all(&[("a.json", b"old a"), ("b.json", b"old b")], Replace::Allowed).unwrap();
        std::fs::create_dir(tmp.path().join("c.json")).unwrap();
        let files: [(&str, &[u8]); 3] = [("a.json", b"new a"), ("b.json", b"new b"), ("c.json", b"new c")];
        assert!(dir.write_all(&files, Replace::Allowed).is_err());
        assert_eq!(std::fs::read(tmp.path().join("a.json")).unwrap(), b"old a");
        assert_eq!(std::fs::read(tmp.path().join("b.json")).unwrap(), b"old b");
        assert!(leftovers(tmp.path()).is_empty());
        dir.write_all(&files[..2], Replace::Allowed).unwrap();
        assert_eq!(std::fs::read(tmp.path().join("b.json")).unwrap(), b"new b");
    }

    #[test]
    fn refused_replace_never_overwrites() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("completion.json");
        crate::fsutil::write_new(&file, b"first").unwrap();
        let err = crate::fsutil::write_new(&file, b"second").unwrap_err().to_string();
        assert!(err.contains("never overwritten"), "{err}");
        assert_eq!(std::fs::read(&file).unwrap(), b"first");
        assert!(leftovers(tmp.path()).is_empty());
    }

    #[test]
    fn written_files_are_readable_by_others_and_keep_a_replaced_mode() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("agent-request.json");
        crate::fsutil::write_new(&file, b"{}").unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o644);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        crate::fsutil::write_atomic(&file, b"[]").unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o640);
    }

    #[test]
    fn a_symlinked_folder_on_the_way_is_refused_even_when_it_appears_after_opening() {
        let outside = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("sub")).unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        dir.write("sub/evaluation.json", b"inside", Replace::Allowed).unwrap();
        // The folder is swapped for a symlink leading out (the TOCTOU attack).
        std::fs::remove_file(tmp.path().join("sub/evaluation.json")).unwrap();
        std::fs::remove_dir(tmp.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("sub")).unwrap();
        let err = dir.write("sub/evaluation.json", b"escaped", Replace::Allowed).unwrap_err().to_string();
        assert!(err.contains("is a symlink or not a directory"), "{err}");
        assert!(!outside.path().join("evaluation.json").exists());
    }

    #[test]
    fn only_regular_files_are_replaced() {
        let outside = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        std::fs::write(outside.path().join("target.json"), b"keep").unwrap();
        std::os::unix::fs::symlink(outside.path().join("target.json"), tmp.path().join("link.json")).unwrap();
        let fifo = tmp.path().join("fifo.json");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, rustix::fs::Mode::from(0o644), 0)
            .unwrap();
        std::fs::create_dir(tmp.path().join("folder.json")).unwrap();
        for (name, what) in [("link.json", "a symlink"), ("fifo.json", "a FIFO"), ("folder.json", "a directory")] {
            let err = dir.write(name, b"x", Replace::Allowed).unwrap_err().to_string();
            assert!(err.contains(&format!("is {what}; only a regular file is ever replaced")), "{name}: {err}");
        }
        assert_eq!(std::fs::read(outside.path().join("target.json")).unwrap(), b"keep");
        // A device node named by path (export --out /dev/null) is refused the same way.
        let err = crate::fsutil::write_atomic(Path::new("/dev/null"), b"x").unwrap_err().to_string();
        assert!(err.contains("/dev/null: refused: is a device"), "{err}");
        assert!(leftovers(tmp.path()).is_empty());
    }

    #[test]
    fn names_leaving_the_directory_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        for bad in ["../x.json", "/etc/x.json", "a/../b.json", "./x.json", ""] {
            assert!(dir.write(bad, b"x", Replace::Allowed).is_err(), "{bad:?}");
        }
        let err = Dir::open(&tmp.path().join("missing")).unwrap_err().to_string();
        assert!(err.contains("missing"), "{err}");
    }

    #[test]
    fn stale_temps_are_listed_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(".packetproof-123-abc-0.tmp"), b"partial").unwrap();
        std::fs::write(tmp.path().join(".packetproofX.tmp"), b"not ours").unwrap();
        std::fs::write(tmp.path().join("evaluation.json"), b"{}").unwrap();
        assert_eq!(leftovers(tmp.path()), vec![tmp.path().join(".packetproof-123-abc-0.tmp")]);
        let dir = Dir::open(tmp.path()).unwrap();
        assert_eq!(dir.remove_stale_temps().unwrap(), vec![".packetproof-123-abc-0.tmp".to_owned()]);
        assert!(leftovers(tmp.path()).is_empty());
        assert!(tmp.path().join(".packetproofX.tmp").exists() && tmp.path().join("evaluation.json").exists());
    }

    #[test]
    fn nested_folders_are_created_without_following_symlinks() {
        let outside = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        dir.create_dir_all("a/b").unwrap();
        assert!(tmp.path().join("a/b").is_dir());
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("link")).unwrap();
        assert!(dir.create_dir_all("link/c").is_err());
        assert!(!outside.path().join("c").exists());
    }
}
