//! The CI workflow and the pre-commit config `init` writes for a suite, each running
//! the packetproof the team installed ([`Distribution`]): the npm package's binary
//! through npx (npm puts it on no PATH), the pip wheel (installed by pip in CI, and by
//! pre-commit into the hooks' own environment, as ruff's and uv's hooks are), or a
//! cargo build (packetproof's GitHub Action, pinned to a commit; the hooks run the
//! `packetproof` that `cargo install` put on PATH).

use crate::distribution::Distribution;
use std::path::Path;

/// The GitHub repository whose `action.yml` the cargo workflow uses: the one place that
/// names it (README, "GitHub Action"; a fork changes it here).
pub const ACTION_REPOSITORY: &str = "packetproof/packetproof";

/// The version of the npm package and the wheel this packetproof was released as: the
/// pip workflow and hooks install exactly it.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the suite is, as the workflow and hooks name it from the repository's root.
pub(crate) struct Place<'a> {
    /// The suite's folder relative to the repository's root (`.` at the root).
    pub(crate) suite: &'a str,
    /// The Node project's folder relative to the root (`.` at the root), for npm.
    pub(crate) package: Option<&'a str>,
}

impl Place<'_> {
    /// The Node project's folder of `distribution`, relative to `top` (the repository's root, or the suite).
    pub(crate) fn package_of(distribution: &Distribution, top: &Path) -> Option<String> {
        let Distribution::Npm { package_dir } = distribution else { return None };
        let top = top.canonicalize().unwrap_or_else(|_| top.to_path_buf());
        let relative = package_dir.strip_prefix(&top).unwrap_or(package_dir);
        let text = relative.to_string_lossy().replace('\\', "/");
        Some(if text.is_empty() { ".".to_owned() } else { text })
    }
}

/// The workflow header every distribution shares: `{what}` says how packetproof is installed.
const HEADER: &str = r#"# packetproof conformance gate of the suite in {suite} (written by `packetproof init`).
# GitHub Actions runs it from .github/workflows/ at the repository's root.
# {what}
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

/// The cargo workflow's steps: `{action}` is `<repository>@<commit>`.
const CARGO_STEPS: &str = r#"      - uses: {action}
        with:
          working-directory: {suite}
          junit: junit.xml
"#;

