//! Named checks over the fixture corpus: the one implementation behind
//! `packetproof verify`, `packetproof bless` and `tests/conformance.rs`.
//! A check returns findings; an `Err` means its inputs could not be read.
//!
//! Every dispatch from a [`Check`] to its function is a `match` without a
//! catch-all: a new check does not compile until it is wired here.

pub(crate) mod packet;
pub mod stale;

use crate::corpus::fixture_run::{self, CompletionRecord, COMPLETION_RECORD, LIFECYCLE};
use crate::corpus::{self, Case};
use crate::judge::{self, renders_from_input};
use crate::{fsutil, Check, Config, CorpusCheck, Error, Finding, Location, PacketCheck, Result, RunCheck};
use serde_json::{Map, Value};
use std::path::Path;

pub use packet::EXPORTER_FAILED;
pub(crate) use packet::{branch_isolation, Isolation, Mismatch};

/// The error to exit with when the suite's `[exporter]` failed to make a packet of
/// `outcomes` again: `verify --run-exporter` then exits 2, could not run, as `bless` does.
pub fn exporter_failure(outcomes: &[crate::Outcome], config: &Config) -> Option<Error> {
    let failed = |o: &&crate::Outcome| o.findings.iter().any(|f| f.cause.as_deref() == Some(EXPORTER_FAILED));
    let targets: Vec<&str> = outcomes.iter().filter(failed).map(|o| o.target.as_str()).collect();
    let exporter = config.exporter.as_ref().filter(|_| !targets.is_empty())?;
    Some(Error::Exporter {
        request: targets.join(", "),
        command: format!("{:?}", exporter.command),
        reason: "failed, so packet::regenerates could not run (see the report above)".into(),
    })
}

/// What a check found, plus, for `packet::regenerates`, both texts for a diff.
#[derive(Debug, Default)]
pub(crate) struct Checked {
    pub(crate) findings: Vec<Finding>,
    pub(crate) mismatch: Option<Mismatch>,
}

impl From<Vec<Finding>> for Checked {
    fn from(findings: Vec<Finding>) -> Self {
        Checked { findings, mismatch: None }
    }
}

/// The checks that apply to a case, in report order.
pub(crate) fn applicable(case: &Case) -> Vec<Check> {
    let mut checks: Vec<Check> = PacketCheck::ALL.into_iter().map(Check::Packet).collect();
    if case.run_fixture().is_some() {
        checks.extend(RunCheck::ALL.into_iter().map(Check::Run));
    }
    checks
}

/// Whether `check` can apply to `case`: `Err(why not)` when the suite turned it off
/// or the case lacks what it needs (a packet of other templates cannot be re-rendered;
/// a fixture run without a provider request has none to check).
/// `packet`: the case's packet, when it could be read (a check that cannot read it fails).
pub(crate) fn applies(
    check: Check,
    case: &Case,
    packet: Option<&Value>,
    config: &Config,
) -> std::result::Result<(), String> {
    judge::enabled(check, config)?;
    match check {
        Check::Packet(PacketCheck::RendersFromInput) => match packet.and_then(Value::as_object) {
            Some(map) => renders_from_input::applies(map, config),
            None => Ok(()),
        },
        Check::Run(RunCheck::ProviderRequest) => fixture_file(case, crate::wire::RUN_FILE),
        Check::Run(RunCheck::Attestation) => fixture_file(case, crate::run::attestation::FILE),
        _ => Ok(()),
    }
}

fn fixture_file(case: &Case, name: &str) -> std::result::Result<(), String> {
    match case.run_fixture().is_some_and(|dir| dir.join(name).is_file()) {
        true => Ok(()),
        false => Err(format!("the fixture's run/ has no {name}")),
    }
}

/// Run one check on a case.
pub(crate) fn on_case(check: Check, case: &Case, config: &Config) -> Result<Checked> {
    match check {
        Check::Packet(check) => {
            let packet = case.packet(config)?;
            on_packet(check, &packet, case, config)
        }
        Check::Run(check) => on_fixture_run(check, case, config),
        Check::Corpus(_)
        | Check::VerifyNothingFound
        | Check::VerifyUnreadable
        | Check::GoldenAgentRequest
        | Check::CompileRequest
        | Check::WireRequest => Err(Error::Internal(format!("{check} is not a check of one fixture"))),
    }
}

/// A packet check on a packet as stored (`packet::regenerates` compares it whole).
pub(crate) fn on_packet(check: PacketCheck, packet: &Value, case: &Case, config: &Config) -> Result<Checked> {
    match (check, packet.as_object()) {
        (PacketCheck::Regenerates, _) => packet::regenerates(case, packet, config),
        (_, None) => {
            Ok(vec![Finding::new(PacketCheck::Contract, Location::root(), "expected the packet to be a JSON object")]
                .into())
        }
        (check, Some(map)) => on_object(check, map, case, config).map(Checked::from),
    }
}

