//! The predicate of a packetproof run receipt: completion.json's identity,
//! provenance and verdict fields. One type, written by `attest` and compared by
//! `verify` field by field, in this order.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// The predicate's type. A URN: versioned, and claiming no web address we do not
/// own. A change of its fields is a new major version.
pub(crate) const PREDICATE_TYPE: &str = "urn:packetproof:predicate:run-receipt:v1";

/// Values are JSON as completion.json holds them (a broken receipt is compared, not
/// refused). `attest` writes every field, null where completion.json lacks it; read
/// back, `None` is a field the statement lacks and `unknown` holds fields the
/// predicate does not define, so `verify` can name both.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Predicate {
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub(crate) exact_input_hash: Option<Value>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub(crate) checksum: Option<Value>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub(crate) scenario: Option<Value>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub(crate) run_id: Option<Value>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub(crate) agent_task: Option<Value>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub(crate) completed_at: Option<Value>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub(crate) evaluation_ok: Option<Value>,
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub(crate) evaluator_notes: Option<Value>,
    /// The rules that did not run when the run was attested, each `{check, reason}`:
    /// a receipt says what it does not vouch for.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub(crate) skipped_checks: Option<Value>,
    #[serde(flatten)]
    pub(crate) unknown: Map<String, Value>,
}

/// A field the JSON has, null included: serde alone reads a null `Option` as `None`,
/// which would make a null field and a missing one the same.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl Predicate {
    /// The fields under their JSON names, in written order: absent ones left out,
    /// unknown ones last.
    pub(crate) fn to_map(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            _ => unreachable!("a struct of JSON values serializes to an object"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_null_field_a_missing_one_and_an_unknown_one_stay_apart() {
        let read: Predicate = serde_json::from_value(json!({"runId": null, "extra": 1, "checksum": "c"})).unwrap();
        assert_eq!(read.run_id, Some(Value::Null));
        assert_eq!(read.scenario, None);
        assert_eq!(read.to_map(), *json!({"checksum": "c", "runId": null, "extra": 1}).as_object().unwrap());
    }
}
