//! The ways packetproof reaches other repositories, parsed as their consumers parse
//! them: the composite GitHub Action (`action.yml`), the workflow `init` writes (it
//! uses that action, pinned to a commit), and the pre-commit hooks. Each check is a
//! function returning its problems, and each is shown catching a broken copy.

use crate::support::{self, exec};
use libtest_mimic::Trial;
use serde_yaml_ng::Value;

#[track_caller]
pub(crate) fn yaml(text: &str, what: &str) -> Value {
    serde_yaml_ng::from_str(text).unwrap_or_else(|e| panic!("{what} is not YAML: {e}"))
}

#[track_caller]
pub(crate) fn read(relative: &str) -> String {
    std::fs::read_to_string(support::root().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

pub(crate) fn steps(doc: &Value) -> Vec<&Value> {
    let runs = doc.get("runs").and_then(|r| r.get("steps"));
    let job_steps = doc
        .get("jobs")
        .and_then(Value::as_mapping)
        .into_iter()
        .flat_map(|jobs| jobs.values())
        .filter_map(|j| j.get("steps"));
    runs.into_iter().chain(job_steps).filter_map(Value::as_sequence).flatten().collect()
}

pub(crate) fn text_of<'a>(step: &'a Value, key: &str) -> &'a str {
    step.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Words that mark an address or revision nobody filled in.
fn placeholders(text: &str) -> Vec<String> {
    ["example.invalid", "example.com", "<owner>", "OWNER", "TODO", "REPLACE", "PACKETPROOF_REV: main"]
        .iter()
        .filter(|p| text.contains(*p))
        .map(|p| format!("placeholder {p:?}"))
        .collect()
}

/// The action: composite, builds from its own folder, caches by the source's digest (never
/// a ref name), runs the gate with --junit, and on pull requests the release check into the summary.
fn action_problems(text: &str) -> Vec<String> {
    let doc = yaml(text, "action.yml");
    let mut problems = placeholders(text);
    if doc.get("runs").and_then(|r| r.get("using")).and_then(Value::as_str) != Some("composite") {
        problems.push("runs.using is not composite".into());
    }
    let steps = steps(&doc);
    let cache: Vec<&&Value> = steps.iter().filter(|s| text_of(s, "uses").starts_with("actions/cache@")).collect();
    match cache.as_slice() {
        [cache] => {
            let key = cache.get("with").map(|w| text_of(w, "key")).unwrap_or("");
            if !key.contains("steps.revision.outputs.source") {
                problems.push(format!("the cache key {key:?} is not the revision's digest"));
            }
            for name in ["github.ref", "action_ref", "head_ref", "base_ref", "main", "master"] {
                if key.contains(name) {
                    problems.push(format!("the cache key {key:?} names a ref ({name})"));
                }
            }
        }
        _ => problems.push(format!("{} actions/cache steps, expected one", cache.len())),
    }
    let revision = steps.iter().find(|s| text_of(s, "id") == "revision").map_or("", |s| text_of(s, "run"));
    // The digest covers the source the binary is built from: every one of these exists.
    for source in ["Cargo.toml", "Cargo.lock", "build.rs", "harness.toml", "src", "crates", "references", "fixtures"] {
        if !revision.contains(source) || !support::root().join(source).exists() {
            problems.push(format!("the revision digest does not cover {source}"));
        }
    }
    let runs: String = steps.iter().map(|s| format!("{}\n", text_of(s, "run"))).collect();
    for needed in [
        "cargo install --locked --path \"$GITHUB_ACTION_PATH\"",
        "packetproof test --junit \"$JUNIT\"",
        "--attest \"$key_file\" --attestation \"$ATTESTATION\"",
    ] {
        if !runs.contains(needed) {
            problems.push(format!("no step runs {needed}"));
        }
    }
    // install-only (init's workflow, when it found no packetproof) builds and runs nothing.
    for step in steps
        .iter()
        .filter(|s| text_of(s, "run").contains("packetproof test") || text_of(s, "run").contains("release-check"))
    {
        if !text_of(step, "if").contains("inputs.install-only != 'true'") {
            problems.push(format!(
                "a step runs packetproof under install-only: {}",
                text_of(step, "run").lines().last().unwrap_or("")
            ));
        }
    }
    let summary = steps.iter().find(|s| text_of(s, "run").contains("release-check"));
    match summary {
        Some(step) if text_of(step, "if").contains("github.event_name == 'pull_request'") => {
            let run = text_of(step, "run");
            if !(run.contains("--format markdown") && run.contains("$GITHUB_STEP_SUMMARY")) {
                problems.push("the release check does not write Markdown to $GITHUB_STEP_SUMMARY".into());
            }
        }
        _ => problems.push("no release-check step on pull requests".into()),
    }
    problems
}

/// A workflow uses the action pinned to a full commit, with inputs the action declares.
pub(crate) fn workflow_problems(text: &str, action: &Value) -> Vec<String> {
    let doc = yaml(text, "the workflow");
    let mut problems = placeholders(text);
    let prefix = format!("{}@", packetproof::init::ACTION_REPOSITORY);
    let uses: Vec<&Value> = steps(&doc).into_iter().filter(|s| text_of(s, "uses").starts_with(&prefix)).collect();
    let [step] = uses.as_slice() else {
        problems.push(format!("{} steps use {prefix}…, expected one", uses.len()));
        return problems;
    };
    let pinned = &text_of(step, "uses")[prefix.len()..];
    if pinned.len() != 40 || !pinned.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
        problems.push(format!("the action is pinned to {pinned:?}, not a full commit"));
    }
    let declared = action.get("inputs").and_then(Value::as_mapping);
    for input in step.get("with").and_then(Value::as_mapping).into_iter().flat_map(|w| w.keys()) {
        if !declared.is_some_and(|d| d.contains_key(input)) {
            problems.push(format!("input {input:?} is not declared by action.yml"));
        }
    }
    problems
}

