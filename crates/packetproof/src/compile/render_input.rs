//! renderInput: the resolved branch only. What is left out, and why:
//! - asset examples become compact pattern references ([`PATTERN_KEYS`]): their
//!   generator prompts are provider-ready material for a later, target-side step;
//! - the source's own data mappings and evidence links are emptied: they point at
//!   the source project's evidence, which is outside this request's boundary;
//! - sequence entries lose `firstScreenId`: other blocks' screens are not routes
//!   the adapted block may take;
//! - evidence is exactly the resolved items; neighbours, theme and operator
//!   instruction appear only when they resolved.
//!
//! [`excluded_regions`] names the same left-out parts of a request, for the
//! branch-isolation check; keep the two in step.

use super::branch::{self, Resolution};
use crate::packet::PROMPT_MODE;
use crate::report::{child, index};
use serde_json::{json, Map, Value};

/// The fields an asset example keeps: what the pattern is and where it sits.
pub(crate) const PATTERN_KEYS: [&str; 5] = ["screenId", "slotKey", "assetType", "style", "aspectRatio"];
/// Blueprint-level records of the source's own evidence use.
const SOURCE_DATA_KEYS: [&str; 2] = ["dataUsage", "blockDataUsage"];
const SEQUENCE_KEYS: [&str; 6] = ["entityId", "name", "blockType", "description", "screensCount", "order"];

pub(crate) fn build(request: &Value, resolution: &Resolution) -> Value {
    let field = |pointer: &str| request.pointer(pointer).cloned().unwrap_or(Value::Null);
    let mut input = Map::new();
    input.insert("promptMode".into(), json!(PROMPT_MODE));
    input.insert(
        "sourceExample".into(),
        json!({
            "scope": field("/source/scope"),
            "exampleId": field("/source/exampleId"),
            "name": field("/source/name"),
            "checksum": field("/source/checksum"),
            "blueprint": blueprint(request.pointer("/source/blueprint").unwrap_or(&Value::Null)),
        }),
    );
    input.insert("target".into(), target(request));
    let available = branch::array(request, "/evidence/availableItems");
    let items: Vec<Value> = resolution.items.iter().map(|&i| available[i].clone()).collect();
    input.insert(
        "evidence".into(),
        json!({"requestedMode": resolution.requested_mode, "mode": resolution.evidence_mode, "items": items}),
    );
    input.insert("variableMappings".into(), json!(branch::array(request, "/variableMappings")));
    if let Some(instruction) = branch::operator_instruction(request) {
        input.insert("operatorInstruction".into(), json!(instruction));
    }
    Value::Object(input)
}

fn target(request: &Value) -> Value {
    let Some(source) = request.get("target").and_then(Value::as_object) else { return json!({}) };
    let mut target = Map::new();
    for key in ["strategy", "blockId", "blockName", "blockType", "blockContract", "strategyVariables"] {
        target.insert(key.into(), source.get(key).cloned().unwrap_or(Value::Null));
    }
    let sequence = branch::array(request, "/target/sequence").iter().map(|entry| keep(entry, &SEQUENCE_KEYS)).collect();
    target.insert("sequence".into(), Value::Array(sequence));
    for key in ["predecessor", "successor", "themeSummary"] {
        if let Some(value) = source.get(key).filter(|v| v.is_object()) {
            target.insert(key.into(), value.clone());
        }
    }
    Value::Object(target)
}

fn blueprint(source: &Value) -> Value {
    let Some(map) = source.as_object() else { return source.clone() };
    let mut out = Map::new();
    for (key, value) in map.iter().filter(|(k, _)| !SOURCE_DATA_KEYS.contains(&k.as_str())) {
        let reduced = match key.as_str() {
            "assetExamples" => map_items(value, |example| keep(example, &PATTERN_KEYS)),
            "screens" => map_items(value, screen),
            "dataSemantics" => {
                let mut semantics = value.clone();
                if let Some(screens) = semantics.get_mut("screens").and_then(Value::as_array_mut) {
                    screens.iter_mut().for_each(empty_data_mapping);
                }
                semantics
            }
            _ => value.clone(),
        };
        out.insert(key.clone(), reduced);
    }
    Value::Object(out)
}

