//! The runs root: where agent task ids must be unique. `complete` checks the id is
//! unused, checks the evaluation and writes the receipt as one critical section
//! under an OS lock on this directory, so concurrent completions cannot both
//! record one task.
//!
//! The scan is explicit about what it covers: every folder below the root,
//! hidden ones and `target/` included (a run can be anywhere), and every
//! symlinked run directory, followed once. A root that is not a directory is
//! refused, not skipped.

use super::paths::{RunDir, COMPLETION, MANIFEST};
use crate::fsutil::{self, Dir, Lock};
use crate::{Error, Result};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// An opened runs root, locked together with the run directory being completed.
pub(crate) struct RunsRoot {
    /// Canonical path: the root that was scanned, as messages say.
    pub(crate) path: PathBuf,
    _locks: Vec<Lock>,
}

impl RunsRoot {
    /// Open the run directory and `root` (given) or the run directory's parent
    /// (default), and lock both in the one order [`Lock::all`] gives: two
    /// completes whose runs roots are each other's run directories would
    /// otherwise each hold one lock and wait for the other forever. Then remove
    /// the temp files a killed step left in the run directory (see
    /// [`super::lock_run_dir`]).
    pub(crate) fn lock_with_run(given: Option<&Path>, run_dir: &Path) -> Result<(Dir, RunsRoot)> {
        let run = Dir::open(run_dir)?;
        let path = match given {
            Some(root) => root.canonicalize().map_err(|e| Error::io(root, e))?,
            None => default_root(run_dir)?,
        };
        let dir = Dir::open(&path).map_err(|e| match e {
            Error::Refused { file, .. } => {
                Error::refused(file, "the runs root is not a directory; give --runs-root DIR")
            }
            other => other,
        })?;
        let locks = Lock::all(&[&run, &dir])?;
        run.remove_stale_temps()?;
        Ok((run, RunsRoot { path, _locks: locks }))
    }

    /// The first completion receipt under the root that records `task`. Receipts
    /// are every `completion.json`, and whatever other name a run manifest gives
    /// its completion. An unreadable receipt is an error: it could hide a reused id.
    /// A symlink to a directory is followed one level (a linked run directory),
    /// never recursively: a link to `/` must not scan the machine.
    pub(crate) fn task_in_use(&self, task: &str, max_bytes: u64) -> Result<Option<PathBuf>> {
        let mut walked = HashSet::new();
        let mut linked = Vec::new();
        for entry in walkdir::WalkDir::new(&self.path).sort_by_file_name() {
            let entry = entry.map_err(|e| Error::walk(e, &self.path))?;
            let path = entry.path();
            if entry.file_type().is_dir() {
                walked.insert(path.canonicalize().map_err(|e| Error::io(path, e))?);
            } else if entry.path_is_symlink() && path.is_dir() {
                linked.push(path.to_path_buf());
            } else if let Some(found) = receipt_with(path, task, max_bytes)? {
                return Ok(Some(found));
            }
        }
        for link in linked {
            // A link to a run already walked (or to the same run twice) is scanned once.
            let real = link.canonicalize().map_err(|e| Error::io(&link, e))?;
            if !walked.insert(real) {
                continue;
            }
            for name in [COMPLETION, MANIFEST] {
                if let Some(found) = receipt_with(&link.join(name), task, max_bytes)? {
                    return Ok(Some(found));
                }
            }
        }
        Ok(None)
    }
}

/// The receipt `path` stands for (itself, or the completion a manifest names),
/// when that receipt records `task`.
fn receipt_with(path: &Path, task: &str, max_bytes: u64) -> Result<Option<PathBuf>> {
    let name = path.file_name().unwrap_or_default();
    let receipt = if name == COMPLETION {
        Some(path.to_path_buf())
    } else if name == MANIFEST && path.symlink_metadata().is_ok() {
        declared_completion(path, max_bytes)?
    } else {
        None
    };
    let Some(receipt) = receipt.filter(|p| p.symlink_metadata().is_ok()) else { return Ok(None) };
    let value = fsutil::read_json(&receipt, max_bytes)?;
    Ok((super::format::recorded_task(&value) == Some(task)).then_some(receipt))
}

/// The run directory's parent; the file-system root is refused (it would scan
/// every file on the machine): name the runs root instead.
fn default_root(run_dir: &Path) -> Result<PathBuf> {
    let real = run_dir.canonicalize().map_err(|e| Error::io(run_dir, e))?;
    match real.parent() {
        Some(parent) if parent.parent().is_some() => Ok(parent.to_path_buf()),
        _ => Err(Error::Usage(format!(
            "{}: its parent is the file-system root; give --runs-root DIR (where agent task ids must be unique)",
            run_dir.display()
        ))),
    }
}

/// A completion file a manifest names other than completion.json (inside its run).
fn declared_completion(manifest: &Path, max_bytes: u64) -> Result<Option<PathBuf>> {
    let value = fsutil::read_json(manifest, max_bytes)?;
    let Some(name) = value.get("completion").and_then(Value::as_str).filter(|n| *n != COMPLETION) else {
        return Ok(None);
    };
    let dir = RunDir::open(manifest.parent().unwrap_or(Path::new(".")))?;
    dir.resolve(name, &format!("{} $.completion", manifest.display())).map(Some)
}
