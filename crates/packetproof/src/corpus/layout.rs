//! The corpus cannot rot silently: both configured directories exist, every
//! folder under `paths.fixtures` that holds files is a case (has request.json)
//! or belongs to one, and every golden folder that holds files belongs to a case
//! and holds no temp file of a bless that was killed while writing it.
//! A misspelt `request.json` or a deleted fixture is one finding naming the
//! folder and the fix, never a case that is skipped.

use super::{Case, REQUEST_FILE};
use crate::{Config, CorpusCheck, Error, Finding, Location, Result};
use std::path::{Path, PathBuf};

/// Folders that do not fit the corpus layout.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    /// Fixture folders with files but no request.json: (folder, the file names it holds).
    pub(crate) stray_fixtures: Vec<(PathBuf, Vec<String>)>,
    /// Golden folders with files whose fixture does not exist.
    pub(crate) unreferenced_golden: Vec<PathBuf>,
    /// Temp files (`.packetproof-*.tmp`) under the golden folder (a bless was killed
    /// mid-write), each with the case whose folder holds it.
    pub(crate) golden_temps: Vec<(PathBuf, Option<String>)>,
}

/// Both corpus directories must exist: a misspelt path in harness.toml is an
/// error (exit 2), never an empty corpus, and nothing creates it.
pub(crate) fn require_dirs(config: &Config) -> Result<()> {
    for (key, dir) in [("paths.fixtures", &config.paths.fixtures), ("paths.golden", &config.paths.golden)] {
        if !dir.is_dir() {
            return Err(Error::Config {
                file: config.file.as_deref().unwrap_or(&config.root).display().to_string(),
                message: format!(
                    "{key} names {}, which is not a directory: fix the path, or create the directory \
                     (packetproof never creates it)",
                    dir.display()
                ),
            });
        }
    }
    Ok(())
}

/// The folders under the corpus directories that no case explains.
pub(crate) fn layout(config: &Config, cases: &[Case]) -> Result<Layout> {
    require_dirs(config)?;
    let mut layout = Layout::default();
    for dir in dirs_with_files(&config.paths.fixtures)? {
        let in_a_case =
            dir.ancestors().take_while(|a| *a != config.paths.fixtures).any(|a| a.join(REQUEST_FILE).is_file());
        if !in_a_case {
            layout.stray_fixtures.push((dir.clone(), file_names(&dir)?));
        }
    }
    for dir in dirs_with_files(&config.paths.golden)? {
        if !cases.iter().any(|c| c.golden_dir == dir) {
            layout.unreferenced_golden.push(dir);
        }
    }
    for temp in temps_under(&config.paths.golden)? {
        let case = cases.iter().find(|c| temp.parent() == Some(c.golden_dir.as_path()));
        layout.golden_temps.push((temp, case.map(|c| c.name.clone())));
    }
    Ok(layout)
}

impl Layout {
    /// One finding per folder, each naming the fix.
    pub(crate) fn findings(&self, config: &Config) -> Vec<Finding> {
        let mut out = Vec::new();
        for (dir, files) in &self.stray_fixtures {
            let near = files.iter().find(|f| f.to_lowercase().contains("request"));
            let holds = near.map_or_else(|| format!("it holds {}", files.join(", ")), |f| format!("it holds {f}"));
            out.push(Finding::new(
                CorpusCheck::Layout,
                Location::named(dir.display().to_string()),
                format!(
                    "fixture folder without {REQUEST_FILE} ({holds}), so it is no case: name the compile input \
                     {REQUEST_FILE}, or remove the folder"
                ),
            ));
        }
        for dir in &self.unreferenced_golden {
            let fixture = dir.strip_prefix(&config.paths.golden).map(|r| config.paths.fixtures.join(r));
            let fixture = fixture.map(|f| f.join(REQUEST_FILE).display().to_string()).unwrap_or_default();
            out.push(Finding::new(
                CorpusCheck::Layout,
                Location::named(dir.display().to_string()),
                format!(
                    "golden folder belongs to no fixture ({fixture} does not exist): restore the fixture, or \
                     remove the folder with `{} bless --unreferenced delete`",
                    crate::distribution::command_in(&config.root)
                ),
            ));
        }
        for (temp, case) in &self.golden_temps {
            let fix = match case {
                Some(name) => format!(
                    "bless the case again (`{} bless {name}`), which removes it",
                    crate::distribution::command_in(&config.root)
                ),
                None => "remove it".to_owned(),
            };
            out.push(Finding::new(
                CorpusCheck::Layout,
                Location::named(temp.display().to_string()),
                format!("a temp file left by a bless that was killed while writing golden files: {fix}"),
            ));
        }
        out
    }
}

/// Every folder under `root` (not `root` itself) that directly holds a file.
fn dirs_with_files(root: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root).min_depth(1).sort_by_file_name() {
        let entry = entry.map_err(|e| Error::io(e.path().unwrap_or(root).to_path_buf(), e.into()))?;
        if entry.file_type().is_file() {
            if let Some(parent) = entry.path().parent().filter(|p| *p != root) {
                if out.last().is_none_or(|last: &PathBuf| last != parent) {
                    out.push(parent.to_path_buf());
                }
            }
        }
    }
    out.dedup();
    Ok(out)
}

/// This crate's temp files anywhere under `root`, in path order.
fn temps_under(root: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root).min_depth(1).sort_by_file_name() {
        let entry = entry.map_err(|e| Error::io(e.path().unwrap_or(root).to_path_buf(), e.into()))?;
        if !entry.file_type().is_dir() && entry.file_name().to_str().is_some_and(crate::fsutil::is_temp_name) {
            out.push(entry.into_path());
        }
    }
    Ok(out)
}

fn file_names(dir: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        if entry.path().is_file() {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    Ok(names)
}
