//! `packetproof init --agent NAME`: the smallest suite of one app agent, in a Node and a
//! Python repository (marker files only, git init'd), green after `bless` with no
//! `[checks] skip`; the workflow and hooks it writes run the team's packetproof; and
//! `init` in a repository that has a suite writes none and wires CI and hooks to it.
//! The tests that run the exporter need node or python3 and are ignored without them.

use crate::distribution::{steps, text_of, yaml};
use crate::support::{self, run_in, trial, trial_needing, Output};
use libtest_mimic::Trial;
use std::path::Path;

const NODE_PACKAGE: &str = r#"{"name": "app", "private": true, "devDependencies": {"packetproof": "^0.1.0"}}"#;

/// A git repository holding only `marker` (package.json, pyproject.toml, or nothing).
fn repository(marker: Option<(&str, &str)>) -> support::Project {
    let app = support::Project::empty();
    support::git(app.root(), &["init", "-q", "."]);
    if let Some((name, text)) = marker {
        std::fs::write(app.path(name), text).unwrap();
    }
    app
}

#[track_caller]
fn ran(out: &Output) -> &Output {
    assert_eq!(out.code, 0, "{}", out.describe());
    out
}

/// `init llm/gate --agent answer` with `flags`; returns the suite's folder.
#[track_caller]
fn init_agent(app: &support::Project, flags: &[&str]) -> std::path::PathBuf {
    let mut args = vec!["init", "llm/gate", "--agent", "answer"];
    args.extend(flags);
    ran(&app.run_in("", &args));
    app.path("llm/gate")
}

/// The hooks' entries, by id.
fn hook_entries(app: &support::Project) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(app.path(".pre-commit-config.yaml")).unwrap();
    let config = yaml(&text, "the hooks");
    let hooks = config["repos"][0]["hooks"].as_sequence().expect("hooks").clone();
    hooks.iter().map(|h| (text_of(h, "id").to_owned(), text_of(h, "entry").to_owned())).collect()
}

/// What each step of the workflow runs.
fn workflow_runs(app: &support::Project) -> Vec<String> {
    let text = std::fs::read_to_string(app.path(".github/workflows/packetproof.yml")).unwrap();
    let workflow = yaml(&text, "the workflow");
    steps(&workflow).iter().map(|s| format!("{}{}", text_of(s, "uses"), text_of(s, "run"))).collect()
}

/// `bless`, then `test`: green, every check run but those a custom agent does not have.
#[track_caller]
fn blessed_suite_is_green(suite: &Path) -> Output {
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    assert!(!settings.contains("[checks]"), "no check is skipped: {settings}");
    ran(&run_in(suite, &["bless"]));
    let out = run_in(suite, &["test"]);
    assert!(ran(&out).stdout.contains("test result: ok."), "{}", out.describe());
    for check in ["example::packet::contract", "example::packet::regenerates", "corpus::lock"] {
        assert_eq!(crate::test::verdict(&out.stdout, check), Some("ok"), "{check}: {}", out.stdout);
    }
    out
}

fn init_agent_in_a_node_repository_is_green_after_bless() {
    let app = repository(Some(("package.json", NODE_PACKAGE)));
    let suite = init_agent(&app, &["--output", "schema", "--style", "mustache"]);
    assert!(suite.join("export.js").is_file() && !suite.join("export.py").exists());
    assert!(!suite.join("references").exists(), "not the block builder's demo");
    blessed_suite_is_green(&suite);
    // The agent's own schema is its packets' outputSchema, and what prepare holds back.
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(suite.join("schemas/answer.json")).unwrap()).unwrap();
    let packet = suite.join("golden/example/runtime-packet.json");
    let golden: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&packet).unwrap()).unwrap();
    assert_eq!(golden["outputSchema"], schema);
    ran(&run_in(&suite, &["prepare", "--packet", "golden/example/runtime-packet.json", "--out-dir", "run"]));
    let held: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(suite.join("run/validation-schema.json")).unwrap()).unwrap();
    assert_eq!(held, schema);
    // A changed template fails the gate, and the hint names the npm package's command.
    std::fs::write(suite.join("prompts/answer.user.mustache"), "{{{question}}}?\n").unwrap();
    let out = run_in(&suite, &["test"]);
    assert_eq!(out.code, 101, "{}", out.describe());
    assert!(out.stdout.contains("`npx packetproof bless example`"), "{}", out.stdout);
    assert!(!out.stdout.contains("cargo"), "{}", out.stdout);
}

