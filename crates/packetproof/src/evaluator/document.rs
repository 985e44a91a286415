//! The evaluation document: the reference's keys in its order, then
//! packetproof's addition `rawOutputChecksum` (which bytes were judged, so completion can
//! refuse an evaluation of other bytes).

use super::block;
use super::text::{count_named_arrays, truthy};
use super::Failure;
use serde::Serialize;
use serde_json::Value;

/// The proof class of packet-only agent runs (evaluation, manifest and completion).
pub(crate) const PROOF_CLASS: &str = "advisory-subagent-smoke";

/// Where the validation schema came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub(crate) enum SchemaSource {
    ProviderPacket,
    RunSnapshot,
    Unavailable,
}

impl SchemaSource {
    fn name(self) -> &'static str {
        self.into()
    }
}

/// Everything the document records besides the failures.
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    /// The packet's `exactInputHash` as given (the key is left out when there is none).
    pub(crate) exact_input_hash: Option<Value>,
    pub(crate) schema_applied: bool,
    pub(crate) schema_source: SchemaSource,
    /// sha256 of the snapshot bytes read (null when the packet carries the schema).
    pub(crate) snapshot_checksum: Option<String>,
    pub(crate) raw_checksum: String,
}

/// The evaluation document, field for field in the reference's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Evaluation {
    pub ok: bool,
    pub(crate) proof_class: &'static str,
    pub(crate) replaces_runtime_task_debug: bool,
    /// Left out when the packet has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) exact_input_hash: Option<Value>,
    pub(crate) schema_validation_applied: bool,
    pub(crate) schema_source: &'static str,
    pub(crate) validation_schema_checksum: Option<String>,
    pub(crate) earliest_failure_stage: Option<String>,
    pub(crate) failures: Vec<Failed>,
    pub(crate) summary: Summary,
    pub(crate) raw_output_checksum: String,
}

/// One failure as the document lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Failed {
    pub(crate) stage: String,
    pub(crate) message: String,
}

/// The document's `summary`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Summary {
    pub(crate) block_found: bool,
    pub(crate) block_name: Value,
    pub(crate) screen_count: usize,
    pub(crate) instruction_count: usize,
    pub(crate) data_usage_present: bool,
    pub(crate) data_mapping_count: usize,
    pub(crate) asset_intent_count: usize,
}

pub(crate) fn build(failures: &[Failure], facts: &Facts, output: Option<&Value>) -> Value {
    let document = Evaluation {
        ok: failures.is_empty(),
        proof_class: PROOF_CLASS,
        replaces_runtime_task_debug: false,
        exact_input_hash: facts.exact_input_hash.clone(),
        schema_validation_applied: facts.schema_applied,
        schema_source: facts.schema_source.name(),
        validation_schema_checksum: facts.snapshot_checksum.clone(),
        earliest_failure_stage: failures.first().map(|f| f.stage.to_string()),
        failures: failures.iter().map(|f| Failed { stage: f.stage.to_string(), message: f.message.clone() }).collect(),
        summary: summary(output),
        raw_output_checksum: facts.raw_checksum.clone(),
    };
    serde_json::to_value(document).expect("an evaluation is plain data")
}

/// The document's `summary`, key for key: counts are the reference's (mappings and intents anywhere
/// in the block; one instruction when there is no list but a description).
pub(crate) fn summary(output: Option<&Value>) -> Summary {
    let found = output.and_then(block::find).map(|(block, _)| block);
    let field = |key: &str| found.and_then(|b| b.get(key));
    let length = |key: &str| field(key).and_then(Value::as_array).map(Vec::len);
    let count = |name: &str| found.map_or(0, |b| count_named_arrays(b, name));
    Summary {
        block_found: found.is_some(),
        block_name: field("name").cloned().unwrap_or(Value::Null),
        screen_count: length("screens").unwrap_or(0),
        instruction_count: length("instructions").unwrap_or(usize::from(truthy(field("description")))),
        data_usage_present: field("dataUsage").is_some_and(Value::is_object),
        data_mapping_count: count("dataMapping"),
        asset_intent_count: count("assetIntents"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summary_counts_like_the_reference() {
        let out = json!({"result": {"onboardingStrategySequence": [{"name": 7, "description": "d",
            "screens": [{"aiMeta": {"dataMapping": [1, 2]}}], "dataMapping": [3], "dataUsage": {}}]}});
        assert_eq!(
            serde_json::to_value(summary(Some(&out))).unwrap(),
            json!({"blockFound": true, "blockName": 7, "screenCount": 1, "instructionCount": 1,
                   "dataUsagePresent": true, "dataMappingCount": 3, "assetIntentCount": 0})
        );
        assert!(!summary(Some(&json!(null))).block_found);
    }

    #[test]
    fn the_document_keeps_the_reference_order() {
        let facts = Facts {
            exact_input_hash: None,
            schema_applied: false,
            schema_source: SchemaSource::Unavailable,
            snapshot_checksum: None,
            raw_checksum: "sha256:x".into(),
        };
        let failures = [Failure { stage: "json-parse".into(), message: "m".into() }];
        let doc = build(&failures, &facts, None);
        let keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "ok",
                "proofClass",
                "replacesRuntimeTaskDebug",
                "schemaValidationApplied",
                "schemaSource",
                "validationSchemaChecksum",
                "earliestFailureStage",
                "failures",
                "summary",
                "rawOutputChecksum"
            ]
        );
        assert_eq!(doc["earliestFailureStage"], json!("json-parse"));
    }
}
