//! `packetproof init`, and every command outside a suite: the built-in defaults,
//! a harness.toml that overrides them, and the refusals of the corpus commands.

use crate::support::{self, exec};
use libtest_mimic::Trial;
use std::path::Path;
use std::process::Command;

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

/// `packetproof` run by name, as CI and pre-commit run it: the built binary's folder on PATH.
#[track_caller]
fn on_path(dir: &Path, command: &[&str]) -> support::Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_packetproof")).parent().unwrap().to_path_buf();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&rest))).unwrap();
    let mut run = Command::new(command[0]);
    run.current_dir(dir).args(&command[1..]).env("PATH", path).stdin(std::process::Stdio::null());
    for name in support::packetproof_variables() {
        run.env_remove(name);
    }
    exec(&mut run)
}

/// A hook's `entry`, as words (the entries init writes need no shell quoting here).
fn words(entry: &str) -> Vec<&str> {
    assert!(!entry.contains(['\'', '"']), "{entry}");
    entry.split_whitespace().collect()
}

/// A suite in a subfolder of an application's repository: the workflow and the hooks go
/// to the repository's root, where GitHub and pre-commit look, and run the suite from
/// there: the workflow's action in its `working-directory`, each hook's entry from the
/// root (with the files it matches, as pre-commit passes them).
fn init_in_a_repository_writes_ci_and_hooks_at_its_root() {
    use crate::distribution::{steps, text_of, workflow_problems, yaml};
    let app = support::Project::empty();
    support::git(app.root(), &["init", "-q", "."]);
    let out = app.run_in("", &["init", "llm/gate"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(out.stdout.contains("\nwrote .pre-commit-config.yaml\n"), "{}", out.stdout);
    let ci: Vec<_> = std::fs::read_dir(app.path("llm/gate/ci")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(ci, ["packetproof.sh"], "only the launcher under the suite's ci/ in a repository");
    let root = app.root();

    // Pre-commit: each hook's entry, from the root, passes (and needs --config there).
    let config = yaml(&std::fs::read_to_string(app.path(".pre-commit-config.yaml")).unwrap(), "the hooks");
    let hooks = config["repos"][0]["hooks"].as_sequence().expect("hooks");
    let hook = |id: &str| hooks.iter().find(|h| text_of(h, "id") == id).unwrap_or_else(|| panic!("no hook {id}"));
    let matches = regex::Regex::new(text_of(hook("packetproof-verify"), "files")).unwrap();
    let mut packets: Vec<String> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.path().strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"))
        .filter(|path| matches.is_match(path))
        .collect();
    packets.sort();
    assert_eq!(packets.len(), 3, "the suite's golden packets, and only them: {packets:?}");
    for id in ["packetproof-verify", "packetproof-test"] {
        assert_eq!(text_of(hook(id), "language"), "system", "{id}: the packetproof on PATH");
        let mut command = words(text_of(hook(id), "entry"));
        if id == "packetproof-verify" {
            command.extend(packets.iter().map(String::as_str));
        }
        let ran = on_path(root, &command);
        assert_eq!(ran.code, 0, "{id}: {command:?}: {}", ran.describe());
    }
    // Where the suite's settings are not named, the root has none: what the hooks avoid.
    assert_eq!(on_path(root, &["packetproof", "test"]).code, 2);

    let Some(built_from) = option_env!("PACKETPROOF_BUILT_FROM") else {
        assert!(!app.path(".github").exists() && out.stderr.contains("no commit to pin"), "{}", out.describe());
        return;
    };
    // CI: the workflow runs `packetproof test --junit` in the suite's folder.
    assert!(out.stdout.contains("\nwrote .github/workflows/packetproof.yml\n"), "{}", out.stdout);
    let text = std::fs::read_to_string(app.path(".github/workflows/packetproof.yml")).unwrap();
    let action = yaml(&crate::distribution::read("action.yml"), "action.yml");
    assert_eq!(workflow_problems(&text, &action), Vec::<String>::new(), "{text}");
    assert!(text.contains(built_from), "{text}");
    let workflow = yaml(&text, "the workflow");
    let steps = steps(&workflow);
    let gate = steps.iter().find(|s| text_of(s, "name") == "packetproof test").unwrap();
    let folder = text_of(gate, "working-directory");
    assert_eq!(folder, "llm/gate");
    let ran = on_path(&root.join(folder), &["bash", "-c", text_of(gate, "run")]);
    assert_eq!(ran.code, 0, "{}", ran.describe());
    let upload = steps.iter().find(|s| text_of(s, "uses").starts_with("actions/upload-artifact@")).unwrap();
    let report = root.join(text_of(&upload["with"], "path"));
    assert!(report.is_file(), "the uploaded report {} is not where the gate wrote it", report.display());
}

/// A repository's own workflow and pre-commit config are never changed: init leaves them
/// byte for byte, writes its own under the suite's ci/ instead, and says so.
fn init_never_changes_the_repositorys_files() {
    let app = support::Project::empty();
    support::git(app.root(), &["init", "-q", "."]);
    std::fs::create_dir_all(app.path(".github/workflows")).unwrap();
    let (workflow, hooks) = ("name: mine\n", "repos: [] # mine\n");
    std::fs::write(app.path(".github/workflows/packetproof.yml"), workflow).unwrap();
    std::fs::write(app.path(".pre-commit-config.yaml"), hooks).unwrap();
    std::fs::create_dir_all(app.path("llm")).unwrap();
    let out = app.run_in("llm", &["init", "gate"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert_eq!(std::fs::read_to_string(app.path(".github/workflows/packetproof.yml")).unwrap(), workflow);
    assert_eq!(std::fs::read_to_string(app.path(".pre-commit-config.yaml")).unwrap(), hooks);
    let instead = std::fs::read_to_string(app.path("llm/gate/ci/pre-commit-config.yaml")).unwrap();
    assert!(instead.contains("bash llm/gate/ci/packetproof.sh --config llm/gate/harness.toml test"), "{instead}");
    assert!(
        out.stderr.contains(
            ".pre-commit-config.yaml exists and was left as it is; what init would have written there is in \
             gate/ci/pre-commit-config.yaml"
        ),
        "{}",
        out.describe()
    );
    assert_eq!(
        app.path("llm/gate/ci/packetproof.yml").is_file(),
        option_env!("PACKETPROOF_BUILT_FROM").is_some(),
        "{}",
        out.describe()
    );
}

pub fn trials() -> Vec<Trial> {
    trials![
        init_in_a_repository_writes_ci_and_hooks_at_its_root,
        init_never_changes_the_repositorys_files,
        init_writes_a_suite_whose_test_passes,
        init_refuses_a_folder_that_is_not_empty,
        init_accepts_a_folder_holding_only_dotfiles,
        commands_without_a_corpus_work_in_any_folder,
        corpus_commands_say_which_file_they_looked_for,
        a_harness_toml_overrides_the_built_in_defaults,
    ]
}