const NPM_STEPS: &str = r#"      - uses: actions/setup-node@v4
        with:
          node-version: lts/*
      - name: install the project's packages (packetproof is one of them)
        working-directory: {package}
        run: {install}
"#;

const PIP_STEPS: &str = r#"      - uses: actions/setup-python@v5
        with:
          python-version: "3.x"
      - name: install packetproof (the wheel)
        run: python -m pip install {requirement}
"#;

/// The gate's steps after an install: `{program}` runs packetproof (npx's, or the wheel's).
const GATE_STEPS: &str = r#"      - name: packetproof test
        working-directory: {suite}
        shell: bash
        run: {program} test --junit junit.xml
      - name: packetproof release-check
        if: always() && github.event_name == 'pull_request'
        working-directory: {suite}
        shell: bash
        env:
          BASE: ${{ github.event.pull_request.base.sha }}
        run: {program} release-check --base "$BASE" --format markdown | tee -a "$GITHUB_STEP_SUMMARY"
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

/// The pip requirement the workflow and hooks install: this packetproof's version.
fn requirement() -> String {
    format!("packetproof=={VERSION}")
}

/// The workflow for the suite at `place`. The cargo one uses packetproof's action pinned
/// to `built_from`, the commit of the packetproof that runs `init` (the CLI knows it from
/// build.rs), so CI runs the packetproof that wrote the suite; without it, none (an
/// unpinned action is what pinning avoids). npm and pip need no commit.
pub(crate) fn workflow(distribution: &Distribution, built_from: Option<&str>, place: &Place) -> Option<String> {
    let suite = place.suite;
    let junit = if suite == "." { "junit.xml".to_owned() } else { format!("{suite}/junit.xml") };
    let (what, steps) = match distribution {
        Distribution::Cargo => {
            let action = format!("{ACTION_REPOSITORY}@{}", built_from?);
            (
                "packetproof's GitHub Action, pinned to the commit of the packetproof that wrote the\n\
                 # suite: it builds that packetproof once (cached by its revision, so later runs build\n\
                 # nothing), runs `packetproof test` in the suite's folder, and on pull requests writes the\n\
                 # release check (which packets the change affects, and the policy's verdict) to the job summary."
                    .to_owned(),
                CARGO_STEPS.replace("{action}", &action),
            )
        }
        Distribution::Npm { package_dir } => {
            let package = place.package.unwrap_or(".");
            let install = if package_dir.join("package-lock.json").is_file() { "npm ci" } else { "npm install" };
            (
                format!(
                    "The npm package installed as the project installs it ({install} in {package}), run by npx\n\
                     # in the suite's folder; on pull requests the release check goes to the job summary."
                ),
                NPM_STEPS.replace("{package}", &yaml_string(package)).replace("{install}", install)
                    + &GATE_STEPS.replace("{program}", "npx --no -- packetproof"),
            )
        }
        Distribution::Pip => (
            format!(
                "The packetproof wheel ({}), installed by pip, run in the suite's folder; on pull\n\
                 # requests the release check goes to the job summary.",
                requirement()
            ),
            PIP_STEPS.replace("{requirement}", &shell_word(&requirement()))
                + &GATE_STEPS.replace("{program}", "packetproof"),
        ),
    };
    let text = format!("{}{steps}{UPLOAD}", HEADER.replace("{what}", &what));
    Some(text.replace("{suite}", &yaml_string(suite)).replace("{junit}", &yaml_string(&junit)))
}

/// The pre-commit config: `{suite}` as in [`workflow`], `{packets}` the pattern of its
/// packets and `{hooks}` the two hooks, all from the repository's root (pre-commit runs
/// hooks there and passes paths relative to it).
const PRE_COMMIT: &str = r#"# pre-commit (https://pre-commit.com) hooks for the packetproof suite in {suite}
# (written by `packetproof init`). {what}
# They run from the repository's root, with the suite's settings named by --config.
repos:
  - repo: local
    hooks:
      - id: packetproof-verify
        name: packetproof verify (changed packets)
        entry: {verify}
        files: {packets}
{language}      - id: packetproof-test
        name: packetproof test (the conformance gate)
        entry: {test}
        pass_filenames: false
        always_run: true
{language}"#;

/// The pre-commit config for the suite at `place`.
pub(crate) fn pre_commit(distribution: &Distribution, place: &Place) -> String {
    let suite = place.suite;
    let (prefix, config) = if suite == "." {
        (String::new(), crate::config::FILE_NAME.to_owned())
    } else {
        (format!("{suite}/"), format!("{suite}/{}", crate::config::FILE_NAME))
    };
    let (program, language, what) = match distribution {
        Distribution::Cargo => (
            "packetproof".to_owned(),
            "        language: system\n".to_owned(),
            "They run the packetproof on your PATH (cargo install).".to_owned(),
        ),
        // npx finds the project's own binary from the root; a project in a subfolder is
        // named by --prefix, so the working folder (and the paths given) stay the root's.
        Distribution::Npm { .. } => (
            match place.package.unwrap_or(".") {
                "." => "npx --no -- packetproof".to_owned(),
                package => format!("npm exec --prefix {} --no -- packetproof", shell_word(package)),
            },
            "        language: system\n".to_owned(),
            "They run the npm package's binary that `npm install`\n# put in node_modules (never a packetproof on PATH, never a download).".to_owned(),
        ),
        Distribution::Pip => (
            "packetproof".to_owned(),
            format!("        language: python\n        additional_dependencies: [{}]\n", yaml_string(&requirement())),
            "pre-commit installs the packetproof wheel into the hooks' own\n# environment, as ruff's and uv's hooks install theirs.".to_owned(),
        ),
    };
    let command = |name: &str| yaml_string(&format!("{program} --config {} {name}", shell_word(&config)));
    let packets = format!(r"^{}(.*/)?runtime-packet[^/]*\.json$", regex::escape(&prefix));
    PRE_COMMIT
        .replace("{what}", &what)
        .replace("{language}", &language)
        .replace("{verify}", &command("verify"))
        .replace("{test}", &command("test"))
        .replace("{packets}", &yaml_string(&packets))
        .replace("{suite}", &yaml_string(suite))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_root() -> Place<'static> {
        Place { suite: "llm/gate", package: Some(".") }
    }

    #[test]
    fn each_distribution_runs_its_own_packetproof() {
        let npm = Distribution::Npm { package_dir: "/nowhere".into() };
        let hooks = pre_commit(&npm, &at_root());
        assert!(hooks.contains(r#"entry: "npx --no -- packetproof --config llm/gate/harness.toml verify""#), "{hooks}");
        let text = workflow(&npm, None, &at_root()).expect("npm needs no commit");
        assert!(text.contains("run: npx --no -- packetproof test --junit junit.xml"), "{text}");
        assert!(text.contains("run: npm install") && !text.contains("cargo"), "{text}");

        let hooks = pre_commit(&Distribution::Pip, &at_root());
        assert!(hooks.contains("language: python\n        additional_dependencies: [\"packetproof=="), "{hooks}");
        let text = workflow(&Distribution::Pip, None, &at_root()).unwrap();
        assert!(text.contains("python -m pip install packetproof=="), "{text}");

        let hooks = pre_commit(&Distribution::Cargo, &at_root());
        assert!(hooks.contains("language: system") && hooks.contains(r#"entry: "packetproof --config"#), "{hooks}");
        assert_eq!(workflow(&Distribution::Cargo, None, &at_root()), None, "an unpinned action");
        let pinned = workflow(&Distribution::Cargo, Some("abc"), &at_root()).unwrap();
        assert!(pinned.contains(&format!("uses: {ACTION_REPOSITORY}@abc")), "{pinned}");
    }

    #[test]
    fn a_node_project_in_a_subfolder_is_named_by_prefix() {
        let npm = Distribution::Npm { package_dir: "/nowhere".into() };
        let hooks = pre_commit(&npm, &Place { suite: "app/llm", package: Some("app") });
        assert!(
            hooks.contains(r#"entry: "npm exec --prefix app --no -- packetproof --config app/llm/harness.toml test""#)
        );
        let text = workflow(&npm, None, &Place { suite: "app/llm", package: Some("app") }).unwrap();
        assert!(text.contains("working-directory: \"app\"\n        run: npm install"), "{text}");
    }
}
