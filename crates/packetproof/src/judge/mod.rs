//! The rule book, executed. Whether a rule applies is decided here and only here
//! (`decide`): from what the rule declares it reads and needs (`crate::rules`),
//! the suite's `[checks] skip` and the step asking (which command, which point of
//! the run lifecycle). A rule that applies runs through the one dispatch
//! (`dispatch`); one that does not is reported skipped with the reason. Every
//! command that judges a packet or a run (`validate`, `verify`, `prepare`,
//! `evaluate`, `complete`, `attest`, `test`, `bless`, `export`, `wire`, `trace`)
//! asks through here, so one artifact gets one verdict whichever command reads it.

pub(crate) mod dispatch;
pub(crate) mod fixture_run;
mod golden;
mod lifecycle;
pub(crate) mod memo;

use crate::corpus::Case;
use crate::rules::Stage;
use crate::run::{self, paths};
use crate::Invocation;
use crate::{Check, Finding, Location, Need, Outcome, PacketCheck, Reads};
use serde_json::Value;
use std::path::Path;

pub use golden::packet_file;
pub use lifecycle::{attest, complete, evaluate, export, prepare, wire_body, wire_check, Judged};
pub(crate) use lifecycle::{complete_with, evaluate_with};
pub(crate) use memo::Memo;

/// Why the rules that need a compile request do not apply to a packet on its own.
pub(crate) const NO_REQUEST: &str =
    "needs the compile request the packet was made from: only a golden packet of the suite's fixtures has one";

/// The command asking, and so the point of the run lifecycle it stands at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Validate,
    Verify,
    Prepare,
    Evaluate,
    Complete,
    Attest,
    Test,
    Bless,
    Export,
    Wire,
    Trace,
}

impl Step {
    /// `Err(why)` when `check` is not due at this step: the rule declares that this
    /// step makes what it checks (or applies it itself).
    fn due(self, check: Check) -> Result<(), String> {
        match self.stage().filter(|stage| check.rule().not_due_at.contains(stage)) {
            None => Ok(()),
            Some(Stage::Write) if check == Check::Packet(crate::PacketCheck::Regenerates) => {
                Err(format!("{} writes what the request makes now: there is nothing to regenerate", self.name()))
            }
            Some(Stage::Write) => Err(format!(
                "{} writes what the request makes now: the gate judges it among the golden packets once written",
                self.name()
            )),
            Some(Stage::Evaluate | Stage::Complete | Stage::Attest) => {
                Err(format!("not yet due: {} comes before it", self.name()))
            }
        }
    }

    /// The stage of the lifecycle this step stands at, if any rule cares.
    const fn stage(self) -> Option<Stage> {
        match self {
            Step::Evaluate => Some(Stage::Evaluate),
            Step::Complete => Some(Stage::Complete),
            Step::Attest => Some(Stage::Attest),
            Step::Bless | Step::Export => Some(Stage::Write),
            Step::Validate | Step::Verify | Step::Prepare | Step::Test | Step::Wire | Step::Trace => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Step::Validate => "validate",
            Step::Verify => "verify",
            Step::Prepare => "prepare",
            Step::Evaluate => "evaluate",
            Step::Complete => "complete",
            Step::Attest => "attest",
            Step::Test => "test",
            Step::Bless => "bless",
            Step::Export => "export",
            Step::Wire => "wire",
            Step::Trace => "trace",
        }
    }
}

/// Where a packet's compile request comes from.
#[derive(Clone, Copy)]
pub enum Origin<'a> {
    /// A fixture of the suite (its request, and its producer: compiler or exporter).
    Case(&'a Case),
    /// A request read by the command (`export`).
    Request { value: &'a Value, file: &'a str },
}

impl Origin<'_> {
    pub(crate) fn request(&self) -> &Value {
        match self {
            Origin::Case(case) => &case.request,
            Origin::Request { value, .. } => value,
        }
    }

    pub(crate) fn file(&self) -> String {
        match self {
            Origin::Case(case) => case.request_path().display().to_string(),
            Origin::Request { file, .. } => (*file).to_owned(),
        }
    }
}

