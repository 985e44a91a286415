//! The Python package, as a Python team gets it: maturin builds the wheel from
//! `pyproject.toml` (`bindings = "bin"`: the wheel carries the `packetproof` binary and
//! nothing else), and pip installs it with `--no-index` into a fresh virtual environment,
//! so nothing is downloaded. The command is then on the environment's PATH: `--version`
//! and a real suite (`init`, `verify`) run from there; where uv is installed, `uv tool
//! install` of the same wheel gives the command too.
//!
//! maturin builds with the profile and target folder of the binary these tests already
//! have, so it finds that build fresh and compiles nothing: the wheel carries the very
//! binary the other tests ran (checked byte for byte). Ignored, with the reason, where
//! python3 (with venv) or maturin is absent; `pip install maturin` makes it run.

use crate::support::{self, exec, Output};
use libtest_mimic::Trial;
use std::path::{Path, PathBuf};
use std::process::Command;

fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program).args(args).output().is_ok_and(|o| o.status.success())
}

/// Why the wheel test cannot run here, if it cannot.
fn missing() -> Option<String> {
    if !runs("python3", &["-c", "import venv, ensurepip"]) {
        return Some("python3 with venv and ensurepip not found".into());
    }
    (!runs("maturin", &["--version"])).then(|| "maturin not found (pip install maturin)".into())
}

fn needs_maturin(name: String, test: fn()) -> Trial {
    let trial = Trial::test(name, move || {
        test();
        Ok(())
    });
    crate::support::needs("maturin", missing(), trial.with_kind("python"))
}

/// `program args` in `dir`, with none of packetproof's variables and pip kept offline and quiet.
#[track_caller]
fn run(dir: &Path, path: Option<&Path>, program: &str, args: &[&str]) -> Output {
    let mut command = Command::new(program);
    command.current_dir(dir).args(args);
    let pip = ["PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"];
    for name in support::packetproof_variables().chain(pip) {
        command.env_remove(name);
    }
    command.env("PIP_DISABLE_PIP_VERSION_CHECK", "1").env("PIP_NO_INPUT", "1");
    if let Some(bin) = path {
        // The environment's bin folder first, as `source venv/bin/activate` puts it.
        let rest = std::env::var_os("PATH").unwrap_or_default();
        let joined = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&rest)));
        command.env("PATH", joined.unwrap());
    }
    let out = exec(&mut command);
    assert_eq!(out.code, 0, "{program} {args:?} in {}: {}", dir.display(), out.describe());
    out
}

/// The binary these tests run, its cargo profile and its target folder.
fn build_of_this_binary() -> (PathBuf, String, PathBuf) {
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_packetproof"));
    let profile_dir = binary.parent().unwrap();
    let profile = match profile_dir.file_name().unwrap().to_str().unwrap() {
        "debug" => "dev".to_owned(),
        other => other.to_owned(),
    };
    let target_dir = profile_dir.parent().unwrap().to_path_buf();
    (binary, profile, target_dir)
}

fn the_wheel_installs_offline_and_gives_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let (binary, profile, target_dir) = build_of_this_binary();
    let wheels = dir.path().join("wheels");
    let (wheels_arg, target_arg) = (wheels.display().to_string(), target_dir.display().to_string());
    let root = support::root();
    let build = ["build", "--offline", "--locked", "--profile", &profile, "--target-dir", &target_arg];
    run(root, None, "maturin", &[&build[..], &["--out", &wheels_arg]].concat());
    let built: Vec<PathBuf> = std::fs::read_dir(&wheels).unwrap().map(|e| e.unwrap().path()).collect();
    let [wheel] = built.as_slice() else { panic!("expected one wheel in {}: {built:?}", wheels.display()) };
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    // PyPI's name, Cargo's version; a platform wheel for any Python 3 (the binary links no Python).
    let version = env!("CARGO_PKG_VERSION");
    assert!(name.starts_with(&format!("packetproof-{version}-py3-none-")), "{name}");

    let venv = dir.path().join("venv");
    run(dir.path(), None, "python3", &["-m", "venv", &venv.display().to_string()]);
    let bin = venv.join(if cfg!(windows) { "Scripts" } else { "bin" });
    let python = bin.join("python").display().to_string();
    run(dir.path(), None, &python, &["-m", "pip", "install", "--no-index", &wheel.display().to_string()]);
    let installed = bin.join(format!("packetproof{}", std::env::consts::EXE_SUFFIX));
    assert_eq!(
        std::fs::read(&installed).unwrap_or_else(|e| panic!("{}: {e}", installed.display())),
        std::fs::read(&binary).unwrap(),
        "the wheel does not carry the binary the tests ran (maturin rebuilt it with other settings?)"
    );

    // The command as a user of the environment runs it: by name, from its PATH.
    let out = run(dir.path(), Some(&bin), "packetproof", &["--version"]);
    assert_eq!(out.stdout.trim(), format!("packetproof {version}"), "{}", out.describe());
    let out = run(dir.path(), Some(&bin), "packetproof", &["init", "suite"]);
    assert!(out.stdout.contains("a conformance suite"), "{}", out.describe());
    let out = run(&dir.path().join("suite"), Some(&bin), "packetproof", &["verify", "golden"]);
    assert!(out.stdout.contains(" hold, 0 failed"), "{}", out.describe());

    the_hooks_init_writes_run_from_the_wheel(dir.path(), &bin);

    // uv, where it is installed: `uv tool install` of the same wheel, offline, in folders of its own.
    if runs("uv", &["--version"]) {
        let uv = dir.path().join("uv");
        let (tools, bin, cache) = (uv.join("tools"), uv.join("bin"), uv.join("cache"));
        let mut install = Command::new("uv");
        install.args(["tool", "install", "--offline", &wheel.display().to_string()]);
        install.env("UV_TOOL_DIR", &tools).env("UV_TOOL_BIN_DIR", &bin).env("UV_CACHE_DIR", &cache);
        let out = exec(&mut install);
        assert_eq!(out.code, 0, "uv tool install: {}", out.describe());
        let out = run(dir.path(), Some(&bin), "packetproof", &["--version"]);
        assert_eq!(out.stdout.trim(), format!("packetproof {version}"), "{}", out.describe());
    }
}

