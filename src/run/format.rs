//! The two receipts of a run, defined once for the step that writes them and the
//! checks that read them: run-manifest.json (written by `prepare`) and
//! completion.json (written by `complete`). Field for field the Node tools' formats.

use super::paths::MANIFEST_FILES;
use serde_json::{Map, Value};

pub const MANIFEST_KIND: &str = "segmently.packet-only-agent-run";
pub const MANIFEST_STATUS: &str = "prepared-awaiting-agent";
pub const COMPLETION_KIND: &str = "segmently.packet-only-agent-completion";
pub const COMPLETION_STATUS: &str = "evaluated-pass";
/// Defined with the evaluation document, which carries it too.
pub use crate::evaluator::document::PROOF_CLASS;

/// Every manifest field, in the order the Node tools write them.
pub const MANIFEST_KEYS: [&str; 14] = [
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

/// Manifest fields copied from the packet: they bind the manifest to it.
pub const MANIFEST_PACKET_KEYS: [&str; 2] = ["exactInputHash", "checksum"];

/// Manifest fields whose value the format fixes, with what the value means.
pub fn manifest_fixed() -> [(&'static str, Value, &'static str); 5] {
    [
        ("schemaVersion", 2.into(), "the manifest format"),
        ("kind", MANIFEST_KIND.into(), "a run manifest"),
        ("status", MANIFEST_STATUS.into(), "the manifest is never rewritten after preparation"),
        ("proofClass", PROOF_CLASS.into(), "the proof class of packet-only agent runs"),
        ("replacesRuntimeTaskDebug", false.into(), "an agent run never replaces runtime task debug"),
    ]
}

/// run-manifest.json for a packet whose snapshot has `snapshot_checksum`.
pub fn manifest(packet: &Map<String, Value>, snapshot_checksum: &str) -> Value {
    let fixed = manifest_fixed();
    let mut m = Map::new();
    for key in MANIFEST_KEYS {
        let value = if let Some((_, value, _)) = fixed.iter().find(|(k, ..)| *k == key) {
            value.clone()
        } else if MANIFEST_PACKET_KEYS.contains(&key) {
            packet.get(key).cloned().unwrap_or(Value::Null)
        } else if let Some((_, name)) = MANIFEST_FILES.iter().find(|(k, _)| *k == key) {
            (*name).into()
        } else {
            snapshot_checksum.into() // validationSchemaChecksum, the one field left
        };
        m.insert(key.into(), value);
    }
    Value::Object(m)
}

/// Completion receipt fields whose value the format fixes (JSONPath, value, meaning).
pub fn completion_fixed() -> [(&'static str, Value, &'static str); 5] {
    [
        ("$.schemaVersion", 1.into(), "the completion format"),
        ("$.kind", COMPLETION_KIND.into(), "a completion receipt"),
        ("$.status", COMPLETION_STATUS.into(), "only passing evaluations are completed"),
        ("$.proofClass", PROOF_CLASS.into(), "the proof class of packet-only agent runs"),
        ("$.replacesRuntimeTaskDebug", false.into(), "never"),
    ]
}

/// `inputBoundary.kind` of a completion receipt: the agent saw only its request.
pub const INPUT_BOUNDARY_KIND: &str = "agent-request-only";

/// `inputBoundary` flags that are all `false`: a fresh, isolated agent.
pub const INPUT_BOUNDARY_DENIED: [&str; 4] = ["inheritedConversation", "repositoryAccess", "webAccess", "writeAccess"];

/// Every completion receipt field, in the order the Node tools write them: the
/// shape is closed (verify reports any other field as an edit).
pub const COMPLETION_KEYS: [&str; 16] = [
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

/// The fields of the receipt's nested objects.
pub const COMPLETION_NESTED_KEYS: [(&str, &[&str]); 3] = [
    (
        "inputBoundary",
        &["kind", "file", "checksum", "inheritedConversation", "repositoryAccess", "webAccess", "writeAccess"],
    ),
    ("rawOutput", &["file", "checksum"]),
    ("evaluation", &["file", "checksum", "ok"]),
];

/// Completion fields copied from the manifest.
pub const COMPLETION_MANIFEST_KEYS: [&str; 3] = ["exactInputHash", "checksum", "validationSchemaChecksum"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_has_every_key_once_in_node_order() {
        let packet: Map<String, Value> =
            serde_json::from_str(r#"{"exactInputHash": "sha256:a", "checksum": "sha256:b"}"#).unwrap();
        let manifest = manifest(&packet, "sha256:c");
        let keys: Vec<&str> = manifest.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, MANIFEST_KEYS);
        assert_eq!(manifest["validationSchemaChecksum"], "sha256:c");
        assert_eq!(manifest["agentInput"], "agent-request.json");
        assert_eq!(manifest["checksum"], "sha256:b");
    }
}
