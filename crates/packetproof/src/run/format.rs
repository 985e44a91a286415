//! The two receipts of a run, defined once as serde types for the step that writes
//! them and the checks that read them: run-manifest.json ([`Manifest`], written by
//! `prepare`) and completion.json ([`Completion`], written by `complete`); and the
//! packet's held-back context, eval-context.json ([`EvalContext`]). Field
//! for field, in order, the Node tools' formats. The readers audit a receipt that
//! may be forged or hand-edited, so they read it as JSON and report every problem
//! with its path; what they check it against (its fields, nested fields and fixed
//! values) is taken from these types, not restated.

use super::paths::{AGENT_REQUEST, COMPLETION, EVALUATION, EVAL_CONTEXT, RAW_OUTPUT, VALIDATION_SCHEMA};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// eval-context.json: what `prepare` holds back from the agent, field for field as the
/// Node tools write it. Its values pass through from the packet unjudged; a field the
/// file lacks reads as null, as the Node tools read `undefined`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EvalContext {
    #[serde(default)]
    pub(crate) schema_version: Value,
    #[serde(default)]
    pub(crate) exact_input_hash: Value,
    #[serde(default)]
    pub(crate) agent_id: Value,
    /// The packet's `userMessage` (the agent sees `effectiveUserMessage`).
    #[serde(default)]
    pub(crate) base_user_message: Value,
    #[serde(default)]
    pub(crate) render_input: Value,
    #[serde(default)]
    pub(crate) resolved_branch: Value,
    #[serde(default)]
    pub(crate) prompt_paths: Value,
    #[serde(default)]
    pub(crate) prompt_versions: Value,
    /// The packet's fields beyond the contract's own (its agent's `packet_fields`), held
    /// back so the packet rebuilds whole; only when it has some.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub(crate) packet_fields: Map<String, Value>,
}

impl EvalContext {
    /// The context of `packet`.
    pub(crate) fn of(packet: &Map<String, Value>) -> EvalContext {
        let field = |key: &str| packet.get(key).cloned().unwrap_or(Value::Null);
        EvalContext {
            schema_version: Value::from(1),
            exact_input_hash: field("exactInputHash"),
            agent_id: field("agentId"),
            base_user_message: field("userMessage"),
            render_input: field("renderInput"),
            resolved_branch: field("resolvedBranch"),
            prompt_paths: field("promptPaths"),
            prompt_versions: field("promptVersions"),
            packet_fields: packet
                .iter()
                .filter(|(key, _)| !crate::profile::CONTRACT_FIELDS.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
        }
    }

    /// The file's fields by their JSON names (what the audit compares key by key).
    pub(crate) fn to_map(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            _ => unreachable!("a struct of JSON values serializes to an object"),
        }
    }
}

pub(crate) const MANIFEST_KIND: &str = "segmently.packet-only-agent-run";
pub(crate) const MANIFEST_STATUS: &str = "prepared-awaiting-agent";
pub(crate) const COMPLETION_KIND: &str = "segmently.packet-only-agent-completion";
pub(crate) const COMPLETION_STATUS: &str = "evaluated-pass";
/// Defined with the evaluation document, which carries it too.
pub(crate) use crate::evaluator::document::PROOF_CLASS;

/// run-manifest.json.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Manifest {
    pub(crate) schema_version: u32,
    pub(crate) kind: String,
    pub(crate) status: String,
    /// Copied from the packet, whatever it holds: it binds the manifest to it.
    pub(crate) exact_input_hash: Value,
    pub(crate) checksum: Value,
    pub(crate) agent_input: String,
    pub(crate) held_back_evaluator_context: String,
    pub(crate) held_back_validation_schema: String,
    pub(crate) validation_schema_checksum: String,
    pub(crate) raw_output: String,
    pub(crate) evaluation: String,
    pub(crate) completion: String,
    pub(crate) proof_class: String,
    pub(crate) replaces_runtime_task_debug: bool,
}

