//! `packetproof init [DIR]`: a working conformance suite in an empty folder. Every
//! file but the README and the CI snippet is the project's own, embedded with
//! `include_str!` (see `crate::builtin`), so a new suite starts from exactly what
//! this project tests: its settings, templates with per-branch partials, schema
//! files, and three example fixtures (one per provider family) with agent runs.
//! The golden files are then blessed from those, so `packetproof test` passes
//! right away.

use crate::git::Git;
use crate::{bless, builtin, corpus, fsutil, Config, Error, Result};
use std::path::{Path, PathBuf};

/// Example fixtures: a request, an agent's answer and its completion record each.
const FIXTURES: &[(&str, &str)] = &[
    (
        "fixtures/anthropic-staged-both-selected-interop-shape/request.json",
        include_str!("../../../fixtures/anthropic-staged-both-selected-interop-shape/request.json"),
    ),
    (
        "fixtures/anthropic-staged-both-selected-interop-shape/run/raw-output.json",
        include_str!("../../../fixtures/anthropic-staged-both-selected-interop-shape/run/raw-output.json"),
    ),
    (
        "fixtures/anthropic-staged-both-selected-interop-shape/run/completion.toml",
        include_str!("../../../fixtures/anthropic-staged-both-selected-interop-shape/run/completion.toml"),
    ),
    (
        "fixtures/google-staged-both-selected/request.json",
        include_str!("../../../fixtures/google-staged-both-selected/request.json"),
    ),
    (
        "fixtures/google-staged-both-selected/run/raw-output.json",
        include_str!("../../../fixtures/google-staged-both-selected/run/raw-output.json"),
    ),
    (
        "fixtures/google-staged-both-selected/run/completion.toml",
        include_str!("../../../fixtures/google-staged-both-selected/run/completion.toml"),
    ),
    (
        "fixtures/openai-staged-alone-selected/request.json",
        include_str!("../../../fixtures/openai-staged-alone-selected/request.json"),
    ),
    (
        "fixtures/openai-staged-alone-selected/run/raw-output.json",
        include_str!("../../../fixtures/openai-staged-alone-selected/run/raw-output.json"),
    ),
    (
        "fixtures/openai-staged-alone-selected/run/completion.toml",
        include_str!("../../../fixtures/openai-staged-alone-selected/run/completion.toml"),
    ),
];

/// Added to the project's settings: a three-fixture suite cannot cover every branch pair yet.
const SETTINGS_TAIL: &str = r#"
[corpus]
# corpus::branch-coverage requires a golden packet for every branch value and every
# pair of (provider, evidenceMode, neighbours, insertionMode, sourceScope). Turn it on
# once the corpus has grown; until then `packetproof test` reports it as ignored.
require_branch_coverage = false

# Packets made by your own exporter instead of packetproof's compiler: the command
# prints one packet for the request file; every other check applies unchanged.
# [exporter]
# command = ["./export.sh", "{request}"]
# timeout_seconds = 60
# The files its packets depend on, from this folder, anywhere in the git repository
# (the exporter, the app's code that sets the model and max tokens, templates); each
# must match a file. release-check explains golden changes by them; bless pins them.
# files = ["export.sh", "../src/calls.js", "../templates/**"]
"#;

const README: &str = r#"# Conformance suite

This folder is a packetproof conformance suite (written by `packetproof init`).

```sh
packetproof test                      # every fixture and check (exit 0 passed, 101 failed)
packetproof test google --list        # the trials whose name contains "google"
packetproof test --junit junit.xml    # also write a JUnit report for CI
packetproof verify golden             # the same checks, as a report
```

- `harness.toml`: the settings (paths, providers and models, forbidden material, limits).
  Settings it does not name are packetproof's built-in defaults.
- `references/prompts/`: the prompt templates; `user.md.j2` includes one partial per resolved
  branch value (`branches/<field>/<value>.md.j2`), and only that branch is rendered.
