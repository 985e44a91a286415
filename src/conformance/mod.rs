//! The conformance gate's trials: one per fixture and check, named
//! `<fixture>::<check>`, plus the corpus-wide ones. `tests/conformance.rs` (cargo
//! test) and `packetproof test` (any repository, one binary) run these same trials
//! through libtest-mimic.
//!
//! Construction only lists fixture directories and reads their small TOML files, so
//! `--list` and `--exact` (nextest runs one process per test) never compile the
//! corpus; every check runs inside its own trial. The checks are the library
//! functions `packetproof verify` runs, not a second implementation.

pub mod junit;

use crate::bless::{self, GoldenWrites};
use crate::check::stale::StaleGoldens;
use crate::check::{self, Checked};
use crate::corpus::fixture_run::LIFECYCLE;
use crate::corpus::{self, Case, Expectation};
use crate::{mutation, Check, Config, CorpusCheck, Error, Result};
use junit::Records;
use libtest_mimic::{Failed, Trial};
use std::sync::{Arc, Mutex};

/// Where a trial's side notes go ("blessed X", the mutation count): the caller
/// prints them (the library never prints).
pub type Note = Arc<dyn Fn(&str) + Send + Sync>;

/// The trials of a suite, and the record of their outcomes as they run.
pub struct Conformance {
    pub trials: Vec<Trial>,
    pub records: Records,
    /// Cases whose golden files no longer regenerate: print [`StaleGoldens::report`]
    /// after the run, so each distinct change shows once, ending with the bless command.
    pub stale: Arc<StaleGoldens>,
}

/// Every trial of the suite `config` describes; `writes` says whether trials may
/// re-bless golden files. A corpus that cannot be read, that
/// is empty, or whose expect.toml names a check the fixture does not have is an
/// error: a gate that discovered nothing must not pass (as datatest-stable does).
pub fn trials(config: Arc<Config>, note: Note, writes: GoldenWrites) -> Result<Conformance> {
    let records = Records::default();
    let stale = Arc::new(StaleGoldens::new());
    let suite = Suite { config, note, writes, records: records.clone(), stale: Arc::clone(&stale) };
    let cases = corpus::cases(&suite.config).map_err(|e| Error::Usage(format!("fixture discovery failed: {e}")))?;
    if cases.is_empty() {
        return Err(Error::Usage(format!("no fixture found under {}", suite.config.paths.fixtures.display())));
    }
    let mut trials = Vec::new();
    for case in cases {
        let expected = case.expectations()?;
        let applicable = check::applicable(&case);
        for declared in &expected {
            if !applicable.iter().any(|c| c.name() == declared.check) {
                return Err(Error::Usage(format!(
                    "{}: expect.toml names {:?}, which is not a check of this fixture (checks: {applicable:?})",
                    case.name, declared.check
                )));
            }
        }
        let case = Arc::new(case);
        for check in applicable {
            let expectation = expected.iter().find(|e| e.check == check.name()).cloned();
            let (suite_ref, case) = (suite.clone(), Arc::clone(&case));
            trials.push(suite.trial(format!("{}::{check}", case.name), move || {
                suite_ref.case_trial(&case, check, expectation.as_ref())
            }));
        }
    }
    trials.extend(suite.corpus_trials());
    Ok(Conformance { trials, records, stale })
}

#[derive(Clone)]
struct Suite {
    config: Arc<Config>,
    note: Note,
    writes: GoldenWrites,
    records: Records,
    stale: Arc<StaleGoldens>,
}

impl Suite {
    /// A trial whose outcome is recorded (for `--junit`).
    fn trial(&self, name: String, run: impl FnOnce() -> Result<(), Failed> + Send + 'static) -> Trial {
        let records = self.records.clone();
        let recorded = name.clone();
        Trial::test(name, move || records.run(recorded, run))
    }

    fn case_trial(&self, case: &Case, check: Check, expected: Option<&Expectation>) -> Result<(), Failed> {
        self.ensure_golden(case)?;
        self.ensure_base_blessed(case)?;
        let checked = check::on_case(check, case, &self.config)
            .map_err(|e| Failed::from(format!("could not run {check}: {e}")))?;
        match expected {
            Some(expected) => expect_failure(case, expected, &checked),
            None => self.expect_pass(case, check, checked),
        }
    }

    /// A new fixture has no golden files yet: bless it when asked, else say how.
    fn ensure_golden(&self, case: &Case) -> Result<(), Failed> {
        static BLESSING: Mutex<()> = Mutex::new(());
        let Some(missing) = case.golden_missing() else { return Ok(()) };
        if !self.writes.tests_bless() {
            return Err(missing.into());
        }
        // Every check of the new case asks at once; the first one blesses.
        let _one_at_a_time = BLESSING.lock().unwrap_or_else(|e| e.into_inner());
        if case.golden_packet().is_file() {
            return Ok(());
        }
        self.bless_from_test(case)
    }

    fn bless_from_test(&self, case: &Case) -> Result<(), Failed> {
        bless::bless_from_test(&self.config, case, self.writes).map_err(|e| Failed::from(e.to_string()))?;
        (self.note)(&format!("blessed {}", case.name));
        Ok(())
    }

