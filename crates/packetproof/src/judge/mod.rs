//! Applying the rule book (`crate::rules`): every rule that applies to a packet or
//! a run directory runs, and each that cannot apply is reported with the reason.
//! `validate`, `verify`, `prepare`, `evaluate`, `complete`, `attest` and the
//! conformance runner all judge through here, so one artifact gets one verdict
//! whichever command reads it.

pub(crate) mod renders_from_input;

use crate::run::{self, audit, paths};
use crate::{fsutil, packet, Check, Config, Finding, Location, Outcome, PacketCheck, RunCheck};
use serde_json::{Map, Value};
use std::path::Path;

/// Why the rules that need a compile request do not apply to a packet on its own.
pub(crate) const NO_REQUEST: &str =
    "needs the compile request the packet was made from: only a golden packet of the suite's fixtures has one";

/// The packet rules that need nothing but the packet (and the suite's templates,
/// where its promptVersions show them), in report order.
const ON_ITS_OWN: [PacketCheck; 7] = [
    PacketCheck::Contract,
    PacketCheck::ProviderShape,
    PacketCheck::ForbiddenMaterial,
    PacketCheck::BranchConsistency,
    PacketCheck::ExactInputHash,
    PacketCheck::Checksum,
    PacketCheck::RendersFromInput,
];

/// Whether a check may run here: `Err(reason)` when the suite turned it off.
pub(crate) fn enabled(check: impl Into<Check>, config: &Config) -> Result<(), String> {
    match config.checks.skip.get(check.into().name()) {
        Some(reason) => Err(format!("turned off by {} [checks] skip: {reason}", config.file_name())),
        None => Ok(()),
    }
}

/// Every packet rule that applies to `value` without its compile request, and the
/// notes a report shows beside them (what `validate` and `verify` print).
pub fn packet(outcome: &mut Outcome, value: &Value, config: &Config) {
    rules(outcome, value, config);
    outcome.notes.extend(packet::notes(value, config));
}

/// The packet rules alone: what a command that refuses on them needs, without the
/// notes (which collate every object's keys) that only a report shows.
fn rules(outcome: &mut Outcome, value: &Value, config: &Config) {
    let Some(map) = value.as_object() else {
        outcome.findings.push(Finding::new(
            PacketCheck::Contract,
            Location::root(),
            "expected the packet to be a JSON object",
        ));
        outcome.ran(PacketCheck::Contract);
        for check in ON_ITS_OWN.into_iter().skip(1) {
            outcome.skip(check, "the packet is not a JSON object");
        }
        return;
    };
    for check in ON_ITS_OWN {
        apply(outcome, check, map, config, false);
    }
    for check in [PacketCheck::Regenerates, PacketCheck::BranchIsolation] {
        outcome.skip(check, NO_REQUEST);
    }
}

/// Every packet rule that applies on its own, as a list (what prepare refuses on).
pub(crate) fn packet_findings(value: &Value, config: &Config) -> Vec<Finding> {
    let mut outcome = Outcome::default();
    rules(&mut outcome, value, config);
    outcome.findings
}

/// One packet rule that needs no request: run when the suite has it on and it applies,
/// else reported skipped with why. Findings on a packet rebuilt from a run carry
/// that location (`rebuilt`).
fn apply(outcome: &mut Outcome, check: PacketCheck, map: &Map<String, Value>, config: &Config, rebuilt: bool) {
    match enabled(check, config).and_then(|()| applies(check, map, config)) {
        Ok(()) => {
            let findings = on_its_own(check, map, config);
            let locate = |f: Finding| match rebuilt {
                true => Finding { path: f.path.in_rebuilt_packet(), ..f },
                false => f,
            };
            outcome.findings.extend(findings.into_iter().map(locate));
            outcome.ran(check);
        }
        Err(reason) => outcome.skip(check, reason),
    }
}

