//! The corpus cannot rot silently: each way a fixture or golden folder can fall
//! out of step is one clear failure naming the folder and the fix, and a
//! misconfigured corpus directory is an error that nothing papers over.

use crate::support::{self, Output};
use libtest_mimic::Trial;

const CASES: [&str; 2] = ["google-staged-both-selected", "openai-staged-succ-default"];

/// A project with two fixtures, blessed.
#[track_caller]
fn blessed() -> support::Project {
    support::Project::suite(&CASES).blessed()
}

fn verify_golden(project: &support::Project) -> Output {
    let golden = project.path("golden");
    project.run(&["verify", golden.to_str().unwrap()])
}

#[track_caller]
fn assert_fails_with(out: &Output, fragments: &[&str]) {
    assert_eq!(out.code, 1, "{}", out.describe());
    for fragment in fragments {
        assert!(out.stdout.contains(fragment), "missing {fragment:?}:\n{}", out.describe());
    }
}

fn a_fresh_corpus_verifies() {
    let out = verify_golden(&blessed());
    assert_eq!(out.code, 0, "{}", out.describe());
}

fn a_deleted_golden_agent_request_fails_naming_the_file_and_the_fix() {
    let project = blessed();
    std::fs::remove_file(project.path(&format!("golden/{}/agent-request.json", CASES[0]))).unwrap();
    let out = verify_golden(&project);
    assert_fails_with(&out, &["agent-request.json is missing", &format!("packetproof bless {}", CASES[0])]);
    assert_output_snapshot!("verify_missing_golden_agent_request", out, project.root());
}

fn a_deleted_golden_packet_is_named_not_taken_for_a_run() {
    let project = blessed();
    std::fs::remove_file(project.path(&format!("golden/{}/runtime-packet.json", CASES[1]))).unwrap();
    let out = verify_golden(&project);
    assert_fails_with(&out, &["runtime-packet.json is missing", &format!("packetproof bless {}", CASES[1])]);
    assert!(!out.stdout.contains("[run::"), "taken for a run directory:\n{}", out.stdout);
}

fn a_fixture_folder_without_request_json_is_named() {
    for name in ["requests.json", "input.json"] {
        let project = blessed();
        let folder = project.path("fixtures/new-case");
        support::copy_tree(&project.path(&format!("fixtures/{}/request.json", CASES[0])), &folder.join(name));
        let out = verify_golden(&project);
        assert_fails_with(&out, &["[corpus::layout]", "fixtures/new-case", name, "without request.json"]);
    }
}

fn a_golden_folder_without_fixture_is_named() {
    let project = blessed();
    std::fs::remove_dir_all(project.path(&format!("fixtures/{}", CASES[0]))).unwrap();
    let out = verify_golden(&project);
    assert_fails_with(
        &out,
        &["[corpus::layout]", &format!("golden/{}", CASES[0]), "belongs to no fixture", "--unreferenced delete"],
    );
}

/// A misspelt directory in harness.toml is an error (exit 2) naming it; bless
/// does not create it.
fn a_misconfigured_golden_directory_is_an_error_and_never_created() {
    let project = blessed();
    let config = project.path("harness.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("golden = \"golden\"", "golden = \"goldne\"")).unwrap();
    for args in [&["bless"][..], &["verify", "golden"], &["verify", "fixtures"]] {
        let out = project.bin().current_dir(project.root()).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("paths.golden") && stderr.contains("goldne"), "{args:?}: {stderr}");
    }
    assert!(!project.path("goldne").exists(), "bless created the misspelt directory");
}

pub fn trials() -> Vec<Trial> {
    trials![
        a_fresh_corpus_verifies,
        a_deleted_golden_agent_request_fails_naming_the_file_and_the_fix,
        a_deleted_golden_packet_is_named_not_taken_for_a_run,
        a_fixture_folder_without_request_json_is_named,
        a_golden_folder_without_fixture_is_named,
        a_misconfigured_golden_directory_is_an_error_and_never_created,
    ]
}