/// What the step asking has in hand: a packet (with the request it was made
/// from, when known), a run (a directory, or a fixture whose run the gate
/// assembles), or the suite's corpus. A rule reads what its declaration says.
#[derive(Clone, Copy, Default)]
pub(crate) struct Subject<'a> {
    pub(crate) packet: Option<&'a Value>,
    pub(crate) origin: Option<Origin<'a>>,
    pub(crate) run: Option<&'a Path>,
    /// For a run: the packet it was prepared from (else rebuilt from its files).
    pub(crate) given: Option<&'a Value>,
    /// A fixture with a `run/` folder: the run the gate assembles from it.
    pub(crate) fixture: Option<&'a Case>,
    pub(crate) keys: &'a [ed25519_dalek::VerifyingKey],
    pub(crate) corpus: bool,
    /// The findings of the rules that read a packet alone, kept across the
    /// judgements of one fixture or step (see [`Memo`]).
    pub(crate) memo: Option<&'a Memo>,
    /// The run directory opened once for every rule of the judgement (or why it
    /// cannot be): its files are read and parsed once, not once per rule.
    pub(crate) opened: Option<std::result::Result<&'a run::Run, &'a str>>,
}

impl<'a> Subject<'a> {
    pub(crate) fn packet(packet: &'a Value, origin: Option<Origin<'a>>) -> Self {
        Subject { packet: Some(packet), origin, ..Subject::default() }
    }

    pub(crate) fn run(dir: &'a Path, given: Option<&'a Value>, keys: &'a [ed25519_dalek::VerifyingKey]) -> Self {
        Subject { run: Some(dir), given, keys, ..Subject::default() }
    }

    pub(crate) fn corpus() -> Self {
        Subject { corpus: true, ..Subject::default() }
    }

    /// Whether the subject is what a rule of this kind reads.
    fn offers(&self, reads: Reads) -> bool {
        match reads {
            Reads::Packet | Reads::PacketAndRequest => self.packet.is_some(),
            Reads::Run => self.run.is_some() || self.fixture.is_some(),
            Reads::FixtureRun => self.fixture.is_some(),
            Reads::Corpus => self.corpus,
            // Judged by the command that reads them (`crate::rules::InputCheck`).
            Reads::CompileInput | Reads::Capture | Reads::Path => false,
        }
    }

    /// The agent whose contract judges the subject: its packet's (or run's packet's, or
    /// fixture's) agent.
    fn agent<'c>(&self, config: &'c Invocation) -> &'c crate::profile::Profile {
        match (self.packet.or(self.given), self.fixture) {
            (Some(packet), _) => config.settings().agents.of_value(packet),
            (None, Some(case)) => case.agent(config),
            (None, None) => &config.settings().agents.all()[0],
        }
    }

    /// `Err(why not)` when the subject lacks what `need` names.
    fn has(&self, need: Need, config: &Invocation) -> Result<(), String> {
        // Only the needs below that name an agent find it: for a fixture of a suite with
        // several agents that reads its packet.
        let agent = || self.agent(config);
        let object = || self.packet.and_then(Value::as_object).ok_or("the packet is not a JSON object".to_owned());
        match need {
            Need::SuiteTemplates => crate::check::renders_from_input::applies(object()?, config),
            Need::ConfiguredProvider => crate::packet::provider_shape_applies(object()?, config.settings()),
            Need::Request => self.origin.map(|_| ()).ok_or_else(|| NO_REQUEST.to_owned()),
            Need::Producer => match self.origin {
                Some(Origin::Case(_)) if config.settings().exporter.is_some() && !config.policy().run_exporter => Err(
                    "the suite's [exporter] makes its packets, and it runs only when asked (verify --run-exporter) \
                     or in test and bless"
                        .into(),
                ),
                _ => Ok(()),
            },
            Need::RunFile(name) if self.has_run_file(name) => Ok(()),
            Need::RunFile(name) if self.run.is_some() => Err(format!("the run has no {name}")),
            Need::RunFile(name) => Err(format!("the fixture's run/ has no {name}")),
            Need::TrustedKey if !self.keys.is_empty() || self.has_run_file(run::attestation::FILE) => Ok(()),
            Need::TrustedKey => {
                let holder = if self.run.is_some() { "the run" } else { "the fixture's run/" };
                Err(format!("{holder} has no {} and no --trusted-key requires one", run::attestation::FILE))
            }
            Need::EvaluatorRuns | Need::SuiteEvaluator if agent().evaluator.is_some() && !config.policy().run_exporter => Err(
                "the suite's [evaluator] judges the answers, and it runs only when asked (verify --run-exporter) or \
                 in evaluate, complete, test and bless"
                    .into(),
            ),
            Need::EvaluatorRuns if agent().evaluator.is_some() => Ok(()),
            Need::EvaluatorRuns => crate::evaluator::scope(agent()).map(drop),
            Need::SuiteEvaluator if agent().evaluator.is_some() => Ok(()),
            Need::SuiteEvaluator => {
                Err("the suite declares no [evaluator]: the built-in evaluator's verdict is run::evaluation's".into())
            }
            Need::GoldenVerdict => match self.fixture {
                Some(case) if case.has_own_packet() => {
                    Err("a negative fixture with a packet of its own is never blessed, so has no golden verdict".into())
                }
                Some(case) if case.run_fixture().is_some_and(|dir| dir.join(paths::RAW_OUTPUT).is_file()) => Ok(()),
                _ => Err(format!("the fixture's run/ has no {}", paths::RAW_OUTPUT)),
            },
            Need::Suite if config.settings().is_suite() => Ok(()),
            Need::Suite => Err(format!("needs a suite: there is no {}", crate::config::FILE_NAME)),
            Need::BlockBuilderProfile if agent().is_block_builder() => Ok(()),
            Need::BlockBuilderProfile => Err(format!(
                "{} contract profile is {:?}: this rule reads the block builder's renderInput, branch \
                 derivation and templates, which the profile does not have (packet::contract checks the fields, \
                 branch values and renderInput keys it declares)",
                match config.settings().agents.several() {
                    true => format!("agent {:?}'s", agent().name),
                    false => "the suite's".to_owned(),
                },
                agent().kind_name()
            )),
            Need::BuiltinBranchValues => crate::packet::builtin_branch_values(object()?, config),
            Need::AgentTemplates => crate::conform::rule::applies(object()?, config),
            Need::BuilderSchema => crate::schema::parity_applies(config),
            Need::Lock => crate::lock::applies(config.settings()),
        }
    }

    /// A run directory's file, or for a fixture one its `run/` folder supplies or
    /// that `prepare` writes when the gate assembles the run.
    fn has_run_file(&self, name: &str) -> bool {
        const PREPARED: [&str; 4] =
            [paths::AGENT_REQUEST, paths::EVAL_CONTEXT, paths::VALIDATION_SCHEMA, paths::MANIFEST];
        if let Some(dir) = self.run {
            return dir.join(name).symlink_metadata().is_ok();
        }
        let fixture = self.fixture.and_then(Case::run_fixture);
        fixture.is_some_and(|dir| PREPARED.contains(&name) || dir.join(name).is_file())
    }
}

