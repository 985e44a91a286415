//! A suite the repository already has: `init` wires CI and hooks to it instead of
//! writing another one beside it (two suites, and CI pointed at the new, empty one).

use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// How deep below the repository's root a suite is looked for: anywhere a team keeps one
/// (`services/api/llm/gate/harness.toml` is 5, the settings file's own level counted);
/// the bound only stops a pathological tree.
const DEPTH: usize = 32;

/// Folders that hold other projects' files or build output, never the team's suite.
const NOT_SEARCHED: [&str; 5] = ["node_modules", "target", "vendor", "venv", "dist"];

/// The folder of the suite that `dir` belongs to: a harness.toml in `dir` or a folder
/// above it up to `top` (the repository's root; `dir` alone outside a repository),
/// else the one suite within [`DEPTH`] levels below `top`. Several suites below the
/// root and none above `dir` is an error naming them: init cannot tell which is meant.
pub(crate) fn find(dir: &Path, top: Option<&Path>) -> Result<Option<PathBuf>> {
    let settings = crate::config::FILE_NAME;
    let start = dir.ancestors().find(|d| d.is_dir()).unwrap_or(dir);
    let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
    let Some(top) = top else {
        return Ok(dir.join(settings).is_file().then_some(start));
    };
    let top = top.canonicalize().unwrap_or_else(|_| top.to_path_buf());
    for folder in start.ancestors() {
        if folder.join(settings).is_file() {
            return Ok(Some(folder.to_path_buf()));
        }
        if folder == top {
            break;
        }
    }
    let below: Vec<PathBuf> = walkdir::WalkDir::new(&top)
        .max_depth(DEPTH)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0 || !(name.starts_with('.') || NOT_SEARCHED.contains(&name.as_ref()))
        })
        .filter_map(std::result::Result::ok)
        .filter(|e| e.file_type().is_file() && e.file_name() == settings)
        .filter_map(|e| e.path().parent().map(Path::to_path_buf))
        .collect();
    match below.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        several => Err(Error::refused(
            top.display(),
            format!(
                "has {} packetproof suites ({}): run `packetproof init` in the folder of the one to wire CI \
                 and hooks to",
                several.len(),
                several.iter().map(|s| s.display().to_string()).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_above_or_below_is_found() {
        let repo = tempfile::tempdir().unwrap();
        let top = repo.path().canonicalize().unwrap();
        std::fs::create_dir_all(top.join("llm/gate/fixtures")).unwrap();
        std::fs::create_dir_all(top.join("node_modules/x/y")).unwrap();
        std::fs::write(top.join("node_modules/x/harness.toml"), "").unwrap();
        assert_eq!(find(&top, Some(&top)).unwrap(), None, "node_modules holds no suite of the team's");
        std::fs::write(top.join("llm/gate/harness.toml"), "").unwrap();
        let gate = Some(top.join("llm/gate"));
        assert_eq!(find(&top, Some(&top)).unwrap(), gate, "one folder down");
        assert_eq!(find(&top.join("llm/gate/fixtures"), Some(&top)).unwrap(), gate, "one folder up");
        assert_eq!(find(&top.join("new/suite"), Some(&top)).unwrap(), gate, "a folder still to be made");
        std::fs::create_dir_all(top.join("other")).unwrap();
        std::fs::write(top.join("other/harness.toml"), "").unwrap();
        let error = find(&top, Some(&top)).unwrap_err().to_string();
        assert!(error.contains("has 2 packetproof suites"), "{error}");
        assert_eq!(find(&top.join("other"), Some(&top)).unwrap(), Some(top.join("other")), "its own folder decides");
    }

    /// Round 6: a suite four folders down was not found, and init wrote a second one.
    #[test]
    fn a_suite_deep_below_the_root_is_found() {
        let repo = tempfile::tempdir().unwrap();
        let top = repo.path().canonicalize().unwrap();
        let deep = top.join("services/api/llm/gate");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("harness.toml"), "").unwrap();
        assert_eq!(find(&top, Some(&top)).unwrap(), Some(deep));
    }

    #[test]
    fn outside_a_repository_only_the_folder_itself_counts() {
        let dir = tempfile::tempdir().unwrap();
        let here = dir.path().canonicalize().unwrap();
        std::fs::create_dir(here.join("sub")).unwrap();
        std::fs::write(here.join("harness.toml"), "").unwrap();
        assert_eq!(find(&here.join("sub"), None).unwrap(), None);
        assert_eq!(find(&here, None).unwrap(), Some(here));
    }
}
