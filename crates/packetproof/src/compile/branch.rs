//! Branch resolution: the nine `resolvedBranch` fields, each derived
//! from the (already validated) request, never copied when it can be derived.

use crate::branch::{EvidenceMode, InsertionMode, Neighbours, SourceScope, UnknownValue};
use crate::JsonPath;
use crate::{Error, Result};
use serde_json::{json, Map, Value};

/// The resolved branch plus what it resolved to: the evidence items that render.
#[derive(Debug, Clone)]
pub(crate) struct Resolution {
    pub(crate) insertion_mode: InsertionMode,
    pub(crate) source_scope: SourceScope,
    pub(crate) requested_mode: EvidenceMode,
    pub(crate) evidence_mode: EvidenceMode,
    pub(crate) neighbours: Neighbours,
    pub(crate) has_variable_conflicts: bool,
    pub(crate) has_asset_intents: bool,
    pub(crate) has_target_theme: bool,
    pub(crate) operator_instruction_present: bool,
    /// Indices into `evidence.availableItems` of the items that render, in request order.
    pub(crate) items: Vec<usize>,
}

impl Resolution {
    /// `resolvedBranch`, in the key order of the Node packets.
    pub(crate) fn to_json(&self, agent_id: &str) -> Value {
        let mut branch = Map::new();
        branch.insert("agentId".into(), json!(agent_id));
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

/// Resolve the branch of a request that passed validation (`file` names it in the
/// error a request with a value outside its set gets).
pub(crate) fn resolve(request: &Value, file: &str) -> Result<Resolution> {
    let requested_mode = requested_mode(request, file)?;
    let items = resolved_items(request, requested_mode);
    // strategy-default with nothing accessible renders exactly like no-evidence,
    // so it is recorded as such (the request's mode stays in renderInput).
    let evidence_mode = match requested_mode {
        EvidenceMode::StrategyDefault if items.is_empty() => EvidenceMode::NoEvidence,
        mode => mode,
    };
    Ok(Resolution {
        insertion_mode: value(request, "/insertionMode", file, InsertionMode::parse)?,
        source_scope: value(request, "/source/scope", file, SourceScope::parse)?,
        evidence_mode,
        requested_mode,
        neighbours: neighbours(request),
        has_variable_conflicts: array(request, "/variableMappings").iter().any(is_incompatible),
        has_asset_intents: has_asset_intents(request),
        has_target_theme: present(request.pointer("/target/themeSummary")),
        operator_instruction_present: operator_instruction(request).is_some(),
        items,
    })
}

/// The evidence mode the request asks for.
pub(crate) fn requested_mode(request: &Value, file: &str) -> Result<EvidenceMode> {
    value(request, "/evidence/selection/mode", file, EvidenceMode::parse)
}

/// The value of a branch field at `pointer`, parsed; absent or unknown is an error.
fn value<T>(request: &Value, pointer: &str, file: &str, parse: fn(&str) -> Result<T, UnknownValue>) -> Result<T> {
    let path = pointer.split('/').skip(1).fold(JsonPath::root(), JsonPath::key);
    let text = request.pointer(pointer).and_then(Value::as_str).unwrap_or_default();
    parse(text).map_err(|e| Error::shape(file, path, format!("one of {:?}, found {:?}", e.expected, e.found)))
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
pub(crate) fn resolved_items(request: &Value, mode: EvidenceMode) -> Vec<usize> {
    let available = array(request, "/evidence/availableItems");
    let accessible = |item: &Value| item.get("accessible") == Some(&Value::Bool(true));
    match mode {
        EvidenceMode::StrategyDefault => (0..available.len()).filter(|&i| accessible(&available[i])).collect(),
        EvidenceMode::SelectedOnly => {
            let refs = array(request, "/evidence/selection/refs");
            let key = |v: &Value| (v.get("kind").cloned(), v.get("id").cloned());
            let selected: Vec<_> = refs.iter().map(key).collect();
            (0..available.len())
                .filter(|&i| accessible(&available[i]) && selected.contains(&key(&available[i])))
                .collect()
        }
        EvidenceMode::NoEvidence => Vec::new(),
    }
}

fn neighbours(request: &Value) -> Neighbours {
    let has = |key: &str| present(request.pointer(&format!("/target/{key}")));
    Neighbours::of(has("predecessor"), has("successor"))
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
    use EvidenceMode::{NoEvidence, SelectedOnly, StrategyDefault};

    fn request(evidence: Value) -> Value {
        json!({"insertionMode": "immediate", "source": {"scope": "system"}, "target": {}, "evidence": evidence, "variableMappings": []})
    }

    #[test]
    fn strategy_default_without_accessible_items_is_no_evidence() {
        let r = resolve(
            &request(json!({"selection": {"mode": "strategy-default", "refs": []},
            "availableItems": [{"kind": "review", "id": "a", "accessible": false, "value": 1}]})),
            "r",
        )
        .unwrap();
        assert_eq!((r.evidence_mode, r.requested_mode, r.items.len()), (NoEvidence, StrategyDefault, 0));
        assert_eq!(r.neighbours, Neighbours::None);
        assert_eq!(r.to_json(crate::packet::AGENT_ID)["neighbours"], "none");
    }

    #[test]
    fn strategy_default_takes_every_accessible_item() {
        let r = resolve(&request(json!({"selection": {"mode": "strategy-default", "refs": []},
            "availableItems": [{"kind": "k", "id": "a", "accessible": true}, {"kind": "k", "id": "b", "accessible": false},
                               {"kind": "k", "id": "c", "accessible": true}]})), "r")
        .unwrap();
        assert_eq!((r.evidence_mode, r.items), (StrategyDefault, vec![0, 2]));
    }

    #[test]
    fn selected_only_takes_exactly_the_refs() {
        let r = resolve(&request(json!({"selection": {"mode": "selected-only", "refs": [{"kind": "k", "id": "c"}]},
            "availableItems": [{"kind": "k", "id": "a", "accessible": true}, {"kind": "k", "id": "c", "accessible": true}]})), "r")
        .unwrap();
        assert_eq!(r.to_json(crate::packet::AGENT_ID)["evidenceMode"], "selected-only");
        assert_eq!((r.evidence_mode, r.items), (SelectedOnly, vec![1]));
    }

    /// Resolution never defaults: a value outside its set names the file, path and set.
    #[test]
    fn an_unknown_branch_value_is_an_error() {
        let evidence = json!({"selection": {"mode": "selected_only", "refs": []}, "availableItems": []});
        let err = resolve(&request(evidence), "request.json").unwrap_err().to_string();
        assert!(err.contains("request.json") && err.contains("$.evidence.selection.mode"), "{err}");
        assert!(err.contains(r#"one of ["strategy-default", "selected-only", "no-evidence"], found "selected_only""#));
        let mut unknown_scope =
            request(json!({"selection": {"mode": "no-evidence", "refs": []}, "availableItems": []}));
        unknown_scope["source"]["scope"] = json!("global");
        let err = resolve(&unknown_scope, "r").unwrap_err().to_string();
        assert!(err.contains("$.source.scope") && err.contains(r#"found "global""#), "{err}");
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