    /// A negative case derived from another case's golden packet reads that packet:
    /// under bless, the base is blessed first (trials run in any order), so one
    /// `PACKETPROOF_BLESS=1 cargo test` brings both up to date.
    fn ensure_base_blessed(&self, case: &Case) -> Result<(), Failed> {
        // The bases already brought up to date in this run: each is checked once.
        static CURRENT: Mutex<Vec<String>> = Mutex::new(Vec::new());
        if !self.writes.tests_bless() {
            return Ok(());
        }
        let Some(base) = case.derived_from().map_err(|e| Failed::from(e.to_string()))? else { return Ok(()) };
        let mut current = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
        if current.contains(&base) {
            return Ok(());
        }
        let cases = corpus::cases(&self.config).map_err(|e| Failed::from(e.to_string()))?;
        let Some(base) = cases.into_iter().find(|c| c.name == base) else {
            return Err(format!("{}: expect.toml [packet] from = {base:?}, which is not a fixture", case.name).into());
        };
        let regenerates = Check::Packet(crate::PacketCheck::Regenerates);
        let stale = base.golden_missing().is_some()
            || check::on_case(regenerates, &base, &self.config)
                .map_err(|e| Failed::from(e.to_string()))?
                .mismatch
                .is_some();
        if stale {
            self.bless_from_test(&base)?;
        }
        current.push(base.name);
        Ok(())
    }

    fn expect_pass(&self, case: &Case, check: Check, checked: Checked) -> Result<(), Failed> {
        if checked.findings.is_empty() {
            return Ok(());
        }
        let Some(mismatch) = &checked.mismatch else {
            return Err(format!("{check} failed:\n{}", list(&checked)).into());
        };
        if self.writes.tests_bless() {
            return self.bless_from_test(case);
        }
        // One line here; the diff is shown once for all cases it affects, after the summary.
        self.stale.record(&case.name, mismatch);
        Err(format!(
            "{}  (the change is shown once after the test summary, with every case it affects)",
            list(&checked)
        )
        .into())
    }

    fn corpus_trials(&self) -> Vec<Trial> {
        CorpusCheck::ALL
            .into_iter()
            .map(|check| {
                let suite = self.clone();
                let trial = match check {
                    CorpusCheck::MutationSelfTest => self.trial(check.name().into(), move || suite.mutation_trial()),
                    CorpusCheck::Layout
                    | CorpusCheck::SnapshotParity
                    | CorpusCheck::UniqueAgentTasks
                    | CorpusCheck::BranchCoverage => self.trial(check.name().into(), move || {
                        let findings =
                            check::on_corpus(check, &suite.config).map_err(|e| Failed::from(e.to_string()))?;
                        if findings.is_empty() {
                            Ok(())
                        } else {
                            Err(findings.iter().map(|f| format!("  {f}\n")).collect::<String>().into())
                        }
                    }),
                };
                // A suite that does not require branch coverage yet reports it as ignored, never as passed.
                let off = check == CorpusCheck::BranchCoverage && !self.config.corpus.require_branch_coverage;
                trial.with_ignored_flag(off)
            })
            .collect()
    }

    fn mutation_trial(&self) -> Result<(), Failed> {
        let name = CorpusCheck::MutationSelfTest;
        // Stale golden files fail checks before any mutation: say so in one line, not
        // one line per "escaped" mutation (the change itself is reported once, grouped).
        if !self.writes.tests_bless() {
            let stale = self.stale_cases().map_err(|e| Failed::from(e.to_string()))?;
            if !stale.is_empty() {
                return Err(format!(
                    "not run: the golden files of {} case(s) are stale (the change is shown after the test summary); \
                     the self-test mutates current golden packets",
                    stale.len()
                )
                .into());
            }
        }
        let report = mutation::self_test(&self.config).map_err(|e| Failed::from(e.to_string()))?;
        (self.note)(&format!("{name}: caught {} of {} mutations", report.caught(), report.total()));
        if report.escaped.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{} of {} mutations escaped their checks:\n{}",
                report.escaped.len(),
                report.total(),
                report.escaped.join("\n")
            )
            .into())
        }
    }
}

impl Suite {
    /// The cases whose golden packet no longer regenerates.
    fn stale_cases(&self) -> Result<Vec<String>> {
        let mut stale = Vec::new();
        for case in corpus::cases(&self.config)?.into_iter().filter(|c| !c.has_own_packet()) {
            if !case.golden_packet().is_file() {
                continue;
            }
            let checked = check::on_case(Check::Packet(crate::PacketCheck::Regenerates), &case, &self.config)?;
            if checked.mismatch.is_some() {
                stale.push(case.name);
            }
        }
        Ok(stale)
    }
}

/// A negative fixture's check passes only when it fails with the declared message.
fn expect_failure(case: &Case, expected: &Expectation, checked: &Checked) -> Result<(), Failed> {
    if checked.findings.is_empty() {
        return Err(format!(
            "negative fixture {}: {} was declared to fail with {:?} but passed",
            case.name, expected.check, expected.message
        )
        .into());
    }
    // Only the check's own findings count; the lifecycle lines only explain them.
    if checked.findings.iter().any(|f| f.path != LIFECYCLE && f.message.contains(&expected.message)) {
        return Ok(());
    }
    Err(format!(
        "negative fixture {}: {} failed, but not with {:?}:\n{}",
        case.name,
        expected.check,
        expected.message,
        list(checked)
    )
    .into())
}

fn list(checked: &Checked) -> String {
    checked.findings.iter().map(|f| format!("  {f}\n")).collect()
}
