//! The source blueprint rules of the reference validator (its rules
//! R09–R30): its members and their types, screen ids, dataSemantics restating each
//! screen's aiMeta, asset examples, and the blueprint-only forbidden keys. Messages
//! are the reference's own texts (its tooling compares them verbatim); the finding
//! path says where in the request.

use super::ecma::{non_blank, same_value};
use super::request::CHECK;
use crate::report::{index, Finding, JsonPath, Location};
use crate::Config;
use serde_json::{Map, Value};

const BASE: &str = "$.source.blueprint";

fn base() -> JsonPath {
    JsonPath::field("source").key("blueprint")
}
/// Keys a library example keeps for its source project only.
const SOURCE_ONLY: [&str; 4] = ["taskId", "order", "isFirstBlock", "action"];
/// The two aiMeta arrays dataSemantics restates, with their rule messages' names.
const RESTATED: [&str; 2] = ["dataMapping", "variableRealizations"];

struct Rules<'o> {
    out: &'o mut Vec<Finding>,
}

impl Rules<'_> {
    fn fail(&mut self, path: impl Into<Location>, message: impl Into<String>) {
        self.out.push(Finding::new(CHECK, path, message));
    }
}

/// Every blueprint problem, in the reference's order.
pub(crate) fn check(blueprint: Option<&Value>, config: &Config, out: &mut Vec<Finding>) {
    let mut rules = Rules { out };
    let Some(map) = blueprint.and_then(Value::as_object) else {
        return rules.fail(base(), "blueprint must be an object");
    };
    members(map, &mut rules);
    let valid_ids = screen_ids(map, &mut rules);
    data_semantics(map, &valid_ids, &mut rules);
    asset_examples(map, &valid_ids, &mut rules);
    forbidden(blueprint.unwrap_or(&Value::Null), config, &mut rules);
}

/// R10–R17: the members and their types.
fn members(map: &Map<String, Value>, rules: &mut Rules) {
    match map.get("strategicBlock") {
        Some(Value::Object(block)) => {
            let found: Vec<&str> = SOURCE_ONLY.into_iter().filter(|k| block.contains_key(*k)).collect();
            if !found.is_empty() {
                rules.fail(
                    base().key("strategicBlock"),
                    format!("blueprint.strategicBlock contains source-only fields: {}", found.join(", ")),
                );
            }
        }
        _ => rules.fail(base().key("strategicBlock"), "blueprint.strategicBlock must be an object"),
    }
    if map.get("screens").and_then(Value::as_array).is_none_or(Vec::is_empty) {
        rules.fail(base().key("screens"), "blueprint.screens must contain at least one simplified screen");
    }
    if !map.get("instructions").is_some_and(Value::is_array) {
        rules.fail(base().key("instructions"), "blueprint.instructions must be an array");
    }
    if !map.get("contract").is_some_and(Value::is_object) {
        rules.fail(base().key("contract"), "blueprint.contract must be an object");
    }
    if !map.get("dataSemantics").and_then(|d| d.get("screens")).is_some_and(Value::is_array) {
        rules.fail(base().key("dataSemantics").key("screens"), "blueprint.dataSemantics.screens must be an array");
    }
    // Any non-array, null included, is this failure (the reference crashes on
    // some of them instead).
    if !map.get("assetExamples").is_some_and(Value::is_array) {
        rules.fail(base().key("assetExamples"), "blueprint.assetExamples must be an array");
    }
    if !map.get("strategyVariables").is_some_and(Value::is_object) {
        rules.fail(base().key("strategyVariables"), "blueprint.strategyVariables must be an object");
    }
}

fn each<'m>(map: &'m Map<String, Value>, key: &str) -> &'m [Value] {
    map.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// R18–R19; returns the valid screen ids, de-duplicated, in order.
fn screen_ids<'m>(map: &'m Map<String, Value>, rules: &mut Rules) -> Vec<&'m str> {
    let mut ids: Vec<&str> = Vec::new();
    for (i, screen) in each(map, "screens").iter().enumerate() {
        let path = base().key("screens").index(i);
        match non_blank(screen.get("id")) {
            None => rules.fail(path.clone().key("id"), format!("blueprint.screens[{i}].id must be non-empty")),
            Some(id) if ids.contains(&id) => {
                rules.fail(path.clone().key("id"), format!("blueprint.screens contains duplicate id {id}"))
            }
            Some(id) => ids.push(id),
        }
    }
    ids
}

/// R20–R26: one entry per valid screen, in order, restating its aiMeta arrays.
fn data_semantics(map: &Map<String, Value>, valid_ids: &[&str], rules: &mut Rules) {
    let entries = map.get("dataSemantics").and_then(|d| d.get("screens")).and_then(Value::as_array);
    let mut named: Vec<&str> = Vec::new();
    for (i, entry) in entries.map(Vec::as_slice).unwrap_or_default().iter().enumerate() {
        let path = base().key("dataSemantics").key("screens").index(i);
        let message = |rest: &str| format!("blueprint.dataSemantics.screens[{i}].{rest}");
        let Some(screen_id) = non_blank(entry.get("screenId")) else {
            rules.fail(path.clone().key("screenId"), message("screenId must be non-empty"));
            continue;
        };
        named.push(screen_id);
        if !valid_ids.contains(&screen_id) {
            rules.fail(path.clone().key("screenId"), message("screenId is unknown"));
        }
        for key in RESTATED {
            if !entry.get(key).is_some_and(Value::is_array) {
                rules.fail(path.clone().key(key), message(&format!("{key} must be an array")));
            }
        }
        let screen = each(map, "screens").iter().find(|s| s.get("id").and_then(Value::as_str) == Some(screen_id));
        let Some(screen) = screen else { continue };
        for key in RESTATED {
            let Some(stated) = entry.get(key).filter(|v| v.is_array()) else { continue };
            // The screen side: absent or null counts as an empty array.
            let own = match screen.get("aiMeta").and_then(|m| m.get(key)) {
                None | Some(Value::Null) => &Value::Array(Vec::new()),
                Some(value) => value,
            };
            if !(own.is_array() && same_value(stated, own)) {
                rules.fail(
                    path.clone().key(key),
                    message(&format!("{key} must exactly match screen {screen_id} aiMeta.{key}")),
                );
            }
        }
    }
    if named != valid_ids {
        rules.fail(
            base().key("dataSemantics").key("screens"),
            "blueprint.dataSemantics.screens must cover every blueprint screen once in order",
        );
        coverage_details(&named, valid_ids, rules);
    }
}

