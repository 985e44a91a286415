//! An exclusive OS lock on a directory (flock(2) on the directory itself, so no
//! lock file is added to a run directory, and a read-only runs root can still be
//! locked). The kernel releases it when the process ends, even on kill -9, so a
//! crash never leaves a stale lock. Held until the [`Lock`] is dropped.
//!
//! `rustix::fs::flock` rather than std's `File::lock`: that is stable only from
//! Rust 1.89, and this crate's rust-version is 1.85.

use super::Dir;
#[cfg(unix)]
use crate::Error;
use crate::Result;

#[derive(Debug)]
pub(crate) struct Lock {
    #[cfg(unix)]
    _fd: std::os::fd::OwnedFd,
    /// Only the tests ask which directory a lock holds.
    #[cfg(test)]
    identity: (u64, u64),
}

impl Lock {
    /// Wait for and take the exclusive lock of the directory `path`.
    #[cfg(test)]
    pub(crate) fn exclusive(path: &std::path::Path) -> Result<Lock> {
        Lock::on(&Dir::open(path)?)
    }

    /// Wait for and take the exclusive lock of an opened directory. Locks on one
    /// directory exclude each other across processes and within one (each takes
    /// its own open file description), so never lock one directory twice: compare
    /// [`Lock::identity`] first.
    #[cfg(unix)]
    pub(crate) fn on(dir: &Dir) -> Result<Lock> {
        use rustix::fs::{FlockOperation, Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd =
            rustix::fs::openat(dir.fd(), ".", flags, Mode::empty()).map_err(|e| Error::io(dir.shown(), e.into()))?;
        loop {
            match rustix::fs::flock(&fd, FlockOperation::LockExclusive) {
                Ok(()) => break,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(Error::io(dir.shown(), e.into())),
            }
        }
        Ok(Lock {
            _fd: fd,
            #[cfg(test)]
            identity: dir.identity()?,
        })
    }

    #[cfg(not(unix))]
    #[cfg_attr(not(test), allow(unused_variables))]
    pub(crate) fn on(dir: &Dir) -> Result<Lock> {
        // No flock: concurrent steps on one run directory are not excluded here.
        Ok(Lock {
            #[cfg(test)]
            identity: dir.identity()?,
        })
    }

    /// Lock every directory of `dirs` (one lock per distinct directory) in one
    /// global order, by (device, inode): processes that each need two locks
    /// take them in the same order, so none waits for another that waits for it.
    pub(crate) fn all(dirs: &[&Dir]) -> Result<Vec<Lock>> {
        let mut ordered = dirs.iter().map(|dir| Ok((dir.identity()?, *dir))).collect::<Result<Vec<_>>>()?;
        ordered.sort_by_key(|(identity, _)| *identity);
        ordered.dedup_by_key(|(identity, _)| *identity);
        ordered.into_iter().map(|(_, dir)| Lock::on(dir)).collect()
    }

    /// (device, inode) of the locked directory.
    #[cfg(test)]
    pub(crate) fn identity(&self) -> (u64, u64) {
        self.identity
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::path::Path;

    fn try_lock(path: &Path) -> rustix::io::Result<()> {
        let fd = rustix::fs::open(path, rustix::fs::OFlags::RDONLY, rustix::fs::Mode::empty()).unwrap();
        rustix::fs::flock(&fd, rustix::fs::FlockOperation::NonBlockingLockExclusive)
    }

    #[test]
    fn a_lock_excludes_others_until_released() {
        let tmp = tempfile::tempdir().unwrap();
        let first = Lock::exclusive(tmp.path()).unwrap();
        assert_eq!(try_lock(tmp.path()), Err(rustix::io::Errno::WOULDBLOCK), "taken twice");
        drop(first);
        assert_eq!(try_lock(tmp.path()), Ok(()));
        // A blocking lock is granted once the holder is gone.
        let again = Lock::exclusive(tmp.path()).unwrap();
        assert_eq!(again.identity(), Dir::open(tmp.path()).unwrap().identity().unwrap());
    }

    #[test]
    fn locks_on_several_directories_are_taken_once_each_in_one_order() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (da, db) = (Dir::open(a.path()).unwrap(), Dir::open(b.path()).unwrap());
        let forward = Lock::all(&[&da, &db, &da]).unwrap();
        assert_eq!(forward.len(), 2, "one lock per distinct directory");
        let order: Vec<_> = forward.iter().map(Lock::identity).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
        assert_eq!(try_lock(a.path()), Err(rustix::io::Errno::WOULDBLOCK));
        drop(forward);
        let backward: Vec<_> = Lock::all(&[&db, &da]).unwrap().iter().map(Lock::identity).collect();
        assert_eq!(backward, order, "the order does not depend on the order asked");
    }

    #[test]
    fn a_file_is_not_a_lockable_directory() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("f"), b"").unwrap();
        let err = Lock::exclusive(&tmp.path().join("f")).unwrap_err().to_string();
        assert!(err.contains("is not a directory"), "{err}");
    }
}
