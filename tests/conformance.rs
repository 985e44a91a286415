//! The conformance gate: one test case per fixture and check, named
//! `<fixture>::<check>`, plus corpus-wide cases and the interop samples.
//!
//! Discovery only lists fixture directories and reads their small TOML files, so
//! `--list` and `--exact` (nextest runs one process per test) never compile the
//! corpus; every check runs inside its own trial. The checks are the library
//! functions `packetproof verify` runs, not a second implementation.

#[path = "support/mod.rs"]
mod support;

use libtest_mimic::{Arguments, Failed, Trial};
use packetproof::check::{self, Checked};
use packetproof::corpus::fixture_run::LIFECYCLE;
use packetproof::corpus::{self, Case, Expectation};
use packetproof::{bless, mutation, Check, Config, CorpusCheck};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

fn main() {
    let args = Arguments::from_args();
    let cases = corpus::cases(config()).unwrap_or_else(|e| panic!("fixture discovery failed: {e}"));
    // As datatest-stable does: a gate that discovered nothing must not pass.
    assert!(!cases.is_empty(), "no fixture found under {}", config().paths.fixtures.display());
    let mut trials = Vec::new();
    for case in cases {
        let expected = case.expectations().unwrap_or_else(|e| panic!("{e}"));
        let applicable = check::applicable(&case);
        for declared in &expected {
            assert!(
                applicable.iter().any(|c| c.name() == declared.check),
                "{}: expect.toml names {:?}, which is not a check of this fixture (checks: {applicable:?})",
                case.name,
                declared.check
            );
        }
        let case = Arc::new(case);
        for check in applicable {
            let (case, expectation) = (Arc::clone(&case), expected.iter().find(|e| e.check == check.name()).cloned());
            trials.push(Trial::test(format!("{}::{check}", case.name), move || {
                case_trial(&case, check, expectation.as_ref())
            }));
        }
    }
    trials.extend(corpus_trials());
    trials.extend(interop_trials());
    libtest_mimic::run(&args, trials).exit();
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| Config::load(root(), None).unwrap_or_else(|e| panic!("{e}")))
}

fn case_trial(case: &Case, check: Check, expected: Option<&Expectation>) -> Result<(), Failed> {
    ensure_golden(case)?;
    let checked =
        check::on_case(check, case, config()).map_err(|e| Failed::from(format!("could not run {check}: {e}")))?;
    match expected {
        Some(expected) => expect_failure(case, expected, &checked),
        None => expect_pass(case, check, checked),
    }
}

/// A new fixture has no golden files yet: bless it when asked, else say how.
fn ensure_golden(case: &Case) -> Result<(), Failed> {
    static BLESSING: Mutex<()> = Mutex::new(());
    if case.own_packet().is_some() || case.golden_packet().is_file() {
        return Ok(());
    }
    if !bless_requested()? {
        let name = &case.name;
        return Err(format!(
            "{name} has no golden packet yet: bless it with `packetproof bless {name}` or `PACKETPROOF_BLESS=1 cargo test {name}`"
        )
        .into());
    }
    // Every check of the new case asks at once; the first one blesses.
    let _one_at_a_time = BLESSING.lock().unwrap_or_else(|e| e.into_inner());
    if case.golden_packet().is_file() {
        return Ok(());
    }
    bless_from_test(case)
}

fn bless_requested() -> Result<bool, Failed> {
    bless::requested_by_env().map_err(|e| Failed::from(e.to_string()))
}

fn bless_from_test(case: &Case) -> Result<(), Failed> {
    bless::bless_from_test(config(), case).map_err(|e| Failed::from(e.to_string()))?;
    eprintln!("blessed {}", case.name);
    Ok(())
}

fn expect_pass(case: &Case, check: Check, checked: Checked) -> Result<(), Failed> {
    if checked.findings.is_empty() {
        return Ok(());
    }
    let Some(mismatch) = &checked.mismatch else {
        return Err(format!("{check} failed:\n{}", list(&checked)).into());
    };
    if bless_requested()? {
        return bless_from_test(case);
    }
    let diff = pretty_assertions::StrComparison::new(&mismatch.golden, &mismatch.produced);
    Err(format!("{}\nfields (< golden, > recompiled):\n{diff}\n{}", list(&checked), mismatch.text_diffs).into())
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

fn corpus_trials() -> Vec<Trial> {
    CorpusCheck::ALL
        .into_iter()
        .map(|check| match check {
            CorpusCheck::MutationSelfTest => Trial::test(check.name(), mutation_trial),
            CorpusCheck::SnapshotParity | CorpusCheck::UniqueAgentTasks | CorpusCheck::BranchCoverage => {
                Trial::test(check.name(), move || {
                    let findings = check::on_corpus(check, config()).map_err(|e| Failed::from(e.to_string()))?;
                    if findings.is_empty() {
                        Ok(())
                    } else {
                        Err(findings.iter().map(|f| format!("  {f}\n")).collect::<String>().into())
                    }
                })
            }
        })
        .collect()
}

fn mutation_trial() -> Result<(), Failed> {
    let name = CorpusCheck::MutationSelfTest;
    let report = mutation::self_test(config()).map_err(|e| Failed::from(e.to_string()))?;
    eprintln!("{name}: caught {} of {} mutations", report.caught(), report.total());
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

/// The Node implementation's samples, when `../shared/interop` exists (CI has it).
fn interop_trials() -> Vec<Trial> {
    let folder = support::interop_dir();
    let samples = ["runtime-packet.anthropic.json", "runtime-packet.google.json", "run-anthropic", "run-google"];
    samples
        .into_iter()
        .map(|sample| {
            let path = folder.join(sample);
            let name = format!("interop::{sample}");
            if !support::interop_present() {
                return support::needs_interop(name, || {});
            }
            let folder = folder.clone();
            Trial::test(name, move || interop_trial(&folder, path))
        })
        .collect()
}

fn interop_trial(folder: &Path, path: PathBuf) -> Result<(), Failed> {
    // The samples append their own Google suffix, not the project's.
    let mut config =
        Config::load(root(), Some(&folder.join("google-suffix.txt"))).map_err(|e| Failed::from(e.to_string()))?;
    // The reference's own samples carry generator prompts in asset examples: noted, not failed.
    config.packet.asset_example_prompts = packetproof::config::Policy::Warn;
    let outcomes = packetproof::verify::verify(&config, &[path]).map_err(|e| Failed::from(e.to_string()))?;
    if outcomes.is_empty() {
        return Err("nothing to verify was found".into());
    }
    if packetproof::Outcome::all_ok(&outcomes) {
        Ok(())
    } else {
        Err(packetproof::Outcome::render(&outcomes, packetproof::Format::Text).into())
    }
}
