//! The CI workflow, the pre-commit config and the launcher script `init` writes for a
//! suite. The workflow installs the app's own packages as its project declares them
//! ([`Project`]: the exporter imports them), then finds packetproof with the launcher
//! (the project's own install, an earlier one, the release asset) and, when none is
//! found, builds it with packetproof's GitHub Action pinned to a commit (cargo, once,
//! cached by its revision). The hooks run packetproof through the same launcher, so CI
//! and hooks work before the first release and after it, without edits.

use super::project::Project;

/// The GitHub repository whose `action.yml` the workflow uses and whose releases carry the
/// binaries: the one place that names it (README, "GitHub Action"; a fork changes it here).
pub const ACTION_REPOSITORY: &str = "packetproof/packetproof";

/// The version whose release asset the launcher downloads: this packetproof's.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the launcher is, in the suite's folder.
pub const LAUNCHER: &str = "ci/packetproof.sh";

const LAUNCHER_TEXT: &str = include_str!("packetproof.sh");

/// Where the suite is, as the workflow and hooks name it from the repository's root.
pub(crate) struct Place<'a> {
    /// The suite's folder relative to the repository's root (`.` at the root).
    pub(crate) suite: &'a str,
    /// The app's project, and its folder relative to the root (`.` at the root).
    pub(crate) project: &'a Project,
    pub(crate) project_dir: Option<&'a str>,
}

impl Place<'_> {
    /// The launcher's path from the repository's root.
    fn launcher(&self) -> String {
        if self.suite == "." {
            LAUNCHER.to_owned()
        } else {
            format!("{}/{LAUNCHER}", self.suite)
        }
    }
}

/// The workflow header every project shares.
const HEADER: &str = r#"# packetproof conformance gate of the suite in {suite} (written by `packetproof init`).
# GitHub Actions runs it from .github/workflows/ at the repository's root.
{packages}# packetproof is the first of: the project's own install, the release asset of packetproof
# {version}, or (before that release exists) a build by packetproof's GitHub Action at the
# commit that wrote this file, made once with cargo and cached by its revision
# ({launcher} gives the order). Then `packetproof test` runs in the suite's
# folder, and on pull requests the release check goes to the job summary.
name: packetproof
on: [push, pull_request]
jobs:
  conformance:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0 # the release check compares with the pull request's base commit
"#;

