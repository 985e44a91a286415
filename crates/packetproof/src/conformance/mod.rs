//! The conformance gate's trials: one per fixture and check, named
//! `<fixture>::<check>`, plus the corpus-wide ones. `packetproof test` (any
//! repository, one binary) runs them with [`runner`]; `tests/conformance.rs` (cargo
//! test) runs the same trials through libtest-mimic.
//!
//! Construction only lists fixture directories and reads their small TOML files, so
//! `--list` and `--exact` (nextest runs one process per test) never compile the
//! corpus; every check runs inside its own trial. The checks are the library
//! functions `packetproof verify` runs, not a second implementation.

pub mod gate;
pub mod junit;
pub mod partition;
pub mod runner;

use crate::bless::{self, GoldenWrites};
use crate::check::stale::StaleGoldens;
use crate::check::Checked;
use crate::corpus::{self, Case, Expectation};
use crate::judge::fixture_run::{self, AssembledRun, LIFECYCLE};
use crate::judge::{self, dispatch, Origin, Step, Subject};
use crate::report::escape_name;
use crate::Invocation;
use crate::{mutation, Check, CorpusCheck, Error, PacketCheck, Result, RunCheck};
use runner::{Completion, Failed, Passed, Trial};
use serde_json::Value;
use std::sync::{Arc, Mutex, OnceLock};

/// Where a trial's side notes go ("blessed X", the mutation count): the caller
/// prints them (the library never prints).
pub(crate) type Note = Arc<dyn Fn(&str) + Send + Sync>;

/// The trials of a suite.
pub struct Conformance {
    pub trials: Vec<Trial>,
    /// Cases whose golden files no longer regenerate: print [`StaleGoldens::report`]
    /// after the run, so each distinct change shows once, ending with the bless command.
    pub stale: Arc<StaleGoldens>,
}

/// Every trial of the suite `config` describes; `writes` says whether trials may
/// re-bless golden files. A corpus that cannot be read, that
/// is empty, or whose expect.toml names a check the fixture does not have is an
/// error: a gate that discovered nothing must not pass (as datatest-stable does).
pub fn trials(config: Arc<Invocation>, note: Note, writes: GoldenWrites) -> Result<Conformance> {
    // Thousands of checks render the same templates against the same schema files.
    let config = Arc::new(config.reading_once());
    let stale = Arc::new(StaleGoldens::new());
    let cases = corpus::cases(&config)?;
    if cases.is_empty() {
        let place = config.settings().paths.fixtures.display().to_string();
        return Err(Error::NothingFound { what: "fixture".into(), place });
    }
    let hostile = cases.iter().map(|c| (c.name.clone(), escape_name(&c.name).into_owned())).filter(|(a, b)| a != b);
    let hostile = Arc::new(hostile.collect());
    let suite = Suite { config, note, writes, stale: Arc::clone(&stale), hostile, blessing: Arc::default() };
    let mut trials = Vec::new();
    for case in cases {
        let expected = case.expectations()?;
        let applicable = judge::checks_of(&case);
        for declared in &expected {
            if !applicable.iter().any(|c| c.name() == declared.check) {
                return Err(Error::Config {
                    file: case.expect.as_deref().unwrap_or(&case.dir).display().to_string(),
                    message: format!(
                        "names {:?}, which is not a check of fixture {} (its checks: {})",
                        declared.check,
                        case.name,
                        applicable.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
                    ),
                });
            }
        }
        declared_stage_can_be_checked(&case, &suite.config, &applicable)?;
        answer_can_be_judged(&case, &suite.config)?;
        let positive = case.expect.is_none();
        let case = Arc::new(Shared::new(case, suite.writes.tests_bless(), &suite.config));
        for check in applicable {
            let expectation = expected.iter().find(|e| e.check == check.name()).cloned();
            let (suite_ref, case) = (suite.clone(), Arc::clone(&case));
            trials.push(suite.trial(trial_name(&case.case.name, check), move || {
                suite_ref.case_trial(&case, check, expectation.as_ref())
            }));
        }
        // The mutation self-test damages golden packets: one trial per positive fixture.
        if positive {
            let (suite_ref, name) = (suite.clone(), trial_name(&case.case.name, CorpusCheck::MutationSelfTest));
            let ready =
                judge::decide(CorpusCheck::MutationSelfTest.into(), &Subject::corpus(), &suite.config, Step::Test);
            trials.push(match ready {
                Err(reason) => suite.ignored(name, &reason),
                Ok(()) => suite.trial(name, move || suite_ref.mutation_trial(&case)),
            });
        }
    }
    trials.extend(suite.corpus_trials());
    Ok(Conformance { trials, stale })
}

