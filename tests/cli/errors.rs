//! Each kind of failure is named as what it is, with the file or place it concerns,
//! and exits 2: only bad command-line usage says "usage:" (`crates/packetproof/src/error.rs`).
//! Each is pinned as a whole-output snapshot.

use crate::support;
use libtest_mimic::Trial;
use std::ffi::OsStr;
use std::path::Path;

const CASE: &str = "openai-staged-alone-selected";

/// Exit 2, not called bad usage, and the whole output as the snapshot `name`.
#[track_caller]
fn could_not_run(out: &support::Output, name: &str, project: &Path) {
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(!out.stderr.contains("usage:"), "{}", out.describe());
    assert_output_snapshot!(name, out, project);
}

/// A suite whose fixtures folder holds no fixture is an empty gate, not bad usage.
fn a_suite_without_fixtures_says_none_was_found() {
    let folder = support::Project::empty();
    let suite = folder.init();
    for entry in std::fs::read_dir(suite.join("fixtures")).unwrap() {
        std::fs::remove_dir_all(entry.unwrap().path()).unwrap();
    }
    let out = folder.run_in("suite", &["test"]);
    could_not_run(&out, "no_fixture_found", folder.root());
}

/// expect.toml naming a check the fixture does not have: the file is named.
fn an_expectation_of_another_check_names_expect_toml() {
    let folder = support::Project::empty();
    let suite = folder.init();
    let expect = suite.join(format!("fixtures/{CASE}/expect.toml"));
    std::fs::write(&expect, "[[fails]]\ncheck = \"corpus::branch-coverage\"\nmessage = \"x\"\n").unwrap();
    let out = folder.run_in("suite", &["test"]);
    could_not_run(&out, "expectation_of_another_check", folder.root());
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
    could_not_run(&out, "schema_write_without_a_snapshot_path", folder.root());
}

/// PACKETPROOF_ROOT naming a folder without harness.toml: the file looked for is named.
fn a_root_without_settings_names_the_file_looked_for() {
    let folder = support::Project::empty();
    let out = folder.run(&["schema", "--check"]);
    could_not_run(&out, "root_without_settings", folder.root());
}

/// Bad usage is the one kind that says "usage:" (clap's message, exit 2).
fn a_usage_error_says_usage() {
    let out = support::run(["validate", "--no-such-flag"]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert_output_snapshot!("usage_error", out);
}

/// A missing input file is named, with the system's reason.
fn a_missing_file_is_named() {
    let folder = support::Project::empty();
    let out = support::run([OsStr::new("canon"), folder.path("absent.json").as_os_str()]);
    could_not_run(&out, "missing_file", folder.root());
}

/// Malformed JSON: the file, the line and column, and what was wrong.
fn malformed_json_names_the_file_and_the_position() {
    let folder = support::Project::empty();
    let file = folder.path("packet.json");
    std::fs::write(&file, "{\n  \"packetVersion\": 1,\n  \"model\": \"m\",\n}\n").unwrap();
    let out = support::run([OsStr::new("validate"), OsStr::new("--packet"), file.as_os_str()]);
    could_not_run(&out, "malformed_json", folder.root());
}

/// Well-formed JSON of the wrong shape is read, and fails the contract (exit 1): the
/// file and the JSON path, and every other rule said not to apply.
fn a_wrong_shape_names_the_file_and_the_json_path() {
    let folder = support::Project::empty();
    let file = folder.path("packet.json");
    std::fs::write(&file, "[1, 2]\n").unwrap();
    let out = support::run([OsStr::new("validate"), OsStr::new("--packet"), file.as_os_str()]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert_output_snapshot!("wrong_json_shape", out, folder.root());
}

/// A refused input (a run manifest naming a file outside its run): the file, the JSON
/// path and why, before anything is read or written.
fn a_refused_input_names_the_file_the_path_and_why() {
    let folder = support::Project::empty();
    let packet = support::packet_file(folder.root(), CASE);
    let run = folder.path("run");
    let prepared = support::run([
        OsStr::new("prepare"),
        OsStr::new("--packet"),
        packet.as_os_str(),
        OsStr::new("--out-dir"),
        run.as_os_str(),
    ]);
    assert_eq!(prepared.code, 0, "{}", prepared.describe());
    let manifest = run.join("run-manifest.json");
    let mut value: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    value["rawOutput"] = serde_json::json!("../elsewhere.json");
    std::fs::write(&manifest, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    let out = support::run([OsStr::new("evaluate"), OsStr::new("--run-dir"), run.as_os_str()]);
    could_not_run(&out, "refused_input", folder.root());
}

pub fn trials() -> Vec<Trial> {
    trials![
        a_suite_without_fixtures_says_none_was_found,
        an_expectation_of_another_check_names_expect_toml,
        writing_a_built_in_schema_snapshot_names_the_settings_file,
        a_root_without_settings_names_the_file_looked_for,
        a_usage_error_says_usage,
        a_missing_file_is_named,
        malformed_json_names_the_file_and_the_position,
        a_wrong_shape_names_the_file_and_the_json_path,
        a_refused_input_names_the_file_the_path_and_why,
    ]
}
