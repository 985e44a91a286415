//! Git, driven through its command line (`git show`, `git diff`): no crate reads a
//! repository's working tree, index and history as exactly as git does. This is
//! the only module that spawns git.

use crate::{canonical, Error, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A repository, addressed by its top-level directory.
pub(crate) struct Git {
    top: PathBuf,
}

impl Git {
    pub(crate) fn open(root: &Path) -> Result<Git> {
        let out = git_in(root, &["rev-parse", "--show-toplevel"])?;
        Ok(Git { top: PathBuf::from(out) })
    }

    /// The repository `dir` lies in; None outside one, and where git cannot say (absent,
    /// or refusing the folder): callers then write nothing outside the folder they were given.
    pub(crate) fn find(dir: &Path) -> Option<Git> {
        Git::open(dir).ok()
    }

    /// The repository's top-level folder, as git spells it.
    pub(crate) fn top(&self) -> &Path {
        &self.top
    }

    pub(crate) fn run(&self, args: &[&str]) -> Result<String> {
        git_in(&self.top, args)
    }

    /// The file at `relative` (a path from the top, as `changed_paths` gives it).
    pub(crate) fn path_of(&self, relative: &str) -> PathBuf {
        self.top.join(relative)
    }

    /// Path of `file` relative to the repository top, with `/` separators.
    pub(crate) fn relative(&self, file: &Path) -> String {
        let top = self.top.canonicalize().unwrap_or_else(|_| self.top.clone());
        let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
        let parent_canon =
            file.parent().and_then(|p| p.canonicalize().ok()).map(|p| p.join(file.file_name().unwrap_or_default()));
        let file = parent_canon.unwrap_or(file);
        file.strip_prefix(&top).unwrap_or(&file).to_string_lossy().replace('\\', "/")
    }

    pub(crate) fn show_json(&self, rev: &str, file: &Path) -> Result<Option<Value>> {
        let spec = format!("{rev}:{}", self.relative(file));
        // Not present at the base: a new case.
        let Some(bytes) = self.show_bytes(rev, file)? else { return Ok(None) };
        canonical::parse(&bytes).map(Some).map_err(|e| e.in_file(spec))
    }

    /// The bytes of `file` at `rev`; `None` when it is not there (or is no file there).
    /// Read as every file is, at most the default read limit: a base revision is input
    /// like any other, and may hold a blob of any size.
    pub(crate) fn show_bytes(&self, rev: &str, file: &Path) -> Result<Option<Vec<u8>>> {
        self.show_bytes_within(rev, file, crate::fsutil::DEFAULT_MAX_BYTES)
    }

    fn show_bytes_within(&self, rev: &str, file: &Path, max_bytes: u64) -> Result<Option<Vec<u8>>> {
        let spec = format!("{rev}:{}", self.relative(file));
        let mut child = Command::new("git")
            .current_dir(&self.top)
            .args(["cat-file", "blob", &spec])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Error::io("git", e))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let read = crate::fsutil::read_limited(stdout, &spec, max_bytes);
        if read.is_err() {
            // Past the limit: git is stopped rather than waited on to write the rest.
            let _ = child.kill();
        }
        let status = child.wait().map_err(|e| Error::io("git", e))?;
        let bytes = read?;
        Ok(status.success().then_some(bytes))
    }

    /// Every path changed against `base` (tracked) or not yet tracked, sorted,
    /// relative to the top.
    pub(crate) fn changed_paths(&self, base: &str) -> Result<Vec<String>> {
        // NUL-separated and unquoted, so any file name comes back as it is.
        let tracked = self.run(&["-c", "core.quotePath=false", "diff", "--name-only", "-z", base, "--"])?;
        let untracked = self.run(&["ls-files", "-z", "--others", "--exclude-standard"])?;
        let mut paths: Vec<String> =
            tracked.split('\0').chain(untracked.split('\0')).filter(|l| !l.is_empty()).map(str::to_owned).collect();
        paths.sort_unstable();
        paths.dedup();
        Ok(paths)
    }
}

/// Git in `dir` as a test author (a fixed identity, no signing): for the tests of
/// what reads a repository, which build one.
#[cfg(test)]
pub(crate) fn for_tests(dir: &Path, args: &[&str]) -> String {
    let identity = ["-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false"];
    git_in(dir, &[&identity[..], args].concat()).unwrap_or_else(|e| panic!("{e}"))
}

fn git_in(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git").current_dir(dir).args(args).output().map_err(|e| Error::io("git", e))?;
    if !out.status.success() {
        return Err(Error::Git {
            command: args.join(" "),
            dir: dir.to_path_buf(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file at a revision is read within the limit (a huge blob at a hostile base is
    /// refused, not loaded); a path that is missing or a folder there is no file.
    #[test]
    fn a_file_at_a_revision_is_read_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        for_tests(dir.path(), &["init", "-q"]);
        std::fs::write(dir.path().join("big.json"), vec![b' '; 4096]).unwrap();
        std::fs::create_dir(dir.path().join("folder")).unwrap();
        std::fs::write(dir.path().join("folder/inner.json"), b"{}").unwrap();
        for_tests(dir.path(), &["add", "-A"]);
        for_tests(dir.path(), &["commit", "-q", "-m", "base"]);
        let git = Git::open(dir.path()).unwrap();
        let head = git.run(&["rev-parse", "HEAD"]).unwrap();
        let big = dir.path().join("big.json");
        assert_eq!(git.show_bytes_within(&head, &big, 4096).unwrap().map(|b| b.len()), Some(4096));
        let refused = git.show_bytes_within(&head, &big, 4095).unwrap_err().to_string();
        assert!(refused.contains("more than the limit of 4095 bytes"), "{refused}");
        assert_eq!(git.show_bytes(&head, &dir.path().join("missing.json")).unwrap(), None);
        assert_eq!(git.show_bytes(&head, &dir.path().join("folder")).unwrap(), None);
    }
}