- `references/`: the runtime schema snapshot, the Builder schema it is generated from (pinned
  by `schema.builder_sha256`), and the Google text-JSON suffix.
- `fixtures/<case>/request.json`: a compile input; `run/raw-output.json` an agent's answer and
  `run/completion.toml` what the evaluator recorded.
- `golden/<case>/`: the reviewed packet and agent request, written only by `packetproof bless`.

## Adding a fixture

1. Create `fixtures/<name>/request.json` (copy an example and change it).
2. Optionally add `run/raw-output.json` and `run/completion.toml` (a unique `agent_task`).
3. `packetproof bless <name>`, review `golden/<name>/`, commit both.

## Your own exporter

To gate packets made by another program, name it in harness.toml:

```toml
[exporter]
command = ["./export.sh", "{request}"]   # prints one packet on stdout
```

`bless`, `packet::regenerates` and `release-check` then run it instead of the built-in
compiler; every other check (hashes, contract, branch isolation, forbidden material,
provider shape, runs) applies to its packets unchanged.

Declare the files its packets depend on, from this folder, anywhere in the git repository
(`files = ["export.sh", "../src/calls.js"]`: the exporter, the app's code that sets the
model and max tokens, templates; globs work): `release-check` explains a golden change by
them, `bless` pins them in `packetproof.lock`, and a signed gate lists them.

## CI and pre-commit

In a git repository, `packetproof init` writes a GitHub Actions workflow
(`.github/workflows/packetproof.yml`) and a pre-commit config (`.pre-commit-config.yaml`) at
the repository's root, where those tools look, each finding this suite where it is (the
action's `working-directory`, the hooks' `--config`). It never changes a file that exists:
it writes what it would have written there under `ci/` instead, to merge by hand (as it does
outside a repository). The workflow uses packetproof's action, pinned to the commit of the
packetproof that wrote this suite: it builds that packetproof once (cached by its revision),
runs `packetproof test --junit` here and, on pull requests, writes `packetproof release-check
--format markdown` to the job summary. To shard the trials over machines, give the action
`partition: hash:${{ matrix.shard }}/3` under a `matrix: shard: [1, 2, 3]`. The hooks run the
`packetproof` on your PATH (`pip install packetproof`, `npm install packetproof`, or cargo).
"#;

/// The GitHub repository whose `action.yml` the workflow `init` writes uses: the one
/// place that names it (README, "GitHub Action"; a fork changes it here).
pub const ACTION_REPOSITORY: &str = "packetproof/packetproof";

/// Where the CI workflow and the pre-commit config go in a git repository: at its root,
/// where GitHub and pre-commit look for them.
pub const REPOSITORY_WORKFLOW: &str = ".github/workflows/packetproof.yml";
pub const REPOSITORY_PRE_COMMIT: &str = ".pre-commit-config.yaml";

/// Where they go in the suite instead: outside a repository, and when the repository
/// already has a file of that name (init never changes a file of the user's; merging YAML
/// by a program would lose its comments and layout, so the user merges by hand).
pub const WORKFLOW_PATH: &str = "ci/packetproof.yml";
pub const PRE_COMMIT_PATH: &str = "ci/pre-commit-config.yaml";

/// The CI workflow: `{action}` is `<repository>@<commit>`, `{suite}` the suite's folder
/// relative to the repository's root, `{junit}` its JUnit report from there.
const CI: &str = r#"# packetproof conformance gate of the suite in {suite} (written by `packetproof init`).
# GitHub Actions runs it from .github/workflows/ at the repository's root.
# packetproof's GitHub Action, pinned to the commit of the packetproof that wrote the
# suite: it builds that packetproof once (cached by its revision, so later runs build
# nothing), runs `packetproof test` in the suite's folder, and on pull requests writes the
# release check (which packets the change affects, and the policy's verdict) to the job summary.
name: packetproof
on: [push, pull_request]
jobs:
  conformance:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0 # the release check compares with the pull request's base commit
      - uses: {action}
        with:
          working-directory: {suite}
          junit: junit.xml
      - if: always()
        uses: actions/upload-artifact@v4
        with:
          name: packetproof-junit
          path: {junit}