fn init_agent_in_a_python_repository_is_green_after_bless() {
    for (style, output) in [("format", "text"), ("jinja", "schema")] {
        let app = repository(Some(("pyproject.toml", "[project]\nname = \"app\"\n")));
        let suite = init_agent(&app, &["--style", style, "--output", output]);
        assert!(suite.join("export.py").is_file() && !suite.join("export.js").exists());
        assert_eq!(suite.join("schemas/answer.json").is_file(), output == "schema");
        blessed_suite_is_green(&suite);
        let lock = std::fs::read_to_string(suite.join("packetproof.lock")).unwrap();
        assert_eq!(lock.contains("\"schemas/answer.json\""), output == "schema", "the lock pins the agent's schema");
        std::fs::write(suite.join("fixtures/example/request.json"), r#"{"input": {"product": "x", "question": "y"}}"#)
            .unwrap();
        let out = run_in(&suite, &["test"]);
        assert_eq!(out.code, 101, "{}", out.describe());
        assert!(out.stdout.contains("re-bless with `packetproof bless example`"), "{}", out.stdout);
    }
}

/// The workflow installs the app's packages as its project declares them, then
/// packetproof through the launcher (never a version no index has), and the hooks run the
/// launcher; the exporter is in the app's language whether or not the project names
/// packetproof yet. No program runs here (tests/cli/workflow.rs runs them).
fn the_workflow_and_hooks_run_the_teams_packetproof() {
    let built = option_env!("PACKETPROOF_BUILT_FROM").is_some();
    let node = repository(Some(("package.json", NODE_PACKAGE)));
    init_agent(&node, &[]);
    for (id, entry) in hook_entries(&node) {
        let verb = if id == "packetproof-verify" { "verify" } else { "test" };
        assert_eq!(entry, format!("bash llm/gate/ci/packetproof.sh --config llm/gate/harness.toml {verb}"), "{id}");
    }
    if built {
        let runs = workflow_runs(&node);
        for step in ["npm install", "bash llm/gate/ci/packetproof.sh --install", "packetproof test --junit junit.xml"] {
            assert!(runs.iter().any(|r| r == step), "{step}: {runs:?}");
        }
        assert!(runs.iter().any(|r| r.starts_with(packetproof::init::ACTION_REPOSITORY)), "{runs:?}");
    }

    let python = repository(Some(("requirements-dev.txt", "pytest\n")));
    init_agent(&python, &[]);
    let text = std::fs::read_to_string(python.path(".pre-commit-config.yaml")).unwrap();
    let config = yaml(&text, "the hooks");
    for hook in config["repos"][0]["hooks"].as_sequence().unwrap() {
        assert_eq!(text_of(hook, "language"), "system", "{text}");
        assert!(text_of(hook, "entry").starts_with("bash llm/gate/ci/packetproof.sh --config "), "{text}");
    }
    assert!(!text.contains("packetproof=="), "{text}");
    if built {
        let runs = workflow_runs(&python);
        assert!(runs.iter().any(|r| r == "python -m pip install -r requirements-dev.txt"), "{runs:?}");
        assert!(!runs.iter().any(|r| r.contains("packetproof==")), "{runs:?}");
    }

    // A Node project that does not name packetproof (nothing is published yet) is still a
    // Node project: a JavaScript exporter, run by node.
    let other = repository(Some(("package.json", r#"{"name": "app"}"#)));
    let out =
        other.run_in("", &["init", "llm/gate", "--agent", "answer", "--provider", "openai", "--model", "gpt-5-mini"]);
    ran(&out);
    assert!(out.stdout.contains("make export.js build the app's packets"), "{}", out.stdout);
    assert!(!other.path("llm/gate/export.py").exists());
    let settings = std::fs::read_to_string(other.path("llm/gate/harness.toml")).unwrap();
    assert!(settings.contains("[providers.openai]\nmodels = [\"gpt-5-mini\"]"), "{settings}");
    assert!(settings.contains("command = [\"node\", \"export.js\", \"{request}\"]"), "{settings}");
}

/// `init` where the repository has a suite (the folder is in it, or it is one folder
/// down from the root) writes no suite and wires CI and hooks to that one; `init
/// --agent` there is refused (its agent belongs in that suite's settings).
fn init_in_a_repository_with_a_suite_wires_to_it() {
    let app = repository(Some(("package.json", NODE_PACKAGE)));
    init_agent(&app, &[]);
    for written in [".pre-commit-config.yaml", ".github"] {
        let path = app.path(written);
        if path.is_dir() { std::fs::remove_dir_all(path) } else { std::fs::remove_file(path) }.unwrap();
    }
    let before = files_of(app.root());
    let out = app.run_in("llm/gate/fixtures", &["init"]);
    ran(&out);
    let said = "llm/gate is this repository's packetproof suite: no new suite written; CI and the pre-commit hooks \
                run it with the packetproof ";
    assert!(out.stdout.contains(said) && out.stdout.contains("llm/gate/ci/packetproof.sh finds\n"), "{out:?}");
    let hooks = hook_entries(&app);
    assert!(hooks.iter().all(|(_, e)| e.contains("--config llm/gate/harness.toml")), "{hooks:?}");
    assert!(app.path(".github/workflows/packetproof.yml").is_file());
    let mut after = files_of(app.root());
    after.retain(|f| !f.starts_with(".github/") && f != ".pre-commit-config.yaml");
    assert_eq!(after, before, "init wrote nothing but the workflow and the hooks");

    // From the root, with a new folder named: still the one suite, now wired beside the
    // repository's files (which init never changes).
    let out = app.run_in("", &["init", "another"]);
    ran(&out);
    assert!(out.stdout.contains("no new suite written"), "{}", out.describe());
    assert!(!app.path("another").exists() && !app.path("harness.toml").exists());
    assert!(app.path("llm/gate/ci/pre-commit-config.yaml").is_file(), "{}", out.describe());

    let refused = app.run_in("", &["init", "other", "--agent", "second"]);
    assert_eq!(refused.code, 2, "{}", refused.describe());
    assert!(refused
        .stderr
        .contains("is a packetproof suite already: declare the agent in its harness.toml as [agents.second]"));
    assert!(!app.path("other").exists());
}

/// Every file under `root` but git's, as paths from it.
fn files_of(root: &Path) -> Vec<String> {
    let mut files: Vec<String> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"))
        .collect();
    files.sort();
    files
}

/// A settings error names the agent's schema file that is not there; a text agent names none.
fn an_agents_schema_file_must_exist() {
    let app = repository(None);
    let suite = init_agent(&app, &["--output", "schema"]);
    std::fs::remove_file(suite.join("schemas/answer.json")).unwrap();
    let out = run_in(&suite, &["test"]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains("agents.answer.schema: ") && out.stderr.contains("is not a file"), "{}", out.stderr);
    let usage = app.run_in("", &["init", "x", "--style", "jinja"]);
    assert_eq!(usage.code, 2, "--style needs --agent: {}", usage.describe());
    let bad = app.run_in("", &["init", "x", "--agent", "a b"]);
    assert_eq!(bad.code, 2, "{}", bad.describe());
    assert!(bad.stderr.contains("--agent \"a b\": expected a letter"), "{}", bad.stderr);
    let provider = app.run_in("", &["init", "x", "--provider", "openai"]);
    assert_eq!(provider.code, 2, "--provider needs --agent: {}", provider.describe());
    let unknown = app.run_in("", &["init", "x", "--agent", "a", "--provider", "mistral"]);
    assert_eq!(unknown.code, 2, "{}", unknown.describe());
    assert!(unknown.stderr.contains("name the agent's with --model"), "{}", unknown.stderr);
    assert!(!app.path("x").exists());
}

pub fn trials() -> Vec<Trial> {
    let name = |f: &str| support::test_name(module_path!(), f);
    vec![
        trial_needing(
            "node",
            module_path!(),
            "init_agent_in_a_node_repository_is_green_after_bless",
            init_agent_in_a_node_repository_is_green_after_bless,
        ),
        trial_needing(
            "python3",
            module_path!(),
            "init_agent_in_a_python_repository_is_green_after_bless",
            init_agent_in_a_python_repository_is_green_after_bless,
        ),
        trial(
            name("the_workflow_and_hooks_run_the_teams_packetproof"),
            the_workflow_and_hooks_run_the_teams_packetproof,
        ),
        trial(name("init_in_a_repository_with_a_suite_wires_to_it"), init_in_a_repository_with_a_suite_wires_to_it),
        trial(name("an_agents_schema_file_must_exist"), an_agents_schema_file_must_exist),
    ]
}
