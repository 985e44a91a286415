//! The workflow `init` writes, run here step by step as GitHub Actions would run it, in a
//! fresh repository of a Python app and of a Node app, each with a package of its own
//! that its exporter imports: with no cargo on PATH, no packetproof on PATH, and no
//! package index (pip's and npm's are switched off), the gate goes green. Each `run:`
//! step is a bash script in its `working-directory`; the `uses:` steps are what they
//! stand for here: checkout is the repository as it is, setup-python a fresh virtual
//! environment first on PATH, setup-node the node on PATH, upload-artifact a check that
//! the file exists, and packetproof's action its cache hit, the built binary put in
//! ~/.packetproof/bin. The release asset is the built binary, packed as the release
//! workflow packs it (scripts/release-asset.sh); an asset whose checksum differs is not
//! installed. Ignored, with the reason, where bash, git, curl, python3 with venv, or node
//! and npm are absent.

use crate::distribution::{steps, text_of, yaml};
use crate::support::{self, exec, Output};
use libtest_mimic::Trial;
use serde_yaml_ng::Value;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program).args(args).output().is_ok_and(|o| o.status.success())
}

/// Why these tests cannot run here, if they cannot.
fn missing(tools: &[(&str, &[&str])]) -> Option<String> {
    if !cfg!(any(target_os = "linux", target_os = "macos")) {
        return Some("the release asset is built for Linux and macOS here".into());
    }
    let absent: Vec<&str> = tools.iter().filter(|(t, args)| !runs(t, args)).map(|(t, _)| *t).collect();
    (!absent.is_empty()).then(|| format!("{} not found", absent.join(", ")))
}

/// Programs a test needs, each with arguments that succeed where it works.
type Tools = &'static [(&'static str, &'static [&'static str])];

const BASE: Tools = &[("bash", &["--version"]), ("git", &["--version"]), ("curl", &["--version"])];

/// The test's machine: a home, a PATH without cargo or packetproof, and no package index.
struct Machine {
    dir: tempfile::TempDir,
    path: Vec<PathBuf>,
}

