//! Hardening: faults, races and hostile input end cleanly and lose
//! nothing. One test per class of fault, through the built binary, one module
//! per group of classes. Every process runs under `timeout`
//! (`Project::under_timeout`), so a hang fails the test instead of stalling it;
//! concurrency tests start real processes at once and wait for all of them (no
//! sleeps). Unix only: FIFOs, device nodes, symlinks and closed pipes.

mod faults;
mod inputs;
mod outputs;
mod races;
mod round5;
mod secrets;
mod verify;

use crate::support::lifecycle::good_output;
use crate::support::{self, finish, read_json, write_json, Output, Project};
use libtest_mimic::Trial;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_packetproof");

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(rustix::fs::CWD, path, rustix::fs::FileType::Fifo, rustix::fs::Mode::from(0o644), 0).unwrap();
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
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
