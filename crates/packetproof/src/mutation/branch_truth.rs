//! Mutations for branch truth on any packet: one per consistency rule
//! of `packet::branch-consistency`, per kind of material `packet::forbidden-material`
//! recognises beyond its key list, and edits only `packet::renders-from-input` can
//! see. Every one is re-hashed, so the check has to catch it on its own.

use super::{Edit, PacketMutation};
use crate::branch::{EvidenceMode, SourceScope};
use crate::numbers::same;
use crate::packet::BRANCH_FIELDS;
use crate::profile::Profile;
use crate::PacketCheck;
use serde_json::{json, Map, Value};

pub(super) fn mutations(golden: &Map<String, Value>, config: &crate::Invocation) -> Vec<PacketMutation> {
    let mut list = Vec::new();
    let mut add = |name: &str, check: PacketCheck, edit: Edit| {
        list.push(PacketMutation { name: name.to_owned(), check, rehash: true, edit })
    };
    render_input_edits(golden, &mut add);
    branch_flips(golden, config.settings().agent(golden), &mut add);
    // Under the `warn` asset-prompt policy forbidden-material only notes a generator
    // prompt: the fixture's fresh packet is then what shows the damage.
    let asset_prompts = match config.asset_example_prompts() {
        crate::config::Policy::Fail => PacketCheck::ForbiddenMaterial,
        crate::config::Policy::Warn => PacketCheck::Regenerates,
    };
    forbidden(&mut add, asset_prompts, config.settings().forbidden_of(config.settings().agent(golden)));
    rendering(&mut add);
    list
}

/// Why `mutated` means what `golden` means (the same branch, the same rendering),
/// when it does: then no check can catch the mutation, and none is asked to. The
/// one such edit the contract defines is a blank operatorInstruction added or
/// removed: blank is no instruction (`operatorInstructionPresent` is false either
/// way, as the reference reads it), and nothing renders from it.
pub(super) fn means_the_same(golden: &Map<String, Value>, mutated: &Map<String, Value>) -> Option<&'static str> {
    same_reading(golden, mutated).then_some(
        "it leaves the branch and the rendering as they were (a blank operatorInstruction is no instruction: \
         operatorInstructionPresent is false with it and without it)",
    )
}

/// The packets are the same (numbers by value) but for their checksums and a blank
/// operatorInstruction in renderInput, compared in place: the self-test asks of
/// every mutation, and copying both packets to drop those members cost more than
/// the checks that judged the mutation.
fn same_reading(golden: &Map<String, Value>, mutated: &Map<String, Value>) -> bool {
    same_without(
        golden,
        mutated,
        |key, _| key == "checksum",
        |key, a, b| match (key, a, b) {
            ("renderInput", Value::Object(a), Value::Object(b)) => {
                same_without(a, b, |key, value| key == "operatorInstruction" && blank(value), |_, a, b| same(a, b))
            }
            _ => same(a, b),
        },
    )
}

fn blank(value: &Value) -> bool {
    value.as_str().is_some_and(|text| text.trim().is_empty())
}

/// Whether `a` and `b` have the same members once those `dropped` says are left out,
/// each pair of values compared by `same_member`.
fn same_without(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    dropped: impl Fn(&str, &Value) -> bool,
    same_member: impl Fn(&str, &Value, &Value) -> bool,
) -> bool {
    let kept = |map: &Map<String, Value>| map.iter().filter(|(key, value)| !dropped(key, value)).count();
    kept(a) == kept(b)
        && a.iter()
            .filter(|(key, value)| !dropped(key, value))
            .all(|(key, x)| b.get(key).filter(|y| !dropped(key, y)).is_some_and(|y| same_member(key, x, y)))
}

fn branch_of(golden: &Map<String, Value>, field: &str) -> Option<Value> {
    golden.get("resolvedBranch").and_then(|b| b.get(field)).cloned()
}

