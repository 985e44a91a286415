//! `packetproof init [DIR]`: a working conformance suite in an empty folder. Every
//! file but the README and the CI snippet is the project's own, embedded with
//! `include_str!` (see `crate::builtin`), so a new suite starts from exactly what
//! this project tests: its settings, templates with per-branch partials, schema
//! files, and three example fixtures (one per provider family) with agent runs.
//! The golden files are then blessed from those, so `packetproof test` passes
//! right away.

use crate::{bless, builtin, corpus, fsutil, Config, Error, Result};
use std::path::Path;

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

## CI

`ci/packetproof.yml` is a GitHub Actions job using packetproof's action, pinned to the
commit of the packetproof that wrote this suite: it builds that packetproof once (cached by
its revision), runs `packetproof test --junit` here and, on pull requests, writes
`packetproof release-check --format markdown` to the job summary. Copy it to
`.github/workflows/`. To shard the trials over machines, give the action
`partition: hash:${{ matrix.shard }}/3` under a `matrix: shard: [1, 2, 3]`.
"#;

/// The GitHub repository whose `action.yml` the workflow `init` writes uses: the one
/// place that names it (README, "GitHub Action"; a fork changes it here).
pub const ACTION_REPOSITORY: &str = "packetproof/packetproof";

/// Where the CI workflow goes in a suite.
pub const WORKFLOW_PATH: &str = "ci/packetproof.yml";

/// The CI workflow, `{action}` being `<repository>@<commit>`.
const CI: &str = r#"# packetproof conformance gate. Copy to .github/workflows/packetproof.yml.
# packetproof's GitHub Action, pinned to the commit of the packetproof that wrote this
# suite: it builds that packetproof once (cached by its revision, so later runs build
# nothing), runs `packetproof test` here, and on pull requests writes the release check
# (which packets the change affects, and the policy's verdict) to the job summary.
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
          working-directory: .
          junit: junit.xml
      - if: always()
        uses: actions/upload-artifact@v4
        with:
          name: packetproof-junit
          path: junit.xml
"#;

/// The workflow pinned to `built_from`, the commit of the packetproof that runs `init`
/// (the CLI knows it from build.rs): CI then runs the packetproof that wrote the suite.
pub(crate) fn workflow(built_from: &str) -> String {
    CI.replace("{action}", &format!("{ACTION_REPOSITORY}@{built_from}"))
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
/// examples, and return the files written, relative to `dir`. `writes` is the
/// process's decision on golden files; these first ones are written even under CI
/// (there is no reviewed golden file yet that a write could change). Without
/// `built_from`, no workflow: an unpinned action is what pinning avoids.
pub fn init(dir: &Path, writes: bless::GoldenWrites, built_from: Option<&str>) -> Result<Vec<String>> {
    refuse_non_empty(dir)?;
    let settings = format!("{}{SETTINGS_TAIL}", builtin::HARNESS_TOML);
    let workflow = built_from.map(workflow);
    let mut files: Vec<(String, &str)> = vec![
        (crate::config::FILE_NAME.to_owned(), settings.as_str()),
        ("README.md".to_owned(), README),
        (".gitattributes".to_owned(), GITATTRIBUTES),
        (builtin::SUFFIX_PATH.to_owned(), builtin::GOOGLE_SUFFIX),
        (builtin::SNAPSHOT_PATH.to_owned(), builtin::SCHEMA_SNAPSHOT),
        (builtin::BUILDER_PATH.to_owned(), builtin::BUILDER_SCHEMA),
        (builtin::PROVENANCE_PATH.to_owned(), builtin::BUILDER_PROVENANCE),
    ];
    if let Some(workflow) = &workflow {
        files.push((WORKFLOW_PATH.to_owned(), workflow.as_str()));
    }
    files.extend(builtin::PROMPTS.iter().map(|(name, text)| (format!("{}/{name}", builtin::PROMPTS_PATH), *text)));
    files.extend(FIXTURES.iter().map(|(name, text)| ((*name).to_owned(), *text)));
    for (name, text) in &files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        fsutil::write_atomic(&path, text.as_bytes())?;
    }
    let mut written: Vec<String> = files.into_iter().map(|(name, _)| name).collect();
    let config = Config::load(dir, None)?;
    // A suite has both corpus folders (a missing one is a misconfiguration elsewhere).
    std::fs::create_dir_all(&config.paths.golden).map_err(|e| Error::io(&config.paths.golden, e))?;
    for case in corpus::cases(&config)? {
        bless::write_golden(&config, &case, writes, bless::Requester::Init)?;
        for file in [case.golden_packet(), case.golden_agent_request()] {
            written.push(file.strip_prefix(dir).unwrap_or(&file).to_string_lossy().replace('\\', "/"));
        }
    }
    crate::lock::write(&config)?;
    written.push(crate::lock::FILE_NAME.to_owned());
    Ok(written)
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