/// A stage expect.toml `[evaluator]` declares is checked by `run::evaluator-verdict`:
/// a declaration that rule could never check is an error, never a case that passes.
fn declared_stage_can_be_checked(case: &Case, config: &Invocation, applicable: &[Check]) -> Result<()> {
    let Some(stage) = case.evaluator_stage()? else { return Ok(()) };
    let why = if case.agent(config).evaluator.is_none() {
        format!("{} has no [evaluator] to fail it", config.settings().file_name())
    } else if case.has_own_packet() || !applicable.contains(&RunCheck::EvaluatorVerdict.into()) {
        "the fixture has no blessed answer to evaluate (a run/raw-output.json beside a golden packet)".to_owned()
    } else {
        return Ok(());
    };
    Err(Error::Config {
        file: case.expect.as_deref().unwrap_or(&case.dir).display().to_string(),
        message: format!("[evaluator] declares the stage {stage:?} the evaluator must fail at, but {why}"),
    })
}

/// A fixture's run with an agent's answer is evaluated and completed by the gate: an
/// answer nothing can judge (a plain-text suite without `[evaluator]`) is an error
/// naming the answer, never a run that fails its completion for want of a verdict.
fn answer_can_be_judged(case: &Case, config: &Invocation) -> Result<()> {
    let Some(answer) = case.run_fixture().map(|run| run.join(crate::run::paths::RAW_OUTPUT)) else { return Ok(()) };
    let agent = case.agent(config);
    if agent.evaluator.is_some() || !answer.is_file() {
        return Ok(());
    }
    match crate::evaluator::scope(agent) {
        Ok(_) => Ok(()),
        Err(why) => Err(Error::Config {
            file: answer.display().to_string(),
            message: format!("an agent's answer for the gate to evaluate, but {why}"),
        }),
    }
}

/// The trial of `check` on the fixture `case`: `<fixture>::<check>`, the name escaped
/// ([`escape_name`]) so that it is one line in every output of the gate (libtest's
/// formats, JUnit, the HTML report): a fixture folder named `x\ntest result: ok.`
/// cannot print a summary line of its own.
pub(crate) fn trial_name(case: &str, check: impl std::fmt::Display) -> String {
    format!("{}::{check}", escape_name(case))
}

/// What the trials of one case share, each part computed once by the first trial
/// that needs it (trials run in any order, on any thread): the packet parsed once,
/// the request compiled once for `packet::regenerates` (and the self-test's
/// staleness test), the run assembled once for every run check and the self-test.
/// Under `PACKETPROOF_BLESS` every trial computes afresh: a trial may have just
/// re-blessed the golden files.
struct Shared {
    case: Case,
    /// Trials may re-bless golden files: nothing is shared, every trial reads afresh.
    blessing: bool,
    packet: OnceLock<Arc<Result<Value, String>>>,
    regenerated: OnceLock<Arc<Result<Checked, String>>>,
    run: OnceLock<Arc<Result<AssembledRun, String>>>,
    /// The request's compiled branch and excluded texts, for `packet::branch-isolation`
    /// and the self-test's branch-isolation mutations (the request never changes).
    isolation: OnceLock<Arc<crate::check::Isolation>>,
    /// The findings of the rules that read the packet alone, for its packet trials
    /// and every step and check of its run (each rule runs once per packet).
    memo: Arc<judge::Memo>,
    /// What the request makes now (`corpus::produce`), made once for
    /// `packet::regenerates`, branch isolation and the self-test.
    produced: OnceLock<Arc<Result<Value>>>,
}

