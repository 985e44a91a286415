//! The npm packages, as a JavaScript user gets them: `scripts/build-npm.sh` fills the
//! `packetproof` package and this machine's platform package (with the debug binary
//! these tests already have: no release build inside `cargo test`), `npm pack` packs
//! both, and `npm install --offline` installs the tarballs into an empty project with a
//! fresh cache, so nothing is downloaded. Then `npx packetproof init` / `test` pass, and
//! a Node script calls the API. Ignored, with the reason, where node, npm or bash is absent.

#[path = "npm_signals.rs"]
mod signals;

use crate::support::{self, exec, Output};
use libtest_mimic::Trial;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The npm platform of this machine, as Node spells it; None where no package is built.
fn npm_target() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("linux-x64"),
        ("linux", "aarch64") => Some("linux-arm64"),
        ("macos", "x86_64") => Some("darwin-x64"),
        ("macos", "aarch64") => Some("darwin-arm64"),
        _ => None,
    }
}

fn tool_runs(name: &str) -> bool {
    Command::new(name).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Why the npm tests cannot run here, if they cannot.
fn missing() -> Option<String> {
    let absent: Vec<&str> = ["node", "npm", "bash"].into_iter().filter(|t| !tool_runs(t)).collect();
    if !absent.is_empty() {
        return Some(format!("{} not found", absent.join(", ")));
    }
    npm_target().is_none().then(|| format!("no npm platform package for {}", std::env::consts::ARCH))
}

fn needs_node(name: String, test: fn()) -> Trial {
    let trial = Trial::test(name, move || {
        test();
        Ok(())
    });
    support::needs("npm", missing(), trial.with_kind("npm"))
}

#[track_caller]
fn run(dir: &Path, program: &str, args: &[&str]) -> Output {
    let mut command = Command::new(program);
    command.current_dir(dir).args(args).env_remove("PACKETPROOF_BINARY");
    for name in support::packetproof_variables() {
        command.env_remove(name);
    }
    let out = exec(&mut command);
    assert_eq!(out.code, 0, "{program} {args:?} in {}: {}", dir.display(), out.describe());
    out
}

/// Build and pack both packages into `dir`; returns the two tarballs (main, platform).
#[track_caller]
fn pack(dir: &Path) -> (PathBuf, PathBuf) {
    let target = npm_target().unwrap();
    let script = support::root().join("scripts/build-npm.sh").display().to_string();
    let packages = dir.join("packages").display().to_string();
    let binary = env!("CARGO_BIN_EXE_packetproof");
    run(dir, "bash", &[&script, "--binary", binary, "--target", target, "--out", &packages]);
    let main = dir.join("packages/packetproof");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(main.join("package.json")).unwrap()).unwrap();
    assert!(manifest.get("scripts").is_none(), "the package runs no install script: {manifest}");
    assert_eq!(manifest["optionalDependencies"][format!("@packetproof/{target}")], manifest["version"]);
    let platform: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(format!("packages/{target}/package.json"))).unwrap())
            .unwrap();
    let (os, cpu) = target.split_once('-').unwrap();
    assert_eq!((platform["os"][0].as_str(), platform["cpu"][0].as_str()), (Some(os), Some(cpu)), "{platform}");
    let cache = dir.join("npm-cache").display().to_string();
    let into = dir.display().to_string();
    let (main_dir, platform_dir) = (main.display().to_string(), format!("{packages}/{target}"));
    run(dir, "npm", &["pack", "--cache", &cache, "--pack-destination", &into, &main_dir, &platform_dir]);
    let version = manifest["version"].as_str().unwrap();
    (dir.join(format!("packetproof-{version}.tgz")), dir.join(format!("packetproof-{target}-{version}.tgz")))
}