/// renderInput edited so that it implies another value of one branch field (or
/// breaks one evidence rule, or the closed key set).
fn render_input_edits(golden: &Map<String, Value>, add: &mut impl FnMut(&str, PacketCheck, Edit)) {
    let input = |pointer: &str| golden.get("renderInput").and_then(|i| i.pointer(pointer)).cloned();
    let branch = |field: &str| branch_of(golden, field);
    for key in ["predecessor", "successor", "themeSummary"] {
        add(
            &format!("renderInput.target.{key} added or removed"),
            PacketCheck::BranchConsistency,
            Box::new(move |p| toggle(p, "/target", key, json!({"name": "Injected", "blockType": "other"}))),
        );
    }
    add(
        "renderInput.operatorInstruction added or removed",
        PacketCheck::BranchConsistency,
        Box::new(|p| toggle(p, "", "operatorInstruction", json!("Injected instruction."))),
    );
    add(
        "renderInput.sourceExample.scope flipped",
        PacketCheck::BranchConsistency,
        Box::new(|p| {
            if let Some(scope) = render_input(p).and_then(|i| i.pointer_mut("/sourceExample/scope")) {
                let current = scope.as_str().and_then(|s| SourceScope::parse(s).ok());
                // A scope outside the set (packet::contract's finding) becomes a known one.
                *scope = json!(current.map_or(SourceScope::Project, SourceScope::other));
            }
        }),
    );
    use EvidenceMode::{NoEvidence, SelectedOnly, StrategyDefault};
    let mode = input("/evidence/mode").and_then(|m| m.as_str().and_then(|m| EvidenceMode::parse(m).ok()));
    let other_mode = if mode == Some(SelectedOnly) { StrategyDefault } else { SelectedOnly };
    add(
        &format!("renderInput.evidence.mode set to {other_mode}"),
        PacketCheck::BranchConsistency,
        Box::new(move |p| set(p, "/evidence/mode", json!(other_mode))),
    );
    let unresolvable = if mode == Some(SelectedOnly) { NoEvidence } else { SelectedOnly };
    add(
        &format!("renderInput.evidence.requestedMode set to {unresolvable}"),
        PacketCheck::BranchConsistency,
        Box::new(move |p| set(p, "/evidence/requestedMode", json!(unresolvable))),
    );
    if mode == Some(NoEvidence) {
        add(
            "an evidence item added under no-evidence",
            PacketCheck::BranchConsistency,
            Box::new(|p| {
                if let Some(Value::Array(items)) = render_input(p).and_then(|i| i.pointer_mut("/evidence/items")) {
                    items.push(json!({"kind": "review", "id": "injected", "accessible": true, "value": {}}));
                }
            }),
        );
    } else {
        add(
            &format!("every evidence item removed under {}", mode.map_or("", EvidenceMode::name)),
            PacketCheck::BranchConsistency,
            Box::new(|p| set(p, "/evidence/items", json!([]))),
        );
    }
    let assets = branch("hasAssetIntents") == Some(Value::Bool(true));
    add(
        "asset examples and intents added or removed",
        PacketCheck::BranchConsistency,
        Box::new(move |p| toggle_assets(p, assets)),
    );
    let conflicts = branch("hasVariableConflicts") == Some(Value::Bool(true));
    add(
        "an incompatible variable mapping added or removed",
        PacketCheck::BranchConsistency,
        Box::new(move |p| toggle_conflict(p, conflicts)),
    );
    add(
        "an unknown top-level renderInput key added",
        PacketCheck::BranchConsistency,
        Box::new(|p| set(p, "/reviewerNotes", json!("x"))),
    );
}

/// Each resolvedBranch field set to another value: renderInput no longer implies
/// it, and the templates render another partial.
fn branch_flips(golden: &Map<String, Value>, agent: &Profile, add: &mut impl FnMut(&str, PacketCheck, Edit)) {
    for (field, allowed) in BRANCH_FIELDS {
        let current = branch_of(golden, field).unwrap_or(Value::Null);
        let other = other_value(agent, field, allowed, &current);
        // insertionMode is the one field renderInput does not determine.
        if field != "insertionMode" {
            let value = other.clone();
            add(
                &format!("resolvedBranch.{field} set to {other}"),
                PacketCheck::BranchConsistency,
                Box::new(move |p| set_branch(p, field, value.clone())),
            );
        }
        add(
            &format!("resolvedBranch.{field} set to {other}"),
            PacketCheck::RendersFromInput,
            Box::new(move |p| set_branch(p, field, other.clone())),
        );
    }
}

/// A value of `field` that means something else than `current`, named as new packets
/// name it (a value the suite renamed means the built-in one: `[contract.renamed]`).
pub(super) fn other_value(agent: &Profile, field: &str, allowed: Option<&[&str]>, current: &Value) -> Value {
    match allowed {
        Some(values) => {
            let meaning = current.as_str().map(|c| agent.builtin_value(field, c));
            let other = values.iter().find(|v| meaning != Some(**v)).expect("two values at least");
            Value::from(agent.spelled(field, other))
        }
        None => Value::Bool(!current.as_bool().unwrap_or(false)),
    }
}

