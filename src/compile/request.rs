//! Validation of the compile input (the preview adapter's request).
//! Every problem is collected with its JSON path; a request with any finding is
//! refused before a packet exists.
//!
//! Objects the adapter defines are closed (unknown keys are refused, so a typo
//! never silently drops data). Author-owned content stays open: the source
//! `blueprint`, `target.strategy`, `target.blockContract`,
//! `target.strategyVariables`, `target.themeSummary` and evidence `value`s. The
//! whole request, open parts included, is scanned for forbidden keys and value
//! patterns (harness.toml `[forbidden]`).
//!
//! `variableMappings[]` (the Node sample leaves it empty, so the field set is ours):
//! `{ sourceVariableId, targetVariableId, sourceType?, targetType?, status?, note? }`
//! where the types are Builder variable types and `status` is `compatible` or
//! `conflict`. See [`super::branch::is_incompatible`] for what counts as a conflict.

use crate::packet::describe;
use crate::report::{child, index, Finding};
use crate::Config;
use serde_json::{Map, Value};
use std::collections::HashSet;

pub const CHECK: &str = crate::Check::CompileRequest.name();

pub(crate) const INSERTION_MODES: [&str; 2] = ["staged", "immediate"];
pub(crate) const SCOPES: [&str; 2] = ["project", "system"];
pub(crate) const EVIDENCE_MODES: [&str; 3] = ["strategy-default", "selected-only", "no-evidence"];
pub(crate) const MAPPING_STATUSES: [&str; 2] = ["compatible", "conflict"];
pub(crate) const VARIABLE_TYPES: [&str; 6] = ["string", "number", "boolean", "date", "enum", "enum[]"];

const ROOT_KEYS: [&str; 9] = [
    "insertionMode",
    "source",
    "target",
    "evidence",
    "variableMappings",
    "operatorInstruction",
    "provider",
    "model",
    "maxTokens",
];
const SOURCE_KEYS: [&str; 5] = ["scope", "exampleId", "name", "checksum", "blueprint"];
const TARGET_KEYS: [&str; 10] = [
    "strategy",
    "blockId",
    "blockName",
    "blockType",
    "blockContract",
    "strategyVariables",
    "sequence",
    "predecessor",
    "successor",
    "themeSummary",
];
const SEQUENCE_KEYS: [&str; 7] =
    ["entityId", "name", "blockType", "description", "screensCount", "firstScreenId", "order"];
const PREDECESSOR_KEYS: [&str; 6] = ["entityId", "name", "blockType", "description", "screensCount", "exitSummary"];
const SUCCESSOR_KEYS: [&str; 6] = ["entityId", "name", "blockType", "description", "screensCount", "entrySummary"];
const EVIDENCE_KEYS: [&str; 2] = ["selection", "availableItems"];
const SELECTION_KEYS: [&str; 2] = ["mode", "refs"];
const REF_KEYS: [&str; 2] = ["kind", "id"];
const ITEM_KEYS: [&str; 4] = ["kind", "id", "accessible", "value"];
const MAPPING_KEYS: [&str; 6] = ["sourceVariableId", "targetVariableId", "sourceType", "targetType", "status", "note"];

/// Every problem of `request`, in document order of the checks.
pub(crate) fn check(request: &Value, config: &Config) -> Vec<Finding> {
    let mut c = Checker { config, findings: Vec::new() };
    crate::packet::scan(request, "$", config, CHECK, &mut c.findings);
    if let Some(root) = c.object(Some(request), "$") {
        c.closed(root, "$", &ROOT_KEYS);
        c.one_of(root.get("insertionMode"), "$.insertionMode", &INSERTION_MODES);
        c.source(root.get("source"));
        c.target(root.get("target"));
        c.evidence(root.get("evidence"));
        c.mappings(root.get("variableMappings"));
        if !matches!(root.get("operatorInstruction"), None | Some(Value::Null | Value::String(_))) {
            c.fail(
                "$.operatorInstruction",
                format!("expected a string or null, found {}", describe(root.get("operatorInstruction"))),
            );
        }
        c.provider(root);
    }
    c.findings
}

struct Checker<'c> {
    config: &'c Config,
    findings: Vec<Finding>,
}

