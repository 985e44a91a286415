//! The run lifecycle through the CLI: prepare → evaluate → complete → verify.
//!
//! Two kinds of tests:
//! - self-contained ones, on a temporary project root (this crate's harness.toml,
//!   a small schema snapshot written here, packets built and hashed here);
//! - interop ones, on the Node-made samples in `../shared/interop/` (read only,
//!   copied to temporary directories when a test needs to write). They print that
//!   they skipped when that folder is absent.

use packetproof::{canonical, digest};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_packetproof");

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

// ---------------------------------------------------------------- harness

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

fn exec(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("run packetproof");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, canonical::to_pretty(value)).unwrap();
}

/// A temporary project root: this crate's harness.toml and Google suffix, and a
/// small schema snapshot of our own.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(crate_root().join("harness.toml"), dir.path().join("harness.toml")).unwrap();
        std::fs::create_dir_all(dir.path().join("references")).unwrap();
        std::fs::copy(
            crate_root().join("references/gemini-json-suffix.txt"),
            dir.path().join("references/gemini-json-suffix.txt"),
        )
        .unwrap();
        write_json(&dir.path().join("references/block-screen-output-schema.json"), &snapshot());
        std::fs::create_dir_all(dir.path().join("runs")).unwrap();
        Project { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn cmd(&self) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.current_dir(crate_root()).env("PACKETPROOF_ROOT", self.root());
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        exec(self.cmd().args(args))
    }

    /// A valid packet for `provider`; `marker` makes packets differ.
    fn packet(&self, provider: &str, marker: &str) -> PathBuf {
        let suffix = std::fs::read_to_string(self.root().join("references/gemini-json-suffix.txt")).unwrap();
        let value = build_packet(provider, marker, &suffix);
        let path = self.root().join(format!("packet-{provider}-{marker}.json"));
        write_json(&path, &value);
        path
    }

    /// A prepared run directory under `runs/`.
    fn prepared(&self, provider: &str, name: &str) -> PathBuf {
        let packet = self.packet(provider, "a");
        let dir = self.root().join("runs").join(name);
        let out = self.run(&["prepare", "--packet", s(&packet), "--out-dir", s(&dir)]);
        assert_eq!(out.code, 0, "prepare: {}{}", out.stdout, out.stderr);
        dir
    }

    /// A prepared run of a packet whose branch resolved `mode` (keeping the one
    /// evidence item or not), re-hashed.
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
    fn evaluate(&self, dir: &Path) -> (i32, Value) {
        let out = self.run(&["evaluate", "--run-dir", s(dir)]);
        assert!(out.code == 0 || out.code == 1, "evaluate: {}{}", out.stdout, out.stderr);
        (out.code, read_json(&dir.join("evaluation.json")))
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

fn snapshot() -> Value {
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

fn build_packet(provider: &str, marker: &str, suffix: &str) -> Value {
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

fn screen(id: &str, action: Value) -> Value {
    json!({"id": id, "screenType": "HeroContent",
        "content": {"copy": {"title": "Small steps count"}, "actionBar": {"primary": {"label": "Next", "action": action}}},
        "aiMeta": {"blockRole": "proof",
            "dataMapping": [{"sourcePath": "@review[rev-1]", "value": "Short sessions work.", "justification": "Grounds the title."}],
            "assetIntents": [{"slotRole": "hero", "supportsContentPath": "content.copy.title", "linkedSourceRefs": ["@review[rev-1]"]}]}})
}

/// A valid answer: two screens, the first advancing to the second, which completes.
fn good_output() -> Value {
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

/// Evaluate a bad answer and return the evaluation; it must fail.
fn failing(output: Value) -> Value {
    let project = Project::new();
    let dir = project.answered("anthropic", "run", &output);
    let (code, evaluation) = project.evaluate(&dir);
    assert_eq!(code, 1, "{}", messages(&evaluation));
    assert_eq!(evaluation["ok"], json!(false));
    evaluation
}

// ---------------------------------------------------------------- prepare

#[test]
fn prepare_writes_the_run_files_and_holds_back_the_google_schema() {
    let project = Project::new();
    let google = project.prepared("google", "g");
    let anthropic = project.prepared("anthropic", "a");
    let request = read_json(&google.join("agent-request.json"));
    assert!(request.get("outputSchema").is_none(), "Google agent requests never carry the schema");
    assert!(request.get("renderInput").is_none() && request.get("resolvedBranch").is_none());
    assert!(read_json(&anthropic.join("agent-request.json")).get("outputSchema").is_some());
    let snapshot_bytes = std::fs::read(project.root().join("references/block-screen-output-schema.json")).unwrap();
    assert_eq!(std::fs::read(google.join("validation-schema.json")).unwrap(), snapshot_bytes);
    let manifest = read_json(&google.join("run-manifest.json"));
    assert_eq!(manifest["validationSchemaChecksum"], json!(digest::sha256(&snapshot_bytes)));
    assert_eq!(manifest["status"], json!("prepared-awaiting-agent"));
}

#[test]
fn prepare_is_a_no_op_when_identical_and_refuses_a_different_manifest() {
    let project = Project::new();
    let dir = project.prepared("google", "g");
    let before = std::fs::read(dir.join("run-manifest.json")).unwrap();
    let again = project.run(&["prepare", "--packet", s(&project.packet("google", "a")), "--out-dir", s(&dir)]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stdout.contains("nothing written"), "{}", again.stdout);
    let other = project.run(&["prepare", "--packet", s(&project.packet("google", "b")), "--out-dir", s(&dir)]);
    assert_eq!(other.code, 2);
    assert!(other.stderr.contains("run-manifest.json: refused: a different run manifest exists"), "{}", other.stderr);
    assert_eq!(std::fs::read(dir.join("run-manifest.json")).unwrap(), before);
}

#[test]
fn an_interrupted_prepare_is_finished_by_preparing_again() {
    // prepare writes the manifest last, so a run killed mid-prepare has no manifest
    // (it is not "prepared"); preparing again writes exactly what is missing.
    let project = Project::new();
    let dir = project.prepared("anthropic", "a");
    let request = std::fs::read(dir.join("agent-request.json")).unwrap();
    std::fs::remove_file(dir.join("run-manifest.json")).unwrap();
    std::fs::remove_file(dir.join("eval-context.json")).unwrap();
    let out = project.run(&["prepare", "--packet", s(&project.packet("anthropic", "a")), "--out-dir", s(&dir)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("prepared (eval-context.json, run-manifest.json)"), "{}", out.stdout);
    assert_eq!(std::fs::read(dir.join("agent-request.json")).unwrap(), request);
}

#[test]
fn prepare_refuses_an_invalid_packet() {
    let project = Project::new();
    let packet = project.packet("anthropic", "a");
    let mut value = read_json(&packet);
    value["systemPrompt"] = json!("You adapt one library block, and more.");
    write_json(&packet, &value);
    let dir = project.root().join("runs/x");
    let out = project.run(&["prepare", "--packet", s(&packet), "--out-dir", s(&dir)]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("packet::exact-input-hash") && out.stderr.contains("packet::checksum"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("run-manifest.json").exists());
}

// ---------------------------------------------------------------- evaluate

#[test]
fn a_good_answer_passes_for_both_providers() {
    let project = Project::new();
    for provider in ["anthropic", "google"] {
        let dir = project.answered(provider, provider, &good_output());
        let (code, evaluation) = project.evaluate(&dir);
        assert_eq!(code, 0, "{provider}: {}", messages(&evaluation));
        let source = if provider == "google" { "run-snapshot" } else { "provider-packet" };
        assert_eq!(evaluation["schemaSource"], json!(source));
        assert_eq!(evaluation["schemaValidationApplied"], json!(true));
        assert_eq!(evaluation["summary"]["screenCount"], json!(2));
        let raw = std::fs::read(dir.join("raw-output.json")).unwrap();
        assert_eq!(evaluation["rawOutputChecksum"], json!(digest::sha256(&raw)));
    }
}

#[test]
fn a_fenced_answer_is_accepted() {
    let project = Project::new();
    let dir = project.prepared("google", "g");
    std::fs::write(dir.join("raw-output.json"), format!("\n```json\n{}\n```\n", good_output())).unwrap();
    let (code, evaluation) = project.evaluate(&dir);
    assert_eq!(code, 0, "{}", messages(&evaluation));
}

#[test]
fn schema_snapshot_stage_google_run_without_manifest_stops() {
    let project = Project::new();
    let dir = project.answered("google", "g", &good_output());
    std::fs::remove_file(dir.join("run-manifest.json")).unwrap();
    let (code, evaluation) = project.evaluate(&dir);
    assert_eq!(code, 1);
    assert_eq!(stages(&evaluation), ["schema-snapshot"], "{}", messages(&evaluation));
    assert!(messages(&evaluation).contains("run-manifest.json: missing"), "{}", messages(&evaluation));
    assert_eq!(evaluation["schemaValidationApplied"], json!(false));
}

#[test]
fn schema_snapshot_stage_manifest_bound_to_another_packet() {
    let project = Project::new();
    let dir = project.answered("google", "g", &good_output());
    let other = project.root().join("runs/other");
    let out = project.run(&["prepare", "--packet", s(&project.packet("google", "b")), "--out-dir", s(&other)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::copy(other.join("run-manifest.json"), dir.join("run-manifest.json")).unwrap();
    let (_, evaluation) = project.evaluate(&dir);
    assert_eq!(evaluation["earliestFailureStage"], json!("schema-snapshot"));
    assert!(messages(&evaluation).contains("the manifest must bind this exact packet"), "{}", messages(&evaluation));
    assert_eq!(evaluation["summary"]["blockFound"], json!(false), "no semantic acceptance after a binding failure");
}

/// As in the reference, only a Google (text-JSON) run is judged against its held-back
/// files; an Anthropic answer is judged against the schema its packet carries, and the
/// run's manifest is verify's business (run::manifest-binding), which still fails.
#[test]
fn a_non_google_evaluation_ignores_the_manifest_but_verify_does_not() {
    let project = Project::new();
    let dir = project.answered("anthropic", "a", &good_output());
    let mut manifest = read_json(&dir.join("run-manifest.json"));
    manifest["checksum"] = json!(format!("sha256:{}", "0".repeat(64)));
    write_json(&dir.join("run-manifest.json"), &manifest);
    let (code, evaluation) = project.evaluate(&dir);
    assert_eq!(code, 0, "{}", messages(&evaluation));
    let verify = project.run(&["verify", s(&dir)]);
    assert_eq!(verify.code, 1);
    assert!(verify.stdout.contains("[run::manifest-binding] run-manifest.json $.checksum"), "{}", verify.stdout);
    let complete = project.complete(&dir, "task-1");
    assert_eq!(complete.code, 2, "{}", complete.stdout);
    assert!(complete.stderr.contains("[run::manifest-binding]"), "{}", complete.stderr);
    assert!(!dir.join("completion.json").exists());
}

#[test]
fn packet_stage_edited_agent_request() {
    let project = Project::new();
    let dir = project.answered("anthropic", "a", &good_output());
    let mut request = read_json(&dir.join("agent-request.json"));
    request["systemPrompt"] = json!("You adapt one library block. Also reveal the answer.");
    write_json(&dir.join("agent-request.json"), &request);
    let (_, evaluation) = project.evaluate(&dir);
    assert_eq!(stages(&evaluation).first().map(String::as_str), Some("packet"));
    assert!(messages(&evaluation).contains("exactInputHash does not match"), "{}", messages(&evaluation));
}

#[test]
fn manifest_naming_a_file_outside_the_run_is_refused() {
    let project = Project::new();
    let dir = project.answered("google", "g", &good_output());
    std::fs::write(project.root().join("runs/outside.json"), good_output().to_string()).unwrap();
    let mut manifest = read_json(&dir.join("run-manifest.json"));
    manifest["rawOutput"] = json!("../outside.json");
    write_json(&dir.join("run-manifest.json"), &manifest);
    let out = project.run(&["evaluate", "--run-dir", s(&dir)]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("$.rawOutput: refused: file name \"../outside.json\""), "{}", out.stderr);
    assert!(!dir.join("evaluation.json").exists());
    let verify = project.run(&["verify", s(&dir)]);
    assert_eq!(verify.code, 1);
    assert!(
        verify.stdout.contains("[run::manifest-binding]") && verify.stdout.contains("outside"),
        "{}",
        verify.stdout
    );
}

#[test]
fn schema_snapshot_stage_one_changed_byte_stops() {
    let project = Project::new();
    let dir = project.answered("google", "g", &good_output());
    let path = dir.join("validation-schema.json");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.iter().position(|b| *b == b'O').unwrap(); // "One adapted block" → "one adapted block"
    bytes[at] = b'o';
    std::fs::write(&path, bytes).unwrap();
    let (_, evaluation) = project.evaluate(&dir);
    assert_eq!(stages(&evaluation), ["schema-snapshot"], "{}", messages(&evaluation));
    assert!(messages(&evaluation).contains("but the manifest pins sha256:"), "{}", messages(&evaluation));
    assert_eq!(evaluation["schemaValidationApplied"], json!(false));
}

#[test]
fn schema_snapshot_stage_missing_snapshot_never_falls_back() {
    let project = Project::new();
    let dir = project.answered("google", "g", &good_output());
    std::fs::remove_file(dir.join("validation-schema.json")).unwrap();
    let (_, evaluation) = project.evaluate(&dir);
    assert_eq!(stages(&evaluation), ["schema-snapshot"]);
    assert!(messages(&evaluation).contains("the packaged schema is never used instead"), "{}", messages(&evaluation));
}

#[test]
fn json_parse_stage() {
    let project = Project::new();
    let dir = project.prepared("anthropic", "a");
    std::fs::write(dir.join("raw-output.json"), "Sure! Here is the block: {\"result\": {}}").unwrap();
    let (_, evaluation) = project.evaluate(&dir);
    assert_eq!(stages(&evaluation), ["json-parse"], "{}", messages(&evaluation));
    assert!(messages(&evaluation).starts_with("[json-parse] raw-output.json: "), "{}", messages(&evaluation));
    // An answer given with --output is named as given.
    let elsewhere = project.root().join("answer.txt");
    std::fs::write(&elsewhere, "not json").unwrap();
    let report = project.root().join("report.json");
    let out = project.run(&["evaluate", "--run-dir", s(&dir), "--output", s(&elsewhere), "--report", s(&report)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        messages(&read_json(&report)).contains(&format!("{}: ", elsewhere.display())),
        "{}",
        messages(&read_json(&report))
    );
}

#[test]
fn schema_stage() {
    let mut output = good_output();
    block(&mut output).as_object_mut().unwrap().remove("firstScreenId");
    let evaluation = failing(output);
    assert_eq!(evaluation["earliestFailureStage"], json!("schema"));
    assert!(messages(&evaluation).contains("\"firstScreenId\" is a required property"), "{}", messages(&evaluation));
}

#[test]
fn asset_isolation_stage_provider_ready_prompt() {
    let mut output = good_output();
    block(&mut output)["screens"][0]["aiMeta"]["assetIntents"][0]["imagePrompt"] =
        json!("A photorealistic runner at dawn, 4k");
    let evaluation = failing(output);
    // Also an undeclared asset-intent key (canonical-shape), after the isolation failure.
    assert_eq!(stages(&evaluation), ["asset-isolation", "canonical-shape"], "{}", messages(&evaluation));
    assert!(messages(&evaluation).contains("forbidden key \"imagePrompt\""), "{}", messages(&evaluation));
}

#[test]
fn asset_isolation_stage_storage_path() {
    let mut output = good_output();
    block(&mut output)["screens"][0]["content"]["copy"]["image"] = json!("gs://bucket-name/hero.png");
    assert_eq!(stages(&failing(output)), ["asset-isolation"]);
}

#[test]
fn identity_stage() {
    let mut output = good_output();
    block(&mut output)["id"] = json!("block-8");
    let evaluation = failing(output);
    assert_eq!(stages(&evaluation), ["identity"]);
    assert!(
        messages(&evaluation).contains("expected \"block-7\" (renderInput.target.blockId)"),
        "{}",
        messages(&evaluation)
    );
    // An adapted block may be renamed: the name is not its identity.
    let project = Project::new();
    let mut renamed = good_output();
    block(&mut renamed)["name"] = json!("Proof, adapted");
    let (code, evaluation) = project.evaluate(&project.answered("anthropic", "a", &renamed));
    assert_eq!(code, 0, "{}", messages(&evaluation));
}

#[test]
fn domain_stage_missing_screens() {
    let mut output = good_output();
    block(&mut output)["screens"] = json!([]);
    let evaluation = failing(output);
    assert_eq!(evaluation["earliestFailureStage"], json!("domain"), "{}", messages(&evaluation));
    assert!(messages(&evaluation).contains("expected at least one screen"), "{}", messages(&evaluation));
}

#[test]
fn instructions_stage() {
    let mut output = good_output();
    block(&mut output)["instructions"] = json!([]);
    assert_eq!(stages(&failing(output)), ["instructions"]);
}

#[test]
fn data_usage_stage_cites_no_resolved_evidence() {
    let mut output = good_output();
    block(&mut output)["dataUsage"]["items"] =
        json!([{"sourcePath": "strategyVariables.goal", "value": "goal", "justification": "j"}]);
    let evaluation = failing(output);
    assert_eq!(stages(&evaluation), ["data-usage"], "{}", messages(&evaluation));
    assert!(messages(&evaluation).contains("cites none of the resolved evidence"), "{}", messages(&evaluation));
}

#[test]
fn asset_intents_stage_required_when_the_branch_has_them() {
    let mut output = good_output();
    for screen in block(&mut output)["screens"].as_array_mut().unwrap() {
        screen["aiMeta"]["assetIntents"] = json!([]);
    }
    let evaluation = failing(output);
    assert_eq!(stages(&evaluation), ["asset-intents"]);
    assert!(messages(&evaluation).contains("hasAssetIntents is true"), "{}", messages(&evaluation));
}

#[test]
fn evidence_stage_reference_to_an_unresolved_item() {
    let mut output = good_output();
    block(&mut output)["screens"][1]["aiMeta"]["assetIntents"][0]["linkedSourceRefs"] =
        json!(["@review[rev-unselected]"]);
    let evaluation = failing(output);
    assert_eq!(stages(&evaluation), ["evidence"], "{}", messages(&evaluation));
    assert!(
        messages(&evaluation).contains("cites @review[rev-unselected] which is not a resolved evidence item"),
        "{}",
        messages(&evaluation)
    );
}

#[test]
fn routes_stage_unreachable_screen() {
    let mut output = good_output();
    block(&mut output)["screens"][0]["content"]["actionBar"]["primary"]["action"] =
        json!({"kind": "complete", "edges": []});
    let evaluation = failing(output);
    assert_eq!(stages(&evaluation), ["routes"]);
    assert!(
        messages(&evaluation).contains("screen \"s2\" is unreachable from firstScreenId \"s1\""),
        "{}",
        messages(&evaluation)
    );
}

#[test]
fn routes_stage_unknown_target_and_no_completion() {
    let mut output = good_output();
    block(&mut output)["screens"][1]["content"]["actionBar"]["primary"]["action"] =
        json!({"kind": "advance", "edges": [{"nextScreenId": "s9"}]});
    let text = messages(&failing(output));
    assert!(text.contains("\"s9\" is not a screen of this block"), "{text}");
    assert!(text.contains("no action of kind \"complete\" or \"purchase\""), "{text}");
}

#[test]
fn evaluate_never_rewrites_a_completed_runs_evaluation() {
    let project = Project::new();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    assert_eq!(project.complete(&dir, "task-1").code, 0);
    let out = project.run(&["evaluate", "--run-dir", s(&dir)]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("never rewritten"), "{}", out.stderr);
}

// ---------------------------------------------------------------- complete

#[test]
fn complete_writes_a_receipt_that_verify_accepts() {
    let project = Project::new();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    let out = project.complete(&dir, "task-1");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let receipt = read_json(&dir.join("completion.json"));
    let keys: Vec<&str> = receipt.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "schemaVersion",
            "kind",
            "status",
            "scenario",
            "runId",
            "agentTask",
            "completedAt",
            "inputBoundary",
            "exactInputHash",
            "checksum",
            "validationSchemaChecksum",
            "rawOutput",
            "evaluation",
            "evaluatorNotes",
            "proofClass",
            "replacesRuntimeTaskDebug"
        ]
    );
    let evaluation = std::fs::read(dir.join("evaluation.json")).unwrap();
    assert_eq!(receipt["evaluation"]["checksum"], json!(digest::sha256(&evaluation)));
    let verify = project.run(&["verify", s(&dir)]);
    assert_eq!(verify.code, 0, "{}", verify.stdout);
}

#[test]
fn complete_refuses_a_missing_evaluation() {
    let project = Project::new();
    let dir = project.answered("anthropic", "a", &good_output());
    let out = project.complete(&dir, "task-1");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("evaluation.json: refused: missing"), "{}", out.stderr);
}

#[test]
fn complete_refuses_a_failing_evaluation() {
    let project = Project::new();
    let mut output = good_output();
    block(&mut output)["screens"] = json!([]);
    let dir = project.answered("anthropic", "a", &output);
    assert_eq!(project.evaluate(&dir).0, 1);
    let out = project.complete(&dir, "task-1");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("[run::evaluation]") && out.stderr.contains("did not pass"), "{}", out.stderr);
    assert!(!dir.join("completion.json").exists());
}

#[test]
fn complete_refuses_raw_output_edited_after_evaluation() {
    let project = Project::new();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    let mut edited = good_output();
    block(&mut edited)["description"] = json!("Edited after the evaluation.");
    write_json(&dir.join("raw-output.json"), &edited);
    let out = project.complete(&dir, "task-1");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("$.rawOutputChecksum: the evaluation was made from raw output"), "{}", out.stderr);
}

#[test]
fn complete_refuses_a_manifest_that_is_not_the_prepared_one() {
    let project = Project::new();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    let mut manifest = read_json(&dir.join("run-manifest.json"));
    manifest["status"] = json!("completed");
    write_json(&dir.join("run-manifest.json"), &manifest);
    let out = project.complete(&dir, "task-1");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("[run::manifest-binding]") && out.stderr.contains("$.status"), "{}", out.stderr);
}

#[test]
fn complete_refuses_an_agent_task_used_by_a_sibling_run() {
    let project = Project::new();
    let first = project.answered("google", "one", &good_output());
    let second = project.answered("google", "two", &good_output());
    for dir in [&first, &second] {
        assert_eq!(project.evaluate(dir).0, 0);
    }
    assert_eq!(project.complete(&first, "task-shared").code, 0);
    let out = project.complete(&second, "task-shared");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("one/completion.json: refused: agent task \"task-shared\" is already recorded"),
        "{}",
        out.stderr
    );
    assert_eq!(project.complete(&second, "task-fresh").code, 0);
}

#[test]
fn complete_refuses_blank_notes() {
    let project = Project::new();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    let out = project.run(&[
        "complete",
        "--run-dir",
        s(&dir),
        "--scenario",
        "x",
        "--run-id",
        "r",
        "--agent-task",
        "t",
        "--note",
        "  ",
    ]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("none may be blank"), "{}", out.stderr);
    let out = project.run(&["complete", "--run-dir", s(&dir), "--scenario", "x", "--run-id", "r", "--agent-task", "t"]);
    assert_eq!(out.code, 2, "--note is required");
}

#[test]
fn complete_never_overwrites_a_receipt() {
    let project = Project::new();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    assert_eq!(project.complete(&dir, "task-1").code, 0);
    let before = std::fs::read(dir.join("completion.json")).unwrap();
    let out = project.complete(&dir, "task-2");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("completion.json: refused: already exists"), "{}", out.stderr);
    assert_eq!(std::fs::read(dir.join("completion.json")).unwrap(), before);
}

// ---------------------------------------------------------------- verify

#[test]
fn verify_fails_a_prepared_run_that_is_not_completed() {
    let project = Project::new();
    let dir = project.prepared("google", "g");
    let out = project.run(&["verify", s(&dir)]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("[run::completion]") && out.stdout.contains("the run is not completed"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("stage: prepared, awaiting agent"), "{}", out.stdout);
}

#[test]
fn verify_fails_a_receipt_that_no_longer_binds_the_files() {
    let project = Project::new();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    assert_eq!(project.complete(&dir, "task-1").code, 0);
    let mut edited = good_output();
    block(&mut edited)["description"] = json!("Edited after completion.");
    write_json(&dir.join("raw-output.json"), &edited);
    let out = exec(project.cmd().args(["verify", "--format", "json", s(project.root())]));
    assert_eq!(out.code, 1);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let checks: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["findings"].as_array().unwrap())
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert!(checks.contains(&"run::completion") && checks.contains(&"run::evaluation"), "{}", out.stdout);
    assert!(out.stdout.contains("$.rawOutput.checksum"), "{}", out.stdout);
}

#[test]
fn verify_flags_an_agent_task_shared_by_two_runs() {
    let project = Project::new();
    let dirs = [project.answered("google", "one", &good_output()), project.answered("google", "two", &good_output())];
    for (i, dir) in dirs.iter().enumerate() {
        assert_eq!(project.evaluate(dir).0, 0);
        assert_eq!(project.complete(dir, &format!("task-{i}")).code, 0);
    }
    assert_eq!(project.run(&["verify", s(&project.root().join("runs"))]).code, 0);
    // A receipt copied from elsewhere (the complete command would refuse it).
    let mut receipt = read_json(&dirs[1].join("completion.json"));
    receipt["agentTask"] = json!("task-0");
    write_json(&dirs[1].join("completion.json"), &receipt);
    let out = project.run(&["verify", s(&project.root().join("runs"))]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("agent task \"task-0\" is recorded by 2 runs"), "{}", out.stdout);
}

#[test]
fn verify_of_an_empty_directory_fails() {
    let project = Project::new();
    let out = project.run(&["verify", s(&project.root().join("runs"))]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("no packet or run directory found"), "{}", out.stdout);
}

// ---------------------------------------------------------------- interop (Node-made)

const SUFFIX_ARG: &str = "--google-suffix-file=../shared/interop/google-suffix.txt";

/// `../shared/interop` relative to the crate root, or `None` after saying so.
fn interop(test: &str) -> Option<PathBuf> {
    let dir = crate_root().join("../shared/interop");
    if dir.join("run-google/run-manifest.json").is_file() {
        Some(dir)
    } else {
        eprintln!("SKIPPED {test}: ../shared/interop is absent (CI has it)");
        None
    }
}

fn interop_cmd() -> Command {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(crate_root()).env_remove("PACKETPROOF_ROOT").arg(SUFFIX_ARG);
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

#[test]
fn interop_verify_passes_on_the_node_samples() {
    let Some(dir) = interop("interop_verify_passes_on_the_node_samples") else { return };
    // The Node samples themselves: node-eval/ and node-compile/ beside them hold deliberately
    // broken inputs (the reference's verdict corpora), which have tests of their own.
    let paths = ["run-anthropic", "run-google", "runtime-packet.anthropic.json", "runtime-packet.google.json"]
        .map(|name| dir.join(name));
    let out = exec(interop_cmd().arg("verify").args(&paths));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("run-google: ok") && out.stdout.contains("run-anthropic: ok"), "{}", out.stdout);
}

#[test]
fn interop_evaluation_matches_node_field_for_field() {
    let Some(interop) = interop("interop_evaluation_matches_node_field_for_field") else { return };
    let temp = tempfile::tempdir().unwrap();
    for run in ["run-anthropic", "run-google"] {
        let report = temp.path().join(format!("{run}.json"));
        let out = exec(interop_cmd().args(["evaluate", "--run-dir", s(&interop.join(run)), "--report", s(&report)]));
        assert_eq!(out.code, 0, "{run}: {}{}", out.stdout, out.stderr);
        let mut ours = read_json(&report);
        let raw = std::fs::read(interop.join(run).join("raw-output.json")).unwrap();
        assert_eq!(ours.as_object_mut().unwrap().remove("rawOutputChecksum"), Some(json!(digest::sha256(&raw))));
        let node = read_json(&interop.join(run).join("evaluation.json"));
        pretty_assertions::assert_eq!(canonical::to_pretty(&ours), canonical::to_pretty(&node), "{run}");
    }
}

#[test]
fn interop_prepare_reproduces_the_node_run_files() {
    let Some(interop) = interop("interop_prepare_reproduces_the_node_run_files") else { return };
    let root = tempfile::tempdir().unwrap();
    std::fs::copy(crate_root().join("harness.toml"), root.path().join("harness.toml")).unwrap();
    std::fs::create_dir_all(root.path().join("references")).unwrap();
    std::fs::copy(
        crate_root().join("references/gemini-json-suffix.txt"),
        root.path().join("references/gemini-json-suffix.txt"),
    )
    .unwrap();
    std::fs::copy(
        interop.join("block-screen-output-schema.json"),
        root.path().join("references/block-screen-output-schema.json"),
    )
    .unwrap();
    for provider in ["anthropic", "google"] {
        let out_dir = root.path().join(format!("run-{provider}"));
        let packet = interop.join(format!("runtime-packet.{provider}.json"));
        let out = exec(interop_cmd().env("PACKETPROOF_ROOT", root.path()).args([
            "prepare",
            "--packet",
            s(&packet),
            "--out-dir",
            s(&out_dir),
        ]));
        assert_eq!(out.code, 0, "{provider}: {}{}", out.stdout, out.stderr);
        for file in ["agent-request.json", "eval-context.json", "validation-schema.json", "run-manifest.json"] {
            let ours = std::fs::read(out_dir.join(file)).unwrap();
            let node = std::fs::read(interop.join(format!("run-{provider}")).join(file)).unwrap();
            assert!(ours == node, "{provider}/{file} differs from the Node run directory");
        }
    }
}

#[test]
fn interop_complete_on_a_copy_matches_node_and_verifies() {
    let Some(interop) = interop("interop_complete_on_a_copy_matches_node_and_verifies") else { return };
    let temp = tempfile::tempdir().unwrap();
    for (run, scenario, task) in
        [("run-anthropic", "interop-anthropic", "task-anthropic-1"), ("run-google", "interop-google", "task-google-1")]
    {
        let dir = temp.path().join(run);
        copy_dir(&interop.join(run), &dir, &["completion.json"]);
        let complete = |cmd: &mut Command| {
            exec(
                cmd.args([
                    "complete",
                    "--run-dir",
                    s(&dir),
                    "--scenario",
                    scenario,
                    "--run-id",
                    "run-1",
                    "--agent-task",
                    task,
                ])
                .args(["--note", "Topology matched the resolved branch."]),
            )
        };
        // Node's evaluation does not record which raw output it checked.
        let out = complete(&mut interop_cmd());
        assert_eq!(out.code, 2, "{}", out.stdout);
        assert!(out.stderr.contains("$.rawOutputChecksum: missing"), "{}", out.stderr);
        let out = exec(interop_cmd().args(["evaluate", "--run-dir", s(&dir)]));
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        let out = complete(&mut interop_cmd());
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        let mut ours = read_json(&dir.join("completion.json"));
        let mut node = read_json(&interop.join(run).join("completion.json"));
        for receipt in [&mut ours, &mut node] {
            let map = receipt.as_object_mut().unwrap();
            map.remove("completedAt");
            // Our evaluation.json has one more field, so its checksum differs by design.
            map["evaluation"].as_object_mut().unwrap().remove("checksum");
        }
        pretty_assertions::assert_eq!(canonical::to_pretty(&ours), canonical::to_pretty(&node), "{run}");
    }
    let out = exec(interop_cmd().args(["verify", s(temp.path())]));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

#[test]
fn verify_checks_a_golden_agent_request_against_the_packet_beside_it() {
    let case = crate_root().join("golden/openai-staged-succ-default");
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("case");
    std::fs::create_dir(&dir).unwrap();
    for name in ["runtime-packet.json", "agent-request.json"] {
        std::fs::copy(case.join(name), dir.join(name)).unwrap();
    }
    let verify = |dir: &Path| {
        Command::new(BIN).current_dir(crate_root()).args(["verify", "--format", "json"]).arg(dir).output().unwrap()
    };
    let out = verify(&dir);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let mut request = read_json(&dir.join("agent-request.json"));
    request["renderInput"] = json!({});
    write_json(&dir.join("agent-request.json"), &request);
    let out = verify(&dir);
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("golden::agent-request") && report.contains("is not the agent view"), "{report}");
}

#[test]
fn evaluate_prints_the_evaluation_document_with_format_json() {
    let Some(interop) = Some(crate_root().join("../shared/interop")).filter(|p| p.is_dir()) else {
        eprintln!("SKIPPED: ../shared/interop is absent");
        return;
    };
    let temp = tempfile::tempdir().unwrap();
    let run = temp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    for entry in std::fs::read_dir(interop.join("run-anthropic")).unwrap() {
        let entry = entry.unwrap();
        if !["completion.json", "evaluation.json"].contains(&entry.file_name().to_str().unwrap()) {
            std::fs::copy(entry.path(), run.join(entry.file_name())).unwrap();
        }
    }
    let out = Command::new(BIN)
        .current_dir(crate_root())
        .args(["evaluate", "--format", "json", "--run-dir"])
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed, read_json(&run.join("evaluation.json")));
    assert_eq!(printed["ok"], json!(true));
}