fn screen(source: &Value) -> Value {
    let mut screen = source.clone();
    if let Some(meta) = screen.get_mut("aiMeta") {
        empty_data_mapping(meta);
        if let Some(intents) = meta.get_mut("assetIntents").and_then(Value::as_array_mut) {
            intents
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .for_each(|intent| drop(intent.shift_remove("linkedSourceRefs")));
        }
    }
    screen
}

/// Keep the key (so the shape stays recognisable) but drop the source's mappings.
fn empty_data_mapping(value: &mut Value) {
    if let Some(mapping) = value.get_mut("dataMapping").filter(|m| m.is_array()) {
        *mapping = json!([]);
    }
}

fn keep(value: &Value, keys: &[&str]) -> Value {
    match value.as_object() {
        Some(map) => Value::Object(
            map.iter().filter(|(k, _)| keys.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect(),
        ),
        None => value.clone(),
    }
}

fn map_items(value: &Value, f: impl Fn(&Value) -> Value) -> Value {
    match value.as_array() {
        Some(items) => Value::Array(items.iter().map(f).collect()),
        None => value.clone(),
    }
}

/// The parts of a request that [`build`] leaves out, by request JSON path.
/// `items` are the indices of the evidence items that render.
pub(crate) fn excluded_regions<'r>(request: &'r Value, items: &[usize]) -> Vec<(String, &'r Value)> {
    let mut out = Vec::new();
    for (i, item) in branch::array(request, "/evidence/availableItems").iter().enumerate() {
        if !items.contains(&i) {
            out.push((index("$.evidence.availableItems", i), item));
        }
    }
    // Other blocks' screens are not routes of this block (see the module docs).
    for (i, entry) in branch::array(request, "/target/sequence").iter().enumerate() {
        if let Some(first) = entry.get("firstScreenId") {
            out.push((format!("{}.firstScreenId", index("$.target.sequence", i)), first));
        }
    }
    let Some(blueprint) = request.pointer("/source/blueprint").and_then(Value::as_object) else { return out };
    let base = "$.source.blueprint";
    for key in SOURCE_DATA_KEYS {
        if let Some(value) = blueprint.get(key) {
            out.push((child(base, key), value));
        }
    }
    let each = |key: &str| blueprint.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for (i, example) in each("assetExamples").iter().enumerate() {
        let at = index(&child(base, "assetExamples"), i);
        let dropped = example.as_object().into_iter().flatten().filter(|(k, _)| !PATTERN_KEYS.contains(&k.as_str()));
        out.extend(dropped.map(|(k, v)| (child(&at, k), v)));
    }
    for (i, screen) in each("screens").iter().enumerate() {
        let at = format!("{}.aiMeta", index(&child(base, "screens"), i));
        if let Some(mapping) = screen.pointer("/aiMeta/dataMapping") {
            out.push((child(&at, "dataMapping"), mapping));
        }
        let intents =
            screen.pointer("/aiMeta/assetIntents").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for (j, intent) in intents.iter().enumerate() {
            if let Some(refs) = intent.get("linkedSourceRefs") {
                out.push((format!("{}.linkedSourceRefs", index(&child(&at, "assetIntents"), j)), refs));
            }
        }
    }
    let semantics = request.pointer("/source/blueprint/dataSemantics/screens").and_then(Value::as_array);
    for (i, entry) in semantics.map(Vec::as_slice).unwrap_or_default().iter().enumerate() {
        if let Some(mapping) = entry.get("dataMapping") {
            out.push((format!("{}.dataMapping", index("$.source.blueprint.dataSemantics.screens", i)), mapping));
        }
    }
    out
}