impl Manifest {
    /// The manifest of a packet whose snapshot has `snapshot_checksum`.
    pub(crate) fn new(packet: &Map<String, Value>, snapshot_checksum: &str) -> Manifest {
        let copied = |key: &str| packet.get(key).cloned().unwrap_or(Value::Null);
        Manifest {
            schema_version: 2,
            kind: MANIFEST_KIND.into(),
            status: MANIFEST_STATUS.into(),
            exact_input_hash: copied("exactInputHash"),
            checksum: copied("checksum"),
            agent_input: AGENT_REQUEST.into(),
            held_back_evaluator_context: EVAL_CONTEXT.into(),
            held_back_validation_schema: VALIDATION_SCHEMA.into(),
            validation_schema_checksum: snapshot_checksum.into(),
            raw_output: RAW_OUTPUT.into(),
            evaluation: EVALUATION.into(),
            completion: COMPLETION.into(),
            proof_class: PROOF_CLASS.into(),
            replaces_runtime_task_debug: false,
        }
    }
}

/// validation-schema.json of a run under a plain-text contract (`output = "text"`): the
/// agent is given no schema, and the held-back file says so. The Node format keeps the
/// file and the manifest's checksum of it; its schema admits any answer, which only
/// the suite's `[evaluator]` judges.
pub(crate) fn plain_text_snapshot() -> Value {
    serde_json::json!({
        "output": "text",
        "schema": {"description": "no output schema: the contract's answers are plain text"}
    })
}

/// Manifest fields copied from the packet: they bind the manifest to it.
pub(crate) const MANIFEST_PACKET_KEYS: [&str; 2] = ["exactInputHash", "checksum"];

/// The manifest fields whose value the format fixes, with what the value means.
const MANIFEST_FIXED: [(&str, &str); 5] = [
    ("schemaVersion", "the manifest format"),
    ("kind", "a run manifest"),
    ("status", "the manifest is never rewritten after preparation"),
    ("proofClass", "the proof class of packet-only agent runs"),
    ("replacesRuntimeTaskDebug", "an agent run never replaces runtime task debug"),
];

/// run-manifest.json for a packet whose snapshot has `snapshot_checksum`.
pub(crate) fn manifest(packet: &Map<String, Value>, snapshot_checksum: &str) -> Value {
    to_value(&Manifest::new(packet, snapshot_checksum))
}

/// Every manifest field, in order.
pub(crate) fn manifest_keys() -> Vec<String> {
    keys(&manifest(&Map::new(), ""))
}

/// A field the contract names, of a packet, an evaluator context or a completion:
/// in a manifest it is no extension of the run format but the contract's material in
/// the wrong file, so it stays an error there. Any other field a manifest carries
/// beyond [`manifest_keys`] is one the reference's tools added (`skillVersion`).
pub(crate) fn contract_names(key: &str) -> bool {
    crate::profile::CONTRACT_FIELDS.contains(&key)
        || EvalContext::of(&Map::new()).to_map().contains_key(key)
        || completion_keys().iter().any(|k| k == key)
}

/// The manifest's fixed fields as (key, value, meaning), the values [`Manifest::new`] writes.
pub(crate) fn manifest_fixed() -> Vec<(&'static str, Value, &'static str)> {
    fixed(&manifest(&Map::new(), ""), &MANIFEST_FIXED)
}

/// completion.json.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Completion {
    pub(crate) schema_version: u32,
    pub(crate) kind: String,
    pub(crate) status: String,
    pub(crate) scenario: String,
    pub(crate) run_id: String,
    pub(crate) agent_task: String,
    pub(crate) completed_at: String,
    pub(crate) input_boundary: InputBoundary,
    /// The three are copied from the manifest ([`COMPLETION_MANIFEST_KEYS`]).
    pub(crate) exact_input_hash: Value,
    pub(crate) checksum: Value,
    pub(crate) validation_schema_checksum: Value,
    pub(crate) raw_output: FileDigest,
    pub(crate) evaluation: EvaluationDigest,
    pub(crate) evaluator_notes: Vec<String>,
    pub(crate) proof_class: String,
    pub(crate) replaces_runtime_task_debug: bool,
}

