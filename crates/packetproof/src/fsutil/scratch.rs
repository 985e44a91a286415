//! Scratch folders: temporary directories that are deleted before the process
//! ends (the conformance gate's fixture runs, the mutation self-test's damaged
//! copies). Writes below one are still atomic and symlink-safe, but skip fsync:
//! durability buys nothing for files that are thrown away, and on a loaded disk
//! the fsyncs were most of the gate's wall time (0.2 CPUs busy).

use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The scratch folders alive in this process.
static ROOTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A temporary directory whose files need no durability; removed on drop.
#[derive(Debug)]
pub(crate) struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// A new scratch folder under the system's temporary directory.
    pub(crate) fn new() -> Result<Scratch> {
        let dir = tempfile::tempdir().map_err(|e| Error::io(std::env::temp_dir(), e))?;
        roots().push(dir.path().to_path_buf());
        Ok(Scratch { dir })
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        roots().retain(|root| root != self.dir.path());
    }
}

/// Whether a write to `path` must reach the disk before it counts (everywhere but
/// below a live scratch folder).
pub(crate) fn durable(path: &Path) -> bool {
    !roots().iter().any(|root| path.starts_with(root))
}

fn roots() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    ROOTS.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_below_a_live_scratch_folder_skip_the_sync() {
        let scratch = Scratch::new().unwrap();
        let inside = scratch.path().join("run/file.json");
        assert!(!durable(&inside));
        assert!(durable(&std::env::temp_dir().join("elsewhere.json")));
        let root = scratch.path().to_path_buf();
        drop(scratch);
        assert!(durable(&root.join("run/file.json")), "a dropped scratch folder is forgotten");
    }
}