fn the_action_builds_its_own_revision_and_gates() {
    let text = read("action.yml");
    assert_eq!(action_problems(&text), Vec::<String>::new());
    // The checks catch what they claim: a cache keyed by a branch, a missing summary step.
    let by_branch = text.replace("${{ steps.revision.outputs.source }}", "${{ github.ref }}");
    assert!(action_problems(&by_branch).iter().any(|p| p.contains("names a ref (github.ref)")));
    let no_summary = text.replace("--format markdown", "--format text");
    assert!(action_problems(&no_summary).iter().any(|p| p.contains("$GITHUB_STEP_SUMMARY")));
    let gates_anyway = text.replacen("- if: inputs.install-only != 'true'\n      shell: bash", "- shell: bash", 1);
    assert!(action_problems(&gates_anyway).iter().any(|p| p.contains("under install-only")), "{gates_anyway}");
}

fn init_writes_a_workflow_using_the_pinned_action() {
    let folder = crate::support::Project::empty();
    let out = folder.run_in("", &["init", "suite"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    let action = yaml(&read("action.yml"), "action.yml");
    let Some(built_from) = option_env!("PACKETPROOF_BUILT_FROM") else {
        // A build outside git: no commit to pin to, so no workflow, and init says why.
        assert!(!folder.path("suite/ci/packetproof.yml").exists());
        assert!(out.stderr.contains("no commit to pin"), "{}", out.stderr);
        return;
    };
    let workflow = std::fs::read_to_string(folder.path("suite/ci/packetproof.yml")).unwrap();
    assert_eq!(workflow_problems(&workflow, &action), Vec::<String>::new(), "{workflow}");
    assert!(workflow.contains(&format!("@{built_from}")), "{workflow}");
    // The pin is a commit of this checkout's history (HEAD when built; a commit made since
    // leaves it an ancestor), when the tests are built from one.
    let git = |args: &[&str]| std::process::Command::new("git").current_dir(support::root()).args(args).output();
    if git(&["rev-parse", "--git-dir"]).is_ok_and(|o| o.status.success())
        && std::env::var_os("PACKETPROOF_REVISION").is_none()
    {
        let ancestor = git(&["merge-base", "--is-ancestor", built_from, "HEAD"]).unwrap();
        assert!(ancestor.status.success(), "{built_from} is not in HEAD's history");
    }
    // The old workflow is caught: a placeholder URL and a ref that is a branch.
    let old = "env:\n  PACKETPROOF_REPO: https://example.invalid/packetproof.git\n  PACKETPROOF_REV: main\njobs: {}\n";
    assert!(workflow_problems(old, &action).len() >= 2, "{:?}", workflow_problems(old, &action));
    let by_tag = workflow.replace(built_from, "v1");
    assert!(workflow_problems(&by_tag, &action).iter().any(|p| p.contains("not a full commit")));
}

fn the_pre_commit_hooks_name_real_commands() {
    let hooks = yaml(&read(".pre-commit-hooks.yaml"), ".pre-commit-hooks.yaml");
    let hooks = hooks.as_sequence().expect("a list of hooks");
    let hook = |id: &str| hooks.iter().find(|h| text_of(h, "id") == id).unwrap_or_else(|| panic!("no hook {id}"));
    for id in ["packetproof-verify", "packetproof-test"] {
        let entry: Vec<&str> = text_of(hook(id), "entry").split_whitespace().collect();
        assert_eq!(entry.first(), Some(&"packetproof"), "{id}");
        assert_eq!(text_of(hook(id), "language"), "rust", "{id}: pre-commit builds it with cargo");
        // The command exists: its --help succeeds.
        let help = exec(support::bin().args(&entry[1..]).arg("--help"));
        assert_eq!(help.code, 0, "{id}: {}", help.describe());
    }
    assert_eq!(hook("packetproof-test").get("pass_filenames").and_then(Value::as_bool), Some(false));
    let files = regex::Regex::new(text_of(hook("packetproof-verify"), "files")).unwrap();
    for (path, matches) in [
        ("golden/case/runtime-packet.json", true),
        ("suite/golden/case/runtime-packet.json", true),
        ("runtime-packet.anthropic.json", true),
        ("fixtures/case/request.json", false),
        ("golden/case/agent-request.json", false),
        ("my-runtime-packet.json", false),
    ] {
        assert_eq!(files.is_match(path), matches, "{path}");
    }
}

/// The npm platforms agree everywhere they are named: the release matrix, the main
/// package's optionalDependencies, and the table its shim resolves binaries from.
fn the_release_matrix_builds_every_npm_platform() {
    let release = yaml(&read(".github/workflows/release.yml"), "release.yml");
    let include = release["jobs"]["platform"]["strategy"]["matrix"]["include"].as_sequence().expect("a matrix");
    let mut matrix: Vec<String> = include.iter().map(|row| text_of(row, "npm").to_owned()).collect();
    matrix.sort();
    let manifest: serde_json::Value = serde_json::from_str(&read("npm/packetproof/package.json")).unwrap();
    let optional: Vec<String> = manifest["optionalDependencies"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, version)| {
            assert_eq!(version, &manifest["version"], "{name}");
            name.strip_prefix("@packetproof/").unwrap().to_owned()
        })
        .collect();
    assert_eq!(matrix, optional);
    let platforms = read("npm/packetproof/platforms.js");
    for target in &matrix {
        assert!(platforms.contains(&format!("'{target}': '@packetproof/{target}'")), "platforms.js lacks {target}");
    }
    let cargo: toml::Value = toml::from_str(&read("Cargo.toml")).unwrap();
    assert_eq!(
        manifest["version"].as_str(),
        cargo["workspace"]["package"]["version"].as_str(),
        "npm and Cargo versions differ"
    );
}

/// The Python package: pyproject.toml has maturin ship the root package's binary as
/// `packetproof` (Cargo's version), and the release's platform job builds a wheel for its
/// target beside the npm package, which a PyPI job publishes.
fn python_problems(pyproject: &str, release: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let pyproject: toml::Value = toml::from_str(pyproject).expect("pyproject.toml is TOML");
    let fields = [
        ("build-system.build-backend", pyproject["build-system"].get("build-backend"), "maturin"),
        ("project.name", pyproject["project"].get("name"), "packetproof"),
        ("tool.maturin.bindings", pyproject["tool"]["maturin"].get("bindings"), "bin"),
        ("tool.maturin.manifest-path", pyproject["tool"]["maturin"].get("manifest-path"), "Cargo.toml"),
    ];
    for (name, value, expected) in fields {
        if value.and_then(toml::Value::as_str) != Some(expected) {
            problems.push(format!("pyproject.toml {name} is {value:?}, not {expected:?}"));
        }
    }
    let dynamic = pyproject["project"].get("dynamic").and_then(toml::Value::as_array);
    if !dynamic.is_some_and(|d| d.iter().any(|v| v.as_str() == Some("version"))) {
        problems.push("pyproject.toml does not take its version from Cargo.toml (dynamic)".into());
    }
    let release = yaml(release, "release.yml");
    let platform_steps = release["jobs"]["platform"]["steps"].as_sequence().into_iter().flatten();
    let platform: String = platform_steps.map(|s| format!("{}\n", text_of(s, "run"))).collect();
    if !platform.contains("maturin build --release --locked --target ${{ matrix.rust }}") {
        problems.push("the platform job builds no wheel for its target".into());
    }
    let publish = serde_yaml_ng::to_string(&release["jobs"]["publish-pypi"]).unwrap();
    if !(publish.contains("wheel-*") && publish.contains("pypa/gh-action-pypi-publish")) {
        problems.push("no job publishes the wheels to PyPI".into());
    }
    problems
}

fn the_release_builds_a_wheel_per_platform() {
    let (pyproject, release) = (read("pyproject.toml"), read(".github/workflows/release.yml"));
    assert_eq!(python_problems(&pyproject, &release), Vec::<String>::new());
    // Caught: a wheel named after the Cargo package, a library wheel, no wheel step.
    let renamed = pyproject.replace("name = \"packetproof\"", "name = \"packetproof-cli\"");
    assert!(python_problems(&renamed, &release).iter().any(|p| p.contains("project.name")));
    let library = pyproject.replace("bindings = \"bin\"", "bindings = \"pyo3\"");
    assert!(python_problems(&library, &release).iter().any(|p| p.contains("bindings")));
    let no_wheel = release.replace("maturin build", "maturin develop");
    assert!(python_problems(&pyproject, &no_wheel).iter().any(|p| p.contains("no wheel")));
}

/// The release asset: every platform of the release matrix packs its binary with
/// scripts/release-asset.sh, a job makes the GitHub release of them, the launcher `init`
/// writes knows each target, and a workflow dry-runs the release.
fn asset_problems(release: &str, launcher: &str, dry_run: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let release = yaml(release, "release.yml");
    let platform_steps = release["jobs"]["platform"]["steps"].as_sequence().into_iter().flatten();
    let platform: String = platform_steps.map(|s| format!("{}{}\n", text_of(s, "run"), text_of(s, "uses"))).collect();
    if !platform.contains("scripts/release-asset.sh --binary") || !platform.contains("--target ${{ matrix.rust }}") {
        problems.push("the platform job packs no release asset for its target".into());
    }
    let include =
        release["jobs"]["platform"]["strategy"]["matrix"]["include"].as_sequence().cloned().unwrap_or_default();
    for row in &include {
        let target = text_of(row, "rust");
        if !launcher.contains(&format!(" echo {target} ;;")) {
            problems.push(format!("the launcher does not download the asset of {target}"));
        }
    }
    let jobs = release["jobs"].as_mapping().into_iter().flat_map(|j| j.values());
    let publishes = jobs.into_iter().any(|job| {
        let text = serde_yaml_ng::to_string(job).unwrap();
        text.contains("asset-*") && text.contains("gh release create") && text.contains("contents: write")
    });
    if !publishes {
        problems.push("no job makes the GitHub release of the assets".into());
    }
    let dry = yaml(dry_run, "release-dry-run.yml");
    if !steps(&dry).iter().any(|s| text_of(s, "run").starts_with("scripts/release-dry-run.sh")) {
        problems.push("no workflow dry-runs the release".into());
    }
    problems
}

fn the_release_ships_an_asset_per_platform_and_is_dry_run() {
    let release = read(".github/workflows/release.yml");
    let launcher = read("crates/packetproof/src/init/packetproof.sh");
    let dry_run = read(".github/workflows/release-dry-run.yml");
    assert_eq!(asset_problems(&release, &launcher, &dry_run), Vec::<String>::new());
    // Caught: no asset step, a target the launcher cannot name, no release job, no dry run.
    let no_asset = release.replace("scripts/release-asset.sh", "scripts/other.sh");
    assert!(asset_problems(&no_asset, &launcher, &dry_run).iter().any(|p| p.contains("packs no release asset")));
    let no_mac = launcher.replace(" echo aarch64-apple-darwin ;;", " echo none ;;");
    assert!(asset_problems(&release, &no_mac, &dry_run).iter().any(|p| p.contains("aarch64-apple-darwin")));
    let no_job = release.replace("gh release create", "echo");
    assert!(asset_problems(&no_job, &launcher, &dry_run).iter().any(|p| p.contains("GitHub release")));
    let no_dry = dry_run.replace("run: scripts/release-dry-run.sh", "run: true");
    assert!(asset_problems(&release, &launcher, &no_dry).iter().any(|p| p.contains("dry-runs")));
}

/// The npm API's functions that pass the shared options (`common(options)`, which carries
/// `--google-suffix-file`) run only commands that take that option.
fn npm_suffix_problems(index: &str, takers: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let functions = index.split("\nfunction ").skip(1).chain(index.split("\nasync function ").skip(1));
    let bodies = functions.map(|f| f.split("\n}\n").next().unwrap_or(f));
    for body in bodies.filter(|b| b.contains("...common(options)")) {
        // The function's command is the first quoted word of its arguments.
        let command = body.split('\'').nth(1).unwrap_or("");
        if !takers.iter().any(|t| t == command) {
            problems.push(format!("index.js passes --google-suffix-file to `{command}`, which does not take it"));
        }
    }
    problems
}

fn the_npm_api_passes_the_suffix_only_where_it_is_taken() {
    let (index, takers) = (read("npm/packetproof/index.js"), crate::help::suffix_takers());
    assert_eq!(npm_suffix_problems(&index, &takers), Vec::<String>::new());
    assert!(index.matches("...common(options)").count() >= 4, "{index}");
    let broken = index.replace("['checks', '--format', 'json']", "['checks', '--format', 'json', ...common(options)]");
    assert_eq!(npm_suffix_problems(&broken, &takers).len(), 1, "{broken:.0}");
}

pub fn trials() -> Vec<Trial> {
    trials![
        the_npm_api_passes_the_suffix_only_where_it_is_taken,
        the_release_matrix_builds_every_npm_platform,
        the_release_builds_a_wheel_per_platform,
        the_release_ships_an_asset_per_platform_and_is_dry_run,
        the_action_builds_its_own_revision_and_gates,
        init_writes_a_workflow_using_the_pinned_action,
        the_pre_commit_hooks_name_real_commands,
    ]
}