/// `inputBoundary`: what the agent saw (its request only) and could not reach.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InputBoundary {
    pub(crate) kind: String,
    pub(crate) file: String,
    pub(crate) checksum: String,
    pub(crate) inherited_conversation: bool,
    pub(crate) repository_access: bool,
    pub(crate) web_access: bool,
    pub(crate) write_access: bool,
}

/// A run file and the digest of its bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct FileDigest {
    pub(crate) file: String,
    pub(crate) checksum: String,
}

/// The evaluation file, its digest and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct EvaluationDigest {
    pub(crate) file: String,
    pub(crate) checksum: String,
    /// The evaluation's own `ok`, as it is there.
    pub(crate) ok: Value,
}

/// The agent task a completion.json records. Read by key, not into [`Completion`]:
/// the task-id scans read receipts that may be forged or partial.
pub(crate) fn recorded_task(completion: &Value) -> Option<&str> {
    completion.get("agentTask").and_then(Value::as_str)
}

/// Who completed the run and what they noted (the operator's arguments).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CompletionIds {
    pub(crate) scenario: String,
    pub(crate) run_id: String,
    pub(crate) agent_task: String,
    pub(crate) notes: Vec<String>,
}

impl Completion {
    /// The receipt for a run: `agent_request` is the file the agent saw, `manifest`
    /// the run's manifest (the fields it binds are copied).
    pub(crate) fn new(
        ids: CompletionIds,
        completed_at: String,
        agent_request: FileDigest,
        manifest: &Map<String, Value>,
        raw_output: FileDigest,
        evaluation: EvaluationDigest,
    ) -> Completion {
        let copied = |key: &str| manifest.get(key).cloned().unwrap_or(Value::Null);
        Completion {
            schema_version: 1,
            kind: COMPLETION_KIND.into(),
            status: COMPLETION_STATUS.into(),
            scenario: ids.scenario,
            run_id: ids.run_id,
            agent_task: ids.agent_task,
            completed_at,
            input_boundary: InputBoundary {
                kind: INPUT_BOUNDARY_KIND.into(),
                file: agent_request.file,
                checksum: agent_request.checksum,
                inherited_conversation: false,
                repository_access: false,
                web_access: false,
                write_access: false,
            },
            exact_input_hash: copied("exactInputHash"),
            checksum: copied("checksum"),
            validation_schema_checksum: copied("validationSchemaChecksum"),
            raw_output,
            evaluation,
            evaluator_notes: ids.notes,
            proof_class: PROOF_CLASS.into(),
            replaces_runtime_task_debug: false,
        }
    }

    /// A receipt with every field empty but the fixed ones: its shape, for the readers.
    fn template() -> Value {
        let empty = || FileDigest { file: String::new(), checksum: String::new() };
        let evaluation = EvaluationDigest { file: String::new(), checksum: String::new(), ok: Value::Null };
        let completion =
            Completion::new(CompletionIds::default(), String::new(), empty(), &Map::new(), empty(), evaluation);
        to_value(&completion)
    }
}

/// The completion fields whose value the format fixes, with what the value means.
const COMPLETION_FIXED: [(&str, &str); 5] = [
    ("schemaVersion", "the completion format"),
    ("kind", "a completion receipt"),
    ("status", "only passing evaluations are completed"),
    ("proofClass", "the proof class of packet-only agent runs"),
    ("replacesRuntimeTaskDebug", "never"),
];

/// The completion's fixed fields as (key, value, meaning), the values [`Completion::new`] writes.
pub(crate) fn completion_fixed() -> Vec<(&'static str, Value, &'static str)> {
    fixed(&Completion::template(), &COMPLETION_FIXED)
}

/// `inputBoundary.kind` of a completion receipt: the agent saw only its request.
pub(crate) const INPUT_BOUNDARY_KIND: &str = "agent-request-only";

