//! `packetproof complete`: write completion.json, the receipt that a fresh agent's
//! answer passed evaluation. Stricter than the Node script: it refuses a failing,
//! missing or stale evaluation (one made from other raw output bytes), a manifest
//! that is not this run's prepared receipt, an agent task id already used by any
//! completion under the runs root, blank notes, and an existing receipt.

use super::audit;
use super::format::{self, Completion, CompletionIds, EvaluationDigest, FileDigest};
use super::runs_root::RunsRoot;
use super::{Run, RunFile};
use crate::fsutil::Replace;
use crate::Invocation;
use crate::{canonical, digest, Error, Finding, Result, RunCheck};
use serde_json::Value;
use std::path::PathBuf;

/// What `complete` records: the run, who ran it as what, and the evaluator's notes.
#[derive(Debug, Clone)]
pub struct CompleteRequest {
    /// The evaluated run directory.
    pub run_dir: PathBuf,
    pub scenario: String,
    pub run_id: String,
    /// The fresh agent's task id; must not appear in any other completion under the runs root.
    pub agent_task: String,
    /// Evaluator notes (at least one, none blank).
    pub notes: Vec<String>,
    /// Where agent task ids must be unique; default: the run directory's parent.
    pub runs_root: Option<PathBuf>,
}

/// Write the completion receipt; returns its path and the runs root scanned.
/// Everything from "the task id is unused" and "the evaluation passed" to the
/// write happens under the run directory's lock and the runs root's lock, so a
/// concurrent complete or evaluate cannot slip between the checks and the write.
pub(crate) fn complete(
    config: &Invocation,
    args: &CompleteRequest,
    gate: super::RunGate,
    packet_rules: super::PacketGate,
) -> Result<(PathBuf, PathBuf)> {
    check_arguments(args)?;
    let (dir, root) = RunsRoot::lock_with_run(args.runs_root.as_deref(), &args.run_dir)?;
    let run = Run::open(&args.run_dir, config.settings())?;
    if run.completion.path.symlink_metadata().is_ok() {
        return Err(Error::refused(run.show(&run.completion), "already exists and is never overwritten"));
    }
    if run.evaluation.path.symlink_metadata().is_err() {
        return Err(Error::refused(
            run.show(&run.evaluation),
            "missing: run `packetproof evaluate` first; only a passing evaluation is completed",
        ));
    }
    // The cheap refusal first: a reused agent task needs no run audit to be refused.
    if let Some(other) = root.task_in_use(&args.agent_task, config.settings().limits.max_file_bytes)? {
        let message = format!(
            "agent task {:?} is already recorded here; every completion needs a fresh agent task",
            args.agent_task
        );
        let finding =
            crate::Finding::new(crate::CorpusCheck::UniqueAgentTasks, crate::JsonPath::field("agentTask"), message);
        return Err(Error::Failed { file: other.display().to_string(), findings: vec![finding] });
    }
    let packet = run.packet(None)?;
    let mut findings = gate(&run, None);
    let strict = audit::evaluation_problems(&run, packet, config, packet_rules, true);
    findings.extend(strict.into_iter().map(|p| Finding::new(RunCheck::Evaluation, p.at, p.message)));
    let answer = audit::answer_problems(&run);
    findings.extend(answer.into_iter().map(|p| Finding::new(RunCheck::Completion, p.at, p.message)));
    findings.dedup();
    if !findings.is_empty() {
        return Err(Error::Failed { file: args.run_dir.display().to_string(), findings });
    }
    let receipt = receipt(&run, args)?;
    dir.write(&run.completion.name, canonical::to_pretty(&receipt).as_bytes(), Replace::Refused)?;
    Ok((args.run_dir.join(&run.completion.name), root.path.clone()))
}

fn check_arguments(args: &CompleteRequest) -> Result<()> {
    for (flag, value) in
        [("--scenario", &args.scenario), ("--run-id", &args.run_id), ("--agent-task", &args.agent_task)]
    {
        // An id that could drive a terminal, or differ invisibly from another, is refused.
        if let Some(c) = value.chars().find(|c| c.is_control()) {
            return Err(Error::Usage(format!(
                "{flag} {:?} contains the control character U+{:04X}; ids are printable text",
                crate::report::escape_controls(value),
                c as u32
            )));
        }
        if value.trim().is_empty() {
            return Err(Error::Usage(format!("{flag} must not be blank")));
        }
        // " T1" and "T1" would be two task ids to a string compare and one to a person.
        if value.trim() != value.as_str() {
            return Err(Error::Usage(format!("{flag} {value:?} must not start or end with whitespace")));
        }
    }
    if args.notes.is_empty() || args.notes.iter().any(|n| n.trim().is_empty()) {
        return Err(Error::Usage("--note: at least one evaluator note is required, and none may be blank".into()));
    }
    Ok(())
}

/// completion.json, Node's fields in Node's order ([`format::Completion`]).
fn receipt(run: &Run, args: &CompleteRequest) -> Result<Value> {
    let manifest = run.manifest.as_ref().expect("manifest_binding requires a manifest");
    let evaluation = run.read_object(&run.evaluation)?;
    let digest_of = |file: &RunFile| -> Result<FileDigest> {
        Ok(FileDigest { file: file.name.clone(), checksum: digest::sha256(&run.read(file)?) })
    };
    let evaluated = digest_of(&run.evaluation)?;
    let ids = CompletionIds {
        scenario: args.scenario.clone(),
        run_id: args.run_id.clone(),
        agent_task: args.agent_task.clone(),
        notes: args.notes.clone(),
    };
    let receipt = Completion::new(
        ids,
        super::now_rfc3339(),
        digest_of(&run.agent_request)?,
        manifest,
        digest_of(&run.raw_output)?,
        EvaluationDigest {
            file: evaluated.file,
            checksum: evaluated.checksum,
            ok: evaluation.get("ok").cloned().unwrap_or(Value::Null),
        },
    );
    Ok(format::to_value(&receipt))
}
