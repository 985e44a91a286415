//! A fixture's run directory, assembled: prepared from the case's packet, given
//! the fixture's agent artifacts, evaluated, and completed as `run/completion.toml`
//! records, each step judged by the engine as the gate asks. The run checks and
//! the mutation self-test run on what this builds.

use super::{dispatch, packet_memo, Memo, Step, Subject};
use crate::check::Checked;
use crate::corpus::record::{CompletionRecord, COMPLETION_RECORD};
use crate::corpus::{Case, PACKET_FILE};
use crate::Invocation;
use crate::{fsutil, run, Finding, Location, Result, RunCheck};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

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
    /// What the evaluation said beside its verdict (the built-in evaluator's disagreement).
    pub(crate) notes: Vec<String>,
    /// The finished run, opened once for all its checks (each file read and parsed once).
    opened: OnceLock<std::result::Result<run::Run, String>>,
    /// The packet rules' findings on the run's packet, kept for every step and check.
    memo: Arc<Memo>,
}

/// A run prepared from `packet` (read from `file`, else written to the scratch folder)
/// in a scratch folder, given the fixture's files that come before evaluation.
fn prepared(
    case: &Case,
    config: &Invocation,
    packet: &Value,
    file: Option<PathBuf>,
    memo: &Memo,
) -> Result<(fsutil::Scratch, PathBuf)> {
    let root = fsutil::Scratch::new()?;
    let dir = root.path().join("run");
    let packet_file = match file {
        Some(file) => file,
        None => {
            let file = root.path().join(PACKET_FILE);
            fsutil::write_atomic(&file, crate::canonical::to_pretty(packet).as_bytes())?;
            file
        }
    };
    // Packet rules as the gate's own trials judge a packet without its request
    // (those that need it are trials of their own).
    run::prepare::prepare(config, &packet_file, &dir, &|value| {
        packet_memo(value, config, Step::Test, Some(memo)).findings
    })?;
    copy_fixture_files(case.run_fixture().as_deref(), &dir, |name| !AFTER_EVALUATION.contains(&name))?;
    Ok((root, dir))
}

/// The path of findings that report the lifecycle's refusals, not a check's own.
pub(crate) const LIFECYCLE: &str = "lifecycle";

/// Files the fixture may supply that `evaluate` and `complete` would write.
const AFTER_EVALUATION: [&str; 2] = [run::paths::EVALUATION, run::paths::COMPLETION];