const NODE_STEPS: &str = r#"      - uses: actions/setup-node@v4
        with:
          node-version: lts/*
      - name: install the app's packages
        working-directory: {dir}
        run: {install}
"#;

const PYTHON_SETUP: &str = r#"      - uses: actions/setup-python@v5
        with:
          python-version: "3.x"
"#;

const PYTHON_INSTALL: &str = r#"      - name: install the app's packages
        working-directory: {dir}
        run: {install}
"#;

/// Find packetproof, else build it with the pinned action (which then only installs).
const INSTALL_STEPS: &str = r#"      - name: find packetproof (the project's own, else the release asset)
        id: packetproof
        shell: bash
        run: {find}
      - name: build packetproof with its GitHub Action (none found; cached by its revision)
        if: steps.packetproof.outputs.found != 'true'
        uses: {action}
        with:
          install-only: "true"
"#;

/// The gate's steps once packetproof is on PATH.
const GATE_STEPS: &str = r#"      - name: packetproof test
        working-directory: {suite}
        shell: bash
        run: packetproof test --junit junit.xml
      - name: packetproof release-check
        if: always() && github.event_name == 'pull_request'
        working-directory: {suite}
        shell: bash
        env:
          BASE: ${{ github.event.pull_request.base.sha }}
        run: packetproof release-check --base "$BASE" --format markdown | tee -a "$GITHUB_STEP_SUMMARY"
"#;

const UPLOAD: &str = r#"      - if: always()
        uses: actions/upload-artifact@v4
        with:
          name: packetproof-junit
          path: {junit}
"#;

/// A YAML scalar holding `text` exactly: a JSON string is a YAML double-quoted scalar.
fn yaml_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// `text` as one word of a shell-like command line (pre-commit splits `entry` with shlex).
fn shell_word(text: &str) -> String {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"._/-+=:@".contains(&b)) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The workflow for the suite at `place`. Its last resort is packetproof's action pinned
/// to `built_from`, the commit of the packetproof that runs `init` (the CLI knows it from
/// build.rs), so CI runs the packetproof that wrote the suite; without it, none (an
/// unpinned action is what pinning avoids).
pub(crate) fn workflow(built_from: Option<&str>, place: &Place) -> Option<String> {
    let action = format!("{ACTION_REPOSITORY}@{}", built_from?);
    let suite = place.suite;
    let junit = if suite == "." { "junit.xml".to_owned() } else { format!("{suite}/junit.xml") };
    let dir = yaml_string(place.project_dir.unwrap_or("."));
    let (packages, setup) = match place.project {
        Project::Node { locked, .. } => {
            let install = if *locked { "npm ci" } else { "npm install" };
            (
                format!("# It first installs the app's own packages, which the exporter imports: {install}.\n"),
                NODE_STEPS.replace("{dir}", &dir).replace("{install}", install),
            )
        }
        Project::Python { install, .. } if install.is_empty() => (String::new(), PYTHON_SETUP.to_owned()),
        Project::Python { install, .. } => {
            let words: Vec<String> = install.iter().map(|w| shell_word(w)).collect();
            let command = format!("python -m pip install {}", words.join(" "));
            (
                format!("# It first installs the app's own packages, which the exporter imports:\n# {command}.\n"),
                format!(
                    "{PYTHON_SETUP}{}",
                    PYTHON_INSTALL.replace("{dir}", &dir).replace("{install}", &yaml_string(&command))
                ),
            )
        }
        Project::Other => (String::new(), String::new()),
    };
    let find = yaml_string(&format!("bash {} --install", shell_word(&place.launcher())));
    let header =
        HEADER.replace("{packages}", &packages).replace("{version}", VERSION).replace("{launcher}", &place.launcher());
    let install = INSTALL_STEPS.replace("{find}", &find).replace("{action}", &action);
    let text = format!("{header}{setup}{install}{GATE_STEPS}{UPLOAD}");
    Some(text.replace("{suite}", &yaml_string(suite)).replace("{junit}", &yaml_string(&junit)))
}

/// The launcher for the suite at `place`: the order it looks in, the release it downloads,
/// and the commit whose build is the last resort.
pub(crate) fn launcher(built_from: Option<&str>, place: &Place) -> String {
    let depth = if place.suite == "." { 0 } else { place.suite.split('/').count() };
    let up = vec![".."; depth + 1].join("/");
    let package = match place.project {
        Project::Node { .. } => place.project_dir.unwrap_or("."),
        _ => ".",
    };
    let commit = built_from.unwrap_or("(this packetproof knows no commit: name one)");
    LAUNCHER_TEXT
        .replace("{version}", VERSION)
        .replace("{repository}", ACTION_REPOSITORY)
        .replace("{commit}", commit)
        .replace("{up}", &up)
        .replace("{package}", package)
}

/// The pre-commit config: `{suite}` as in [`workflow`], `{packets}` the pattern of its
/// packets and `{verify}`, `{test}` the hooks' entries, all from the repository's root
/// (pre-commit runs hooks there and passes paths relative to it).
const PRE_COMMIT: &str = r#"# pre-commit (https://pre-commit.com) hooks for the packetproof suite in {suite}
# (written by `packetproof init`). They run from the repository's root, with the suite's
# settings named by --config, the packetproof that {launcher} finds: the
# project's own (the npm package, the wheel in the active environment, a cargo install),
# else the release asset.
repos:
  - repo: local
    hooks:
      - id: packetproof-verify
        name: packetproof verify (changed packets)
        entry: {verify}
        files: {packets}
        language: system
      - id: packetproof-test
        name: packetproof test (the conformance gate)
        entry: {test}
        pass_filenames: false
        always_run: true
        language: system
"#;

/// The pre-commit config for the suite at `place`.
pub(crate) fn pre_commit(place: &Place) -> String {
    let suite = place.suite;
    let (prefix, config) = if suite == "." {
        (String::new(), crate::config::FILE_NAME.to_owned())
    } else {
        (format!("{suite}/"), format!("{suite}/{}", crate::config::FILE_NAME))
    };
    let launcher = shell_word(&place.launcher());
    let command = |name: &str| yaml_string(&format!("bash {launcher} --config {} {name}", shell_word(&config)));
    let packets = format!(r"^{}(.*/)?runtime-packet[^/]*\.json$", regex::escape(&prefix));
    PRE_COMMIT
        .replace("{launcher}", &place.launcher())
        .replace("{verify}", &command("verify"))
        .replace("{test}", &command("test"))
        .replace("{packets}", &yaml_string(&packets))
        .replace("{suite}", &yaml_string(suite))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn at<'a>(suite: &'a str, project: &'a Project, dir: Option<&'a str>) -> Place<'a> {
        Place { suite, project, project_dir: dir }
    }

    #[test]
    fn the_workflow_installs_the_apps_packages_then_packetproof() {
        let node = Project::Node { dir: PathBuf::from("/app"), locked: true };
        let text = workflow(Some("abc"), &at("app/llm", &node, Some("app"))).unwrap();
        assert!(text.contains("working-directory: \"app\"\n        run: npm ci"), "{text}");
        assert!(text.contains("run: \"bash app/llm/ci/packetproof.sh --install\""), "{text}");
        assert!(text.contains(&format!("uses: {ACTION_REPOSITORY}@abc")), "{text}");
        assert!(!text.contains("cargo install") && !text.contains("packetproof=="), "{text}");
        let python =
            Project::Python { dir: PathBuf::from("/app"), install: vec!["-r".into(), "requirements.txt".into()] };
        let text = workflow(Some("abc"), &at(".", &python, Some("."))).unwrap();
        assert!(text.contains("run: \"python -m pip install -r requirements.txt\""), "{text}");
        assert!(text.contains("run: \"bash ci/packetproof.sh --install\""), "{text}");
        assert_eq!(workflow(None, &at(".", &python, Some("."))), None, "an unpinned action");
    }

    #[test]
    fn the_hooks_and_the_launcher_name_the_suite_from_the_root() {
        let hooks = pre_commit(&at("llm/gate", &Project::Other, None));
        assert!(
            hooks.contains(r#"entry: "bash llm/gate/ci/packetproof.sh --config llm/gate/harness.toml verify""#),
            "{hooks}"
        );
        let node = Project::Node { dir: PathBuf::from("/app"), locked: false };
        let script = launcher(Some("abc"), &at("app/llm", &node, Some("app")));
        assert!(script.contains(r#"top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"#), "{script}");
        assert!(script.contains(r#"[ -x "$top/app/node_modules/.bin/packetproof" ]"#), "{script}");
        assert!(script.contains("--rev abc --root ~/.packetproof"), "{script}");
        assert!(!script.contains("{version}") && script.contains("/releases/download/v$version"));
    }
}