const API_SCRIPT: &str = r#"
const pp = require('packetproof');
const packet = 'suite/golden/openai-staged-alone-selected/runtime-packet.json';
(async () => {
  const result = {};
  result.validate = await pp.validate(packet);
  result.verify = await pp.verify(['suite/golden'], { cwd: '.' });
  const fs = require('node:fs');
  fs.writeFileSync('broken.json', fs.readFileSync(packet, 'utf8').replace('"maxTokens": ', '"maxTokens": 1'));
  result.broken = await pp.validate('broken.json');
  const body = require('node:child_process').execFileSync(pp.binaryPath(), ['wire', '--packet', packet, '--api', 'openai-chat']);
  fs.writeFileSync('captured.json', body);
  result.wire = await pp.wireCheck(packet, 'openai-chat', 'captured.json');
  result.checks = (await pp.checks()).checks.map((rule) => rule.name);
  const run = await pp.test({ cwd: 'suite', filter: 'openai-staged-alone-selected::packet::' });
  result.test = { ok: run.ok, exitCode: run.exitCode, passed: run.events.filter((e) => e.event === 'ok' && e.type === 'test').length };
  try {
    await pp.validate('missing.json');
    result.missing = 'resolved';
  } catch (error) {
    result.missing = { name: error.name, exitCode: error.exitCode, message: error.message };
  }
  // A caller's value is a value, never an option: this names a folder called --run-exporter.
  try {
    await pp.verify(['--run-exporter', 'suite/golden']);
    result.hyphen = 'resolved';
  } catch (error) {
    result.hyphen = { exitCode: error.exitCode, message: error.message };
  }
  console.log(JSON.stringify(result));
})().catch((error) => { console.error(error); process.exit(1); });
"#;

fn npm_packages_install_offline_and_run_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let (main, platform) = pack(dir.path());
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("package.json"), r#"{"name": "uses-packetproof", "private": true}"#).unwrap();
    let cache = dir.path().join("npm-cache").display().to_string();
    let (main, platform) = (main.display().to_string(), platform.display().to_string());
    run(&project, "npm", &["install", "--offline", "--no-audit", "--no-fund", "--cache", &cache, &platform, &main]);
    // The schemas ship in the package, byte for byte.
    let shipped = project.join("node_modules/packetproof/schemas/verify.schema.json");
    assert_eq!(
        std::fs::read(shipped).unwrap(),
        std::fs::read(support::root().join("schemas/verify.schema.json")).unwrap()
    );
    run(&project, "npx", &["--offline", "packetproof", "init", "suite"]);
    let gate = run(&project.join("suite"), "npx", &["--offline", "packetproof", "test"]);
    assert!(gate.stdout.contains("test result: ok."), "{}", gate.describe());
    // The shim passes the exit status through: a failing check is 1, bad usage 2.
    let mut usage = Command::new("npx");
    usage.current_dir(&project).args(["--offline", "packetproof", "validate"]);
    assert_eq!(exec(&mut usage).code, 2);
    std::fs::write(project.join("api.js"), API_SCRIPT).unwrap();
    let out = run(&project, "node", &["api.js"]);
    let result: serde_json::Value =
        serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", out.describe()));
    assert_eq!(
        (result["validate"]["ok"].clone(), result["validate"]["formatVersion"].clone()),
        (true.into(), 1.into()),
        "{result}"
    );
    assert_eq!(result["verify"]["ok"], true, "{result}");
    assert_eq!(result["broken"]["ok"], false, "a failing check resolves with ok: false: {result}");
    assert_eq!(result["wire"]["ok"], true, "{result}");
    let declared: Vec<&str> = packetproof::Check::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(result["checks"], serde_json::json!(declared), "the rule book through the JS API");
    assert_eq!(result["test"]["ok"], true, "{result}");
    assert!(result["test"]["passed"].as_u64().unwrap() >= 9, "{result}");
    assert_eq!(result["missing"]["name"], "PacketproofError", "exit 2 rejects: {result}");
    assert_eq!(result["missing"]["exitCode"], 2, "{result}");
    assert!(result["missing"]["message"].as_str().unwrap().contains("missing.json"), "{result}");
    assert_eq!(result["hyphen"]["exitCode"], 2, "a caller's path was read as an option: {result}");
    assert!(result["hyphen"]["message"].as_str().unwrap().contains("--run-exporter: "), "{result}");
    a_child_killed_by_a_signal_is_128_plus_its_number(&project);
    let app = dir.path().join("app");
    std::fs::create_dir(&app).unwrap();
    std::fs::write(app.join("package.json"), r#"{"name": "app", "private": true}"#).unwrap();
    run(&app, "npm", &["install", "--offline", "--no-audit", "--no-fund", "--cache", &cache, &platform, &main]);
    the_hooks_init_writes_run_the_installed_package(&app);
}

