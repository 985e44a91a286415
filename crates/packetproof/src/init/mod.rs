//! `packetproof init [DIR]`: a working conformance suite in an empty folder. Every
//! file but the README and the CI snippet is the project's own, embedded with
//! `include_str!` (see `crate::builtin`), so a new suite starts from exactly what
//! this project tests: its settings, templates with per-branch partials, schema
//! files, and three example fixtures (one per provider family) with agent runs.
//! The golden files are then blessed from those, so `packetproof test` passes
//! right away. `init --agent NAME` writes the smallest suite of one app agent
//! instead (`agent`). In a repository that has a suite already, `init` writes none:
//! it wires CI and hooks to that one (`existing`). The workflow installs the app's
//! packages as its project declares them (`project`), and the workflow and hooks run
//! packetproof through a launcher that finds or installs it (`tools`).

mod agent;
mod existing;
mod project;
mod skeletons;
mod tools;

pub use agent::AgentRequest;
pub use tools::{ACTION_REPOSITORY, LAUNCHER};

use crate::distribution::Distribution;
use crate::git::Git;
use crate::{bless, builtin, corpus, fsutil, Config, Error, Result};
use std::path::{Path, PathBuf};

/// Example fixtures: a request, an agent's answer and its completion record each.
const FIXTURES: &[(&str, &str)] = &[
    (
        "fixtures/anthropic-staged-both-selected-interop-shape/request.json",
        include_str!("../../../../fixtures/anthropic-staged-both-selected-interop-shape/request.json"),
    ),
    (
        "fixtures/anthropic-staged-both-selected-interop-shape/run/raw-output.json",
        include_str!("../../../../fixtures/anthropic-staged-both-selected-interop-shape/run/raw-output.json"),
    ),
    (
        "fixtures/anthropic-staged-both-selected-interop-shape/run/completion.toml",
        include_str!("../../../../fixtures/anthropic-staged-both-selected-interop-shape/run/completion.toml"),
    ),
    (
        "fixtures/google-staged-both-selected/request.json",
        include_str!("../../../../fixtures/google-staged-both-selected/request.json"),
    ),
    (
        "fixtures/google-staged-both-selected/run/raw-output.json",
        include_str!("../../../../fixtures/google-staged-both-selected/run/raw-output.json"),
    ),
    (
        "fixtures/google-staged-both-selected/run/completion.toml",
        include_str!("../../../../fixtures/google-staged-both-selected/run/completion.toml"),
    ),
    (
        "fixtures/openai-staged-alone-selected/request.json",
        include_str!("../../../../fixtures/openai-staged-alone-selected/request.json"),
    ),
    (
        "fixtures/openai-staged-alone-selected/run/raw-output.json",
        include_str!("../../../../fixtures/openai-staged-alone-selected/run/raw-output.json"),
    ),
    (
        "fixtures/openai-staged-alone-selected/run/completion.toml",
        include_str!("../../../../fixtures/openai-staged-alone-selected/run/completion.toml"),
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
workflow's `working-directory`, the hooks' `--config`). It never changes a file that exists:
it writes what it would have written there under `ci/` instead, to merge by hand (as it does
outside a repository). Both run packetproof through `ci/packetproof.sh`, which takes the
first of: `$PACKETPROOF`; the project's own install (the npm package's binary in
node_modules/.bin, or a `packetproof` on PATH: the wheel in the active environment, a cargo
install); `~/.packetproof/bin/packetproof`; the release asset of this packetproof's version,
downloaded with its checksum checked. The workflow first installs the app's own packages as
its project declares them (`npm ci` or `npm install` for package.json; `pip install -r
requirements.txt` or `pip install .` for pyproject.toml), since the exporter imports them;
when the launcher finds no packetproof (before the first release), packetproof's GitHub
Action, pinned to the commit of the packetproof that wrote this suite, builds it once with
cargo (cached by its revision). So CI works before the first release and after it, without
edits. CI runs `packetproof test --junit` here and, on pull requests, writes `packetproof
release-check --format markdown` to the job summary. To shard the trials over machines, add
`--partition hash:${{ matrix.shard }}/3` to the test step under a `matrix: shard: [1, 2, 3]`.
"#;

