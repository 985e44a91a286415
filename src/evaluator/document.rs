//! The evaluation document: the reference's keys in its order, then
//! packetproof's addition `rawOutputChecksum` (which bytes were judged, so completion can
//! refuse an evaluation of other bytes).

use super::block;
use super::text::{count_named_arrays, truthy};
use super::Failure;
use serde_json::{Map, Value};

/// The proof class of packet-only agent runs (evaluation, manifest and completion).
pub const PROOF_CLASS: &str = "advisory-subagent-smoke";

/// Where the validation schema came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaSource {
    ProviderPacket,
    RunSnapshot,
    Unavailable,
}

impl SchemaSource {
    fn name(self) -> &'static str {
        match self {
            SchemaSource::ProviderPacket => "provider-packet",
            SchemaSource::RunSnapshot => "run-snapshot",
            SchemaSource::Unavailable => "unavailable",
        }
    }
}

/// Everything the document records besides the failures.
#[derive(Debug, Clone)]
pub struct Facts {
    /// The packet's `exactInputHash` as given (the key is left out when there is none).
    pub exact_input_hash: Option<Value>,
    pub schema_applied: bool,
    pub schema_source: SchemaSource,
    /// sha256 of the snapshot bytes read (null when the packet carries the schema).
    pub snapshot_checksum: Option<String>,
    pub raw_checksum: String,
}

pub fn build(failures: &[Failure], facts: &Facts, output: Option<&Value>) -> Value {
    let list: Vec<Value> = failures
        .iter()
        .map(|f| {
            let mut m = Map::new();
            m.insert("stage".into(), f.stage.into());
            m.insert("message".into(), f.message.clone().into());
            Value::Object(m)
        })
        .collect();
    let mut d = Map::new();
    d.insert("ok".into(), failures.is_empty().into());
    d.insert("proofClass".into(), PROOF_CLASS.into());
    d.insert("replacesRuntimeTaskDebug".into(), false.into());
    if let Some(hash) = &facts.exact_input_hash {
        d.insert("exactInputHash".into(), hash.clone());
    }
    d.insert("schemaValidationApplied".into(), facts.schema_applied.into());
    d.insert("schemaSource".into(), facts.schema_source.name().into());
    d.insert("validationSchemaChecksum".into(), facts.snapshot_checksum.clone().map_or(Value::Null, Value::from));
    d.insert("earliestFailureStage".into(), failures.first().map_or(Value::Null, |f| f.stage.into()));
    d.insert("failures".into(), Value::Array(list));
    d.insert("summary".into(), summary(output));
    d.insert("rawOutputChecksum".into(), facts.raw_checksum.clone().into());
    Value::Object(d)
}

/// The document's `summary`, key for key: counts are the reference's (mappings and intents anywhere
/// in the block; one instruction when there is no list but a description).
pub fn summary(output: Option<&Value>) -> Value {
    let found = output.and_then(block::find).map(|(block, _)| block);
    let field = |key: &str| found.and_then(|b| b.get(key));
    let length = |key: &str| field(key).and_then(Value::as_array).map(Vec::len);
    let instructions = length("instructions").unwrap_or(usize::from(truthy(field("description"))));
    let count = |name: &str| found.map_or(0, |b| count_named_arrays(b, name));
    let mut m = Map::new();
    m.insert("blockFound".into(), found.is_some().into());
    m.insert("blockName".into(), field("name").cloned().unwrap_or(Value::Null));
    m.insert("screenCount".into(), length("screens").unwrap_or(0).into());
    m.insert("instructionCount".into(), instructions.into());
    m.insert("dataUsagePresent".into(), field("dataUsage").is_some_and(Value::is_object).into());
    m.insert("dataMappingCount".into(), count("dataMapping").into());
    m.insert("assetIntentCount".into(), count("assetIntents").into());
    Value::Object(m)
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
            summary(Some(&out)),
            json!({"blockFound": true, "blockName": 7, "screenCount": 1, "instructionCount": 1,
                   "dataUsagePresent": true, "dataMappingCount": 3, "assetIntentCount": 0})
        );
        assert_eq!(summary(Some(&json!(null)))["blockFound"], json!(false));
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
        let failures = [Failure { stage: "json-parse", message: "m".into() }];
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
