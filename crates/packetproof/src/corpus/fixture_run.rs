//! A fixture's run directory, assembled: prepared from the case's packet, given
//! the fixture's agent artifacts, evaluated, and completed as `run/completion.toml`
//! records. The run checks and the mutation self-test run on what this builds.

use super::Case;
use crate::{fsutil, run, Config, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

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

/// A run directory built for a case in a temporary folder: prepared from the
/// case's packet, given the fixture's agent artifacts, evaluated, and completed
/// when the fixture records a completion. A file in the fixture's `run/` replaces
/// what the lifecycle step that writes it would have written (a negative case's
/// hand-broken manifest, snapshot, agent request, evaluation or receipt).
pub(crate) struct AssembledRun {
    root: fsutil::Scratch,
    pub(crate) dir: PathBuf,
    pub(crate) packet: Value,
    /// Steps of the lifecycle that refused (a negative case expects some).
    pub(crate) refusals: Vec<String>,
}

/// The path of findings that report the lifecycle's refusals, not a check's own.
pub(crate) const LIFECYCLE: &str = "lifecycle";

/// Files the fixture may supply that `evaluate` and `complete` would write.
const AFTER_EVALUATION: [&str; 2] = [run::paths::EVALUATION, run::paths::COMPLETION];

pub(crate) fn assemble_run(case: &Case, config: &Config) -> Result<AssembledRun> {
    let root = fsutil::Scratch::new()?;
    let dir = root.path().join("run");
    let packet = case.packet(config)?;
    // Prepared from a file: the case's own or golden one, or its derived packet written here.
    let packet_file = match case.derived_from()? {
        None => case.packet_under_test(),
        Some(_) => {
            let file = root.path().join(super::PACKET_FILE);
            fsutil::write_atomic(&file, crate::canonical::to_pretty(&packet).as_bytes())?;
            file
        }
    };
    crate::judge::prepare(config, &packet_file, &dir)?;
    let fixture = case.run_fixture();
    let supplied = |name: &str| fixture.as_ref().map(|f| f.join(name)).filter(|p| p.is_file());
    copy_fixture_files(fixture.as_deref(), &dir, |name| !AFTER_EVALUATION.contains(&name))?;
    let mut refusals = Vec::new();
    if supplied(run::paths::EVALUATION).is_none() {
        match crate::judge::evaluate(config, &run::EvaluateRequest::for_run(dir.clone())) {
            Ok((evaluation, _)) if !evaluation.ok => {
                let failures: Vec<String> =
                    evaluation.failures.iter().map(|f| format!("[{}] {}", f.stage, f.message)).collect();
                refusals.push(format!("evaluate failed: {}", failures.join("; ")));
            }
            Ok(_) => {}
            Err(e) => refusals.push(format!("evaluate refused: {e}")),
        }
    }
    copy_fixture_files(fixture.as_deref(), &dir, |name| AFTER_EVALUATION.contains(&name))?;
    if let Some(record) = CompletionRecord::load(case)?.filter(|_| supplied(run::paths::COMPLETION).is_none()) {
        let args = run::CompleteRequest {
            run_dir: dir.clone(),
            scenario: record.scenario,
            run_id: record.run_id,
            agent_task: record.agent_task,
            notes: record.notes,
            runs_root: Some(root.path().to_path_buf()),
        };
        if let Err(e) = crate::judge::complete(config, &args) {
            refusals.push(format!("complete refused: {e}"));
        }
    }
    Ok(AssembledRun { root, dir, packet, refusals })
}

impl AssembledRun {
    /// The folder holding the run directory (a runs root of one run).
    pub(crate) fn root(&self) -> &Path {
        self.root.path()
    }

    /// A copy of this run in a scratch folder of its own, to damage (the mutation
    /// self-test): linking the files costs far less than assembling the run again.
    pub(crate) fn copy(&self) -> Result<AssembledRun> {
        let root = fsutil::Scratch::new()?;
        let dir = root.path().join("run");
        copy_files(&self.dir, &dir, |_| true)?;
        Ok(AssembledRun { root, dir, packet: self.packet.clone(), refusals: self.refusals.clone() })
    }
}

/// The regular files directly in `from` whose names `pick` selects, linked (or,
/// across file systems, copied) into `to` (created), a scratch folder thrown away
/// after the check. A hard link is safe to damage: every write of this crate
/// replaces a file by renaming a new one over it, so the original keeps its bytes.
pub(crate) fn copy_files(from: &Path, to: &Path, pick: impl Fn(&str) -> bool) -> Result<()> {
    std::fs::create_dir_all(to).map_err(|e| crate::Error::io(to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| crate::Error::io(from, e))? {
        let entry = entry.map_err(|e| crate::Error::io(from, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().map_err(|e| crate::Error::io(entry.path(), e))?.is_file() && pick(&name) {
            let target = to.join(&name);
            if std::fs::hard_link(entry.path(), &target).is_err() {
                std::fs::copy(entry.path(), &target).map_err(|e| crate::Error::io(entry.path(), e))?;
            }
        }
    }
    Ok(())
}

/// The fixture's run files (not the completion record) whose names `pick` selects.
fn copy_fixture_files(fixture: Option<&Path>, dir: &Path, pick: impl Fn(&str) -> bool) -> Result<()> {
    let Some(fixture) = fixture else { return Ok(()) };
    let entries = std::fs::read_dir(fixture).map_err(|e| crate::Error::io(fixture, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| crate::Error::io(fixture, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == COMPLETION_RECORD || !entry.path().is_file() || !pick(&name) {
            continue;
        }
        let bytes = crate::fsutil::read_bytes(&entry.path(), crate::fsutil::DEFAULT_MAX_BYTES)?;
        fsutil::write_atomic(&dir.join(&name), &bytes)?;
    }
    Ok(())
}