"#;

/// The pre-commit config: `{suite}` as above, `{config}` the suite's harness.toml and
/// `{packets}` the pattern of its packets, all from the repository's root (pre-commit
/// runs hooks there and passes paths relative to it).
const PRE_COMMIT: &str = r#"# pre-commit (https://pre-commit.com) hooks for the packetproof suite in {suite}
# (written by `packetproof init`). They run the packetproof on your PATH (pip install
# packetproof, npm install packetproof, or cargo install), from the repository's root,
# with the suite's settings named by --config.
repos:
  - repo: local
    hooks:
      - id: packetproof-verify
        name: packetproof verify (changed packets)
        entry: {verify}
        language: system
        files: {packets}
      - id: packetproof-test
        name: packetproof test (the conformance gate)
        entry: {test}
        language: system
        pass_filenames: false
        always_run: true
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

/// The workflow for the suite at `suite` (relative to the repository's root, `.` at the
/// root), pinned to `built_from`, the commit of the packetproof that runs `init` (the CLI
/// knows it from build.rs): CI then runs the packetproof that wrote the suite.
pub(crate) fn workflow(built_from: &str, suite: &str) -> String {
    let junit = if suite == "." { "junit.xml".to_owned() } else { format!("{suite}/junit.xml") };
    CI.replace("{action}", &format!("{ACTION_REPOSITORY}@{built_from}"))
        .replace("{suite}", &yaml_string(suite))
        .replace("{junit}", &yaml_string(&junit))
}

/// The pre-commit config for the suite at `suite` (as in [`workflow`]).
pub(crate) fn pre_commit(suite: &str) -> String {
    let (prefix, config) = if suite == "." {
        (String::new(), crate::config::FILE_NAME.to_owned())
    } else {
        (format!("{suite}/"), format!("{suite}/{}", crate::config::FILE_NAME))
    };
    let command = |name: &str| yaml_string(&format!("packetproof --config {} {name}", shell_word(&config)));
    let packets = format!(r"^{}(.*/)?runtime-packet[^/]*\.json$", regex::escape(&prefix));
    PRE_COMMIT
        .replace("{verify}", &command("verify"))
        .replace("{test}", &command("test"))
        .replace("{packets}", &yaml_string(&packets))
        .replace("{suite}", &yaml_string(suite))
}

/// What `init` wrote, and what it left alone.
#[derive(Debug)]
pub struct Initialized {
    /// Every file written: the suite's under the folder given, the repository's under its
    /// root as git names it.
    pub written: Vec<PathBuf>,
    /// The repository's files that exist and were left as they are, each with the suite's
    /// file holding what `init` would have written there.
    pub kept: Vec<(PathBuf, PathBuf)>,
    /// The suite's folder relative to the repository's root (`.` at the root), when the
    /// suite is in a git repository.
    pub in_repository: Option<String>,
}