/// A Python repository as the team has it, with only the wheel's packetproof: `init
/// --agent` writes hooks whose entries run the launcher, which finds the command in the
/// environment, green on the blessed suite and red on a changed golden packet; the
/// workflow installs the app's package, never a packetproof version from an index.
fn the_hooks_init_writes_run_from_the_wheel(dir: &Path, bin: &Path) {
    let app = dir.join("app");
    std::fs::create_dir_all(&app).unwrap();
    support::git(&app, &["init", "-q", "."]);
    std::fs::write(app.join("pyproject.toml"), "[project]\nname = \"app\"\n").unwrap();
    run(&app, Some(bin), "packetproof", &["init", "llm/gate", "--agent", "answer", "--style", "format"]);
    run(&app.join("llm/gate"), Some(bin), "packetproof", &["bless"]);
    let hooks = std::fs::read_to_string(app.join(".pre-commit-config.yaml")).unwrap();
    let entries: Vec<&str> =
        hooks.lines().filter_map(|l| l.trim().strip_prefix("entry: ")).map(|e| e.trim_matches('"')).collect();
    assert!(!entries.is_empty(), "{hooks}");
    // Only the environment's bin and the system's: no other packetproof to fall back on.
    let path = std::env::join_paths([bin, Path::new("/usr/bin"), Path::new("/bin")]).unwrap();
    // pre-commit passes the verify hook the changed packets (its `files:`), from the root.
    let packet = "llm/gate/golden/example/runtime-packet.json";
    let hook = |entry: &str| {
        let line = if entry.ends_with("verify") { format!("{entry} {packet}") } else { entry.to_owned() };
        let mut command = Command::new("sh");
        command.current_dir(&app).args(["-c", &line]).env("PATH", &path);
        support::packetproof_variables().for_each(|name| {
            command.env_remove(name);
        });
        exec(&mut command)
    };
    for entry in &entries {
        assert!(entry.starts_with("bash llm/gate/ci/packetproof.sh "), "{hooks}");
        let out = hook(entry);
        assert_eq!(out.code, 0, "{entry}: {}", out.describe());
    }
    let workflow = std::fs::read_to_string(app.join(".github/workflows/packetproof.yml")).unwrap();
    assert!(workflow.contains("run: \"python -m pip install .\"") && !workflow.contains("packetproof=="), "{workflow}");
    let golden = app.join(packet);
    let mut packet: serde_json::Value = serde_json::from_slice(&std::fs::read(&golden).unwrap()).unwrap();
    packet["maxTokens"] = serde_json::json!(packet["maxTokens"].as_u64().unwrap() + 1);
    std::fs::write(&golden, packet.to_string()).unwrap();
    let verify = entries.iter().find(|e| e.ends_with("verify")).expect("a verify hook");
    assert_ne!(hook(verify).code, 0, "the verify hook fails on a changed golden packet");
}

pub fn trials() -> Vec<Trial> {
    let name = support::test_name(module_path!(), "the_wheel_installs_offline_and_gives_the_command");
    vec![needs_maturin(name, the_wheel_installs_offline_and_gives_the_command)]
}