/// In a Node repository with the package installed (`project`, holding no suite yet), `init --agent`'s pre-commit hooks run
/// its binary (the launcher finds it in node_modules/.bin) from the repository's root: no packetproof on PATH, no download.
fn the_hooks_init_writes_run_the_installed_package(project: &Path) {
    support::git(project, &["init", "-q", "."]);
    run(project, "npx", &["--offline", "packetproof", "init", "llm", "--agent", "answer", "--output", "schema"]);
    run(&project.join("llm"), "npx", &["--offline", "packetproof", "bless"]);
    let text = std::fs::read_to_string(project.join(".pre-commit-config.yaml")).unwrap();
    let config = crate::distribution::yaml(&text, "the hooks");
    let packet = "llm/golden/example/runtime-packet.json";
    let hook = |id: &str, extra: &[&str]| {
        let hooks = config["repos"][0]["hooks"].as_sequence().expect("hooks");
        let hook = hooks.iter().find(|h| crate::distribution::text_of(h, "id") == id).expect(id);
        let entry = crate::distribution::text_of(hook, "entry");
        assert!(entry.starts_with("bash llm/ci/packetproof.sh "), "{entry}");
        let words: Vec<&str> = entry.split_whitespace().chain(extra.iter().copied()).collect();
        let mut command = Command::new(words[0]);
        command.current_dir(project).args(&words[1..]);
        for name in support::packetproof_variables() {
            command.env_remove(name);
        }
        exec(&mut command)
    };
    for (id, extra) in [("packetproof-verify", vec![packet]), ("packetproof-test", vec![])] {
        let out = hook(id, &extra);
        assert_eq!(out.code, 0, "{id}: {}", out.describe());
    }
    let golden = project.join(packet);
    let text = std::fs::read_to_string(&golden).unwrap().replace("\"maxTokens\": 1024", "\"maxTokens\": 1025");
    std::fs::write(&golden, text).unwrap();
    let out = hook("packetproof-verify", &[packet]);
    assert_eq!(out.code, 1, "a changed packet fails the hook: {}", out.describe());
}

/// The shim's exit status for a binary killed by a signal is a shell's, 128 + the
/// signal's number: it never raises the signal in Node (which ignores SIGPIPE and
/// opens its inspector on SIGUSR1).
fn a_child_killed_by_a_signal_is_128_plus_its_number(project: &Path) {
    let dies = project.join("dies.sh");
    std::fs::write(&dies, "#!/bin/sh\nkill -\"$1\" $$\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dies, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for (signal, status) in [("PIPE", 141), ("USR1", 138), ("TERM", 143)] {
        let mut shim = Command::new("node");
        shim.current_dir(project).args(["node_modules/packetproof/bin/packetproof.js", signal]);
        let out = exec(shim.env("PACKETPROOF_BINARY", &dies));
        assert_eq!(out.code, status, "SIG{signal}: {}", out.describe());
        assert!(!out.stderr.contains("Debugger"), "SIG{signal} opened Node's inspector: {}", out.describe());
    }
}

pub fn trials() -> Vec<Trial> {
    let mut trials = signals::trials();
    trials.push(needs_node(
        support::test_name(module_path!(), "npm_packages_install_offline_and_run_the_gate"),
        npm_packages_install_offline_and_run_the_gate,
    ));
    trials
}
