//! Each kind of failure is named as what it is, with the file or place it concerns,
//! and exits 2: only bad command-line usage says "usage:" (`crates/packetproof/src/error.rs`).

use crate::support;
use libtest_mimic::Trial;

const CASE: &str = "openai-staged-alone-selected";

#[track_caller]
fn could_not_run(out: &support::Output, said: &str) {
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains(said), "expected {said:?}: {}", out.describe());
    assert!(!out.stderr.contains("usage:"), "{}", out.describe());
}

/// A suite whose fixtures folder holds no fixture is an empty gate, not bad usage.
fn a_suite_without_fixtures_says_none_was_found() {
    let folder = support::Project::empty();
    let suite = folder.init();
    for entry in std::fs::read_dir(suite.join("fixtures")).unwrap() {
        std::fs::remove_dir_all(entry.unwrap().path()).unwrap();
    }
    let out = folder.run_in("suite", &["test"]);
    could_not_run(&out, &format!("no fixture found in {}", suite.join("fixtures").display()));
}

/// expect.toml naming a check the fixture does not have: the file is named.
fn an_expectation_of_another_check_names_expect_toml() {
    let folder = support::Project::empty();
    let suite = folder.init();
    let expect = suite.join(format!("fixtures/{CASE}/expect.toml"));
    std::fs::write(&expect, "[[fails]]\ncheck = \"corpus::branch-coverage\"\nmessage = \"x\"\n").unwrap();
    let out = folder.run_in("suite", &["test"]);
    let said =
        format!("{}: names \"corpus::branch-coverage\", which is not a check of fixture {CASE}", expect.display());
    could_not_run(&out, &said);
}

/// `schema --write` with no snapshot path to write: the settings file is named.
fn writing_a_built_in_schema_snapshot_names_the_settings_file() {
    let folder = support::Project::empty();
    let suite = folder.init();
    let settings = suite.join("harness.toml");
    let text = std::fs::read_to_string(&settings).unwrap();
    let line = "schema_snapshot = \"references/block-screen-output-schema.json\"\n";
    assert!(text.contains(line), "{text}");
    std::fs::write(&settings, text.replace(line, "")).unwrap();
    let out = folder.run_in("suite", &["schema", "--write"]);
    could_not_run(&out, &format!("{}: names no paths.schema_snapshot", settings.display()));
}

/// PACKETPROOF_ROOT naming a folder without harness.toml: the file looked for is named.
fn a_root_without_settings_names_the_file_looked_for() {
    let folder = support::Project::empty();
    let out = folder.run(&["schema", "--check"]);
    let said = format!("{}: does not exist, and PACKETPROOF_ROOT names", folder.path("harness.toml").display());
    could_not_run(&out, &said);
}

pub fn trials() -> Vec<Trial> {
    trials![
        a_suite_without_fixtures_says_none_was_found,
        an_expectation_of_another_check_names_expect_toml,
        writing_a_built_in_schema_snapshot_names_the_settings_file,
        a_root_without_settings_names_the_file_looked_for,
    ]
}
