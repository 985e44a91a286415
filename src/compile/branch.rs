//! Branch resolution: the nine `resolvedBranch` fields, each derived
//! from the (already validated) request, never copied when it can be derived.

use crate::packet::AGENT_ID;
use serde_json::{json, Map, Value};

/// The resolved branch plus what it resolved to: the evidence items that render.
#[derive(Debug, Clone)]
pub(crate) struct Resolution {
    pub insertion_mode: String,
    pub source_scope: String,
    pub requested_mode: String,
    pub evidence_mode: &'static str,
    pub neighbours: &'static str,
    pub has_variable_conflicts: bool,
    pub has_asset_intents: bool,
    pub has_target_theme: bool,
    pub operator_instruction_present: bool,
    /// Indices into `evidence.availableItems` of the items that render, in request order.
    pub items: Vec<usize>,
}

impl Resolution {
    /// `resolvedBranch`, in the key order of the Node packets.
    pub fn to_json(&self) -> Value {
        let mut branch = Map::new();
        branch.insert("agentId".into(), json!(AGENT_ID));
        branch.insert("insertionMode".into(), json!(self.insertion_mode));
        branch.insert("sourceScope".into(), json!(self.source_scope));
        branch.insert("evidenceMode".into(), json!(self.evidence_mode));
        branch.insert("neighbours".into(), json!(self.neighbours));
        branch.insert("hasVariableConflicts".into(), json!(self.has_variable_conflicts));
        branch.insert("hasAssetIntents".into(), json!(self.has_asset_intents));
        branch.insert("hasTargetTheme".into(), json!(self.has_target_theme));
        branch.insert("operatorInstructionPresent".into(), json!(self.operator_instruction_present));
        Value::Object(branch)
    }
}

/// Resolve the branch of a request that passed validation.
pub(crate) fn resolve(request: &Value) -> Resolution {
    let text = |pointer: &str| request.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned();
    let requested_mode = text("/evidence/selection/mode");
    let items = resolved_items(request, &requested_mode);
    // strategy-default with nothing accessible renders exactly like no-evidence,
    // so it is recorded as such (the request's mode stays in renderInput).
    let evidence_mode = match requested_mode.as_str() {
        "selected-only" => "selected-only",
        "strategy-default" if !items.is_empty() => "strategy-default",
        _ => "no-evidence",
    };
    Resolution {
        insertion_mode: text("/insertionMode"),
        source_scope: text("/source/scope"),
        evidence_mode,
        requested_mode,
        neighbours: neighbours(request),
        has_variable_conflicts: array(request, "/variableMappings").iter().any(is_incompatible),
        has_asset_intents: has_asset_intents(request),
        has_target_theme: present(request.pointer("/target/themeSummary")),
        operator_instruction_present: operator_instruction(request).is_some(),
        items,
    }
}

/// The operator instruction when it says anything (blank counts as absent).
pub(crate) fn operator_instruction(request: &Value) -> Option<&str> {
    super::ecma::non_blank(request.get("operatorInstruction"))
}

/// A variable mapping is a conflict when its action says so: the source variable
/// cannot be carried over as it is and the agent must resolve it.
pub(crate) fn is_incompatible(mapping: &Value) -> bool {
    mapping.get("action").and_then(Value::as_str) == Some("incompatible")
}

/// Which evidence items render: every accessible item for strategy-default,
/// exactly the referenced (validated: existing, accessible) items for
/// selected-only, none for no-evidence.
fn resolved_items(request: &Value, mode: &str) -> Vec<usize> {
    let available = array(request, "/evidence/availableItems");
    let accessible = |item: &Value| item.get("accessible") == Some(&Value::Bool(true));
    match mode {
        "strategy-default" => (0..available.len()).filter(|&i| accessible(&available[i])).collect(),
        "selected-only" => {
            let refs = array(request, "/evidence/selection/refs");
            let key = |v: &Value| (v.get("kind").cloned(), v.get("id").cloned());
            let selected: Vec<_> = refs.iter().map(key).collect();
            (0..available.len())
                .filter(|&i| accessible(&available[i]) && selected.contains(&key(&available[i])))
                .collect()
        }
        _ => Vec::new(),
    }
}

fn neighbours(request: &Value) -> &'static str {
    let has = |key: &str| present(request.pointer(&format!("/target/{key}")));
    match (has("predecessor"), has("successor")) {
        (true, true) => "both",
        (true, false) => "predecessor-only",
        (false, true) => "successor-only",
        (false, false) => "none",
    }
}

/// Asset intents on any source screen, or asset examples on the blueprint.
fn has_asset_intents(request: &Value) -> bool {
    let non_empty = |v: Option<&Value>| v.and_then(Value::as_array).is_some_and(|a| !a.is_empty());
    let blueprint = request.pointer("/source/blueprint");
    let screens = blueprint.and_then(|b| b.get("screens")).and_then(Value::as_array);
    non_empty(blueprint.and_then(|b| b.get("assetExamples")))
        || screens.is_some_and(|s| s.iter().any(|screen| non_empty(screen.pointer("/aiMeta/assetIntents"))))
}

/// An optional object counts when it is there and not null.
fn present(value: Option<&Value>) -> bool {
    value.is_some_and(Value::is_object)
}

pub(crate) fn array<'r>(request: &'r Value, pointer: &str) -> &'r [Value] {
    request.pointer(pointer).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(evidence: Value) -> Value {
        json!({"insertionMode": "immediate", "source": {"scope": "system"}, "target": {}, "evidence": evidence, "variableMappings": []})
    }

    #[test]
    fn strategy_default_without_accessible_items_is_no_evidence() {
        let r = resolve(&request(json!({"selection": {"mode": "strategy-default", "refs": []},
            "availableItems": [{"kind": "review", "id": "a", "accessible": false, "value": 1}]})));
        assert_eq!((r.evidence_mode, r.requested_mode.as_str(), r.items.len()), ("no-evidence", "strategy-default", 0));
        assert_eq!(r.neighbours, "none");
    }

    #[test]
    fn strategy_default_takes_every_accessible_item() {
        let r = resolve(&request(json!({"selection": {"mode": "strategy-default", "refs": []},
            "availableItems": [{"kind": "k", "id": "a", "accessible": true}, {"kind": "k", "id": "b", "accessible": false},
                               {"kind": "k", "id": "c", "accessible": true}]})));
        assert_eq!((r.evidence_mode, r.items), ("strategy-default", vec![0, 2]));
    }

    #[test]
    fn selected_only_takes_exactly_the_refs() {
        let r = resolve(&request(json!({"selection": {"mode": "selected-only", "refs": [{"kind": "k", "id": "c"}]},
            "availableItems": [{"kind": "k", "id": "a", "accessible": true}, {"kind": "k", "id": "c", "accessible": true}]})));
        assert_eq!((r.evidence_mode, r.items), ("selected-only", vec![1]));
    }

    #[test]
    fn incompatible_mappings() {
        assert!(is_incompatible(&json!({"action": "incompatible"})));
        for action in ["bind", "create", "drop"] {
            assert!(!is_incompatible(&json!({"action": action, "status": "conflict"})), "{action}");
        }
    }

    #[test]
    fn operator_instruction_blank_the_ecmascript_way() {
        for (value, present) in
            [(json!("\u{feff} "), false), (json!("\u{85}"), true), (json!(7), false), (json!("x"), true)]
        {
            assert_eq!(operator_instruction(&json!({"operatorInstruction": value})).is_some(), present, "{value}");
        }
    }
}
