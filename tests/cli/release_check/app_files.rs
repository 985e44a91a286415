//! `[exporter] files` outside the suite's folder: an app whose suite is in `llm/gate`
//! and whose model is set in its own `src/calls.js`, two folders up. A model change
//! there is explained by `release-check` when harness.toml declares the file (and not
//! otherwise), is pinned by the lock and named by the gate statement's materials; a
//! pattern that matches nothing, or leads out of the repository, is a settings error.

use crate::support::{self, Output, Project};
use serde_json::Value;
use std::path::{Path, PathBuf};

const CASE: &str = "openai-staged-alone-selected";
const SUITE: &str = "llm/gate";

/// A git repository (on `main`, everything committed) holding the app's `src/calls.js`
/// and, in `llm/gate`, a suite of one OpenAI fixture whose `./export.sh` takes the
/// model from `src/calls.js` and compiles the request with it. `files` is what
/// harness.toml declares; a file `outside.js` lies beside the repository.
struct App {
    dir: Project,
}

impl App {
    fn new(files: &str) -> App {
        let dir = Project::empty();
        let app = App { dir };
        let suite = app.suite();
        for item in ["harness.toml", "references"] {
            support::copy_tree(&support::root().join(item), &suite.join(item));
        }
        let request = format!("fixtures/{CASE}/request.json");
        support::copy_tree(&support::root().join(&request), &suite.join(&request));
        std::fs::create_dir_all(suite.join("golden")).unwrap();
        std::fs::create_dir_all(app.top().join("src")).unwrap();
        app.set_model("gpt-5");
        std::fs::write(app.dir.path("outside.js"), "export const model = \"gpt-5\";\n").unwrap();
        let bin = env!("CARGO_BIN_EXE_packetproof");
        let script = format!(
            "#!/bin/sh\nset -e\nmodel=$(sed -n 's/.*model = \"\\(.*\\)\".*/\\1/p' ../../src/calls.js)\n\
             request=$(mktemp)\nsed \"s/\\\"model\\\": \\\"gpt-5\\\"/\\\"model\\\": \\\"$model\\\"/\" \"$1\" > \"$request\"\n\
             \"{bin}\" export --request \"$request\"\nrm -f \"$request\"\n"
        );
        std::fs::write(suite.join("export.sh"), script).unwrap();
        std::fs::set_permissions(suite.join("export.sh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
        let extra = format!(
            "\n[corpus]\nrequire_branch_coverage = false\n\n[exporter]\ncommand = [\"./export.sh\", \"{{request}}\"]\n\
             files = {files}\n"
        );
        std::fs::write(suite.join("harness.toml"), settings + &extra).unwrap();
        app.git(&["init", "-q", "-b", "main"]);
        app.bless();
        app.git(&["add", "-A"]);
        app.git(&["commit", "-q", "-m", "an app with its gate"]);
        app
    }

    /// The repository's top (a folder inside the temporary one, so a file can lie outside it).
    fn top(&self) -> PathBuf {
        self.dir.path("repo")
    }

    fn suite(&self) -> PathBuf {
        self.top().join(SUITE)
    }

    fn set_model(&self, model: &str) {
        let code =
            format!("// The app's LLM calls.\nexport const model = \"{model}\";\nexport const maxTokens = 800;\n");
        std::fs::write(self.top().join("src/calls.js"), code).unwrap();
    }

    fn git(&self, args: &[&str]) {
        std::fs::create_dir_all(self.top()).unwrap();
        support::git(&self.top(), args)
    }

    /// packetproof in the suite's folder, finding its settings as a user's shell would.
    fn run(&self, args: &[&str]) -> Output {
        support::exec(support::bin().current_dir(self.suite()).args(args))
    }

    #[track_caller]
    fn bless(&self) {
        let out = self.run(&["bless"]);
        assert_eq!(out.code, 0, "bless: {}", out.describe());
    }

    #[track_caller]
    fn check(&self) -> (Value, i32) {
        let out = self.run(&["release-check", "--format", "json"]);
        assert!(out.code == 0 || out.code == 1, "{}", out.describe());
        (serde_json::from_str(&out.stdout).expect("a JSON report"), out.code)
    }

    fn settings(&self, files: &str) {
        let path = self.suite().join("harness.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let at = text.find("files = ").unwrap();
        let end = at + text[at..].find('\n').unwrap();
        std::fs::write(&path, format!("{}files = {files}{}", &text[..at], &text[end..])).unwrap();
    }
}

fn violations(report: &Value) -> String {
    report["violations"].to_string()
}

fn a_model_change_in_app_code_outside_the_suite_is_explained_when_declared() {
    for (files, explained) in [(r#"["export.sh", "../../src/calls.js"]"#, true), (r#"["export.sh"]"#, false)] {
        let app = App::new(files);
        let (report, code) = app.check();
        assert_eq!(code, 0, "{report:#}");
        app.set_model("gpt-5-mini");
        app.bless();
        let golden = app.suite().join(format!("golden/{CASE}/runtime-packet.json"));
        assert!(std::fs::read_to_string(golden).unwrap().contains("\"model\": \"gpt-5-mini\""));
        let (report, code) = app.check();
        let changed = &report["changedFiles"];
        let calls = changed.as_array().unwrap().iter().find(|f| f["path"] == "src/calls.js").expect("listed");
        if explained {
            assert_eq!(code, 0, "{}", violations(&report));
            assert_eq!(calls["kind"], "exporter", "{report:#}");
            let digests = &report["exporterFiles"][0];
            assert_eq!(digests["path"], "src/calls.js", "{report:#}");
            assert!(
                digests["before"].as_str().unwrap().starts_with("sha256:") && digests["before"] != digests["after"]
            );
            // The lock pinned the app's code at the last bless, named from the suite's folder.
            let pins: Vec<&Value> = report["lock"].as_array().unwrap().iter().map(|p| &p["file"]).collect();
            assert_eq!(pins, ["../../src/calls.js"], "{report:#}");
            let text = app.run(&["release-check"]).stdout;
            assert!(text.contains("- src/calls.js (exporter): sha256:"), "{text}");
        } else {
            assert_eq!(code, 1, "{report:#}");
            assert_eq!(calls["kind"], "other", "{report:#}");
            assert!(
                violations(&report).contains("no template, schema, compiler, exporter or fixture change"),
                "{report:#}"
            );
        }
    }
}

/// An edit of the declared app code, not blessed, is what the lock says changed.
fn an_unblessed_edit_of_declared_app_code_is_named_by_the_lock() {
    let app = App::new(r#"["export.sh", "../../src/**/*.js"]"#);
    std::fs::write(app.top().join("src/calls.js"), "// refactored\nexport const model = \"gpt-5\";\n").unwrap();
    let (report, code) = app.check();
    assert_eq!(code, 1, "{report:#}");
    assert!(violations(&report).contains("\"lock-not-blessed\"") && violations(&report).contains("../../src/calls.js"));
    let out = app.run(&["test"]);
    assert_eq!(out.code, 101, "{}", out.describe());
    assert!(
        out.stdout.contains("[corpus::lock] ../../src/calls.js: changed since the last bless"),
        "{}",
        out.describe()
    );
    app.bless();
    assert_eq!(app.check().1, 0);
}

fn a_pattern_that_matches_nothing_or_leaves_the_repository_is_a_settings_error() {
    let app = App::new(r#"["export.sh", "../../src/calls.js"]"#);
    let settings = app.suite().join("harness.toml");
    let said = |out: &Output, words: &[&str]| {
        assert_eq!(out.code, 2, "{}", out.describe());
        let named = format!("{}: exporter.files: ", settings.display());
        assert!(out.stderr.contains(&named), "{}", out.describe());
        for words in words {
            assert!(out.stderr.contains(words), "{words:?}: {}", out.describe());
        }
    };
    app.settings(r#"["export.sh", "../../src/calls.ts"]"#);
    for command in [&["release-check"][..], &["test"], &["bless"]] {
        said(&app.run(command), &["\"../../src/calls.ts\" matches no file"]);
    }
    app.settings(r#"["../../src/*.py"]"#);
    said(&app.run(&["release-check"]), &["\"../../src/*.py\" matches no file"]);
    // outside.js exists, beside the repository: still refused.
    app.settings(r#"["../../../outside.js"]"#);
    said(&app.run(&["release-check"]), &["\"../../../outside.js\" leads outside the git repository"]);
    let absolute = app.dir.path("outside.js").display().to_string();
    app.settings(&format!("[{absolute:?}]"));
    said(&app.run(&["release-check"]), &["is an absolute path"]);
}

fn the_gate_statement_names_declared_app_code_with_its_digest() {
    let app = App::new(r#"["export.sh", "../../src/**/*.js"]"#);
    // Beside the repository: a key in the checkout would be an uncommitted change.
    let key = app.dir.path("owner-only.pem");
    std::fs::copy(support::root().join("tests/keys/test-ed25519.pem"), &key).unwrap();
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let out = app.run(&["test", "--attest", key.to_str().unwrap(), "--attestation", "gate.json"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    let statement = statement(&app.suite().join("gate.json"));
    let materials = statement["predicate"]["materials"].as_array().unwrap();
    let digest_of = |name: &str| {
        materials.iter().find(|m| m["name"] == name).map(|m| m["digest"]["sha256"].as_str().unwrap().to_owned())
    };
    let calls = std::fs::read(app.top().join("src/calls.js")).unwrap();
    let want = packetproof::digest::sha256(&calls).trim_start_matches("sha256:").to_owned();
    assert_eq!(digest_of("../../src/calls.js"), Some(want), "{materials:#?}");
    assert!(digest_of("export.sh").is_some(), "{materials:#?}");
    assert_eq!(materials.iter().filter(|m| m["name"] == "export.sh").count(), 1, "each file once");
}

fn statement(gate: &Path) -> Value {
    use base64::Engine;
    let envelope: Value = serde_json::from_slice(&std::fs::read(gate).unwrap()).unwrap();
    let body = base64::engine::general_purpose::STANDARD.decode(envelope["payload"].as_str().unwrap()).unwrap();
    serde_json::from_slice(&body).unwrap()
}

pub fn trials() -> Vec<libtest_mimic::Trial> {
    crate::trials![
        a_model_change_in_app_code_outside_the_suite_is_explained_when_declared,
        an_unblessed_edit_of_declared_app_code_is_named_by_the_lock,
        a_pattern_that_matches_nothing_or_leaves_the_repository_is_a_settings_error,
        the_gate_statement_names_declared_app_code_with_its_digest,
    ]
}
