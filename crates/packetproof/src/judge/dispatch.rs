//! The one dispatch from a rule to its function. Every `match` here is
//! exhaustive: a new check does not compile until it is wired, so no declared
//! rule is left without a function.

use super::{Origin, Step, Subject};
use crate::check::{self, Checked};
use crate::run::{audit, provider_request, Run};
use crate::Invocation;
use crate::RunCheck;
use crate::{fsutil, packet, Check, CorpusCheck, Error, Finding, InputCheck, Location, PacketCheck, Result};
use serde_json::{Map, Value};
use std::path::Path;

/// Run `check` on what `at` holds. `decide` has said it applies; an `Err` means
/// its inputs could not be read (the caller reports it as the check's finding).
pub(crate) fn run(check: Check, at: &Subject, config: &Invocation) -> Result<Checked> {
    match check {
        Check::Packet(check) => {
            let value = at.packet.ok_or_else(|| missing(check.into(), "a packet"))?;
            on_packet(check, value, at.origin, config)
        }
        Check::Run(check) => {
            let dir = at.run.ok_or_else(|| missing(check.into(), "a run directory"))?;
            Ok(match at.opened {
                Some(opened) => on_opened_memo(check, dir, opened, (at.given, at.keys), config, at.memo),
                None => on_run(check, dir, at.given, at.keys, config),
            }
            .into())
        }
        Check::Corpus(check) => match check {
            CorpusCheck::Layout
            | CorpusCheck::SnapshotParity
            | CorpusCheck::UniqueAgentTasks
            | CorpusCheck::BranchCoverage
            | CorpusCheck::Lock => check::on_corpus(check, config).map(Checked::from),
            // The self-test damages packets and runs and judges them through here, so
            // it lives above (`crate::mutation::self_test_case`, one trial per fixture).
            CorpusCheck::MutationSelfTest => {
                Err(Error::Internal(format!("{check} runs through the mutation self-test")))
            }
        },
        Check::Input(check) => match check {
            InputCheck::GoldenAgentRequest
            | InputCheck::CompileRequest
            | InputCheck::WireRequest
            | InputCheck::VerifyNothingFound
            | InputCheck::VerifyUnreadable
            | InputCheck::GateVouched => {
                Err(Error::Internal(format!("{check} is judged by the command that reads its input")))
            }
        },
    }
}

fn missing(check: Check, what: &str) -> Error {
    Error::Internal(format!("{check} was asked of a subject without {what}"))
}

/// A packet rule on a packet as stored (`packet::regenerates` compares it whole).
pub(crate) fn on_packet(
    check: PacketCheck,
    value: &Value,
    origin: Option<Origin>,
    config: &Invocation,
) -> Result<Checked> {
    let Some(map) = value.as_object() else { return Ok(not_an_object()) };
    match check {
        PacketCheck::Regenerates => match origin.ok_or_else(|| missing(check.into(), "the compile request"))? {
            Origin::Case(case) => check::packet::regenerates(case, value, config),
            Origin::Request { value: request, file } => Ok(check::packet::compiles_to(request, file, value, config)),
        },
        _ => on_object(check, map, origin, config),
    }
}

/// `packet::regenerates` on a fixture's packet as [`on_packet`] judges it, given
/// what the fixture's request makes now (`corpus::produce`, made once per fixture).
pub(crate) fn regenerates_from(
    case: &crate::corpus::Case,
    value: &Value,
    produced: &Result<Value>,
    config: &Invocation,
) -> Result<Checked> {
    match value.is_object() {
        true => check::packet::regenerates_from(case, value, produced, config),
        false => Ok(not_an_object()),
    }
}

fn not_an_object() -> Checked {
    vec![Finding::new(PacketCheck::Contract, Location::root(), "expected the packet to be a JSON object")].into()
}

/// A packet rule on a packet object (what the mutation self-test damages).
pub(crate) fn on_object(
    check: PacketCheck,
    map: &Map<String, Value>,
    origin: Option<Origin>,
    config: &Invocation,
) -> Result<Checked> {
    let origin = || origin.ok_or_else(|| missing(check.into(), "the compile request"));
    Ok(match check {
        PacketCheck::Regenerates => return on_packet(check, &Value::Object(map.clone()), origin().ok(), config),
        PacketCheck::BranchIsolation => {
            let origin = origin()?;
            check::branch_isolation(map, origin.request(), config, &origin.file()).into()
        }
        PacketCheck::ExactInputHash => packet::exact_input_hash(map, config).into(),
        PacketCheck::Checksum => packet::checksum(map, config).into(),
        PacketCheck::Contract => packet::contract(map, config).into(),
        PacketCheck::ForbiddenMaterial => packet::forbidden_material(map, config).into(),
        PacketCheck::ProviderShape => packet::provider_shape(map, config.settings()).into(),
        PacketCheck::BranchConsistency => packet::branch_consistency::check(map, config.settings()).into(),
        PacketCheck::RendersFromInput => crate::check::renders_from_input::check(map, config).into(),
        PacketCheck::TemplateConformance => crate::conform::rule::check(map, config).into(),
    })
}

/// One run rule on a run directory (`given`: the packet it was prepared from, if known).
pub(crate) fn on_run(
    check: RunCheck,
    dir: &Path,
    given: Option<&Value>,
    keys: &[ed25519_dalek::VerifyingKey],
    config: &Invocation,
) -> Vec<Finding> {
    let opened = Run::open(dir, config.settings()).map_err(|e| e.to_string());
    on_opened(check, dir, opened.as_ref().map_err(String::as_str), given, keys, config)
}

/// [`on_run`] on the run opened once for every rule of one judgement (or why it
/// could not be opened, which each rule that reads it reports).
pub(crate) fn on_opened(
    check: RunCheck,
    dir: &Path,
    opened: std::result::Result<&Run, &str>,
    given: Option<&Value>,
    keys: &[ed25519_dalek::VerifyingKey],
    config: &Invocation,
) -> Vec<Finding> {
    on_opened_memo(check, dir, opened, (given, keys), config, None)
}

/// [`on_opened`], the packet rules a re-evaluation applies kept in `memo`.
fn on_opened_memo(
    check: RunCheck,
    dir: &Path,
    opened: std::result::Result<&Run, &str>,
    (given, keys): (Option<&Value>, &[ed25519_dalek::VerifyingKey]),
    config: &Invocation,
    memo: Option<&super::Memo>,
) -> Vec<Finding> {
    let with = |audit: &dyn Fn(&Run) -> Vec<Finding>| match opened {
        Ok(run) => audit(run),
        Err(e) => audit::unopened(check, dir, e),
    };
    match check {
        RunCheck::AgentRequest => with(&|run| audit::agent_request(run, given)),
        RunCheck::ManifestBinding => with(&|run| audit::manifest_binding(run, given)),
        RunCheck::SnapshotParity => with(&|run| audit::snapshot_parity(run, given, config)),
        RunCheck::Evaluation => with(&|run| {
            audit::evaluation(run, given, config, &|value| {
                super::packet_memo(value, config, Step::Verify, memo).findings
            })
        }),
        // A run directory alone has no golden verdict (`decide` says so); the rule is
        // judged on a fixture's assembled run (`fixture_run::verdict_check`).
        RunCheck::EvaluatorVerdict => Vec::new(),
        RunCheck::Completion => with(&audit::completion),
        RunCheck::ProviderRequest => provider_request::check(dir, config.settings()),
        RunCheck::Attestation => crate::run::attestation::check(dir, keys, config.settings()),
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