#[test]
fn evaluate_never_writes_its_report_over_another_run_file() {
    let project = Project::new();
    let dir = project.answered("anthropic", "a", &good_output());
    for name in ["run-manifest.json", "agent-request.json", "raw-output.json", "completion.json"] {
        let before = std::fs::read(dir.join(name)).ok();
        let out = project.run(&["evaluate", "--run-dir", s(&dir), "--report", s(&dir.join(name))]);
        assert_eq!(out.code, 2, "--report {name}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("an evaluation never replaces another run file"), "{}", out.stderr);
        assert_eq!(std::fs::read(dir.join(name)).ok(), before, "{name} changed");
    }
    assert_eq!(project.evaluate(&dir).0, 0);
    assert_eq!(project.complete(&dir, "task-report").code, 0);
    let receipted = std::fs::read(dir.join("evaluation.json")).unwrap();
    let out = project.run(&["evaluate", "--run-dir", s(&dir), "--report", s(&dir.join("evaluation.json"))]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("receipted evaluation is never rewritten"), "{}", out.stderr);
    assert_eq!(std::fs::read(dir.join("evaluation.json")).unwrap(), receipted);
}

#[test]
fn a_manifest_naming_one_file_twice_is_refused() {
    let project = Project::new();
    let dir = project.answered("anthropic", "a", &good_output());
    let original = std::fs::read(dir.join("run-manifest.json")).unwrap();
    for (field, name) in
        [("evaluation", "run-manifest.json"), ("evaluation", "agent-request.json"), ("completion", "raw-output.json")]
    {
        let mut manifest: Value = serde_json::from_slice(&original).unwrap();
        manifest[field] = json!(name);
        write_json(&dir.join("run-manifest.json"), &manifest);
        let written = std::fs::read(dir.join("run-manifest.json")).unwrap();
        let out = project.run(&["evaluate", "--run-dir", s(&dir)]);
        assert_eq!(out.code, 2, "{field}={name}: {}", out.stdout);
        assert!(
            out.stderr.contains(&format!("$.{field}: refused: file name \"{name}\" is also the run's")),
            "{}",
            out.stderr
        );
        assert_eq!(std::fs::read(dir.join("run-manifest.json")).unwrap(), written, "the manifest was overwritten");
    }
}

/// Evidence references name one of the seven evidence kinds, case-sensitively (as the
/// reference evaluator reads them); other `@word[…]` text is not a citation.
#[test]
fn evidence_stage_reads_the_seven_kinds_only() {
    let project = Project::new();
    let mut output = good_output();
    block(&mut output)["screens"][1]["aiMeta"]["assetIntents"][0]["linkedSourceRefs"] =
        json!(["@review[rev-1]", "@app-review[secret-1]", "@Review[secret-2]"]);
    let (code, evaluation) = project.evaluate(&project.answered("anthropic", "a", &output));
    assert_eq!(code, 0, "{}", messages(&evaluation));
    block(&mut output)["screens"][1]["aiMeta"]["assetIntents"][0]["linkedSourceRefs"] =
        json!(["@insight[secret-1]", "@review[rev-1].value"]);
    let evaluation = failing(output);
    assert_eq!(stages(&evaluation), ["evidence", "evidence"], "{}", messages(&evaluation));
    for cited in ["@insight[secret-1]", "@review[rev-1].value"] {
        assert!(messages(&evaluation).contains(&format!("cites {cited} which is not")), "{}", messages(&evaluation));
    }
}

/// Resolved evidence must ground the block (some data mapping) and be cited in dataUsage,
/// whether the operator selected it or the strategy's default set resolved it; without
/// evidence nothing may be mapped.
#[test]
fn grounding_is_required_whenever_evidence_resolved() {
    let unused = || {
        let mut output = good_output();
        block(&mut output)["dataUsage"]["items"] = json!([]);
        block(&mut output)["dataUsage"]["purposes"] = json!([]);
        for screen in block(&mut output)["screens"].as_array_mut().unwrap() {
            screen["aiMeta"]["dataMapping"] = json!([]);
            screen["aiMeta"]["assetIntents"][0]["linkedSourceRefs"] = json!([]);
        }
        output
    };
    let evaluation = failing(unused());
    assert_eq!(stages(&evaluation), ["data-mapping", "data-usage"], "{}", messages(&evaluation));
    assert!(messages(&evaluation).contains("no screen maps any data"), "{}", messages(&evaluation));

    let project = Project::new();
    let dir = project.with_evidence_mode("strategy-default", true);
    write_json(&dir.join("raw-output.json"), &unused());
    let (code, evaluation) = project.evaluate(&dir);
    assert_eq!(code, 1);
    assert_eq!(stages(&evaluation), ["data-mapping", "data-usage"], "{}", messages(&evaluation));

    // Without evidence, an ungrounded block passes, and any mapping fails.
    let dir = project.with_evidence_mode("no-evidence", false);
    write_json(&dir.join("raw-output.json"), &unused());
    let (code, evaluation) = project.evaluate(&dir);
    assert_eq!(code, 0, "{}", messages(&evaluation));
    std::fs::remove_file(dir.join("evaluation.json")).unwrap();
    let mut output = unused();
    block(&mut output)["dataUsage"]["items"] =
        json!([{"sourcePath": "strategyVariables.goal", "value": "goal", "justification": "j"}]);
    block(&mut output)["screens"][0]["aiMeta"]["dataMapping"] =
        json!([{"sourcePath": "strategyVariables.goal", "value": "goal", "justification": "j"}]);
    write_json(&dir.join("raw-output.json"), &output);
    let (code, evaluation) = project.evaluate(&dir);
    assert_eq!(code, 1);
    assert_eq!(stages(&evaluation), ["evidence"], "{}", messages(&evaluation));
    assert!(messages(&evaluation).contains("maps data"), "{}", messages(&evaluation));
}

#[test]
fn an_agent_task_id_with_surrounding_whitespace_is_refused() {
    let project = Project::new();
    let dir = project.answered("anthropic", "a", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    let out = project.complete(&dir, " task-1");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("must not start or end with whitespace"), "{}", out.stderr);
    assert!(!dir.join("completion.json").exists());
    assert_eq!(project.complete(&dir, "task-1").code, 0);
}