/// Whether the suite turned `check` off: `Err(its reason)`. Only a rule the book
/// lets a suite skip can be named there (`Config` refuses the others).
fn suite_skip(check: Check, config: &Invocation) -> Result<(), String> {
    match config.settings().checks.skip.get(check.name()) {
        Some(reason) => Err(format!("turned off by {} [checks] skip: {reason}", config.settings().file_name())),
        None => Ok(()),
    }
}

/// Whether `check` applies to `at` when `step` asks: `Err(why not)`. The one place
/// this is decided.
pub(crate) fn decide(check: Check, at: &Subject, config: &Invocation, step: Step) -> Result<(), String> {
    let rule = check.rule();
    if !at.offers(rule.reads) {
        return Err(format!("reads a {}, which this step does not judge", rule.reads));
    }
    suite_skip(check, config)?;
    step.due(check)?;
    rule.needs.iter().try_for_each(|need| at.has(*need, config))
}

/// [`decide`] for a subject that could not be read: the rule runs (and fails,
/// saying why) unless the suite or the step rules it out.
pub(crate) fn decide_unread(check: Check, config: &Invocation, step: Step) -> Result<(), String> {
    suite_skip(check, config)?;
    step.due(check)
}

/// Every rule of the book that reads what `at` is: run when it applies, else
/// reported skipped with why. A packet that is not a JSON object fails
/// `packet::contract` whatever the suite skips: no rule can read it.
pub(crate) fn judge(outcome: &mut Outcome, at: &Subject, config: &Invocation, step: Step) {
    if let (Some(dir), None) = (at.run, at.opened) {
        let opened = run::Run::open(dir, config.settings()).map_err(|e| e.to_string());
        let at = Subject { opened: Some(opened.as_ref().map_err(String::as_str)), ..*at };
        return judge(outcome, &at, config, step);
    }
    let not_an_object = at.packet.is_some_and(|v| !v.is_object());
    if not_an_object {
        let message = "expected the packet to be a JSON object";
        outcome.findings.push(Finding::new(PacketCheck::Contract, Location::root(), message));
        outcome.ran(PacketCheck::Contract);
    }
    let kept = at.memo.zip(at.packet).and_then(|(memo, packet)| memo.rules(packet, config));
    for check in Check::ALL.into_iter().filter(|c| at.offers(c.rule().reads)) {
        if not_an_object {
            outcome.skip(check, "the packet is not a JSON object");
            continue;
        }
        match decide(check, at, config, step) {
            Ok(()) => {
                let run = || dispatch::run(check, at, config).map(|c| c.findings).map_err(|e| e.to_string());
                let found = match (&kept, check) {
                    (Some(kept), Check::Packet(rule)) if memo::reads_the_packet_alone(check) => kept.found(rule, run),
                    _ => run(),
                };
                match found {
                    Ok(findings) => outcome.findings.extend(findings),
                    Err(e) => outcome.findings.push(Finding::new(check, Location::named(&outcome.target), e)),
                }
                outcome.ran(check);
            }
            Err(reason) => outcome.skip(check, reason),
        }
    }
    if let Some(Ok(run)) = at.opened {
        rebuilt_packet(outcome, run, at, config, step);
    }
}

