//! `packet::branch-consistency`: the resolvedBranch a packet records is the one
//! its own renderInput implies, field by field, and renderInput has no top-level
//! key that no branch renders. This needs no compile request, so it holds for any
//! packet: a run directory's, one exported by another tool, one from a bug report.
//!
//! Both renderInput shapes are read: the reference exporter's and this project's
//! agree on the parts the branch depends on (`sourceExample.scope`,
//! `target.{predecessor,successor,themeSummary}`, `evidence.{requestedMode,mode,items}`,
//! `variableMappings`, `operatorInstruction`, the blueprint's asset examples and intents).

use crate::branch::{EvidenceMode, Neighbours};
use crate::config::Config;
use crate::report::{Finding, JsonPath, PacketCheck};
use serde_json::{Map, Value};

const CHECK: PacketCheck = PacketCheck::BranchConsistency;

/// Every disagreement between resolvedBranch and renderInput, and every unknown renderInput key.
pub(crate) fn check(packet: &Map<String, Value>, config: &Config) -> Vec<Finding> {
    let mut out = Vec::new();
    let (Some(input), Some(recorded)) =
        (packet.get("renderInput").and_then(Value::as_object), packet.get("resolvedBranch").filter(|b| b.is_object()))
    else {
        // packet::contract reports a missing or non-object renderInput or resolvedBranch.
        return out;
    };
    let agent = config.agent(packet);
    let unknown = super::unknown_render_input_keys(packet, agent);
    out.extend(unknown.into_iter().map(|(at, message)| Finding::new(CHECK, at, message)));
    // A renamed value is read as the built-in one it names ([contract.renamed]).
    let builtin = agent.builtin_branch(recorded);
    let Some(branch) = builtin.as_object() else { return out };
    let implied = implied(input);
    for (field, value) in &implied.fields {
        let recorded = branch.get(*field);
        // A missing, mistyped or unknown value is packet::contract's finding.
        if recorded.is_some_and(|r| allowed(field, r) && r != value) {
            out.push(Finding::new(
                CHECK,
                JsonPath::field("resolvedBranch").key(field),
                format!(
                    "records {}, but renderInput implies {value}: {}",
                    recorded.map_or_else(String::new, Value::to_string),
                    implied.reason(field)
                ),
            ));
        }
    }
    evidence_rules(input, branch, &mut out);
    out
}