/// The run of `case`, assembled; the packet rules' findings on its packet are kept
/// in `memo` (which the case's packet trials share).
pub(crate) fn assemble_run(case: &Case, config: &Invocation, memo: Arc<Memo>) -> Result<AssembledRun> {
    let packet = case.packet(config)?;
    // Prepared from a file: the case's own or golden one, or its derived packet written here.
    let file = case.derived_from()?.is_none().then(|| case.packet_under_test());
    let (root, dir) = prepared(case, config, &packet, file, &memo)?;
    let fixture = case.run_fixture();
    let supplied = |name: &str| fixture.as_ref().map(|f| f.join(name)).filter(|p| p.is_file());
    let (mut refusals, mut notes) = (Vec::new(), Vec::new());
    if supplied(run::paths::EVALUATION).is_none() {
        match super::evaluate_with(config, &run::EvaluateRequest::for_run(dir.clone()), &memo).map(|j| j.value.0) {
            Ok(evaluation) if !evaluation.ok => {
                notes.extend(evaluation.notes.iter().cloned());
                let failures: Vec<String> =
                    evaluation.failures.iter().map(|f| format!("[{}] {}", f.stage, f.message)).collect();
                refusals.push(format!("evaluate failed: {}", failures.join("; ")));
            }
            Ok(evaluation) => notes.extend(evaluation.notes),
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
        if let Err(e) = super::complete_with(config, &args, &memo) {
            refusals.push(format!("complete refused: {e}"));
        }
    }
    Ok(AssembledRun { root, dir, packet, refusals, notes, opened: OnceLock::new(), memo })
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
        Ok(AssembledRun {
            root,
            dir,
            packet: self.packet.clone(),
            refusals: self.refusals.clone(),
            notes: self.notes.clone(),
            opened: OnceLock::new(),
            memo: Arc::clone(&self.memo),
        })
    }

    /// The run, opened once (or why it cannot be).
    fn opened(&self, config: &Invocation) -> std::result::Result<&run::Run, &str> {
        let opened =
            self.opened.get_or_init(|| run::Run::open(&self.dir, config.settings()).map_err(|e| e.to_string()));
        opened.as_ref().map_err(String::as_str)
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

/// A run check on a fixture's assembled run (the gate assembles it once for all its run checks).
pub(crate) fn on_assembled_run(check: RunCheck, assembled: &AssembledRun, config: &Invocation) -> Checked {
    let at = Subject {
        opened: Some(assembled.opened(config)),
        memo: Some(&assembled.memo),
        ..Subject::run(&assembled.dir, Some(&assembled.packet), &[])
    };
    let mut findings = match dispatch::run(check.into(), &at, config) {
        Ok(checked) => checked.findings,
        Err(e) => vec![Finding::new(check, Location::named(assembled.dir.display().to_string()), e.to_string())],
    };
    // The lifecycle's own refusals explain a missing evaluation or receipt.
    if let Some(name) = findings.first().map(|f| f.check) {
        for step in &assembled.refusals {
            findings.push(Finding::new(name, Location::named(LIFECYCLE), step.clone()));
        }
    }
    findings.into()
}

/// The verdict of the suite's `[evaluator]` on the answer in the run `dir` prepared
/// from `packet`, as the golden file records it (`crate::suite_evaluator::golden`).
fn verdict_in(opened: &run::Run, packet: &Value, config: &Invocation, memo: &Memo) -> Result<Value> {
    let raw = opened.read(&opened.raw_output)?;
    let rules = |value: &Value| packet_memo(value, config, Step::Test, Some(memo)).findings;
    let raw = (raw.as_slice(), opened.raw_output.name.as_str());
    let evaluation = run::evaluate::assess(opened, Some(packet), None, raw, config, &rules)?;
    Ok(crate::suite_evaluator::golden(evaluation.ok, &evaluation.failures))
}

/// The verdict `bless` records for `case` with its new `packet`: `None` when the
/// suite has no `[evaluator]` or the fixture no answer (`run/raw-output.json`).
pub(crate) fn verdict_for(case: &Case, packet: &Value, config: &Invocation) -> Result<Option<Value>> {
    let answered = case.run_fixture().is_some_and(|dir| dir.join(run::paths::RAW_OUTPUT).is_file());
    if config.settings().agents.of_value(packet).evaluator.is_none() || !answered {
        return Ok(None);
    }
    let memo = Memo::new(config);
    let (_root, dir) = prepared(case, config, packet, None, &memo)?;
    verdict_in(&run::Run::open(&dir, config.settings())?, packet, config, &memo).map(Some)
}

/// `run::evaluator-verdict` on a fixture's assembled run: the suite's evaluator gives
/// the answer its golden verdict, and fails it at the stage expect.toml declares.
pub(crate) fn verdict_check(case: &Case, assembled: &AssembledRun, config: &Invocation) -> Checked {
    let check = RunCheck::EvaluatorVerdict;
    let golden_file = case.golden_verdict();
    let at_golden = || Location::named(golden_file.display().to_string());
    let verdict = |opened| verdict_in(opened, &assembled.packet, config, &assembled.memo);
    let fresh = match assembled.opened(config).map(verdict) {
        Ok(Ok(fresh)) => fresh,
        Ok(Err(e)) => return vec![Finding::new(check, Location::named(case.name.clone()), e.to_string())].into(),
        Err(e) => return vec![Finding::new(check, Location::named(case.name.clone()), e)].into(),
    };
    let bless = format!("`{} bless {}`", crate::distribution::command_in(&config.settings().root), case.name);
    let mut findings = Vec::new();
    match case.evaluator_stage() {
        Err(e) => findings.push(Finding::new(check, Location::named(case.name.clone()), e.to_string())),
        Ok(Some(stage)) if fresh["earliestFailureStage"] != stage.as_str() => {
            let expect = case.expect.as_deref().unwrap_or(&case.dir).display().to_string();
            let said =
                format!("declares that the evaluator fails the answer at stage {stage:?}, but it {}", said(&fresh));
            findings.push(Finding::new(check, Location::named(expect), said));
        }
        Ok(_) => {}
    }
    match fsutil::read_json(&golden_file, config.settings().limits.max_file_bytes) {
        Err(_) if !golden_file.exists() => findings.push(Finding::new(
            check,
            at_golden(),
            format!("no golden evaluator verdict yet (the evaluator {} now): bless it with {bless}", said(&fresh)),
        )),
        Err(e) => findings.push(Finding::new(check, at_golden(), e.to_string())),
        Ok(blessed) if blessed != fresh => {
            let how = if said(&blessed) == said(&fresh) {
                format!("it {} as blessed, but its failures now read: {}", said(&fresh), failures(&fresh))
            } else {
                format!("blessed: it {}; now it {}", said(&blessed), said(&fresh))
            };
            findings.push(Finding::new(
                check,
                at_golden(),
                format!("the evaluator's verdict is not the blessed one ({how}); if the change is intended, bless it with {bless}"),
            ));
        }
        Ok(_) => {}
    }
    findings.into()
}

/// "passes", or "fails at stage \"x\"", of a golden verdict.
fn said(verdict: &Value) -> String {
    match verdict["earliestFailureStage"].as_str() {
        None => "passes".to_owned(),
        Some(stage) => format!("fails at stage {stage:?}"),
    }
}

fn failures(verdict: &Value) -> String {
    let listed = verdict["failures"].as_array().map(Vec::as_slice).unwrap_or_default();
    let each = listed
        .iter()
        .map(|f| format!("[{}] {}", f["stage"].as_str().unwrap_or("?"), f["message"].as_str().unwrap_or("?")));
    crate::report::excerpt(&each.collect::<Vec<_>>().join("; "))
}