/// The run's packet, rebuilt from its own files (or the one it was prepared from),
/// judged by every packet rule; findings are located in the rebuilt packet. When it
/// cannot be rebuilt, run::agent-request already says why.
fn rebuilt_packet(outcome: &mut Outcome, run: &run::Run, at: &Subject, config: &Invocation, step: Step) {
    let Ok(value) = run.packet(at.given) else { return };
    let inner = packet_memo(value, config, step, at.memo);
    for finding in inner.findings {
        outcome.findings.push(Finding { path: finding.path.in_rebuilt_packet(), ..finding });
    }
    inner.ran.into_iter().for_each(|check| outcome.ran(check));
    inner.skipped.into_iter().for_each(|skipped| outcome.skip(skipped.check, skipped.reason));
}

/// The checks a fixture has (one conformance trial each), in report order: every
/// packet rule, and the run rules when it has a `run/` folder.
pub(crate) fn checks_of(case: &Case) -> Vec<Check> {
    let at = Subject { packet: Some(&Value::Null), fixture: case.run_fixture().map(|_| case), ..Subject::default() };
    Check::ALL
        .into_iter()
        .filter(|c| matches!(c, Check::Packet(_) | Check::Run(_)) && at.offers(c.rule().reads))
        .collect()
}

/// Every rule on a packet value, as a list (what a step refuses on) with the
/// outcome's skips: the outcome whole.
pub fn packet(value: &Value, origin: Option<Origin>, config: &Invocation, step: Step) -> Outcome {
    let mut outcome = Outcome::default();
    judge(&mut outcome, &Subject::packet(value, origin), config, step);
    outcome
}

/// Every rule on a packet value without its request, the findings of the rules
/// that read it alone kept in `memo`.
pub(crate) fn packet_memo(value: &Value, config: &Invocation, step: Step, memo: Option<&Memo>) -> Outcome {
    let mut outcome = Outcome::default();
    judge(&mut outcome, &Subject { memo, ..Subject::packet(value, None) }, config, step);
    outcome
}

/// Every rule due at `step` on a run directory (and the packet rules on its packet).
pub(crate) fn run_dir(
    dir: &Path,
    given: Option<&Value>,
    keys: &[ed25519_dalek::VerifyingKey],
    config: &Invocation,
    step: Step,
) -> Outcome {
    run_dir_memo(dir, given, keys, config, step, None)
}

/// [`run_dir`], asking `memo` for the packet rules on the run's packet.
pub(crate) fn run_dir_memo(
    dir: &Path,
    given: Option<&Value>,
    keys: &[ed25519_dalek::VerifyingKey],
    config: &Invocation,
    step: Step,
    memo: Option<&Memo>,
) -> Outcome {
    let mut outcome = Outcome::new(dir.display().to_string(), Vec::new());
    judge(&mut outcome, &Subject { memo, ..Subject::run(dir, given, keys) }, config, step);
    outcome
}

/// [`run_dir_memo`] on a run a step has opened (and reads through, so the step and
/// its gate read each file once).
pub(crate) fn opened_run(
    run: &run::Run,
    given: Option<&Value>,
    config: &Invocation,
    step: Step,
    memo: &Memo,
) -> Outcome {
    let dir = run.dir.shown.as_path();
    let mut outcome = Outcome::new(dir.display().to_string(), Vec::new());
    let at = Subject { memo: Some(memo), opened: Some(Ok(run)), ..Subject::run(dir, given, &[]) };
    judge(&mut outcome, &at, config, step);
    outcome
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