impl Checker<'_> {
    fn fail(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.findings.push(Finding::new(CHECK, path, message));
    }

    fn object<'v>(&mut self, value: Option<&'v Value>, path: &str) -> Option<&'v Map<String, Value>> {
        match value {
            Some(Value::Object(map)) => Some(map),
            other => {
                self.fail(path, format!("expected an object, found {}", describe(other)));
                None
            }
        }
    }

    fn array<'v>(&mut self, value: Option<&'v Value>, path: &str) -> Option<&'v Vec<Value>> {
        match value {
            Some(Value::Array(items)) => Some(items),
            other => {
                self.fail(path, format!("expected an array, found {}", describe(other)));
                None
            }
        }
    }

    fn string<'v>(&mut self, value: Option<&'v Value>, path: &str) -> Option<&'v str> {
        match value {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s),
            other => {
                self.fail(path, format!("expected a non-blank string, found {}", describe(other)));
                None
            }
        }
    }

    fn one_of<'v>(&mut self, value: Option<&'v Value>, path: &str, allowed: &[&str]) -> Option<&'v str> {
        match value.and_then(Value::as_str) {
            Some(s) if allowed.contains(&s) => Some(s),
            _ => {
                self.fail(path, format!("expected one of {allowed:?}, found {}", describe(value)));
                None
            }
        }
    }

    fn optional_string(&mut self, map: &Map<String, Value>, key: &str, path: &str) {
        if map.contains_key(key) {
            self.string(map.get(key), &child(path, key));
        }
    }

    /// Unknown keys of an adapter-defined object. Forbidden keys are already
    /// reported by the scan, and `screens` gets its own message.
    fn closed(&mut self, map: &Map<String, Value>, path: &str, allowed: &[&str]) {
        for key in map.keys().filter(|k| !allowed.contains(&k.as_str())) {
            if key == "screens" {
                self.fail(
                    child(path, key),
                    "screens are not allowed here: sequence and neighbour entries are summaries",
                );
            } else if !self.config.forbidden.is_forbidden_key(key) {
                self.fail(child(path, key), format!("unknown field (expected only {allowed:?})"));
            }
        }
    }

    fn source(&mut self, value: Option<&Value>) {
        let Some(source) = self.object(value, "$.source") else { return };
        self.closed(source, "$.source", &SOURCE_KEYS);
        self.one_of(source.get("scope"), "$.source.scope", &SCOPES);
        for key in ["exampleId", "name", "checksum"] {
            self.string(source.get(key), &child("$.source", key));
        }
        let Some(blueprint) = self.object(source.get("blueprint"), "$.source.blueprint") else { return };
        for key in ["screens", "assetExamples", "instructions"] {
            let path = child("$.source.blueprint", key);
            if blueprint.contains_key(key) {
                self.objects(blueprint.get(key), &path);
            }
        }
    }

    /// An array whose items are all objects; returns the objects that are.
    fn objects<'v>(&mut self, value: Option<&'v Value>, path: &str) -> Vec<(String, &'v Map<String, Value>)> {
        let Some(items) = self.array(value, path) else { return Vec::new() };
        items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| self.object(Some(item), &index(path, i)).map(|m| (index(path, i), m)))
            .collect()
    }

    fn target(&mut self, value: Option<&Value>) {
        let Some(target) = self.object(value, "$.target") else { return };
        self.closed(target, "$.target", &TARGET_KEYS);
        if let Some(strategy) = self.object(target.get("strategy"), "$.target.strategy") {
            self.string(strategy.get("name"), "$.target.strategy.name");
        }
        for key in ["blockId", "blockName", "blockType"] {
            self.string(target.get(key), &child("$.target", key));
        }
        for key in ["blockContract", "strategyVariables"] {
            self.object(target.get(key), &child("$.target", key));
        }
        for (path, entry) in self.objects(target.get("sequence"), "$.target.sequence") {
            self.summary(entry, &path, &SEQUENCE_KEYS);
        }
        for (key, allowed) in [("predecessor", &PREDECESSOR_KEYS), ("successor", &SUCCESSOR_KEYS)] {
            let path = child("$.target", key);
            match target.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::Object(entry)) => self.summary(entry, &path, allowed),
                other => self.fail(path, format!("expected an object or null, found {}", describe(other))),
            }
        }
        match target.get("themeSummary") {
            None | Some(Value::Null) => {}
            Some(Value::Object(theme)) => {
                self.string(theme.get("name"), "$.target.themeSummary.name");
            }
            other => {
                self.fail("$.target.themeSummary", format!("expected an object or null, found {}", describe(other)))
            }
        }
    }

    /// A block summary (sequence entry or neighbour): closed, named, no screens.
    fn summary(&mut self, entry: &Map<String, Value>, path: &str, allowed: &[&str]) {
        self.closed(entry, path, allowed);
        self.string(entry.get("entityId"), &child(path, "entityId"));
        self.string(entry.get("name"), &child(path, "name"));
        for key in ["blockType", "description", "exitSummary", "entrySummary", "firstScreenId"] {
            if allowed.contains(&key) {
                self.optional_string(entry, key, path);
            }
        }
        for key in ["screensCount", "order"] {
            if entry.contains_key(key) && entry[key].as_u64().is_none_or(|n| n >= 1 << 53) {
                self.fail(
                    child(path, key),
                    format!("expected a non-negative integer, found {}", describe(entry.get(key))),
                );
            }
        }
    }

    fn evidence(&mut self, value: Option<&Value>) {
        let Some(evidence) = self.object(value, "$.evidence") else { return };
        self.closed(evidence, "$.evidence", &EVIDENCE_KEYS);
        let mut available: Vec<(&str, &str, Option<bool>)> = Vec::new();
        for (path, item) in self.objects(evidence.get("availableItems"), "$.evidence.availableItems") {
            self.closed(item, &path, &ITEM_KEYS);
            let kind = self.string(item.get("kind"), &child(&path, "kind"));
            let id = self.string(item.get("id"), &child(&path, "id"));
            // Unknown accessibility (a type error, reported here) is not reported
            // again as "not accessible" for the refs that select the item.
            let accessible = match item.get("accessible") {
                Some(Value::Bool(b)) => Some(*b),
                other => {
                    self.fail(child(&path, "accessible"), format!("expected a boolean, found {}", describe(other)));
                    None
                }
            };
            if !item.contains_key("value") {
                self.fail(child(&path, "value"), "expected the item's content, found nothing (missing)");
            }
            if let (Some(kind), Some(id)) = (kind, id) {
                if available.iter().any(|(k, i, _)| (*k, *i) == (kind, id)) {
                    self.fail(path, format!("duplicate evidence item {kind}:{id}"));
                }
                available.push((kind, id, accessible));
            }
        }
        let Some(selection) = self.object(evidence.get("selection"), "$.evidence.selection") else { return };
        self.closed(selection, "$.evidence.selection", &SELECTION_KEYS);
        let mode = self.one_of(selection.get("mode"), "$.evidence.selection.mode", &EVIDENCE_MODES);
        // Only selected-only needs refs; the other modes may leave them out.
        let refs = match selection.get("refs") {
            None if mode != Some("selected-only") => Vec::new(),
            value => self.objects(value, "$.evidence.selection.refs"),
        };
        match mode {
            Some("selected-only") if refs.is_empty() && selection.get("refs").is_some_and(Value::is_array) => {
                self.fail("$.evidence.selection.refs", "selected-only needs at least one ref")
            }
            // Refs under another mode would be ignored; refusing them keeps the
            // request saying exactly what is rendered.
            Some("strategy-default" | "no-evidence") if !refs.is_empty() => self.fail(
                "$.evidence.selection.refs",
                format!("refs are only allowed with selected-only, not {}", mode.unwrap_or("")),
            ),
            _ => {}
        }
        self.refs(&refs, &available);
    }

    fn refs(&mut self, refs: &[(String, &Map<String, Value>)], available: &[(&str, &str, Option<bool>)]) {
        let mut seen = HashSet::new();
        for (path, reference) in refs {
            self.closed(reference, path, &REF_KEYS);
            let kind = self.string(reference.get("kind"), &child(path, "kind"));
            let id = self.string(reference.get("id"), &child(path, "id"));
            let (Some(kind), Some(id)) = (kind, id) else { continue };
            if !seen.insert((kind, id)) {
                self.fail(path.clone(), format!("duplicate ref {kind}:{id}"));
            }
            match available.iter().find(|(k, i, _)| (*k, *i) == (kind, id)) {
                None => self.fail(
                    path.clone(),
                    format!("unknown evidence {kind}:{id}: no such item in $.evidence.availableItems"),
                ),
                Some((_, _, Some(false))) => {
                    self.fail(path.clone(), format!("evidence {kind}:{id} is not accessible and cannot be selected"))
                }
                Some(_) => {}
            }
        }
    }

    fn mappings(&mut self, value: Option<&Value>) {
        for (path, mapping) in self.objects(value, "$.variableMappings") {
            self.closed(mapping, &path, &MAPPING_KEYS);
            self.string(mapping.get("sourceVariableId"), &child(&path, "sourceVariableId"));
            self.string(mapping.get("targetVariableId"), &child(&path, "targetVariableId"));
            for key in ["sourceType", "targetType"] {
                if mapping.contains_key(key) {
                    self.one_of(mapping.get(key), &child(&path, key), &VARIABLE_TYPES);
                }
            }
            if mapping.contains_key("status") {
                self.one_of(mapping.get("status"), &child(&path, "status"), &MAPPING_STATUSES);
            }
            self.optional_string(mapping, "note", &path);
        }
    }

    fn provider(&mut self, root: &Map<String, Value>) {
        let config = self.config;
        let provider = self.string(root.get("provider"), "$.provider");
        let model = self.string(root.get("model"), "$.model");
        match provider.map(|p| (p, config.providers.get(p))) {
            Some((name, None)) => {
                let known: Vec<&String> = config.providers.keys().collect();
                self.fail("$.provider", format!("unknown provider {name:?}; expected one of {known:?}"));
            }
            Some((name, Some(settings))) => {
                if let Some(model) = model.filter(|m| !settings.models.iter().any(|x| x == m)) {
                    self.fail(
                        "$.model",
                        format!(
                            "model {model:?} is not in harness.toml's allow-list for {name}: {:?}",
                            settings.models
                        ),
                    );
                }
            }
            None => {}
        }
        if !root.get("maxTokens").and_then(Value::as_u64).is_some_and(|n| n > 0 && n < 1 << 53) {
            self.fail("$.maxTokens", format!("expected a positive integer, found {}", describe(root.get("maxTokens"))));
        }
    }
}
