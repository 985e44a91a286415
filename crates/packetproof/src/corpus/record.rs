//! `run/completion.toml`: what a fixture records of its run's completion (the
//! gate completes the assembled run with it, `crate::judge::fixture_run`).

use super::Case;
use crate::Result;

/// `run/completion.toml`: what the operator records when completing the run.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CompletionRecord {
    pub(crate) scenario: String,
    pub(crate) run_id: String,
    pub(crate) agent_task: String,
    pub(crate) notes: Vec<String>,
}

pub(crate) const COMPLETION_RECORD: &str = "completion.toml";

impl CompletionRecord {
    /// When the case's completion record was last written (the epoch when unknown).
    pub(crate) fn written(case: &Case) -> std::time::SystemTime {
        let file = case.run_fixture().map(|dir| dir.join(COMPLETION_RECORD));
        let modified = file.and_then(|f| std::fs::metadata(f).ok()).and_then(|m| m.modified().ok());
        modified.unwrap_or(std::time::UNIX_EPOCH)
    }

    pub(crate) fn load(case: &Case) -> Result<Option<CompletionRecord>> {
        let Some(run_dir) = case.run_fixture() else { return Ok(None) };
        let path = run_dir.join(COMPLETION_RECORD);
        if !path.is_file() {
            return Ok(None);
        }
        let text = crate::fsutil::read_to_string(&path, crate::fsutil::DEFAULT_MAX_BYTES)?;
        toml::from_str(&text)
            .map(Some)
            .map_err(|e| crate::Error::Config { file: path.display().to_string(), message: e.to_string() })
    }
}
