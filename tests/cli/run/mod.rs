//! The run lifecycle through the CLI: prepare → evaluate → complete → verify, one
//! module per command, sharing the temporary project and packet builders here.
//!
//! Two kinds of tests:
//! - self-contained ones, on a temporary project root (this crate's harness.toml,
//!   a small schema snapshot written here, packets built and hashed here);
//! - interop ones, on the Node-made samples in `../shared/interop/` (read only,
//!   copied to temporary directories when a test needs to write). They print that
//!   are ignored, with the reason, when that folder is absent.

mod complete;
mod evaluate;
mod interop;
mod prepare;
mod verify;

use crate::support::{self, exec, Output};
use libtest_mimic::Trial;
use packetproof::{canonical, digest};

use serde_json::{json, Map, Value};

use std::path::{Path, PathBuf};

use std::process::Command;

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[track_caller]
fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, canonical::to_pretty(value)).unwrap();
}

/// A valid packet for `provider` written into the project at `root` (its own Google
/// suffix); `marker` makes packets differ.
pub(crate) fn write_packet(root: &Path, provider: &str, marker: &str) -> PathBuf {
    let suffix = std::fs::read_to_string(root.join("references/gemini-json-suffix.txt")).unwrap();
    let path = root.join(format!("packet-{provider}-{marker}.json"));
    write_json(&path, &build_packet(provider, marker, &suffix));
    path
}

/// A temporary project root: this crate's harness.toml and Google suffix, and a
/// small schema snapshot of our own.
struct Project {
    dir: support::Project,
}

impl Project {
    fn new() -> Project {
        let dir = support::Project::with(&["harness.toml", "references/gemini-json-suffix.txt"]);
        write_json(&dir.path("references/block-screen-output-schema.json"), &snapshot());
        // The corpus directories harness.toml names must exist (empty here).
        for folder in ["runs", "fixtures", "golden"] {
            std::fs::create_dir_all(dir.path(folder)).unwrap();
        }
        Project { dir }
    }

    fn root(&self) -> &Path {
        self.dir.root()
    }

    fn cmd(&self) -> Command {
        self.dir.bin()
    }

    fn run(&self, args: &[&str]) -> Output {
        exec(self.cmd().args(args))
    }

    /// A valid packet for `provider`; `marker` makes packets differ.
    fn packet(&self, provider: &str, marker: &str) -> PathBuf {
        write_packet(self.root(), provider, marker)
    }

    /// A prepared run directory under `runs/`.
    #[track_caller]
    fn prepared(&self, provider: &str, name: &str) -> PathBuf {
        let packet = self.packet(provider, "a");
        let dir = self.root().join("runs").join(name);
        let out = self.run(&["prepare", "--packet", s(&packet), "--out-dir", s(&dir)]);
        assert_eq!(out.code, 0, "prepare: {}{}", out.stdout, out.stderr);
        dir
    }

    /// A prepared run of a packet whose branch resolved `mode` (keeping the one
    /// evidence item or not), re-hashed.
    #[track_caller]
    fn with_evidence_mode(&self, mode: &str, keep_items: bool) -> PathBuf {
        let mut packet = build_packet("anthropic", mode, "");
        packet["resolvedBranch"]["evidenceMode"] = json!(mode);
        packet["renderInput"]["evidence"]["mode"] = json!(mode);
        packet["renderInput"]["evidence"]["requestedMode"] = json!(mode);
        if !keep_items {
            packet["renderInput"]["evidence"]["items"] = json!([]);
        }
        digest::seal(packet.as_object_mut().unwrap());
        let file = self.root().join(format!("packet-{mode}.json"));
        write_json(&file, &packet);
        let dir = self.root().join("runs").join(mode);
        assert_eq!(self.run(&["prepare", "--packet", s(&file), "--out-dir", s(&dir)]).code, 0);
        dir
    }

    /// A prepared run with `output` as its raw output.
    fn answered(&self, provider: &str, name: &str, output: &Value) -> PathBuf {
        let dir = self.prepared(provider, name);
        write_json(&dir.join("raw-output.json"), output);
        dir
    }

    /// Evaluate `dir`; returns the exit code and evaluation.json.
    #[track_caller]
    fn evaluate(&self, dir: &Path) -> (i32, Value) {
        let out = self.run(&["evaluate", "--run-dir", s(dir)]);
        assert!(out.code == 0 || out.code == 1, "evaluate: {}{}", out.stdout, out.stderr);
        (out.code, read_json(&dir.join("evaluation.json")))
    }

    /// Evaluate `dir`, which must fail (exit 1), its whole report the snapshot `name`;
    /// returns evaluation.json.
    #[track_caller]
    fn evaluate_failing(&self, name: &str, dir: &Path) -> Value {
        let out = self.run(&["evaluate", "--run-dir", s(dir)]);
        assert_eq!(out.code, 1, "{}", out.describe());
        assert_output_snapshot!(name, out, self.root());
        read_json(&dir.join("evaluation.json"))
    }