/// Where the CI workflow and the pre-commit config go in a git repository: at its root,
/// where GitHub and pre-commit look for them.
pub const REPOSITORY_WORKFLOW: &str = ".github/workflows/packetproof.yml";
pub const REPOSITORY_PRE_COMMIT: &str = ".pre-commit-config.yaml";

/// Where they go in the suite instead: outside a repository, and when the repository
/// already has a file of that name (init never changes a file of the user's; merging YAML
/// by a program would lose its comments and layout, so the user merges by hand).
pub const WORKFLOW_PATH: &str = "ci/packetproof.yml";
pub const PRE_COMMIT_PATH: &str = "ci/pre-commit-config.yaml";

/// What `init` made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Made {
    /// The block builder's demo suite, blessed.
    Demo,
    /// The suite of one app agent (not blessed: its exporter is the team's to adapt).
    Agent { exporter: String },
    /// No suite: the repository's suite, in this folder, now has CI and hooks.
    Wired(PathBuf),
}

/// What `init` wrote, and what it left alone.
#[derive(Debug)]
pub struct Initialized {
    pub made: Made,
    /// Every file written: the suite's under the folder given, the repository's under its
    /// root as git names it.
    pub written: Vec<PathBuf>,
    /// The repository's files that exist and were left as they are, each with the suite's
    /// file holding what `init` would have written there.
    pub kept: Vec<(PathBuf, PathBuf)>,
    /// The suite's folder relative to the repository's root (`.` at the root), when the
    /// suite is in a git repository.
    pub in_repository: Option<String>,
    /// The packetproof the team installed, whose command the printed hints name.
    pub distribution: Distribution,
    /// Whether the workflow was left out: a cargo workflow pins packetproof's action to
    /// the commit this packetproof was built from, and the build knows none.
    pub workflow_unpinned: bool,
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

/// What `init` is asked for.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// `--agent`: the suite of one app agent instead of the demo.
    pub agent: Option<AgentRequest>,
    /// The process's decision on golden files; the demo's first ones are written even
    /// under CI (there is no reviewed golden file yet that a write could change).
    pub writes: bless::GoldenWrites,
    /// The commit this packetproof was built from (the cargo workflow pins it).
    pub built_from: Option<&'a str>,
}

/// The demo suite in `dir` (see [`run`]).
pub fn init(dir: &Path, writes: bless::GoldenWrites, built_from: Option<&str>) -> Result<Initialized> {
    run(dir, &Options { agent: None, writes, built_from })
}