impl Shared {
    fn new(case: Case, blessing: bool, config: &Invocation) -> Shared {
        Shared {
            memo: Arc::new(judge::Memo::new(config)),
            case,
            blessing,
            packet: OnceLock::new(),
            regenerated: OnceLock::new(),
            run: OnceLock::new(),
            isolation: OnceLock::new(),
            produced: OnceLock::new(),
        }
    }

    fn produced(&self, config: &Invocation) -> Arc<Result<Value>> {
        let produce = || Arc::new(corpus::produce(&self.case, config));
        if self.blessing {
            return produce();
        }
        Arc::clone(self.produced.get_or_init(produce))
    }

    fn isolation(&self, config: &Invocation) -> Arc<crate::check::Isolation> {
        let file = self.case.request_path().display().to_string();
        let derive = || match config.settings().exporter {
            // Without an exporter, what the request makes is what the compiler makes of it.
            None => {
                let compiled = match self.produced(config).as_ref() {
                    Ok(packet) => Ok(packet.clone()),
                    Err(e) => Err(e.to_string()),
                };
                crate::check::Isolation::compiled(&self.case.request, compiled, config)
            }
            Some(_) => crate::check::Isolation::of(&self.case.request, config, &file),
        };
        Arc::clone(self.isolation.get_or_init(|| Arc::new(derive())))
    }

    fn packet(&self, config: &Invocation) -> Result<Arc<Result<Value, String>>, Failed> {
        once(&self.packet, self.blessing, || self.case.packet(config).map_err(|e| e.to_string()))
    }

    fn regenerated(&self, config: &Invocation) -> Result<Arc<Result<Checked, String>>, Failed> {
        let packet = self.packet(config)?;
        once(&self.regenerated, self.blessing, || match packet.as_ref() {
            Ok(packet) => dispatch::regenerates_from(&self.case, packet, &self.produced(config), config)
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        })
    }

    fn run(&self, config: &Invocation) -> Result<Arc<Result<AssembledRun, String>>, Failed> {
        let assemble = || fixture_run::assemble_run(&self.case, config, Arc::clone(&self.memo));
        once(&self.run, self.blessing, || assemble().map_err(|e| e.to_string()))
    }

    /// Whether `check` can apply to this case (`Err(why not)`), judged on the shared packet.
    fn applies(&self, check: Check, config: &Invocation) -> Result<std::result::Result<(), String>, Failed> {
        let packet = self.packet(config)?;
        let Ok(packet) = packet.as_ref() else {
            // A packet that cannot be read is the check's own failure (it says why), not "not applicable".
            return Ok(judge::decide_unread(check, config, Step::Test));
        };
        let at = Subject {
            packet: Some(packet),
            origin: Some(Origin::Case(&self.case)),
            fixture: Some(&self.case),
            ..Subject::default()
        };
        Ok(judge::decide(check, &at, config, Step::Test))
    }

    /// One check on this case, on the shared packet or run.
    fn checked(&self, check: Check, config: &Invocation) -> Result<Arc<Result<Checked, String>>, Failed> {
        let fresh = |checked: Result<Checked>| Ok(Arc::new(checked.map_err(|e| e.to_string())));
        match check {
            Check::Packet(PacketCheck::Regenerates) => self.regenerated(config),
            Check::Packet(PacketCheck::BranchIsolation) => match self.packet(config)?.as_ref() {
                Ok(Value::Object(map)) => fresh(Ok(self.isolation(config).check(map, config).into())),
                Ok(packet) => fresh(dispatch::on_packet(PacketCheck::BranchIsolation, packet, None, config)),
                Err(e) => Ok(Arc::new(Err(e.clone()))),
            },
            Check::Packet(packet_check) => match self.packet(config)?.as_ref() {
                Ok(packet) => {
                    Ok(Arc::new(self.memo.on_packet(packet_check, packet, Some(Origin::Case(&self.case)), config)))
                }
                Err(e) => Ok(Arc::new(Err(e.clone()))),
            },
            Check::Run(RunCheck::EvaluatorVerdict) => match self.run(config)?.as_ref() {
                Ok(run) => fresh(Ok(fixture_run::verdict_check(&self.case, run, config))),
                Err(e) => Ok(Arc::new(Err(e.clone()))),
            },
            Check::Run(run_check) => match self.run(config)?.as_ref() {
                Ok(run) => fresh(Ok(fixture_run::on_assembled_run(run_check, run, config))),
                Err(e) => Ok(Arc::new(Err(e.clone()))),
            },
            other => Ok(Arc::new(Err(format!("{other} is not a check of one fixture")))),
        }
    }
}