/// A packet check on a packet object (what the mutation self-test damages).
pub(crate) fn on_object(
    check: PacketCheck,
    map: &Map<String, Value>,
    case: &Case,
    config: &Config,
) -> Result<Vec<Finding>> {
    Ok(match check {
        PacketCheck::Regenerates => packet::regenerates(case, &Value::Object(map.clone()), config)?.findings,
        PacketCheck::BranchIsolation => {
            branch_isolation(map, &case.request, config, &case.request_path().display().to_string())
        }
        PacketCheck::ExactInputHash
        | PacketCheck::Checksum
        | PacketCheck::Contract
        | PacketCheck::ForbiddenMaterial
        | PacketCheck::ProviderShape
        | PacketCheck::BranchConsistency
        | PacketCheck::RendersFromInput => judge::on_its_own(check, map, config),
    })
}

/// A run check on a run directory (`packet`: the packet it was prepared from, if known).
pub(crate) fn on_run(check: RunCheck, dir: &Path, packet: Option<&Value>, config: &Config) -> Vec<Finding> {
    judge::on_run(check, dir, packet, &[], config)
}

/// A run check on the run assembled from a case's fixture.
fn on_fixture_run(check: RunCheck, case: &Case, config: &Config) -> Result<Checked> {
    Ok(on_assembled_run(check, &fixture_run::assemble_run(case, config)?, config))
}

/// A run check on a fixture's assembled run (the gate assembles it once for all its run checks).
pub(crate) fn on_assembled_run(check: RunCheck, assembled: &fixture_run::AssembledRun, config: &Config) -> Checked {
    let mut findings = on_run(check, &assembled.dir, Some(&assembled.packet), config);
    // The lifecycle's own refusals explain a missing evaluation or receipt.
    if let Some(name) = findings.first().map(|f| f.check) {
        for step in &assembled.refusals {
            findings.push(Finding::new(name, Location::named(LIFECYCLE), step.clone()));
        }
    }
    findings.into()
}

/// Run one corpus-wide check.
pub(crate) fn on_corpus(check: CorpusCheck, config: &Config) -> Result<Vec<Finding>> {
    match check {
        CorpusCheck::Layout => {
            let cases = corpus::cases(config)?;
            Ok(corpus::layout::layout(config, &cases)?.findings(config))
        }
        CorpusCheck::SnapshotParity => crate::schema::check(config),
        CorpusCheck::UniqueAgentTasks => {
            let mut tasks = Vec::new();
            for case in corpus::cases(config)? {
                if let Some(record) = CompletionRecord::load(&case)? {
                    tasks.push((CompletionRecord::written(&case), case.name, record.agent_task));
                }
            }
            // Oldest record first: a reused id is blamed on the fixture being added.
            tasks.sort_by_key(|task| task.0);
            Ok(unique_agent_tasks(&tasks.into_iter().map(|(_, case, task)| (case, task)).collect::<Vec<_>>()))
        }
        CorpusCheck::BranchCoverage => branch_coverage(config),
        // The self-test damages packets and runs and calls back into this module, so
        // it lives above it (`crate::mutation::self_test_case`, one trial per fixture).
        CorpusCheck::MutationSelfTest => Err(Error::Internal(format!("{check} runs through mutation::self_test_case"))),
    }
}

/// Every branch value combination the contract names has a golden packet.
fn branch_coverage(config: &Config) -> Result<Vec<Finding>> {
    let mut rows = Vec::new();
    for case in corpus::cases(config)?.iter().filter(|c| c.expect.is_none()) {
        rows.push(corpus::branch_row(&fsutil::read_json(&case.golden_packet(), config.limits.max_file_bytes)?));
    }
    let gaps = corpus::coverage_gaps(&rows, config);
    let at = config.paths.golden.display().to_string();
    Ok(gaps
        .into_iter()
        .map(|gap| {
            Finding::new(CorpusCheck::BranchCoverage, Location::named(&at), format!("no golden packet covers {gap}"))
        })
        .collect())
}

/// A fresh agent's task id is used by one run only.
pub(crate) fn unique_agent_tasks(tasks: &[(String, String)]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, (case, task)) in tasks.iter().enumerate() {
        if let Some((first, _)) = tasks[..i].iter().find(|(_, t)| t == task) {
            out.push(Finding::new(
                CorpusCheck::UniqueAgentTasks,
                Location::named(format!("{case}/run/{COMPLETION_RECORD}")),
                format!("agent task {task:?} is already used by {first}"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_agent_task_is_named_with_both_cases() {
        let tasks =
            [("a".to_owned(), "t1".to_owned()), ("b".to_owned(), "t2".to_owned()), ("c".to_owned(), "t1".to_owned())];
        let findings = unique_agent_tasks(&tasks);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].path, Location::named("c/run/completion.toml"));
        assert!(findings[0].message.contains("already used by a"), "{}", findings[0]);
        assert!(unique_agent_tasks(&tasks[..2]).is_empty());
    }
}
