//! Hardening: faults, races and hostile input end cleanly and lose
//! nothing. One test per class of fault, through the built binary, one module
//! per group of classes. Every process runs under `timeout`, so a hang fails the
//! test instead of stalling it; concurrency tests start real processes at once and
//! wait for all of them (no sleeps). Unix only: FIFOs, device nodes, symlinks and
//! closed pipes.

mod faults;
mod inputs;
mod outputs;
mod races;
mod round5;
mod secrets;
mod verify;

use crate::run::{good_output, snapshot, write_packet};
use libtest_mimic::Trial;

use packetproof::canonical;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_packetproof");
/// Seconds any one command may take before it counts as a hang.
const HANG: &str = "20";

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Output {
    fn all(&self) -> String {
        format!("exit {}\nstdout:\n{}\nstderr:\n{}", self.code, self.stdout, self.stderr)
    }

    /// The same run as the shared type, for a whole-output snapshot.
    fn output(&self) -> crate::support::Output {
        crate::support::Output { code: self.code, stdout: self.stdout.clone(), stderr: self.stderr.clone() }
    }

    /// Exited by itself (no hang, no signal), without a panic.
    #[track_caller]
    fn clean(&self) -> &Self {
        assert!(self.code != 124 && self.code != 137 && self.code >= 0, "hung or killed: {}", self.all());
        assert!(![101, 134].contains(&self.code), "crashed: {}", self.all());
        assert!(!self.stderr.contains("panicked"), "panicked: {}", self.all());
        self
    }
}

fn finish(child: Child) -> Output {
    let out = child.wait_with_output().expect("wait for packetproof");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, canonical::to_pretty(value)).unwrap();
}

#[track_caller]
fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(rustix::fs::CWD, path, rustix::fs::FileType::Fifo, rustix::fs::Mode::from(0o644), 0).unwrap();
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A temporary project root (this crate's harness.toml and suffix, a small schema).
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        Project::with_schema(None)
    }

    /// `schema`: the snapshot's JSON Schema instead of the default one.
    fn with_schema(schema: Option<Value>) -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(crate_root().join("harness.toml"), dir.path().join("harness.toml")).unwrap();
        std::fs::create_dir_all(dir.path().join("references")).unwrap();
        std::fs::copy(
            crate_root().join("references/gemini-json-suffix.txt"),
            dir.path().join("references/gemini-json-suffix.txt"),
        )
        .unwrap();
        let mut snapshot = snapshot();
        if let Some(schema) = schema {
            snapshot["schema"] = schema;
        }
        write_json(&dir.path().join("references/block-screen-output-schema.json"), &snapshot);
        std::fs::create_dir_all(dir.path().join("runs")).unwrap();
        Project { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The binary under `timeout`, in this project.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("timeout");
        cmd.args(["-k", "2", HANG, BIN]).args(args);
        cmd.current_dir(self.root()).env("PACKETPROOF_ROOT", self.root()).stdin(Stdio::null());
        // A clean environment, as `support::bin` gives (the developer's shell cannot leak in).
        cmd.env_remove("CI").env_remove("PACKETPROOF_BLESS");
        cmd
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.cmd(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start packetproof")
    }

    fn run(&self, args: &[&str]) -> Output {
        finish(self.spawn(args))
    }

    fn packet(&self, provider: &str, marker: &str) -> PathBuf {
        write_packet(self.root(), provider, marker)
    }

    #[track_caller]
    fn prepared(&self, provider: &str, name: &str) -> PathBuf {
        let packet = self.packet(provider, "a");
        let dir = self.root().join("runs").join(name);
        let out = self.run(&["prepare", "--packet", s(&packet), "--out-dir", s(&dir)]);
        assert_eq!(out.code, 0, "prepare: {}", out.all());
        dir
    }

    fn answered(&self, provider: &str, name: &str, output: &Value) -> PathBuf {
        let dir = self.prepared(provider, name);
        write_json(&dir.join("raw-output.json"), output);
        dir
    }

    #[track_caller]
    fn evaluated(&self, name: &str) -> PathBuf {
        let dir = self.answered("anthropic", name, &good_output());
        let out = self.run(&["evaluate", "--run-dir", s(&dir)]);
        assert_eq!(out.code, 0, "evaluate: {}", out.all());
        dir
    }

    fn complete_args<'a>(dir: &'a Path, task: &'a str, root: Option<&'a Path>) -> Vec<&'a str> {
        let mut args = vec!["complete", "--run-dir", s(dir), "--scenario", "hardening", "--run-id", "r1"];
        args.extend(["--agent-task", task, "--note", "Checked by hand."]);
        if let Some(root) = root {
            args.extend(["--runs-root", s(root)]);
        }
        args
    }

    fn complete(&self, dir: &Path, task: &str) -> Output {
        self.run(&Project::complete_args(dir, task, None))
    }

    #[track_caller]
    fn completed(&self, name: &str, task: &str) -> PathBuf {
        let dir = self.evaluated(name);
        let out = self.complete(&dir, task);
        assert_eq!(out.code, 0, "complete: {}", out.all());
        dir
    }
}

/// Every file under `root` with its bytes, except below `except`.
fn tree(root: &Path, except: &[&Path]) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.unwrap();
        if except.iter().any(|e| entry.path().starts_with(e)) {
            continue;
        }
        // Huge (sparse) inputs are compared by size only.
        let small = entry.metadata().is_ok_and(|m| m.len() <= 1 << 20);
        let bytes = match (entry.file_type().is_file(), small) {
            (true, true) => std::fs::read(entry.path()).unwrap(),
            (true, false) => entry.metadata().unwrap().len().to_le_bytes().to_vec(),
            _ => Vec::new(),
        };
        out.push((entry.path().to_path_buf(), bytes));
    }
    out
}

pub fn trials() -> Vec<Trial> {
    let mut trials = faults::trials();
    trials.extend(races::trials());
    trials.extend(verify::trials());
    trials.extend(inputs::trials());
    trials.extend(outputs::trials());
    trials.extend(secrets::trials());
    trials.extend(round5::trials());
    trials
}