/// The value in `cell`, made by `make` the first time (every time under bless).
fn once<T>(
    cell: &OnceLock<Arc<Result<T, String>>>,
    blessing: bool,
    make: impl FnOnce() -> Result<T, String>,
) -> Result<Arc<Result<T, String>>, Failed> {
    let make = || Arc::new(make());
    Ok(if blessing { make() } else { Arc::clone(cell.get_or_init(make)) })
}

#[derive(Clone)]
struct Suite {
    config: Arc<Invocation>,
    note: Note,
    writes: GoldenWrites,
    stale: Arc<StaleGoldens>,
    /// The fixture names that need escaping, each with its escaped form.
    hostile: Arc<Vec<(String, String)>>,
    /// What this run's trials blessed, shared by them all.
    blessing: Arc<Blessing>,
}

/// Blessing from the trials of one run of the gate.
#[derive(Default)]
struct Blessing {
    /// Held while a new case is blessed: every check of it asks at once; the first blesses.
    one_at_a_time: Mutex<()>,
    /// The bases already brought up to date in this run: each is checked once (at
    /// most one entry per fixture of the suite).
    current: Mutex<Vec<String>>,
}

impl Suite {
    /// A trial that may find, as it runs, that its check cannot apply, and is then
    /// ignored with the reason. Messages quote fixture names and paths in many ways;
    /// each hostile name in them is written escaped, as in the trial's name.
    fn trial(&self, name: String, run: impl FnOnce() -> Result<Passed, Failed> + Send + 'static) -> Trial {
        let hostile = Arc::clone(&self.hostile);
        let shown = move |text: &str| escaped(&hostile, text);
        Trial::test(name, move || match run() {
            Err(failed) => Err(Failed::from(shown(failed.message()))),
            Ok(Passed { completion: Completion::Ignored { reason }, notes }) => {
                Ok(Passed { completion: Completion::ignored_with(shown(&reason)), notes })
            }
            other => other,
        })
    }

    /// A trial ignored before it runs, with why (hostile names escaped).
    fn ignored(&self, name: String, reason: &str) -> Trial {
        Trial::ignored(name, escaped(&self.hostile, reason))
    }

