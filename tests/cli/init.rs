//! `packetproof init`, and every command outside a suite: the built-in defaults,
//! a harness.toml that overrides them, and the refusals of the corpus commands.

use crate::support::{self, exec};
use libtest_mimic::Trial;

/// A source file of this crate (a fixture, a template).
fn project(relative: &str) -> String {
    support::root().join(relative).display().to_string()
}

fn init_writes_a_suite_whose_test_passes() {
    let folder = support::Project::empty();
    let mut out = folder.run_in("", &["init", "suite"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    // The workflow pins the action to the binary's commit: written when the build knows it.
    let workflow = "wrote suite/ci/packetproof.yml\n";
    assert_eq!(out.stdout.contains(workflow), option_env!("PACKETPROOF_BUILT_FROM").is_some(), "{}", out.stdout);
    out.stdout = out.stdout.replace(workflow, "");
    assert_output_snapshot!("init", out, folder.root());
    let suite = folder.path("suite");
    for file in [
        "harness.toml",
        "README.md",
        "references/prompts/user.md.j2",
        "references/prompts/branches/evidence/selected-only.md.j2",
        "references/block-screen-output-schema.json",
        "references/builder/block-screen-output-schema.json",
        "references/gemini-json-suffix.txt",
    ] {
        assert!(suite.join(file).is_file(), "{file} was not written");
    }
    // The workflow pins the action to the binary's commit: written when the build knows it.
    assert_eq!(suite.join("ci/packetproof.yml").is_file(), option_env!("PACKETPROOF_BUILT_FROM").is_some());
    for provider in ["anthropic", "google", "openai"] {
        let golden = std::fs::read_dir(suite.join("golden"))
            .unwrap()
            .filter_map(Result::ok)
            .find(|e| e.file_name().to_string_lossy().starts_with(provider));
        let golden = golden.unwrap_or_else(|| panic!("no {provider} example")).path();
        assert!(golden.join("runtime-packet.json").is_file() && golden.join("agent-request.json").is_file());
    }
    // The templates are the project's own bytes.
    let ours = std::fs::read(support::root().join("references/prompts/system.md.j2")).unwrap();
    assert_eq!(std::fs::read(suite.join("references/prompts/system.md.j2")).unwrap(), ours);
    let out = folder.run_in("suite", &["test", "--junit", "junit.xml"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert_output_snapshot!("test_gate_passes", crate::test::in_name_order(&out), folder.root());
    assert_eq!(crate::test::verdict(&out.stdout, "corpus::branch-coverage"), Some("ignored"), "{}", out.stdout);
    let junit = std::fs::read_to_string(suite.join("junit.xml")).unwrap();
    // Branch coverage is off in a new suite; its fixture runs carry no provider request or attestation.
    assert!(junit.contains("failures=\"0\"") && junit.contains("disabled=\"10\""), "{junit}");
    assert!(
        junit.contains("<skipped message=\"not applicable: the fixture&apos;s run/ has no provider-request.json\"/>"),
        "{junit}"
    );
    assert!(junit.contains("name=\"run::evaluation\" classname=\"google-staged-both-selected\""), "{junit}");
    // And the same suite is what `verify` checks.
    let verified = folder.run_in("suite", &["verify", "golden"]);
    assert_eq!(verified.code, 0, "{}", verified.describe());
}

fn init_refuses_a_folder_that_is_not_empty() {
    let folder = support::Project::empty();
    std::fs::create_dir_all(folder.path("suite")).unwrap();
    std::fs::write(folder.path("suite/notes.txt"), "mine").unwrap();
    let out = folder.run_in("", &["init", "suite"]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert_output_snapshot!("init_refuses_a_folder_that_is_not_empty", out, folder.root());
    assert!(!folder.path("suite/harness.toml").exists());
}

/// A folder holding only dotfiles (a fresh repository, a placeholder) counts as empty.
fn init_accepts_a_folder_holding_only_dotfiles() {
    let folder = crate::support::Project::empty();
    std::fs::create_dir_all(folder.path("suite/.git")).unwrap();
    std::fs::write(folder.path("suite/.gitkeep"), "").unwrap();
    let out = folder.run_in("", &["init", "suite"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(folder.path("suite/harness.toml").is_file() && folder.path("suite/.gitkeep").is_file());
}

/// With no harness.toml anywhere, the commands that need no corpus run on the built-in defaults.
fn commands_without_a_corpus_work_in_any_folder() {
    let folder = support::Project::empty();
    let request = project("fixtures/google-staged-both-selected/request.json");
    let export = exec(support::bin().current_dir(folder.path("")).args(["export", "--request", &request]));
    assert_eq!(export.code, 0, "{}", export.describe());
    // The built-in templates are the project's: the same request compiles to the same bytes.
    let in_project = exec(support::bin().args(["export", "--request", &request]));
    assert_eq!(export.stdout, in_project.stdout, "the built-in templates compile other bytes");
    // Not the repository's golden file: only the conformance gate depends on it being current.
    let golden = folder.path("packet.json").display().to_string();
    std::fs::write(&golden, &export.stdout).unwrap();
    let validate = folder.run_in("", &["validate", "--packet", &golden]);
    assert_eq!(validate.code, 0, "{}", validate.describe());
    let verify = folder.run_in("", &["verify", &golden]);
    assert_eq!(verify.code, 0, "{}", verify.describe());
    let prepare = folder.run_in("", &["prepare", "--packet", &golden, "--out-dir", "run"]);
    assert_eq!(prepare.code, 0, "{}", prepare.describe());
    let wire = folder.run_in("", &["wire", "--packet", &golden, "--api", "gemini"]);
    assert_eq!(wire.code, 0, "{}", wire.describe());
    assert!(wire.stdout.contains("\"contents\""), "{}", wire.stdout);
    let canon = folder.run_in("", &["canon", "--hash", &golden]);
    assert_eq!(canon.code, 0, "{}", canon.describe());
}

fn corpus_commands_say_which_file_they_looked_for() {
    let folder = support::Project::empty();
    for command in ["test", "bless", "release-check"] {
        let out = folder.run_in("", &[command]);
        assert_eq!(out.code, 2, "{command}: {}", out.describe());
        assert_output_snapshot!(format!("{command}_outside_a_suite"), out, folder.root());
    }
}

/// A harness.toml found upwards, or named by --config, overrides the defaults.
fn a_harness_toml_overrides_the_built_in_defaults() {
    let folder = support::Project::empty();
    std::fs::create_dir_all(folder.path("repo/sub")).unwrap();
    std::fs::write(folder.path("repo/harness.toml"), "[limits]\nmax_file_bytes = 100\n").unwrap();
    let packet = support::packet_file(folder.root(), "google-staged-both-selected").display().to_string();
    let found = folder.run_in("repo/sub", &["validate", "--packet", &packet]);
    assert_eq!(found.code, 2, "{}", found.describe());
    // The limit of the found file applies.
    assert_output_snapshot!("validate_over_the_found_files_limit", found, folder.root());
    let config = folder.path("repo/harness.toml").display().to_string();
    let named = folder.run_in("", &["--config", &config, "validate", "--packet", &packet]);
    assert_eq!(named.code, 2, "{}", named.describe());
    let defaults = folder.run_in("", &["validate", "--packet", &packet]);
    assert_eq!(defaults.code, 0, "{}", defaults.describe());
    std::fs::write(folder.path("repo/harness.toml"), "[limits]\nmax_file_bites = 100\n").unwrap();
    let typo = folder.run_in("repo", &["validate", "--packet", &packet]);
    assert_eq!(typo.code, 2, "{}", typo.describe());
    assert_output_snapshot!("a_settings_file_with_a_typo", typo, folder.root());
}

pub fn trials() -> Vec<Trial> {
    trials![
        init_writes_a_suite_whose_test_passes,
        init_refuses_a_folder_that_is_not_empty,
        init_accepts_a_folder_holding_only_dotfiles,
        commands_without_a_corpus_work_in_any_folder,
        corpus_commands_say_which_file_they_looked_for,
        a_harness_toml_overrides_the_built_in_defaults,
    ]
}