impl Machine {
    fn new() -> Machine {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        let rest = std::env::var_os("PATH").unwrap_or_default();
        // Every folder that holds cargo, rustc or a packetproof is left out.
        let path = std::env::split_paths(&rest)
            .filter(|d| ["cargo", "rustc", "packetproof"].iter().all(|p| !d.join(p).exists()))
            .collect();
        Machine { dir, path }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn joined_path(&self) -> OsString {
        std::env::join_paths(&self.path).unwrap()
    }

    /// `bash -c script` in `dir` with this machine's variables and `env`.
    fn bash(&self, dir: &Path, script: &str, env: &BTreeMap<String, String>) -> Output {
        let mut command = Command::new("bash");
        command.current_dir(dir).args(["-eo", "pipefail", "-c", script]);
        for name in support::packetproof_variables() {
            command.env_remove(name);
        }
        let cache = self.dir.path().join("npm-cache");
        command
            .env("PATH", self.joined_path())
            .env("HOME", self.home())
            .env("PIP_NO_INDEX", "1")
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .env("npm_config_offline", "true")
            .env("npm_config_cache", cache)
            .env("npm_config_registry", "http://127.0.0.1:9/")
            .env("npm_config_audit", "false")
            .env("npm_config_fund", "false")
            .envs(env);
        exec(&mut command)
    }
}

/// This machine's release asset, as scripts/release-asset.sh names it, in a new folder.
fn release_folder(machine: &Machine) -> PathBuf {
    let release = machine.dir.path().join("release");
    std::fs::create_dir_all(&release).unwrap();
    let script = support::root().join("scripts/release-asset.sh");
    let mut command = Command::new("bash");
    command.arg(script).args(["--binary", env!("CARGO_BIN_EXE_packetproof"), "--out"]).arg(&release);
    let out = exec(&mut command);
    assert_eq!(out.code, 0, "{}", out.describe());
    release
}

/// What the run of a workflow did.
struct Ran {
    /// The names (or `uses`) of the steps that ran, in order.
    steps: Vec<String>,
}

/// Run the workflow `text` in the repository `top` on `machine`, as a push: the steps
/// that ran, or the first that failed.
fn run_workflow(machine: &mut Machine, top: &Path, text: &str, env: &BTreeMap<String, String>) -> Result<Ran, String> {
    let doc = yaml(text, "the workflow");
    let github = machine.dir.path().join("github");
    std::fs::create_dir_all(&github).unwrap();
    let mut outputs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut ran = Ran { steps: Vec::new() };
    for step in steps(&doc) {
        if !condition(text_of(step, "if"), &outputs) {
            continue;
        }
        let uses = text_of(step, "uses");
        let name = if uses.is_empty() { text_of(step, "name").to_owned() } else { uses.to_owned() };
        if uses.is_empty() {
            let (output, path) = (github.join("output"), github.join("path"));
            std::fs::write(&output, "").unwrap();
            std::fs::write(&path, "").unwrap();
            let mut vars = env.clone();
            vars.insert("GITHUB_OUTPUT".into(), output.display().to_string());
            vars.insert("GITHUB_PATH".into(), path.display().to_string());
            vars.insert("GITHUB_STEP_SUMMARY".into(), github.join("summary").display().to_string());
            vars.insert("GITHUB_EVENT_NAME".into(), "push".into());
            if let Some(map) = step.get("env").and_then(Value::as_mapping) {
                for (key, value) in map {
                    vars.insert(key.as_str().unwrap().to_owned(), value.as_str().unwrap_or_default().to_owned());
                }
            }
            let dir = top.join(step.get("working-directory").and_then(Value::as_str).unwrap_or("."));
            let out = machine.bash(&dir, text_of(step, "run"), &vars);
            if out.code != 0 {
                return Err(format!("step {name:?}: {}", out.describe()));
            }
            let id = text_of(step, "id");
            let set = std::fs::read_to_string(&output).unwrap();
            let values = set.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_owned(), v.to_owned()));
            outputs.entry(id.to_owned()).or_default().extend(values);
            let added = std::fs::read_to_string(&path).unwrap();
            for folder in added.lines().rev() {
                machine.path.insert(0, PathBuf::from(folder));
            }
        } else {
            stand_in(machine, top, step, uses);
        }
        ran.steps.push(name);
    }
    Ok(ran)
}

/// A step's `if:`, for a push: the release check's (pull requests only) and the build's
/// (when the launcher found none) are the conditions init writes.
fn condition(text: &str, outputs: &BTreeMap<String, BTreeMap<String, String>>) -> bool {
    match text {
        "" | "always()" => true,
        _ if text.starts_with("false &&") => false,
        _ if text.contains("github.event_name == 'pull_request'") => false,
        "steps.packetproof.outputs.found != 'true'" => {
            outputs.get("packetproof").and_then(|o| o.get("found")).map(String::as_str) != Some("true")
        }
        other => panic!("the workflow has a condition this test does not know: {other}"),
    }
}

/// What a `uses:` step stands for on this machine.
fn stand_in(machine: &mut Machine, top: &Path, step: &Value, uses: &str) {
    let action = format!("{}@", packetproof::init::ACTION_REPOSITORY);
    if uses.starts_with("actions/checkout@") {
    } else if uses.starts_with("actions/setup-python@") {
        let venv = machine.dir.path().join("python");
        let out = exec(Command::new("python3").args(["-m", "venv"]).arg(&venv));
        assert_eq!(out.code, 0, "{}", out.describe());
        machine.path.insert(0, venv.join("bin"));
    } else if uses.starts_with("actions/setup-node@") {
    } else if uses.starts_with("actions/upload-artifact@") {
        let path = step["with"]["path"].as_str().unwrap();
        assert!(top.join(path).is_file(), "the uploaded {path} was not written");
    } else if uses.starts_with(&action) {
        assert_eq!(text_of(&step["with"], "install-only"), "true", "the action only installs here");
        // Its cache hit: the binary of this revision, restored into ~/.packetproof/bin.
        let bin = machine.home().join(".packetproof/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_packetproof"), bin.join("packetproof")).unwrap();
        machine.path.insert(0, bin);
    } else {
        panic!("the workflow uses {uses}, which this test does not stand in for");
    }
}