    fn case_trial(&self, shared: &Shared, check: Check, expected: Option<&Expectation>) -> Result<Passed, Failed> {
        let case = &shared.case;
        self.ensure_golden(case)?;
        self.ensure_base_blessed(case)?;
        if let Err(reason) = shared.applies(check, &self.config)? {
            if let Some(expected) = expected {
                return Err(format!(
                    "negative fixture {}: {} was declared to fail with {expected}, but it cannot apply: {reason}",
                    case.name, expected.check
                )
                .into());
            }
            return Ok(Completion::ignored_with(format!("not applicable: {reason}")).into());
        }
        let checked = shared.checked(check, &self.config)?;
        let checked = checked.as_ref().as_ref().map_err(|e| Failed::from(format!("could not run {check}: {e}")))?;
        match expected {
            Some(expected) => expect_failure(case, expected, checked),
            None => self.expect_pass(case, check, checked),
        }?;
        // A hash that holds only in the reference's key order passes under the suite's
        // setting; the reports say so beside the verdict, as validate and verify do.
        let notes = match (check, shared.packet(&self.config)?.as_ref()) {
            (Check::Packet(check), Ok(Value::Object(map))) => {
                crate::packet::locale_order_note(check, map, &self.config).into_iter().collect()
            }
            // The built-in evaluator's disagreement with the suite's own, said beside the verdict.
            (Check::Run(RunCheck::Evaluation), _) => {
                shared.run(&self.config)?.as_ref().as_ref().map(|run| run.notes.clone()).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        Ok(Passed { completion: Completion::Completed, notes })
    }

    /// A new fixture has no golden files yet: bless it when asked, else say how.
    fn ensure_golden(&self, case: &Case) -> Result<(), Failed> {
        let Some(missing) = case.golden_missing() else { return Ok(()) };
        if !self.writes.tests_bless() {
            return Err(missing.into());
        }
        // Every check of the new case asks at once; the first one blesses.
        let _one_at_a_time = self.blessing.one_at_a_time.lock().unwrap_or_else(|e| e.into_inner());
        if case.golden_packet().is_file() {
            return Ok(());
        }
        self.bless_from_test(case)
    }

    fn bless_from_test(&self, case: &Case) -> Result<(), Failed> {
        bless::bless_from_test(&self.config, case, self.writes).map_err(|e| Failed::from(e.to_string()))?;
        (self.note)(&format!("blessed {}", escape_name(&case.name)));
        Ok(())
    }

    /// A negative case derived from another case's golden packet reads that packet:
    /// under bless, the base is blessed first (trials run in any order), so one
    /// `PACKETPROOF_BLESS=1 cargo test` brings both up to date.
    fn ensure_base_blessed(&self, case: &Case) -> Result<(), Failed> {
        if !self.writes.tests_bless() {
            return Ok(());
        }
        let Some(base) = case.derived_from().map_err(|e| Failed::from(e.to_string()))? else { return Ok(()) };
        let mut current = self.blessing.current.lock().unwrap_or_else(|e| e.into_inner());
        if current.contains(&base) {
            return Ok(());
        }
        let cases = corpus::cases(&self.config).map_err(|e| Failed::from(e.to_string()))?;
        let Some(base) = cases.into_iter().find(|c| c.name == base) else {
            return Err(format!("{}: expect.toml [packet] from = {base:?}, which is not a fixture", case.name).into());
        };
        let stale = base.golden_missing().is_some()
            || base
                .packet(&self.config)
                .and_then(|packet| {
                    dispatch::on_packet(PacketCheck::Regenerates, &packet, Some(Origin::Case(&base)), &self.config)
                })
                .map_err(|e| Failed::from(e.to_string()))?
                .mismatch
                .is_some();
        if stale {
            self.bless_from_test(&base)?;
        }
        current.push(base.name);
        Ok(())
    }

    fn expect_pass(&self, case: &Case, check: Check, checked: &Checked) -> Result<(), Failed> {
        if checked.findings.is_empty() {
            return Ok(());
        }
        // A verdict that is only not the blessed one is re-blessed like a stale packet;
        // a declared stage the evaluator misses is the fixture's to fix.
        let golden = crate::Location::named(case.golden_verdict().display().to_string());
        let stale_verdict =
            check == RunCheck::EvaluatorVerdict.into() && checked.findings.iter().all(|f| f.path == golden);
        if stale_verdict && self.writes.tests_bless() {
            return self.bless_from_test(case);
        }
        let Some(mismatch) = &checked.mismatch else {
            return Err(format!("{check} failed:\n{}", list(checked)).into());
        };
        if self.writes.tests_bless() {
            return self.bless_from_test(case);
        }
        // One line here; the diff is shown once for all cases it affects, after the summary.
        self.stale.record(&case.name, mismatch);
        Err(format!("{}  (the change is shown once after the test summary, with every case it affects)", list(checked))
            .into())
    }

    fn corpus_trials(&self) -> Vec<Trial> {
        CorpusCheck::ALL
            .iter()
            .copied()
            // One trial per fixture (`<fixture>::corpus::mutation-self-test`), made with the case's trials.
            .filter(|check| *check != CorpusCheck::MutationSelfTest)
            .map(|check| {
                let suite = self.clone();
                if let Err(reason) = judge::decide(check.into(), &Subject::corpus(), &self.config, Step::Test) {
                    return self.ignored(check.name().into(), &reason);
                }
                self.trial(check.name().into(), move || {
                    let findings = dispatch::run(check.into(), &Subject::corpus(), &suite.config)
                        .map_err(|e| Failed::from(e.to_string()))?
                        .findings;
                    // A suite that does not require branch coverage yet reports it as ignored, never as passed.
                    if check == CorpusCheck::BranchCoverage && !suite.config.settings().corpus.require_branch_coverage {
                        let gaps = findings.len();
                        return Ok(Completion::ignored_with(format!(
                            "not required yet ([corpus] require_branch_coverage = false): {gaps} gap(s) found"
                        ))
                        .into());
                    }
                    match findings.is_empty() {
                        true => Ok(Completion::Completed.into()),
                        false => Err(findings.iter().map(|f| format!("  {f}\n")).collect::<String>().into()),
                    }
                })
            })
            .collect()
    }

    /// The mutation self-test of one fixture, on its golden packet and assembled run.
    /// Mutations that leave the packet meaning what it meant are skipped, each named
    /// with why in the trial's notes.
    fn mutation_trial(&self, shared: &Shared) -> Result<Passed, Failed> {
        let case = &shared.case;
        self.ensure_golden(case)?;
        // Stale golden files fail checks before any mutation: say so in one line, not
        // one line per "escaped" mutation (the change itself is reported once, grouped).
        let regenerated = shared.regenerated(&self.config)?;
        let stale = match regenerated.as_ref() {
            Ok(checked) => checked.mismatch.is_some(),
            Err(e) => return Err(format!("could not run {}: {e}", CorpusCheck::MutationSelfTest).into()),
        };
        if stale && !self.writes.tests_bless() {
            return Err("not run: this case's golden files are stale (the change is shown after the test summary); \
                        the self-test mutates current golden packets"
                .into());
        }
        if stale {
            self.bless_from_test(case)?;
        }
        let packet = shared.packet(&self.config)?;
        let Ok(Value::Object(golden)) = packet.as_ref() else {
            return Err(format!(
                "could not read the golden packet: {}",
                packet.as_ref().as_ref().err().map_or("not a JSON object", |e| e)
            )
            .into());
        };
        let run = match case.run_fixture() {
            Some(_) => Some(shared.run(&self.config)?),
            None => None,
        };
        let run = match run.as_deref() {
            Some(Ok(run)) => Some(run),
            Some(Err(e)) => return Err(format!("could not assemble the run: {e}").into()),
            None => None,
        };
        let made = (shared.isolation(&self.config), Some(shared.produced(&self.config)));
        let report = mutation::self_test_case_with(case, golden, run, made, &self.config)
            .map_err(|e| Failed::from(e.to_string()))?;
        if report.escaped.is_empty() {
            let notes: Vec<String> = report.skipped.iter().map(|skipped| format!("skipped {skipped}")).collect();
            notes.iter().for_each(|note| (self.note)(note));
            return Ok(Passed { completion: Completion::Completed, notes });
        }
        Err(format!(
            "{} of {} mutations of {} escaped their checks:\n{}",
            report.escaped.len(),
            report.total(),
            case.name,
            report.escaped.join("\n")
        )
        .into())
    }
}

/// `text` with each hostile fixture name in it escaped.
fn escaped(hostile: &[(String, String)], text: &str) -> String {
    hostile.iter().fold(text.to_owned(), |text, (raw, escaped)| text.replace(raw, escaped))
}

/// A negative fixture's check passes only when it fails with the declared message.
fn expect_failure(case: &Case, expected: &Expectation, checked: &Checked) -> Result<(), Failed> {
    if checked.findings.is_empty() {
        return Err(format!(
            "negative fixture {}: {} was declared to fail with {expected} but passed",
            case.name, expected.check
        )
        .into());
    }
    // Only the check's own findings count; the lifecycle lines only explain them.
    if checked.findings.iter().any(|f| f.path != crate::Location::named(LIFECYCLE) && expected.matches(&f.message)) {
        return Ok(());
    }
    Err(format!(
        "negative fixture {}: {} failed, but not with {expected}:\n{}",
        case.name,
        expected.check,
        list(checked)
    )
    .into())
}

fn list(checked: &Checked) -> String {
    checked.findings.iter().map(|f| format!("  {f}\n")).collect()
}
