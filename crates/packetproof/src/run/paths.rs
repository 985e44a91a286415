//! File names inside a run directory, and the one rule for resolving them: a name
//! (ours or one read from a manifest) must stay inside the run directory. No `..`,
//! no absolute path, no symlink leading out. The Node tools resolve manifest names
//! blindly; a hostile manifest could make them read or overwrite any file.

use crate::JsonPath;
use crate::{Error, Result};
use std::path::{Component, Path, PathBuf};

pub const AGENT_REQUEST: &str = "agent-request.json";
pub(crate) const EVAL_CONTEXT: &str = "eval-context.json";
pub(crate) const VALIDATION_SCHEMA: &str = "validation-schema.json";
pub(crate) const MANIFEST: &str = "run-manifest.json";
pub(crate) const RAW_OUTPUT: &str = "raw-output.json";
pub(crate) const EVALUATION: &str = "evaluation.json";
pub(crate) const COMPLETION: &str = "completion.json";

/// The manifest fields that name files, with the names the Node tools write.
pub(crate) const MANIFEST_FILES: [(&str, &str); 6] = [
    ("agentInput", AGENT_REQUEST),
    ("heldBackEvaluatorContext", EVAL_CONTEXT),
    ("heldBackValidationSchema", VALIDATION_SCHEMA),
    ("rawOutput", RAW_OUTPUT),
    ("evaluation", EVALUATION),
    ("completion", COMPLETION),
];

/// A run directory, canonicalized once so every prefix check compares real paths.
#[derive(Debug, Clone)]
pub(crate) struct RunDir {
    /// As the user named it, for messages.
    pub(crate) shown: PathBuf,
    canonical: PathBuf,
}

impl RunDir {
    pub(crate) fn open(dir: &Path) -> Result<RunDir> {
        let canonical = dir.canonicalize().map_err(|e| Error::io(dir, e))?;
        if !canonical.is_dir() {
            return Err(Error::shape(dir.display(), JsonPath::root(), "a run directory, found a file"));
        }
        Ok(RunDir { shown: dir.to_path_buf(), canonical })
    }

    /// The path of `name` inside the run directory, refused if it could lead out.
    /// `origin` says where the name came from (e.g. `run-manifest.json $.rawOutput`).
    pub(crate) fn resolve(&self, name: &str, origin: &str) -> Result<PathBuf> {
        let refuse = |why: &str| Error::refused(origin, format!("file name {name:?} {why}"));
        check_name(name).map_err(refuse)?;
        let joined = self.canonical.join(name);
        // The deepest part of the path that exists decides where it really leads:
        // the file itself when present (following a symlink), else its nearest parent.
        let existing = joined.ancestors().find(|p| p.symlink_metadata().is_ok()).unwrap_or(&self.canonical);
        let real = existing.canonicalize().map_err(|e| {
            let dangling = existing.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink());
            if dangling && e.kind() == std::io::ErrorKind::NotFound {
                refuse("is a symlink whose target does not exist")
            } else {
                Error::io(existing, e)
            }
        })?;
        if !real.starts_with(&self.canonical) {
            return Err(refuse(&format!("leads outside the run directory (to {})", real.display())));
        }
        Ok(joined)
    }

    /// A name for messages: the run directory as given, joined with `name`.
    pub(crate) fn show(&self, name: &str) -> String {
        self.shown.join(name).display().to_string()
    }
}

/// Lexical rules: a relative path of plain components, no backslashes (a Windows
/// separator would mean something else on another machine).
fn check_name(name: &str) -> std::result::Result<(), &'static str> {
    if name.trim().is_empty() {
        return Err("is blank");
    }
    if name.contains('\\') || name.contains('\0') {
        return Err("contains a backslash or NUL");
    }
    let path = Path::new(name);
    if path.is_absolute() {
        return Err("is absolute; it must be relative to the run directory");
    }
    if !path.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err("contains `..` or `.`; it must stay inside the run directory");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_leave_the_directory_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        for bad in ["../outside.json", "/etc/passwd", "a/../../b", "./x.json", "", "a\\b"] {
            let err = run.resolve(bad, "run-manifest.json $.rawOutput").unwrap_err().to_string();
            assert!(err.contains("run-manifest.json $.rawOutput: refused"), "{bad}: {err}");
        }
        assert!(run.resolve("raw-output.json", "x").is_ok());
        assert!(run.resolve("sub/raw-output.json", "x").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn symlink_leading_out_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.json"), b"{}").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.json"), dir.path().join("raw-output.json")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("sub")).unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        assert!(run.resolve("raw-output.json", "x").unwrap_err().to_string().contains("leads outside"));
        assert!(run.resolve("sub/new.json", "x").unwrap_err().to_string().contains("leads outside"));
        std::os::unix::fs::symlink(dir.path().join("gone.json"), dir.path().join("evaluation.json")).unwrap();
        let err = run.resolve("evaluation.json", "x").unwrap_err().to_string();
        assert!(err.contains("is a symlink whose target does not exist"), "{err}");
    }
}