/// What renderInput implies for each branch field it determines, and why.
struct Implied {
    fields: Vec<(&'static str, Value)>,
    reasons: Vec<(&'static str, String)>,
}

impl Implied {
    fn reason(&self, field: &str) -> &str {
        self.reasons.iter().find(|(f, _)| *f == field).map_or("", |(_, r)| r.as_str())
    }
}

fn implied(input: &Map<String, Value>) -> Implied {
    let target = input.get("target");
    let has = |v: Option<&Value>, key: &str| v.and_then(|t| t.get(key)).is_some_and(Value::is_object);
    let (pred, succ) = (has(target, "predecessor"), has(target, "successor"));
    let neighbours = Neighbours::of(pred, succ);
    let theme = has(target, "themeSummary");
    let instruction = input.get("operatorInstruction").and_then(Value::as_str).is_some_and(|s| !s.trim().is_empty());
    let conflicts: Vec<usize> = array(input.get("variableMappings"))
        .iter()
        .enumerate()
        .filter(|(_, m)| is_conflict(m))
        .map(|(i, _)| i)
        .collect();
    let assets = asset_evidence(input.get("sourceExample").and_then(|s| s.get("blueprint")));
    let mut fields = vec![
        ("neighbours", Value::from(neighbours.name())),
        ("hasTargetTheme", Value::from(theme)),
        ("operatorInstructionPresent", Value::from(instruction)),
        ("hasVariableConflicts", Value::from(!conflicts.is_empty())),
        ("hasAssetIntents", Value::from(assets.is_some())),
    ];
    let present = |yes: bool| if yes { "present" } else { "absent" };
    let mut reasons = vec![
        (
            "neighbours",
            format!(
                "renderInput.target.predecessor is {}, renderInput.target.successor is {}",
                present(pred),
                present(succ)
            ),
        ),
        ("hasTargetTheme", format!("renderInput.target.themeSummary is {}", present(theme))),
        (
            "operatorInstructionPresent",
            format!(
                "renderInput.operatorInstruction is {}",
                if instruction { "a non-blank text" } else { "absent or blank" }
            ),
        ),
        (
            "hasVariableConflicts",
            match conflicts.first() {
                Some(i) => format!("renderInput.variableMappings[{i}] is incompatible"),
                None => "no renderInput.variableMappings item is incompatible".into(),
            },
        ),
        ("hasAssetIntents", assets.unwrap_or_else(|| "the blueprint has no asset examples or asset intents".into())),
    ];
    if let Some(scope) = input.get("sourceExample").and_then(|s| s.get("scope")).filter(|s| s.is_string()) {
        fields.push(("sourceScope", scope.clone()));
        reasons.push(("sourceScope", format!("renderInput.sourceExample.scope is {scope}")));
    }
    if let Some(mode) = input.get("evidence").and_then(|e| e.get("mode")).filter(|m| m.is_string()) {
        fields.push(("evidenceMode", mode.clone()));
        reasons.push(("evidenceMode", format!("renderInput.evidence.mode is {mode}")));
    }
    Implied { fields, reasons }
}

/// The evidence rules: a known mode, the mode the requested one can resolve to,
/// no items without evidence, at least one when evidence resolved.
fn evidence_rules(input: &Map<String, Value>, branch: &Map<String, Value>, out: &mut Vec<Finding>) {
    let mut fail = |path: JsonPath, message: String| out.push(Finding::new(CHECK, path, message));
    let at = JsonPath::field("renderInput").key("evidence");
    let Some(evidence) = input.get("evidence").and_then(Value::as_object) else {
        fail(at, "expected an object {requestedMode, mode, items}".into());
        return;
    };
    let mode_of = |value: Option<&Value>| value.and_then(Value::as_str).and_then(|m| EvidenceMode::parse(m).ok());
    let (requested, mode) = (mode_of(evidence.get("requestedMode")), mode_of(evidence.get("mode")));
    for (key, value) in [("requestedMode", requested), ("mode", mode)] {
        if value.is_none() {
            fail(
                at.clone().key(key),
                format!("expected one of {:?}, found {}", EvidenceMode::NAMES, super::describe(evidence.get(key))),
            );
        }
    }
    let Some(items) = evidence.get("items").and_then(Value::as_array) else {
        fail(at.clone().key("items"), format!("expected an array, found {}", super::describe(evidence.get("items"))));
        return;
    };
    // The mode that counts is the one the branch records (when it is one); a
    // disagreement with renderInput.evidence.mode is reported above.
    let resolved = mode_of(branch.get("evidenceMode")).or(mode);
    if let (Some(requested), Some(resolved)) = (requested, resolved) {
        // Only strategy-default may resolve to something else: no-evidence, when nothing is accessible.
        if !requested.can_resolve_to(resolved) {
            fail(
                at.clone().key("requestedMode"),
                format!(
                    "requested mode {:?} cannot resolve to {:?} (only strategy-default may resolve to no-evidence)",
                    requested.name(),
                    resolved.name()
                ),
            );
        }
    }
    match resolved {
        Some(EvidenceMode::NoEvidence) if !items.is_empty() => fail(
            at.clone().key("items"),
            format!("holds {} item(s) although the evidence mode is no-evidence", items.len()),
        ),
        Some(mode @ (EvidenceMode::SelectedOnly | EvidenceMode::StrategyDefault)) if items.is_empty() => fail(
            at.clone().key("items"),
            format!(
                "is empty although the evidence mode is {mode} (at least one item resolves under it; \
                 strategy-default with nothing accessible resolves to no-evidence)"
            ),
        ),
        _ => {}
    }
}

/// Why the blueprint has asset intents (the first asset example or intent), if it has any.
fn asset_evidence(blueprint: Option<&Value>) -> Option<String> {
    let blueprint = blueprint?;
    if !array(blueprint.get("assetExamples")).is_empty() {
        return Some("renderInput.sourceExample.blueprint.assetExamples is not empty".into());
    }
    array(blueprint.get("screens")).iter().enumerate().find_map(|(i, screen)| {
        let intents = array(screen.pointer("/aiMeta/assetIntents"));
        (!intents.is_empty())
            .then(|| format!("renderInput.sourceExample.blueprint.screens[{i}].aiMeta.assetIntents is not empty"))
    })
}

/// A variable mapping that needs a decision: `action: incompatible`, the
/// reference's rule and the compiler's (compile input follows the reference).
pub(crate) fn is_conflict(mapping: &Value) -> bool {
    mapping.get("action").and_then(Value::as_str) == Some("incompatible")
}

fn array(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// Whether `value` is one the contract allows for the branch field.
fn allowed(field: &str, value: &Value) -> bool {
    match super::BRANCH_FIELDS.iter().find(|(f, _)| *f == field) {
        Some((_, None)) => value.is_boolean(),
        Some((_, Some(values))) => value.as_str().is_some_and(|v| values.contains(&v)),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config() -> Config {
        Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap()
    }

    /// A consistent pair: both neighbours, a theme, an instruction, one selected item.
    fn packet() -> Map<String, Value> {
        let value = json!({
            "renderInput": {
                "promptMode": "library-adapt",
                "sourceExample": {"scope": "project", "blueprint": {"screens": [{"id": "s", "aiMeta": {"assetIntents": []}}], "assetExamples": []}},
                "target": {"predecessor": {"name": "p"}, "successor": {"name": "s"}, "themeSummary": {"name": "t"}},
                "evidence": {"requestedMode": "selected-only", "mode": "selected-only", "items": [{"kind": "review", "id": "r1"}]},
                "variableMappings": [{"action": "bind"}],
                "operatorInstruction": "Keep it short."
            },
            "resolvedBranch": {
                "agentId": "updateBlockFromLibrary", "insertionMode": "staged", "sourceScope": "project",
                "evidenceMode": "selected-only", "neighbours": "both", "hasVariableConflicts": false,
                "hasAssetIntents": false, "hasTargetTheme": true, "operatorInstructionPresent": true
            }
        });
        value.as_object().unwrap().clone()
    }

    fn messages(packet: &Map<String, Value>) -> Vec<String> {
        check(packet, &config()).into_iter().map(|f| format!("{}: {}", f.path, f.message)).collect()
    }

    /// Exactly the findings named by `fragments`, one each, in order.
    fn each(edit: impl FnOnce(&mut Value), fragments: &[&str]) {
        let mut p = Value::Object(packet());
        edit(&mut p);
        let found = messages(p.as_object().unwrap());
        assert_eq!(found.len(), fragments.len(), "{found:#?}");
        for (found, fragment) in found.iter().zip(fragments) {
            assert!(found.contains(fragment), "{fragment:?} in {found:#?}");
        }
    }

    fn one(edit: impl FnOnce(&mut Value), fragment: &str) {
        each(edit, &[fragment]);
    }

    #[test]
    fn a_consistent_packet_passes() {
        assert_eq!(messages(&packet()), Vec::<String>::new());
    }

    #[test]
    fn neighbours_none_beside_both_neighbour_summaries_fails() {
        one(
            |p| p["resolvedBranch"]["neighbours"] = json!("none"),
            "$.resolvedBranch.neighbours: records \"none\", but renderInput implies \"both\"",
        );
        one(
            |p| drop(p["renderInput"]["target"].as_object_mut().unwrap().remove("successor")),
            "implies \"predecessor-only\"",
        );
    }

    #[test]
    fn theme_instruction_scope_assets_and_conflicts_follow_render_input() {
        one(|p| p["resolvedBranch"]["hasTargetTheme"] = json!(false), "themeSummary is present");
        one(
            |p| p["resolvedBranch"]["operatorInstructionPresent"] = json!(false),
            "operatorInstruction is a non-blank text",
        );
        one(|p| p["renderInput"]["operatorInstruction"] = json!("  "), "absent or blank");
        one(|p| p["renderInput"]["sourceExample"]["scope"] = json!("system"), "$.resolvedBranch.sourceScope");
        one(
            |p| p["renderInput"]["sourceExample"]["blueprint"]["assetExamples"] = json!([{"slotKey": "hero"}]),
            "assetExamples is not empty",
        );
        one(
            |p| {
                p["renderInput"]["sourceExample"]["blueprint"]["screens"][0]["aiMeta"]["assetIntents"] =
                    json!([{"slotRole": "hero"}])
            },
            "screens[0].aiMeta.assetIntents is not empty",
        );
        one(
            |p| p["renderInput"]["variableMappings"] = json!([{"action": "bind"}, {"action": "incompatible"}]),
            "variableMappings[1] is incompatible",
        );
        // Only the action decides, whatever else a mapping says.
        let mut p = Value::Object(packet());
        p["renderInput"]["variableMappings"] =
            json!([{"action": "bind", "sourceType": "number", "targetType": "enum", "status": "conflict"}]);
        assert_eq!(messages(p.as_object().unwrap()), Vec::<String>::new());
    }

    #[test]
    fn evidence_mode_and_items_follow_render_input() {
        each(
            |p| p["resolvedBranch"]["evidenceMode"] = json!("strategy-default"),
            &["renderInput.evidence.mode is \"selected-only\"", "requested mode \"selected-only\" cannot resolve"],
        );
        one(
            |p| p["renderInput"]["evidence"]["items"] = json!([]),
            "is empty although the evidence mode is selected-only",
        );
        let mut p = Value::Object(packet());
        p["renderInput"]["evidence"] = json!({"requestedMode": "strategy-default", "mode": "no-evidence", "items": []});
        p["resolvedBranch"]["evidenceMode"] = json!("no-evidence");
        assert_eq!(
            messages(p.as_object().unwrap()),
            Vec::<String>::new(),
            "nothing accessible resolves to no-evidence"
        );
        p["renderInput"]["evidence"]["items"] = json!([{"kind": "review", "id": "r1"}]);
        let found = messages(p.as_object().unwrap());
        assert!(
            found.len() == 1 && found[0].contains("holds 1 item(s) although the evidence mode is no-evidence"),
            "{found:#?}"
        );
    }

    #[test]
    fn an_unknown_render_input_key_is_named() {
        one(|p| p["renderInput"]["debugNotes"] = json!("x"), "unknown renderInput key \"debugNotes\"");
    }
}