/// `inputBoundary` flags, all `false` (a fresh, isolated agent): the fields of
/// [`InputBoundary`] that are flags.
pub(crate) fn input_boundary_denied() -> Vec<String> {
    let template = Completion::template();
    let boundary = template["inputBoundary"].as_object().cloned().unwrap_or_default();
    boundary.into_iter().filter(|(_, v)| v.is_boolean()).map(|(k, _)| k).collect()
}

/// Every completion receipt field, in order: the shape is closed (verify reports
/// any other field as an edit).
pub(crate) fn completion_keys() -> Vec<String> {
    keys(&Completion::template())
}

/// The fields of the receipt's nested objects, as (field, its fields).
pub(crate) fn completion_nested_keys() -> Vec<(String, Vec<String>)> {
    let template = Completion::template();
    let fields = template.as_object().into_iter().flatten();
    fields.filter(|(_, v)| v.is_object()).map(|(k, v)| (k.clone(), keys(v))).collect()
}

/// Completion fields copied from the manifest.
pub(crate) const COMPLETION_MANIFEST_KEYS: [&str; 3] = ["exactInputHash", "checksum", "validationSchemaChecksum"];

/// A receipt as JSON (its fields in declaration order; serialising these types cannot fail).
pub(crate) fn to_value(receipt: &impl Serialize) -> Value {
    serde_json::to_value(receipt).expect("a receipt is plain data")
}

fn keys(value: &Value) -> Vec<String> {
    value.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

fn fixed(template: &Value, meanings: &[(&'static str, &'static str)]) -> Vec<(&'static str, Value, &'static str)> {
    meanings.iter().map(|&(key, what)| (key, template[key].clone(), what)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_has_every_key_once_in_node_order() {
        let packet: Map<String, Value> =
            serde_json::from_str(r#"{"exactInputHash": "sha256:a", "checksum": "sha256:b"}"#).unwrap();
        let manifest = manifest(&packet, "sha256:c");
        let keys: Vec<&str> = manifest.as_object().unwrap().keys().map(String::as_str).collect();
        // Node's order.
        let node = [
            "schemaVersion",
            "kind",
            "status",
            "exactInputHash",
            "checksum",
            "agentInput",
            "heldBackEvaluatorContext",
            "heldBackValidationSchema",
            "validationSchemaChecksum",
            "rawOutput",
            "evaluation",
            "completion",
            "proofClass",
            "replacesRuntimeTaskDebug",
        ];
        assert_eq!(keys, node);
        assert_eq!(manifest_keys(), node);
        assert_eq!(manifest["validationSchemaChecksum"], "sha256:c");
        assert_eq!(manifest["agentInput"], "agent-request.json");
        assert_eq!(manifest["checksum"], "sha256:b");
    }

    #[test]
    fn the_completion_receipt_has_every_key_once_in_node_order() {
        let node = [
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
            "replacesRuntimeTaskDebug",
        ];
        assert_eq!(completion_keys(), node);
        let nested = completion_nested_keys();
        let boundary =
            ["kind", "file", "checksum", "inheritedConversation", "repositoryAccess", "webAccess", "writeAccess"];
        assert_eq!(nested[0], ("inputBoundary".to_owned(), boundary.map(String::from).to_vec()));
        assert_eq!(nested[1].1, ["file", "checksum"]);
        assert_eq!(nested[2].1, ["file", "checksum", "ok"]);
        assert_eq!(input_boundary_denied(), boundary[3..]);
        let fixed: Vec<(&str, Value)> = completion_fixed().into_iter().map(|(k, v, _)| (k, v)).collect();
        assert_eq!(fixed[0], ("schemaVersion", 1.into()));
        assert_eq!(fixed[1], ("kind", COMPLETION_KIND.into()));
        assert_eq!(fixed[4], ("replacesRuntimeTaskDebug", false.into()));
        assert_eq!(manifest_fixed()[0], ("schemaVersion", 2.into(), "the manifest format"));
    }
}