/// Golden, fixture and reference files are bytes the hashes cover: a checkout must
/// not turn their line endings into CRLF (Windows `core.autocrlf`).
const GITATTRIBUTES: &str = "\
# Keep these byte for byte on every checkout: their digests are what the suite proves.
golden/** -text
fixtures/** -text
references/** -text
packetproof.lock -text
";

/// Write the suite into `dir` (created if missing; it must be empty), bless its
/// examples, then write its CI workflow and pre-commit config: at the root of the git
/// repository `dir` is in, unless a file of that name exists there; else in the suite.
/// `writes` is the process's decision on golden files; these first ones are written even
/// under CI (there is no reviewed golden file yet that a write could change). Without
/// `built_from`, no workflow: an unpinned action is what pinning avoids.
pub fn init(dir: &Path, writes: bless::GoldenWrites, built_from: Option<&str>) -> Result<Initialized> {
    refuse_non_empty(dir)?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let repository = Git::find(dir);
    let suite = repository.as_ref().map_or_else(|| ".".to_owned(), |git| git.relative(dir));
    let suite = if suite.is_empty() { ".".to_owned() } else { suite };
    let settings = format!("{}{SETTINGS_TAIL}", builtin::HARNESS_TOML);
    let mut files: Vec<(String, &str)> = vec![
        (crate::config::FILE_NAME.to_owned(), settings.as_str()),
        ("README.md".to_owned(), README),
        (".gitattributes".to_owned(), GITATTRIBUTES),
        (builtin::SUFFIX_PATH.to_owned(), builtin::GOOGLE_SUFFIX),
        (builtin::SNAPSHOT_PATH.to_owned(), builtin::SCHEMA_SNAPSHOT),
        (builtin::BUILDER_PATH.to_owned(), builtin::BUILDER_SCHEMA),
        (builtin::PROVENANCE_PATH.to_owned(), builtin::BUILDER_PROVENANCE),
    ];
    files.extend(builtin::PROMPTS.iter().map(|(name, text)| (format!("{}/{name}", builtin::PROMPTS_PATH), *text)));
    files.extend(FIXTURES.iter().map(|(name, text)| ((*name).to_owned(), *text)));
    for (name, text) in &files {
        write_creating_folders(&dir.join(name), text, fsutil::write_atomic)?;
    }
    let mut done = Initialized {
        written: files.into_iter().map(|(name, _)| dir.join(name)).collect(),
        kept: Vec::new(),
        in_repository: repository.is_some().then(|| suite.clone()),
    };
    let config = Config::load(dir, None)?;
    // A suite has both corpus folders (a missing one is a misconfiguration elsewhere).
    std::fs::create_dir_all(&config.paths.golden).map_err(|e| Error::io(&config.paths.golden, e))?;
    for case in corpus::cases(&config)? {
        bless::write_golden(&config, &case, writes, bless::Requester::Init)?;
        done.written.extend([case.golden_packet(), case.golden_agent_request()]);
    }
    crate::lock::write(&config)?;
    done.written.push(dir.join(crate::lock::FILE_NAME));
    // Last, once the suite holds: the files the repository's tools read.
    let workflow = built_from.map(|commit| workflow(commit, &suite));
    let tools = [
        (REPOSITORY_WORKFLOW, WORKFLOW_PATH, workflow),
        (REPOSITORY_PRE_COMMIT, PRE_COMMIT_PATH, Some(pre_commit(&suite))),
    ];
    for (at_root, in_suite, text) in tools {
        let Some(text) = text else { continue };
        let instead = dir.join(in_suite);
        match &repository {
            Some(git) if std::fs::symlink_metadata(git.top().join(at_root)).is_ok() => {
                write_creating_folders(&instead, &text, fsutil::write_atomic)?;
                done.kept.push((git.top().join(at_root), instead.clone()));
                done.written.push(instead);
            }
            Some(git) => {
                // Created, never replaced: a file that appeared meanwhile is the user's.
                let path = git.top().join(at_root);
                write_creating_folders(&path, &text, fsutil::write_new)?;
                done.written.push(path);
            }
            None => {
                write_creating_folders(&instead, &text, fsutil::write_atomic)?;
                done.written.push(instead);
            }
        }
    }
    Ok(done)
}

fn write_creating_folders(path: &Path, text: &str, write: fn(&Path, &[u8]) -> Result<()>) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    write(path, text.as_bytes())
}

/// A suite is written only into an empty folder; dotfiles (`.git`, `.gitkeep`,
/// `.gitignore`, …) are allowed: the suite writes none.
fn refuse_non_empty(dir: &Path) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut present: Vec<String> = Vec::new();
    for entry in entries {
        let name = entry.map_err(|e| Error::io(dir, e))?.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.') {
            present.push(name);
        }
    }
    if present.is_empty() {
        return Ok(());
    }
    present.sort();
    Err(Error::refused(
        dir.display(),
        format!("is not empty ({}); init writes a suite only into an empty folder", present.join(", ")),
    ))
}