/// Which screen R26's message is about (the reference's text names none): each
/// missing screen, each screen named twice, or else the two orders.
fn coverage_details(named: &[&str], valid_ids: &[&str], rules: &mut Rules) {
    let path = base().key("dataSemantics").key("screens");
    let missing: Vec<&&str> = valid_ids.iter().filter(|id| !named.contains(id)).collect();
    let twice: Vec<&&str> = valid_ids.iter().filter(|id| named.iter().filter(|n| n == id).count() > 1).collect();
    for id in &missing {
        rules.fail(path.clone(), format!("blueprint.dataSemantics.screens has no entry for screen {id}"));
    }
    for id in &twice {
        rules.fail(path.clone(), format!("blueprint.dataSemantics.screens names screen {id} more than once"));
    }
    let unknown = named.iter().any(|n| !valid_ids.contains(n));
    if missing.is_empty() && twice.is_empty() && !unknown {
        rules.fail(
            path,
            format!("blueprint.dataSemantics.screens names the screens in the order {named:?}; the blueprint's is {valid_ids:?}"),
        );
    }
}

/// R27–R29: each example names a blueprint screen and a slot, once.
fn asset_examples(map: &Map<String, Value>, valid_ids: &[&str], rules: &mut Rules) {
    let mut seen: Vec<String> = Vec::new();
    for (i, example) in each(map, "assetExamples").iter().enumerate() {
        let path = base().key("assetExamples").index(i);
        let Some(screen_id) = non_blank(example.get("screenId")).filter(|id| valid_ids.contains(id)) else {
            rules.fail(
                path.clone().key("screenId"),
                format!("blueprint.assetExamples[{i}].screenId must identify a blueprint screen"),
            );
            continue;
        };
        if non_blank(example.get("slotKey")).is_none() {
            rules.fail(path.clone().key("slotKey"), format!("blueprint.assetExamples[{i}].slotKey must be non-empty"));
        }
        let pair = format!("{screen_id}:{}", super::ecma::string_of(example.get("slotKey")));
        if seen.contains(&pair) {
            rules.fail(path, format!("blueprint.assetExamples duplicates {pair}"));
        } else {
            seen.push(pair);
        }
    }
}

/// R30: generated or provider material by key name (harness.toml
/// `forbidden.blueprint_keys`, exact case), not descending into a reported key.
fn forbidden(blueprint: &Value, config: &Config, rules: &mut Rules) {
    fn visit(value: &Value, path: &str, keys: &[String], found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, item) in map {
                    let at = format!("{path}.{key}");
                    if keys.iter().any(|k| k == key) {
                        found.push(at);
                    } else {
                        visit(item, &at, keys, found);
                    }
                }
            }
            Value::Array(items) => {
                items.iter().enumerate().for_each(|(i, item)| visit(item, &index(path, i), keys, found))
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    visit(blueprint, "$", &config.forbidden_of(config.agents.block_builder()).blueprint_keys, &mut found);
    for inside in found {
        // The reference's text: keys joined with dots, never quoted.
        let path = Location::named(format!("{BASE}{}", &inside[1..]));
        rules.fail(path, format!("blueprint contains forbidden generated/provider material at {inside}"));
    }
}

#[cfg(test)]
mod tests {
    use crate::Error;
    use serde_json::Value;
    use std::path::Path;

    /// The findings of compiling the interop-shaped fixture after `change`.
    fn refused(change: impl FnOnce(&mut Vec<Value>)) -> Vec<String> {
        let root = Path::new(crate::PROJECT_ROOT);
        let config = crate::Invocation::from(crate::Config::load(root, None).unwrap());
        let file = root.join("fixtures/anthropic-staged-both-selected-interop-shape/request.json");
        let mut request = crate::fsutil::read_json(&file, 1 << 20).unwrap();
        change(request.pointer_mut("/source/blueprint/dataSemantics/screens").unwrap().as_array_mut().unwrap());
        match crate::compile::compile(&request, &config, "test") {
            Err(Error::Failed { findings, .. }) => findings.into_iter().map(|f| f.message).collect(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn data_semantics_coverage_names_the_screen() {
        let twice = refused(|screens| screens[1] = screens[0].clone());
        assert!(
            twice.contains(&"blueprint.dataSemantics.screens has no entry for screen wins_proof".into()),
            "{twice:?}"
        );
        assert!(twice.contains(&"blueprint.dataSemantics.screens names screen wins_intro more than once".into()));
        let swapped = refused(|screens| screens.swap(0, 1));
        let order = "blueprint.dataSemantics.screens names the screens in the order [\"wins_proof\", \"wins_intro\"]; \
                     the blueprint's is [\"wins_intro\", \"wins_proof\"]";
        assert!(swapped.contains(&order.to_owned()), "{swapped:?}");
    }
}