/// Whether a packet rule can apply to this packet: `Err(why not)`.
pub(crate) fn applies(check: PacketCheck, map: &Map<String, Value>, config: &Config) -> Result<(), String> {
    match check {
        PacketCheck::RendersFromInput => renders_from_input::applies(map, config),
        PacketCheck::ProviderShape => packet::provider_shape_applies(map, config),
        PacketCheck::Regenerates | PacketCheck::BranchIsolation => Err(NO_REQUEST.into()),
        PacketCheck::ExactInputHash
        | PacketCheck::Checksum
        | PacketCheck::Contract
        | PacketCheck::BranchConsistency
        | PacketCheck::ForbiddenMaterial => Ok(()),
    }
}

/// One packet rule that needs no request, run on a packet object.
pub(crate) fn on_its_own(check: PacketCheck, map: &Map<String, Value>, config: &Config) -> Vec<Finding> {
    match check {
        PacketCheck::ExactInputHash => packet::exact_input_hash(map, config),
        PacketCheck::Checksum => packet::checksum(map, config),
        PacketCheck::Contract => packet::contract(map, config),
        PacketCheck::ForbiddenMaterial => packet::forbidden_material(map, config),
        PacketCheck::ProviderShape => packet::provider_shape(map, config),
        PacketCheck::BranchConsistency => packet::branch_consistency::check(map, config),
        PacketCheck::RendersFromInput => renders_from_input::check(map, config),
        PacketCheck::Regenerates | PacketCheck::BranchIsolation => Vec::new(),
    }
}

/// The command about to act on a run: the rules of the steps it performs itself
/// (and of later ones) are not yet due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Evaluate,
    Complete,
    Attest,
    Verify,
}

impl Step {
    /// `Err(why)` when `check` belongs to this step or a later one.
    fn due(self, check: RunCheck) -> Result<(), String> {
        let later: &[RunCheck] = match self {
            Step::Evaluate => &[RunCheck::Evaluation, RunCheck::Completion, RunCheck::Attestation],
            // `complete` applies run::evaluation itself, in its stricter form (the
            // evaluation must record the raw output's checksum): not twice.
            Step::Complete => &[RunCheck::Evaluation, RunCheck::Completion, RunCheck::Attestation],
            Step::Attest => &[RunCheck::Attestation],
            Step::Verify => &[],
        };
        match later.contains(&check) {
            true => Err(format!("not yet due: {self:?} comes before it").to_lowercase()),
            false => Ok(()),
        }
    }
}

/// Every run rule due at `step` on the run directory `dir` (`given`: the packet it was
/// prepared from, when known; otherwise it is rebuilt from the run's files), and the
/// packet rules on that packet.
pub(crate) fn run(
    outcome: &mut Outcome,
    dir: &Path,
    given: Option<&Value>,
    keys: &[ed25519_dalek::VerifyingKey],
    config: &Config,
    step: Step,
) {
    for check in RunCheck::ALL {
        let ready = enabled(check, config).and_then(|()| step.due(check)).and_then(|()| run_applies(check, dir, keys));
        match ready {
            Ok(()) => {
                outcome.findings.extend(on_run(check, dir, given, keys, config));
                outcome.ran(check);
            }
            Err(reason) => outcome.skip(check, reason),
        }
    }
    // The run's packet, rebuilt from its own files, must render from its own evidence
    // too (when it cannot be rebuilt, run::agent-request already says why).
    let rebuilt = run::Run::open(dir, config).and_then(|run| run.packet(given));
    if let Ok(Value::Object(map)) = rebuilt {
        apply(outcome, PacketCheck::RendersFromInput, &map, config, true);
    }
}

/// The run rules due at `step`, as a list (what evaluate, complete and attest refuse on).
pub(crate) fn run_findings(dir: &Path, given: Option<&Value>, config: &Config, step: Step) -> Vec<Finding> {
    let mut outcome = Outcome::default();
    run(&mut outcome, dir, given, &[], config, step);
    outcome.findings
}