/// Edits that leave the branch consistent but the prompts no longer its rendering.
fn rendering(add: &mut impl FnMut(&str, PacketCheck, Edit)) {
    add(
        "a line appended to the user message",
        PacketCheck::RendersFromInput,
        Box::new(|p| {
            for key in ["userMessage", "effectiveUserMessage"] {
                if let Some(Value::String(text)) = p.get_mut(key) {
                    text.insert_str(0, "Also mention the spring discount.\n");
                }
            }
        }),
    );
    add(
        "the target block name edited in renderInput",
        PacketCheck::RendersFromInput,
        Box::new(|p| {
            if let Some(Value::String(name)) = render_input(p).and_then(|i| i.pointer_mut("/target/blockName")) {
                name.push_str(" (edited)");
            }
        }),
    );
}

/// Material that only its shape, or a key that is new to the list, gives away.
fn forbidden(
    add: &mut impl FnMut(&str, PacketCheck, Edit),
    asset_prompts: PacketCheck,
    listed: &crate::forbidden::Forbidden,
) {
    add(
        "the blueprint's screens copied under target.frames",
        PacketCheck::ForbiddenMaterial,
        Box::new(|p| {
            let screens = render_input(p).and_then(|i| i.pointer("/sourceExample/blueprint/screens")).cloned();
            set(p, "/target/frames", screens.unwrap_or(Value::Null));
        }),
    );
    // The keys the agent forbids (it may narrow the list).
    for key in ["posterUrl", "referenceImages", "providerResponse"].into_iter().filter(|k| listed.is_forbidden_key(k)) {
        add(
            &format!("{key} added to renderInput.target"),
            PacketCheck::ForbiddenMaterial,
            Box::new(move |p| set(p, &format!("/target/{key}"), json!("kept"))),
        );
    }
    add(
        "a generator prompt added to an asset example",
        asset_prompts,
        Box::new(|p| {
            let Some(blueprint) =
                render_input(p).and_then(|i| i.pointer_mut("/sourceExample/blueprint")).and_then(Value::as_object_mut)
            else {
                return;
            };
            let examples = blueprint.entry("assetExamples").or_insert_with(|| json!([]));
            if let Some(items) = examples.as_array_mut() {
                if items.is_empty() {
                    items.push(json!({"slotKey": "hero"}));
                }
                items[0]["promptTemplate"] = json!("soft morning light over a tidy desk");
            }
        }),
    );
}

fn render_input(p: &mut Map<String, Value>) -> Option<&mut Value> {
    p.get_mut("renderInput")
}

/// Set the member at `pointer` below renderInput (its parent must exist).
fn set(p: &mut Map<String, Value>, pointer: &str, value: Value) {
    let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
    if let Some(Value::Object(map)) = render_input(p).and_then(|i| i.pointer_mut(parent)) {
        map.insert(key.to_owned(), value);
    }
}

/// Remove `key` from the object at `parent` below renderInput, or add it as `value`.
fn toggle(p: &mut Map<String, Value>, parent: &str, key: &str, value: Value) {
    if let Some(Value::Object(map)) = render_input(p).and_then(|i| i.pointer_mut(parent)) {
        if map.shift_remove(key).is_none() {
            map.insert(key.to_owned(), value);
        }
    }
}

fn set_branch(p: &mut Map<String, Value>, field: &str, value: Value) {
    if let Some(Value::Object(branch)) = p.get_mut("resolvedBranch") {
        branch.insert(field.to_owned(), value);
    }
}

fn toggle_assets(p: &mut Map<String, Value>, present: bool) {
    let Some(Value::Object(blueprint)) = render_input(p).and_then(|i| i.pointer_mut("/sourceExample/blueprint")) else {
        return;
    };
    if !present {
        blueprint.insert("assetExamples".into(), json!([{"slotKey": "hero", "assetType": "image"}]));
        return;
    }
    blueprint.insert("assetExamples".into(), json!([]));
    for screen in blueprint.get_mut("screens").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(Value::Array(intents)) = screen.pointer_mut("/aiMeta/assetIntents") {
            intents.clear();
        }
    }
}

fn toggle_conflict(p: &mut Map<String, Value>, present: bool) {
    let Some(Value::Array(mappings)) = render_input(p).and_then(|i| i.get_mut("variableMappings")) else { return };
    if present {
        mappings.retain(|m| !crate::packet::branch_consistency::is_conflict(m));
    } else {
        mappings.push(json!({"action": "incompatible", "sourceVariableId": "a", "resolution": "drop"}));
    }
}
