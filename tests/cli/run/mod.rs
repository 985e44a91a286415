//! The run lifecycle through the CLI: prepare → evaluate → complete → verify, one
//! module per command, on the temporary projects and packets of `support::lifecycle`.
//!
//! Two kinds of tests:
//! - self-contained ones, on a temporary project root (`Project::lifecycle`: this
//!   crate's harness.toml, a small schema snapshot, packets built and hashed there);
//! - interop ones, on the Node-made samples in `../shared/interop/` (read only,
//!   copied to temporary directories when a test needs to write). They print that
//!   are ignored, with the reason, when that folder is absent.

mod complete;
mod evaluate;
mod interop;
mod prepare;
mod verify;

use crate::support::lifecycle::{self, build_packet, good_output};
use crate::support::{self, exec, read_json, write_json, Project};
use libtest_mimic::Trial;
use packetproof::{canonical, digest};

use serde_json::{json, Value};

use std::path::{Path, PathBuf};

use std::process::Command;

/// Evaluate `dir`, which must fail (exit 1), its whole report the snapshot `name`;
/// returns evaluation.json.
#[track_caller]
fn evaluate_failing(project: &Project, name: &str, dir: &Path) -> Value {
    let out = project.run(&["evaluate", "--run-dir", s(dir)]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert_output_snapshot!(name, out, project.root());
    read_json(&dir.join("evaluation.json"))
}

/// A prepared run of a packet whose branch resolved `mode` (keeping the one evidence
/// item or not), re-hashed.
#[track_caller]
fn with_evidence_mode(project: &Project, mode: &str, keep_items: bool) -> PathBuf {
    let mut packet = build_packet("anthropic", mode, "");
    packet["resolvedBranch"]["evidenceMode"] = json!(mode);
    packet["renderInput"]["evidence"]["mode"] = json!(mode);
    packet["renderInput"]["evidence"]["requestedMode"] = json!(mode);
    if !keep_items {
        packet["renderInput"]["evidence"]["items"] = json!([]);
    }
    digest::seal(packet.as_object_mut().unwrap());
    let file = project.path(&format!("packet-{mode}.json"));
    write_json(&file, &packet);
    let dir = project.path("runs").join(mode);
    assert_eq!(project.run(&["prepare", "--packet", s(&file), "--out-dir", s(&dir)]).code, 0);
    dir
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn block(output: &mut Value) -> &mut Value {
    &mut output["result"]["onboardingStrategySequence"][0]
}

fn stages(evaluation: &Value) -> Vec<String> {
    evaluation["failures"].as_array().unwrap().iter().map(|f| f["stage"].as_str().unwrap().to_owned()).collect()
}

fn messages(evaluation: &Value) -> String {
    evaluation["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("[{}] {}\n", f["stage"].as_str().unwrap(), f["message"].as_str().unwrap()))
        .collect()
}

/// Evaluate a bad answer and return the evaluation; it must fail (exit 1), and its
/// whole report is the snapshot `name`.
#[track_caller]
fn failing(name: &str, output: Value) -> Value {
    let project = Project::lifecycle();
    let dir = project.answered("anthropic", "run", &output);
    let out = project.run(&["evaluate", "--run-dir", s(&dir)]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert_output_snapshot!(name, out, project.root());
    let evaluation = read_json(&dir.join("evaluation.json"));
    assert_eq!(evaluation["ok"], json!(false));
    evaluation
}

// ---------------------------------------------------------------- interop (Node-made)

const SUFFIX_ARG: &str = "--google-suffix-file=../shared/interop/google-suffix.txt";

/// The binary running `command` with the interop samples' Google suffix (the
/// option belongs to the subcommand, so it follows it).
fn interop_cmd(command: &str) -> Command {
    let mut cmd = support::bin();
    // The reference's samples carry generator prompts in asset examples: noted, not failed.
    cmd.args([command, SUFFIX_ARG, "--asset-example-prompts=warn"]);
    cmd
}

fn copy_dir(from: &Path, to: &Path, skip: &[&str]) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if !skip.iter().any(|s| name == *s) {
            std::fs::write(to.join(&name), std::fs::read(entry.path()).unwrap()).unwrap();
        }
    }
}

pub fn trials() -> Vec<Trial> {
    let mut trials = prepare::trials();
    trials.extend(evaluate::trials());
    trials.extend(complete::trials());
    trials.extend(verify::trials());
    trials.extend(interop::trials());
    trials
}