/// Whether a run rule has what it reads: `Err(why not)`.
fn run_applies(check: RunCheck, dir: &Path, keys: &[ed25519_dalek::VerifyingKey]) -> Result<(), String> {
    let present = |name: &str| dir.join(name).symlink_metadata().is_ok();
    match check {
        RunCheck::ProviderRequest if !present(crate::wire::RUN_FILE) => {
            Err(format!("the run has no {} (the request its runner sent)", crate::wire::RUN_FILE))
        }
        RunCheck::Attestation if keys.is_empty() && !present(run::attestation::FILE) => {
            Err(format!("the run has no {} and no --trusted-key requires one", run::attestation::FILE))
        }
        _ => Ok(()),
    }
}

/// One run rule on a run directory.
pub(crate) fn on_run(
    check: RunCheck,
    dir: &Path,
    given: Option<&Value>,
    keys: &[ed25519_dalek::VerifyingKey],
    config: &Config,
) -> Vec<Finding> {
    match check {
        RunCheck::AgentRequest => audit::agent_request(dir, given, config),
        RunCheck::ManifestBinding => audit::manifest_binding(dir, given, config),
        RunCheck::SnapshotParity => audit::snapshot_parity(dir, given, config),
        RunCheck::Evaluation => audit::evaluation(dir, given, config),
        RunCheck::Completion => audit::completion(dir, config),
        RunCheck::ProviderRequest => run::provider_request::check(dir, config),
        RunCheck::Attestation => run::attestation::check(dir, keys, config),
        RunCheck::StaleTemp => stale_temps(dir),
    }
}

fn stale_temps(dir: &Path) -> Vec<Finding> {
    let found = fsutil::Dir::stale_temps(dir);
    let message = "a temp file left by a step that was killed; the next prepare, evaluate or complete removes it";
    found
        .into_iter()
        .map(|temp| Finding::new(RunCheck::StaleTemp, Location::named(temp.display().to_string()), message))
        .collect()
}

/// The files a run has reached, for a report: which step comes next.
pub(crate) fn stage(dir: &Path) -> &'static str {
    let has = |name: &str| dir.join(name).exists();
    match (has(paths::MANIFEST), has(paths::RAW_OUTPUT), has(paths::EVALUATION), has(paths::COMPLETION)) {
        (_, _, _, true) => "completed",
        (_, _, true, false) => "evaluated, not completed",
        (_, true, false, _) => "answered, not evaluated",
        (true, false, false, _) => "prepared, awaiting agent",
        _ => "incomplete preparation",
    }
}

/// `prepare`, refusing a packet that any rule which applies to it fails.
pub fn prepare(config: &Config, packet_file: &Path, out_dir: &Path) -> crate::Result<Vec<&'static str>> {
    run::prepare::prepare(config, packet_file, out_dir, &|value| packet_findings(value, config))
}

/// `evaluate`, refusing a run that fails a rule due before evaluation.
pub fn evaluate(
    config: &Config,
    args: &run::EvaluateRequest,
) -> crate::Result<(run::evaluate::Evaluation, std::path::PathBuf)> {
    run::evaluate::evaluate(config, args, &|dir, given| run_findings(dir, given, config, Step::Evaluate))
}

/// `complete`, refusing a run that fails a rule due before completion.
pub fn complete(
    config: &Config,
    args: &run::CompleteRequest,
) -> crate::Result<(std::path::PathBuf, std::path::PathBuf)> {
    run::complete::complete(config, args, &|dir, given| run_findings(dir, given, config, Step::Complete))
}

/// `attest`, never signing a run that any rule due before attestation fails.
pub fn attest(
    config: &Config,
    dir: &Path,
    key: &ed25519_dalek::SigningKey,
    out: Option<&Path>,
) -> crate::Result<std::path::PathBuf> {
    run::attestation::attest(config, dir, key, out, &|dir, given| run_findings(dir, given, config, Step::Attest))
}
