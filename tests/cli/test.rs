//! `packetproof test`: the conformance trials from the binary, with libtest's
//! filter, `--list`, `--exact`, formats, a JUnit report, and cargo test's exit codes.

use crate::support;
use libtest_mimic::Trial;

const CASE: &str = "openai-staged-alone-selected";

/// The verdict libtest printed for trial `name` (`ok`, `FAILED`, `ignored`), from the pretty format.
pub fn verdict<'a>(stdout: &'a str, name: &str) -> Option<&'a str> {
    stdout.lines().find_map(|line| {
        let (trial, verdict) = line.strip_prefix("test ")?.split_once(" ... ")?;
        (trial.trim_end() == name).then(|| verdict.trim())
    })
}

fn list_filter_and_exact_select_trials() {
    let folder = support::Project::empty();
    folder.init();
    let list = folder.run_in("suite", &["test", "--list"]);
    assert_eq!(list.code, 0, "{}", list.describe());
    for name in [&format!("{CASE}::packet::regenerates: test")[..], "corpus::mutation-self-test: test"] {
        assert!(list.stdout.lines().any(|l| l == name), "{name} not listed:\n{}", list.stdout);
    }
    let exact_name = format!("{CASE}::packet::checksum");
    let exact = folder.run_in("suite", &["test", "--exact", &exact_name]);
    assert_eq!(exact.code, 0, "{}", exact.describe());
    assert!(exact.stdout.contains("1 passed") && verdict(&exact.stdout, &exact_name) == Some("ok"), "{}", exact.stdout);
    let json = folder.run_in("suite", &["test", "--format", "json", &format!("{CASE}::packet::")]);
    assert_eq!(json.code, 0, "{}", json.describe());
    for line in json.stdout.lines().filter(|l| !l.trim().is_empty()) {
        let event: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(event["type"] == "suite" || event["type"] == "test", "{line}");
    }
    assert!(
        json.stdout.contains(&format!("\"name\": \"{CASE}::packet::contract\", \"event\": \"ok\"")),
        "{}",
        json.stdout
    );
    let terse = folder.run_in("suite", &["test", "--format", "terse", CASE]);
    assert_eq!(terse.code, 0, "{}", terse.describe());
    assert!(!terse.stdout.contains("... ok"), "terse prints no line per trial: {}", terse.stdout);
}

/// A broken golden packet fails its trials: exit 101 (cargo test's), the failure in the JUnit report.
fn a_failing_trial_exits_101_and_reaches_the_junit_report() {
    let folder = support::Project::empty();
    let suite = folder.init();
    let golden = suite.join(format!("golden/{CASE}/runtime-packet.json"));
    let text = std::fs::read_to_string(&golden).unwrap();
    std::fs::write(&golden, text.replacen("\"maxTokens\": ", "\"maxTokens\": 1", 1)).unwrap();
    let out = folder.run_in("suite", &["test", CASE, "--junit", "junit.xml"]);
    assert_eq!(out.code, 101, "{}", out.describe());
    assert_eq!(verdict(&out.stdout, &format!("{CASE}::packet::checksum")), Some("FAILED"), "{}", out.stdout);
    let junit = std::fs::read_to_string(suite.join("junit.xml")).unwrap();
    assert!(junit.contains(&format!("<testcase name=\"packet::checksum\" classname=\"{CASE}\"")), "{junit}");
    assert!(junit.contains("<failure message="), "{junit}");
}

/// `require_branch_coverage = false` only holds the check back (ignored); turned on, the
/// three examples fail it and say what they miss.
fn branch_coverage_runs_once_the_suite_requires_it() {
    let folder = support::Project::empty();
    let suite = folder.init();
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    let required = settings.replace("require_branch_coverage = false", "require_branch_coverage = true");
    assert_ne!(settings, required);
    std::fs::write(suite.join("harness.toml"), required).unwrap();
    let out = folder.run_in("suite", &["test", "--exact", "corpus::branch-coverage"]);
    assert_eq!(out.code, 101, "{}", out.describe());
    assert!(out.stdout.contains("no golden packet covers"), "{}", out.stdout);
}

pub fn trials() -> Vec<Trial> {
    trials![
        list_filter_and_exact_select_trials,
        a_failing_trial_exits_101_and_reaches_the_junit_report,
        branch_coverage_runs_once_the_suite_requires_it,
    ]
}
