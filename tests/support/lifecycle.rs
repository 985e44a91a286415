//! The run lifecycle's temporary projects (prepare → evaluate → complete), shared by the
//! CLI's run and hardening tests: a project root with this crate's harness.toml and
//! Google suffix and a small schema snapshot of its own, and valid packets and answers
//! built and hashed here.

use super::{read_json, write_json, Output, Project};
use packetproof::digest;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

impl Project {
    /// A project root for the run commands: this crate's harness.toml and Google
    /// suffix, the schema snapshot [`snapshot`], and empty runs, fixtures and golden folders.
    #[track_caller]
    pub fn lifecycle() -> Project {
        Project::lifecycle_with_schema(None)
    }

    /// [`Project::lifecycle`] with `schema` as the snapshot's JSON Schema.
    #[track_caller]
    pub fn lifecycle_with_schema(schema: Option<Value>) -> Project {
        let project = Project::with(&["harness.toml", "references/gemini-json-suffix.txt"]);
        let mut snapshot = snapshot();
        if let Some(schema) = schema {
            snapshot["schema"] = schema;
        }
        write_json(&project.path("references/block-screen-output-schema.json"), &snapshot);
        // The corpus folders harness.toml names must exist (empty here).
        for folder in ["runs", "fixtures", "golden"] {
            std::fs::create_dir_all(project.path(folder)).unwrap();
        }
        project
    }

    /// A valid packet for `provider`; `marker` makes packets differ.
    pub fn packet(&self, provider: &str, marker: &str) -> PathBuf {
        write_packet(self.root(), provider, marker)
    }

    /// A prepared run directory `runs/<name>`.
    #[track_caller]
    pub fn prepared(&self, provider: &str, name: &str) -> PathBuf {
        let packet = self.packet(provider, "a");
        let dir = self.path("runs").join(name);
        let out = self.run(&["prepare", "--packet", s(&packet), "--out-dir", s(&dir)]);
        assert_eq!(out.code, 0, "prepare: {}", out.describe());
        dir
    }

    /// A prepared run with `output` as its raw output.
    #[track_caller]
    pub fn answered(&self, provider: &str, name: &str, output: &Value) -> PathBuf {
        let dir = self.prepared(provider, name);
        write_json(&dir.join("raw-output.json"), output);
        dir
    }

    /// Evaluate `dir`, which must pass or fail (exit 0 or 1); the exit code and evaluation.json.
    #[track_caller]
    pub fn evaluate(&self, dir: &Path) -> (i32, Value) {
        let out = self.run(&["evaluate", "--run-dir", s(dir)]);
        assert!(out.code == 0 || out.code == 1, "evaluate: {}", out.describe());
        (out.code, read_json(&dir.join("evaluation.json")))
    }

    /// A run of [`good_output`] for Anthropic, evaluated (passing).
    #[track_caller]
    pub fn evaluated(&self, name: &str) -> PathBuf {
        let dir = self.answered("anthropic", name, &good_output());
        assert_eq!(self.evaluate(&dir).0, 0, "evaluate");
        dir
    }

    /// `complete`'s arguments for the run `dir` (with `--runs-root` when `root` is given).
    pub fn complete_args<'a>(dir: &'a Path, task: &'a str, root: Option<&'a Path>) -> Vec<&'a str> {
        let mut args = vec!["complete", "--run-dir", s(dir), "--scenario", "lifecycle", "--run-id", "r1"];
        args.extend(["--agent-task", task, "--note", "Checked by hand."]);
        if let Some(root) = root {
            args.extend(["--runs-root", s(root)]);
        }
        args
    }

    /// Complete the run `dir` as the agent task `task`.
    pub fn complete(&self, dir: &Path, task: &str) -> Output {
        self.run(&Project::complete_args(dir, task, None))
    }

    /// [`Project::evaluated`], then completed as `task`.
    #[track_caller]
    pub fn completed(&self, name: &str, task: &str) -> PathBuf {
        let dir = self.evaluated(name);
        let out = self.complete(&dir, task);
        assert_eq!(out.code, 0, "complete: {}", out.describe());
        dir
    }
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A valid packet for `provider` written into the project at `root` (its own Google
/// suffix); `marker` makes packets differ.
pub fn write_packet(root: &Path, provider: &str, marker: &str) -> PathBuf {
    let suffix = std::fs::read_to_string(root.join("references/gemini-json-suffix.txt")).unwrap();
    let path = root.join(format!("packet-{provider}-{marker}.json"));
    write_json(&path, &build_packet(provider, marker, &suffix));
    path
}

pub fn snapshot() -> Value {
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

pub fn build_packet(provider: &str, marker: &str, suffix: &str) -> Value {
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

pub fn screen(id: &str, action: Value) -> Value {
    json!({"id": id, "screenType": "HeroContent",
        "content": {"copy": {"title": "Small steps count"}, "actionBar": {"primary": {"label": "Next", "action": action}}},
        "aiMeta": {"blockRole": "proof",
            "dataMapping": [{"sourcePath": "@review[rev-1]", "value": "Short sessions work.", "justification": "Grounds the title."}],
            "assetIntents": [{"slotRole": "hero", "supportsContentPath": "content.copy.title", "linkedSourceRefs": ["@review[rev-1]"]}]}})
}

/// A valid answer: two screens, the first advancing to the second, which completes.
pub fn good_output() -> Value {
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