    fn complete(&self, dir: &Path, task: &str) -> Output {
        self.run(&[
            "complete",
            "--run-dir",
            s(dir),
            "--scenario",
            "lifecycle",
            "--run-id",
            "r1",
            "--agent-task",
            task,
            "--note",
            "Checked by hand.",
        ])
    }
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

pub(crate) fn snapshot() -> Value {
    let action = json!({"type": "object", "required": ["kind", "edges"], "properties": {
        "kind": {"type": "string", "enum": ["advance", "retreat", "complete", "noop", "purchase"]},
        "edges": {"type": "array", "items": {"type": "object", "required": ["nextScreenId"],
            "properties": {"nextScreenId": {"type": "string"}}}}}});
    let open = json!({});
    let items = |keys: &[&str]| {
        let props: Map<String, Value> = keys.iter().map(|k| (k.to_string(), json!({}))).collect();
        json!({"type": "array", "items": {"type": "object", "properties": props}})
    };
    let screen = json!({"type": "object", "required": ["id", "screenType", "content"],
        "properties": {"id": {"type": "string"}, "name": open, "screenType": open,
            "content": {"type": "object", "properties": {"copy": open, "actionBar": {"type": "object",
                "properties": {"primary": {"type": "object", "properties": {"action": action}}}}}},
            "aiMeta": {"type": "object", "properties": {"blockRole": open, "motivationSpec": open,
                "dataMapping": items(&["sourcePath", "value", "justification"]),
                "assetIntents": items(&["slotRole", "supportsContentPath", "linkedSourceRefs"]),
                "variableRealizations": items(&["variableId", "realizationKind", "contentPath"])}}}});
    let block = json!({"type": "object",
        "required": ["id", "name", "blockType", "firstScreenId", "screens", "instructions", "dataUsage"],
        "properties": {
            "id": {"type": "string"}, "name": {"type": "string"}, "blockType": {"type": "string"},
            "firstScreenId": {"type": "string"},
            "instructions": {"type": "array", "items": {"type": "object", "required": ["text"]}},
            "dataUsage": {"type": "object", "required": ["items"]},
            "screens": {"type": "array", "items": screen}}});
    let sequence = json!({"type": "array", "minItems": 1, "maxItems": 1, "items": block});
    json!({
        "name": "submit_block",
        "description": "One adapted block in the result envelope.",
        "schema": {"type": "object", "required": ["result"], "properties": {"result": {
            "type": "object", "required": ["onboardingStrategySequence"],
            "properties": {"onboardingStrategySequence": sequence}}}}
    })
}

pub(crate) fn build_packet(provider: &str, marker: &str, suffix: &str) -> Value {
    let google = provider == "google";
    let user = format!("Adapt the proof block for its new place ({marker}).");
    let mut p = Map::new();
    let fields = json!({
        "packetVersion": 1, "agentId": "updateBlockFromLibrary", "taskType": "block-update",
        "promptMode": "library-adapt", "attempt": 1, "provider": provider, "model": "test-model", "maxTokens": 4096,
        "promptPaths": ["system.md"], "promptVersions": {"system.md": digest::sha256(b"system")},
        "systemPrompt": "You adapt one library block to its target placement.",
        "userMessage": user,
        "effectiveUserMessage": if google { format!("{user}{suffix}") } else { user.clone() },
        "renderInput": {
            "promptMode": "library-adapt",
            "sourceExample": {"scope": "project", "blueprint": {"assetExamples": [{"slotKey": "hero", "assetType": "image"}]}},
            "target": {"blockId": "block-7", "blockName": "Proof bridge", "blockType": "motivation"},
            "evidence": {"requestedMode": "selected-only", "mode": "selected-only", "items": [
                {"kind": "review", "id": "rev-1", "accessible": true,
                 "value": {"description": "Short sessions work.", "sourcePath": "@review[rev-1]"}}]}
        },
        "resolvedBranch": {"agentId": "updateBlockFromLibrary", "insertionMode": "staged", "sourceScope": "project",
            "evidenceMode": "selected-only", "neighbours": "none", "hasVariableConflicts": false,
            "hasAssetIntents": true, "hasTargetTheme": false, "operatorInstructionPresent": false}
    });
    p.extend(fields.as_object().unwrap().clone());
    if !google {
        p.insert("outputSchema".into(), snapshot());
    }
    digest::seal(&mut p);
    Value::Object(p)
}

pub(crate) fn screen(id: &str, action: Value) -> Value {
    json!({"id": id, "screenType": "HeroContent",
        "content": {"copy": {"title": "Small steps count"}, "actionBar": {"primary": {"label": "Next", "action": action}}},
        "aiMeta": {"blockRole": "proof",
            "dataMapping": [{"sourcePath": "@review[rev-1]", "value": "Short sessions work.", "justification": "Grounds the title."}],
            "assetIntents": [{"slotRole": "hero", "supportsContentPath": "content.copy.title", "linkedSourceRefs": ["@review[rev-1]"]}]}})
}

/// A valid answer: two screens, the first advancing to the second, which completes.
pub(crate) fn good_output() -> Value {
    json!({"result": {"onboardingStrategySequence": [{
    "id": "block-7", "name": "Proof bridge", "blockType": "motivation", "firstScreenId": "s1",
    "description": "One grounded proof before the plan.",
    "instructions": [{"level": "mustHave", "text": "Use only the selected review."},
                     {"level": "should", "text": "Keep every screen short."}],
    "blockContract": {"inputVariables": [], "outputAssignment": []},
    "dataUsage": {"items": [{"sourcePath": "@review[rev-1]", "value": "Short sessions work.", "justification": "The one claim."}]},
    "screens": [
        screen("s1", json!({"kind": "advance", "edges": [{"nextScreenId": "s2"}]})),
        screen("s2", json!({"kind": "complete", "edges": []}))
    ]}]}})
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
    let project = Project::new();
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