/// A fresh repository of an app: `files` written, the suite `init llm/gate --agent answer`
/// made, the exporter importing the app's package (`import`, its first line), and the
/// golden files blessed by the binary itself with `env` (where the package is importable),
/// as the team did before committing.
fn app(
    machine: &Machine,
    files: &[(&str, &str)],
    import: &str,
    env: &BTreeMap<String, String>,
) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().canonicalize().unwrap();
    support::git(&top, &["init", "-q", "."]);
    for (name, text) in files {
        let path = top.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    if top.join("package.json").is_file() {
        // The lock the team commits (the checkout CI gets has no node_modules).
        let out = machine.bash(&top, "npm install --package-lock-only", &BTreeMap::new());
        assert_eq!(out.code, 0, "{}", out.describe());
    }
    let out = support::run_in(&top, &["init", "llm/gate", "--agent", "answer", "--output", "schema"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    let gate = top.join("llm/gate");
    let exporter = ["export.js", "export.py"].iter().map(|f| gate.join(f)).find(|f| f.is_file()).unwrap();
    let text = std::fs::read_to_string(&exporter).unwrap();
    std::fs::write(&exporter, format!("{import}\n{text}")).unwrap();
    let out = machine.bash(&gate, &format!("{} bless", env!("CARGO_BIN_EXE_packetproof")), env);
    assert_eq!(out.code, 0, "{}", out.describe());
    (dir, top)
}

/// A wheel of the app's own package `apphelper`, written by hand (a wheel is a zip).
const PYTHON_HELPER: &str = r#"import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as w:
    w.writestr("apphelper.py", "NAME = 'apphelper'\n")
    info = "apphelper-1.0.dist-info/"
    w.writestr(info + "METADATA", "Metadata-Version: 2.1\nName: apphelper\nVersion: 1.0\n")
    w.writestr(info + "WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    w.writestr(info + "RECORD", "apphelper.py,,\n" + "".join(info + f + ",,\n" for f in ["METADATA", "WHEEL", "RECORD"]))
"#;

/// A Python app (requirements.txt naming its own package, a wheel in the repository):
/// pip installs it, the launcher installs the release asset, and the action never runs.
fn a_python_apps_workflow_runs_green_from_the_release_asset() {
    let mut machine = Machine::new();
    let vendor = machine.dir.path().join("vendor");
    std::fs::create_dir_all(&vendor).unwrap();
    let wheel = vendor.join("apphelper-1.0-py3-none-any.whl");
    let out = exec(Command::new("python3").args(["-c", PYTHON_HELPER]).arg(&wheel));
    assert_eq!(out.code, 0, "{}", out.describe());
    let requirements = format!("# the app's own package, which the exporter imports\n{}\n", wheel.display());
    // Blessed where the package is importable: a wheel on PYTHONPATH is a zip Python reads.
    let bless_env = BTreeMap::from([("PYTHONPATH".to_owned(), wheel.display().to_string())]);
    let files = [("requirements.txt", requirements.as_str())];
    let (_dir, top) = app(&machine, &files, "import apphelper  # the app's own package", &bless_env);
    let release = release_folder(&machine);
    let env = BTreeMap::from([("PACKETPROOF_RELEASE_URL".to_owned(), format!("file://{}", release.display()))]);
    let workflow = std::fs::read_to_string(top.join(".github/workflows/packetproof.yml")).unwrap();
    // Caught first: the wheel of a version no index has, and a workflow that skips the
    // app's packages (the exporter cannot import them).
    let old =
        workflow.replace("\"bash llm/gate/ci/packetproof.sh --install\"", "python -m pip install packetproof==0.1.0");
    assert_ne!(old, workflow);
    let failed = run_workflow(&mut Machine::new(), &top, &old, &env).err().expect("no index has the wheel");
    assert!(failed.starts_with("step \"find packetproof"), "{failed}");
    let skipped = workflow.replace("name: install the app's packages", "if: false && 'skipped'\n        name: x");
    assert_ne!(skipped, workflow);
    let failed = run_workflow(&mut Machine::new(), &top, &skipped, &env).err().expect("the exporter imports apphelper");
    assert!(failed.starts_with("step \"packetproof test\"") && failed.contains("apphelper"), "{failed}");
    let ran = run_workflow(&mut machine, &top, &workflow, &env).unwrap();
    assert!(ran.steps.iter().any(|s| s == "install the app's packages"), "{:?}", ran.steps);
    assert!(!ran.steps.iter().any(|s| s.starts_with(packetproof::init::ACTION_REPOSITORY)), "{:?}", ran.steps);
    let installed = machine.home().join(".packetproof/bin/packetproof");
    assert_eq!(std::fs::read(installed).unwrap(), std::fs::read(env!("CARGO_BIN_EXE_packetproof")).unwrap());
    // The hooks, in the team's environment (the one CI made), without packetproof on PATH.
    hooks_pass(&machine, &top, Some(machine.dir.path().join("python/bin")));
}

const NODE_PACKAGE: &str =
    r#"{"name": "app", "private": true, "dependencies": {"apphelper": "file:vendor/apphelper"}}"#;

/// A Node app (package.json and its lock naming its own package): `npm ci` installs it,
/// no release asset exists yet (before the first release), so packetproof's action builds
/// it (here: its cache hit).
fn a_node_apps_workflow_runs_green_before_the_first_release() {
    let mut machine = Machine::new();
    let files = [
        ("package.json", NODE_PACKAGE),
        ("vendor/apphelper/package.json", r#"{"name": "apphelper", "version": "1.0.0", "main": "index.js"}"#),
        ("vendor/apphelper/index.js", "module.exports = { name: 'apphelper' };\n"),
    ];
    let import = "require('apphelper'); // the app's own package";
    let probe = tempfile::tempdir().unwrap();
    let bless_env = BTreeMap::from([("NODE_PATH".to_owned(), probe.path().display().to_string())]);
    std::fs::create_dir_all(probe.path().join("apphelper")).unwrap();
    std::fs::write(probe.path().join("apphelper/index.js"), "module.exports = {};\n").unwrap();
    let (_dir, top) = app(&machine, &files, import, &bless_env);
    assert!(!top.join("node_modules").exists());
    let text = std::fs::read_to_string(top.join(".github/workflows/packetproof.yml")).unwrap();
    assert!(text.contains("run: npm ci"), "{text}");
    // No release asset yet: an empty release folder.
    let release = machine.dir.path().join("no-release");
    std::fs::create_dir_all(&release).unwrap();
    let env = BTreeMap::from([("PACKETPROOF_RELEASE_URL".to_owned(), format!("file://{}", release.display()))]);
    let workflow = std::fs::read_to_string(top.join(".github/workflows/packetproof.yml")).unwrap();
    let ran = run_workflow(&mut machine, &top, &workflow, &env).unwrap_or_else(|e| panic!("{e}"));
    assert!(ran.steps.iter().any(|s| s == "install the app's packages"), "{:?}", ran.steps);
    assert!(ran.steps.iter().any(|s| s.starts_with(packetproof::init::ACTION_REPOSITORY)), "{:?}", ran.steps);
    assert!(top.join("node_modules/apphelper").exists(), "npm ci installed the app's package");
    hooks_pass(&machine, &top, None);
}

/// The pre-commit hooks' entries, from the root, with no packetproof on PATH (`first`
/// before the machine's PATH): the launcher runs the one in ~/.packetproof/bin.
fn hooks_pass(machine: &Machine, top: &Path, first: Option<PathBuf>) {
    let text = std::fs::read_to_string(top.join(".pre-commit-config.yaml")).unwrap();
    let config = yaml(&text, "the hooks");
    let clean = Machine::new().path;
    let path = std::env::join_paths(first.into_iter().chain(clean)).unwrap().to_string_lossy().into_owned();
    for hook in config["repos"][0]["hooks"].as_sequence().unwrap() {
        let mut entry = text_of(hook, "entry").to_owned();
        if text_of(hook, "id") == "packetproof-verify" {
            entry.push_str(" llm/gate/golden/example/runtime-packet.json");
        }
        let out = machine.bash(top, &entry, &BTreeMap::from([("PATH".to_owned(), path.clone())]));
        assert_eq!(out.code, 0, "{entry}: {}", out.describe());
    }
}

/// The launcher installs no asset whose checksum differs (then CI builds instead), and
/// where it finds none a hook says how to build the packetproof CI builds.
fn the_launcher_refuses_an_asset_whose_checksum_differs() {
    let machine = Machine::new();
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().canonicalize().unwrap();
    support::git(&top, &["init", "-q", "."]);
    let out = support::run_in(&top, &["init", "suite"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    let release = release_folder(&machine);
    let sums: Vec<PathBuf> = std::fs::read_dir(&release).unwrap().map(|e| e.unwrap().path()).collect();
    let sum = sums.iter().find(|p| p.extension().is_some_and(|e| e == "sha256")).unwrap();
    let text = std::fs::read_to_string(sum).unwrap();
    std::fs::write(sum, format!("{}{}", "0".repeat(64), &text[64..])).unwrap();
    let output = machine.dir.path().join("output");
    let env = BTreeMap::from([
        ("PACKETPROOF_RELEASE_URL".to_owned(), format!("file://{}", release.display())),
        ("GITHUB_OUTPUT".to_owned(), output.display().to_string()),
    ]);
    let out = machine.bash(&top, "bash suite/ci/packetproof.sh --install", &env);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(out.stderr.contains("does not match its checksum; not installed"), "{}", out.describe());
    assert_eq!(std::fs::read_to_string(&output).unwrap(), "found=false\n");
    assert!(!machine.home().join(".packetproof/bin/packetproof").exists());
    let out = machine.bash(&top, "bash suite/ci/packetproof.sh --config suite/harness.toml test", &env);
    assert_eq!(out.code, 127, "{}", out.describe());
    let built_from = option_env!("PACKETPROOF_BUILT_FROM").unwrap_or_default();
    let hint = format!("--rev {built_from} --root ~/.packetproof");
    assert!(out.stderr.contains("cargo install --locked --git https://github.com/") && out.stderr.contains(&hint));
}

pub fn trials() -> Vec<Trial> {
    let python: Tools = &[("python3", &["-c", "import venv, ensurepip"])];
    let node: Tools = &[("node", &["--version"]), ("npm", &["--version"])];
    let tests: [(&str, fn(), Tools); 3] = [
        (
            "the_launcher_refuses_an_asset_whose_checksum_differs",
            the_launcher_refuses_an_asset_whose_checksum_differs,
            &[],
        ),
        (
            "a_python_apps_workflow_runs_green_from_the_release_asset",
            a_python_apps_workflow_runs_green_from_the_release_asset,
            python,
        ),
        (
            "a_node_apps_workflow_runs_green_before_the_first_release",
            a_node_apps_workflow_runs_green_before_the_first_release,
            node,
        ),
    ];
    tests
        .into_iter()
        .map(|(name, test, tools)| {
            let why = missing(&[BASE, tools].concat());
            let built = option_env!("PACKETPROOF_BUILT_FROM").is_some();
            let why = why.or_else(|| (!built).then(|| "no workflow: this build knows no commit".to_owned()));
            support::needs("workflow-tools", why, support::trial(support::test_name(module_path!(), name), test))
        })
        .collect()
}