/// Write a suite into `dir` (created if missing; it must be empty), then its CI workflow
/// and pre-commit config: at the root of the git repository `dir` is in, unless a file of
/// that name exists there; else in the suite. When the repository (or, outside one,
/// `dir`) has a suite already, write none: wire CI and hooks to that one (and refuse
/// `--agent`, whose agent belongs in that suite's settings).
pub fn run(dir: &Path, options: &Options) -> Result<Initialized> {
    if let Some(agent) = &options.agent {
        agent::check(agent)?;
    }
    let near = dir.ancestors().find(|d| d.is_dir()).unwrap_or(Path::new("."));
    let repository = Git::find(near);
    if let Some(suite) = existing::find(dir, repository.as_ref().map(Git::top))? {
        if let Some(agent) = &options.agent {
            return Err(Error::refused(
                suite.display(),
                format!(
                    "is a packetproof suite already: declare the agent in its {} as [agents.{}] \
                     (docs/gating-any-agent.md) instead of writing a second suite",
                    crate::config::FILE_NAME,
                    agent.name
                ),
            ));
        }
        let mut done = blank(Made::Wired(suite.clone()), &suite, repository.as_ref());
        wire(&suite, repository.as_ref(), options.built_from, &mut done)?;
        return Ok(done);
    }
    refuse_non_empty(dir)?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut done = match &options.agent {
        Some(request) => {
            let project = project::Project::find(dir, repository.as_ref().map(Git::top));
            let files = agent::files(request, &project)?;
            let exporter = files.iter().map(|(name, _)| name).find(|n| n.starts_with("export.")).cloned();
            let mut done = blank(Made::Agent { exporter: exporter.unwrap_or_default() }, dir, repository.as_ref());
            for (name, text) in &files {
                write_creating_folders(&dir.join(name), text, fsutil::write_atomic)?;
                done.written.push(dir.join(name));
            }
            // Both corpus folders exist (one missing is a misconfiguration); bless fills this one.
            let golden = dir.join("golden");
            std::fs::create_dir_all(&golden).map_err(|e| Error::io(&golden, e))?;
            done
        }
        None => {
            let mut done = blank(Made::Demo, dir, repository.as_ref());
            write_demo(dir, options.writes, &mut done)?;
            done
        }
    };
    // Last, once the suite holds: the files the repository's tools read.
    wire(dir, repository.as_ref(), options.built_from, &mut done)?;
    Ok(done)
}

fn blank(made: Made, suite: &Path, repository: Option<&Git>) -> Initialized {
    let relative = repository.map(|git| git.relative(suite)).map(|s| if s.is_empty() { ".".to_owned() } else { s });
    Initialized {
        made,
        written: Vec::new(),
        kept: Vec::new(),
        in_repository: relative,
        distribution: Distribution::of(suite),
        workflow_unpinned: false,
    }
}

/// The block builder's demo suite, its golden files blessed from its examples.
fn write_demo(dir: &Path, writes: bless::GoldenWrites, done: &mut Initialized) -> Result<()> {
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
    done.written.extend(files.into_iter().map(|(name, _)| dir.join(name)));
    let config = crate::Invocation::from(Config::load(dir, None)?);
    // A suite has both corpus folders (a missing one is a misconfiguration elsewhere).
    std::fs::create_dir_all(&config.settings().paths.golden)
        .map_err(|e| Error::io(&config.settings().paths.golden, e))?;
    for case in corpus::cases(&config)? {
        bless::write_golden(&config, &case, writes, bless::Requester::Init)?;
        done.written.extend([case.golden_packet(), case.golden_agent_request()]);
    }
    crate::lock::write(config.settings())?;
    done.written.push(dir.join(crate::lock::FILE_NAME));
    Ok(())
}

/// Write the workflow, the pre-commit config and their launcher for the suite in `suite`:
/// the launcher in the suite's `ci/`; the others at the repository's root, or in the
/// suite's `ci/` outside a repository and where the root has a file of that name.
fn wire(suite: &Path, repository: Option<&Git>, built_from: Option<&str>, done: &mut Initialized) -> Result<()> {
    let relative = done.in_repository.clone().unwrap_or_else(|| ".".to_owned());
    let top = repository.map_or(suite, Git::top);
    let project = project::Project::find(suite, repository.map(Git::top));
    let project_dir = project.relative_to(top);
    let place = tools::Place { suite: &relative, project: &project, project_dir: project_dir.as_deref() };
    let launcher = suite.join(tools::LAUNCHER);
    write_creating_folders(&launcher, &tools::launcher(built_from, &place), fsutil::write_atomic)?;
    done.written.push(launcher);
    let workflow = tools::workflow(built_from, &place);
    done.workflow_unpinned = workflow.is_none();
    let texts = [
        (REPOSITORY_WORKFLOW, WORKFLOW_PATH, workflow),
        (REPOSITORY_PRE_COMMIT, PRE_COMMIT_PATH, Some(tools::pre_commit(&place))),
    ];
    for (at_root, in_suite, text) in texts {
        let Some(text) = text else { continue };
        let instead = suite.join(in_suite);
        match repository {
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
    Ok(())
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
