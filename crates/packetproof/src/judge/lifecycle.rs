//! The steps that act on a packet or run, judged: the run lifecycle, `export` and
//! `wire`. Each asks the engine before it writes or compares, and hands back the
//! rules that did not run, with why, for its report.

use super::{opened_run, packet, packet_file, packet_memo, run_dir, Memo, Origin, Step};
use crate::Invocation;
use crate::{compile, run, Error, Result, Skipped};
use serde_json::Value;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// What a step produced, and the rules that did not apply to its input.
#[derive(Debug)]
#[must_use = "the rules that did not apply must reach the report"]
pub struct Judged<T> {
    pub value: T,
    pub skipped: Vec<Skipped>,
}

/// The findings of `outcome`, its skips kept in `into` for the step's report.
fn keep_skips(outcome: crate::Outcome, into: &RefCell<Vec<Skipped>>) -> Vec<crate::Finding> {
    *into.borrow_mut() = outcome.skipped;
    outcome.findings
}

/// `prepare`, refusing a packet that any rule which applies to it fails (a golden
/// packet of the suite is judged with its request, as `verify` judges it).
pub fn prepare(config: &Invocation, packet_file_path: &Path, out_dir: &Path) -> Result<Judged<Vec<&'static str>>> {
    let skipped = RefCell::new(Vec::new());
    let gate = |value: &Value| keep_skips(packet_file(packet_file_path, value, config, Step::Prepare), &skipped);
    let written = run::prepare::prepare(config, packet_file_path, out_dir, &gate)?;
    Ok(Judged { value: written, skipped: skipped.into_inner() })
}

/// `evaluate`, refusing a run that fails a rule due before evaluation.
pub fn evaluate(
    config: &Invocation,
    args: &run::EvaluateRequest,
) -> Result<Judged<(run::evaluate::Evaluation, PathBuf)>> {
    evaluate_with(config, args, &Memo::new(config))
}

/// [`evaluate`], keeping the packet rules' findings in `memo` (a fixture's run, assembled).
pub(crate) fn evaluate_with(
    config: &Invocation,
    args: &run::EvaluateRequest,
    memo: &Memo,
) -> Result<Judged<(run::evaluate::Evaluation, PathBuf)>> {
    gated(config, Step::Evaluate, memo, |gate, rules| run::evaluate::evaluate(config, args, gate, rules))
}

/// `complete`, refusing a run that fails a rule due before completion.
pub fn complete(config: &Invocation, args: &run::CompleteRequest) -> Result<Judged<(PathBuf, PathBuf)>> {
    complete_with(config, args, &Memo::new(config))
}

/// [`complete`], keeping the packet rules' findings in `memo`.
pub(crate) fn complete_with(
    config: &Invocation,
    args: &run::CompleteRequest,
    memo: &Memo,
) -> Result<Judged<(PathBuf, PathBuf)>> {
    gated(config, Step::Complete, memo, |gate, rules| run::complete::complete(config, args, gate, rules))
}

/// `act` given the run gate of `step` and the packet rules its evaluation applies,
/// sharing `memo` (the gate and the packet stage judge the same packet); the
/// rules the gate did not run are kept for the step's report.
fn gated<T>(
    config: &Invocation,
    step: Step,
    memo: &Memo,
    act: impl FnOnce(run::RunGate, run::PacketGate) -> Result<T>,
) -> Result<Judged<T>> {
    let skipped = RefCell::new(Vec::new());
    let gate = |run: &run::Run, given: Option<&Value>| keep_skips(opened_run(run, given, config, step, memo), &skipped);
    let packet_rules = |value: &Value| packet_memo(value, config, step, Some(memo)).findings;
    let value = act(&gate, &packet_rules)?;
    Ok(Judged { value, skipped: skipped.into_inner() })
}

/// `attest`, never signing a run that any rule due before attestation fails; the
/// rules that did not run are signed into the receipt with their reasons.
pub fn attest(
    config: &Invocation,
    dir: &Path,
    key: &ed25519_dalek::SigningKey,
    out: Option<&Path>,
) -> Result<Judged<PathBuf>> {
    let skipped = RefCell::new(Vec::new());
    let gate = |dir: &Path, given: Option<&Value>| {
        let outcome = run_dir(dir, given, &[], config, Step::Attest);
        *skipped.borrow_mut() = outcome.skipped.clone();
        (outcome.findings, outcome.skipped)
    };
    let written = run::attestation::attest(config.settings(), dir, key, out, &gate)?;
    Ok(Judged { value: written, skipped: skipped.into_inner() })
}

/// `export`: the packet a compile request makes, refused (exit 1) when any rule
/// that applies to it fails; the request is at hand, so branch isolation is judged.
pub fn export(config: &Invocation, request_file: &Path) -> Result<Judged<String>> {
    let shown = request_file.display().to_string();
    let request = compile::read_request(config, request_file)?;
    let packet_value = compile::compile(&request, config, &shown)?;
    let origin = Origin::Request { value: &request, file: &shown };
    let outcome = packet(&packet_value, Some(origin), config, Step::Export);
    if !outcome.ok() {
        let file = format!("{shown} (compiled packet)");
        return Err(Error::Failed { file, findings: outcome.findings });
    }
    Ok(Judged { value: crate::canonical::to_pretty(&packet_value), skipped: outcome.skipped })
}

/// `wire`: the request body the packet implies, once the packet passes every rule
/// that applies to it (a failing packet is exit 1, as `verify` fails it).
pub fn wire_body(config: &Invocation, file: &Path, value: &Value, api: crate::wire::Api) -> Result<Judged<Value>> {
    let shown = file.display().to_string();
    let outcome = packet_file(file, value, config, Step::Wire);
    if !outcome.ok() {
        return Err(Error::Failed { file: shown, findings: outcome.findings });
    }
    Ok(Judged { value: crate::wire::body(value, api, &shown)?, skipped: outcome.skipped })
}

/// `wire --check`: the packet judged by every rule that applies to it, then the
/// captured request against the body it implies; one outcome for both, so a failing
/// packet fails the check (exit 1) and the rules that did not run are in the report.
pub fn wire_check(
    config: &Invocation,
    file: &Path,
    value: &Value,
    api: crate::wire::Api,
    captured: &crate::wire::capture::Captured,
) -> Result<crate::Outcome> {
    let judged = packet_file(file, value, config, Step::Wire);
    if !judged.ok() {
        return Ok(judged);
    }
    let shown = file.display().to_string();
    let mut outcome = crate::wire::check(value, api, captured, config.settings(), &shown, crate::wire::CHECK)?;
    for check in judged.ran {
        outcome.ran(check);
    }
    outcome.ran(crate::wire::CHECK);
    outcome.skipped.extend(judged.skipped);
    Ok(outcome)
}
