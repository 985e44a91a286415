//! Validation of the compile input (the preview adapter's request),
//! rule for rule as the reference validator (its rules
//! R01–R47), in its order and with its message texts; the finding path says where.
//! Like the reference, objects are open: unknown keys are ignored (and never
//! rendered), and only the fields the rules name are inspected.
//!
//! Where the reference crashes (R49) this reports the rule the input breaks. Beyond
//! the reference, and only here (README "Where packetproof is stricter than the
//! reference"), a request is also refused for: forbidden material by harness.toml's
//! wider key list or its value patterns; a provider or model outside harness.toml's
//! allow-list; evidence refs that are not `{kind, id}` strings, repeat, or appear
//! under a mode that ignores them; `maxTokens` absent or not a safe integer.
//! Strict JSON is the parser's business (`canonical`).
//!
//! `variableMappings[]` items are the reference's: an object whose `action` is
//! `bind`, `create`, `drop` or `incompatible`; nothing else is required, and a
//! conflict is a mapping whose action says `incompatible`.

use super::ecma::{non_blank, strict_equal, string_of};
use crate::branch::{EvidenceMode, InsertionMode, SourceScope, UnknownValue};
use crate::report::{index, walk, Finding, JsonPath, Location, Trail};
use crate::Config;
use serde_json::{Map, Value};

pub const CHECK: crate::Check = crate::Check::Input(crate::InputCheck::CompileRequest);

pub const MAPPING_ACTIONS: [&str; 4] = ["bind", "create", "drop", "incompatible"];
/// JavaScript's safe integers end below 2^53; past it a token count is not exact.
const SAFE_INTEGER_LIMIT: f64 = 9_007_199_254_740_992.0;

/// Every problem of `request`, in the reference's order, then the stricter ones.
pub(crate) fn check(request: &Value, config: &Config) -> Vec<Finding> {
    let mut c = Checker { findings: Vec::new() };
    let Some(root) = request.as_object() else {
        c.fail(JsonPath::root(), "compile input must be an object");
        return c.findings;
    };
    if root.contains_key("input") {
        c.fail(JsonPath::field("input"), "request file must be the compile input itself, without an input wrapper");
    }
    if one_of(root.get("insertionMode"), InsertionMode::parse).is_none() {
        c.fail(JsonPath::field("insertionMode"), "insertionMode must be staged or immediate");
    }
    c.source(root.get("source"), config);
    c.target(root.get("target"));
    c.evidence(root.get("evidence"));
    c.mappings(root);
    c.provider(root);
    c.forbidden_keys(request, config);
    c.stricter(request, config);
    c.findings
}

/// The value of a branch field when it is one of its set (the rules below say what else).
fn one_of<T>(value: Option<&Value>, parse: fn(&str) -> Result<T, UnknownValue>) -> Option<T> {
    value.and_then(Value::as_str).and_then(|s| parse(s).ok())
}

struct Checker {
    findings: Vec<Finding>,
}

impl Checker {
    fn fail(&mut self, path: impl Into<Location>, message: impl Into<String>) {
        self.findings.push(Finding::new(CHECK, path, message));
    }

    /// R04–R30.
    fn source(&mut self, value: Option<&Value>, config: &Config) {
        let Some(source) = value.and_then(Value::as_object) else {
            return self.fail(JsonPath::field("source"), "source must be an object");
        };
        if one_of(source.get("scope"), SourceScope::parse).is_none() {
            self.fail(JsonPath::field("source").key("scope"), "source.scope must be project or system");
        }
        for key in ["exampleId", "name"] {
            if non_blank(source.get(key)).is_none() {
                self.fail(JsonPath::field("source").key(key), format!("source.{key} must be non-empty"));
            }
        }
        if !super::ecma::is_checksum_form(source.get("checksum")) {
            self.fail(
                JsonPath::field("source").key("checksum"),
                "source.checksum must be fnv1a:<8 lowercase hex characters>",
            );
        }
        super::blueprint::check(source.get("blueprint"), config, &mut self.findings);
    }

    /// R31–R37: the target's strategy, and summaries (never screens) of the
    /// sequence and neighbours. Everything else of the target is free.
    fn target(&mut self, value: Option<&Value>) {
        let Some(target) = value.and_then(Value::as_object) else {
            return self.fail(JsonPath::field("target"), "target must be an object");
        };
        if !target.get("strategy").is_some_and(Value::is_object) {
            self.fail(JsonPath::field("target").key("strategy"), "target.strategy must be an object");
        }
        match target.get("sequence") {
            None => {}
            Some(Value::Array(entries)) => {
                for (i, entry) in entries.iter().enumerate() {
                    let path = JsonPath::field("target").key("sequence").index(i);
                    let named = ["entityId", "name", "blockType"].iter().all(|k| non_blank(entry.get(*k)).is_some());
                    if !named {
                        self.fail(path.clone(), format!("target.sequence[{i}] must be a compact block summary"));
                    }
                    if has_screens(entry) {
                        self.fail(path, format!("target.sequence[{i}] must not contain screens"));
                    }
                }
            }
            Some(_) => {
                self.fail(JsonPath::field("target").key("sequence"), "target.sequence must be an array when present")
            }
        }
        for key in ["predecessor", "successor"] {
            let Some(neighbour) = target.get(key) else { continue };
            let named =
                neighbour.is_object() && ["name", "blockType"].iter().all(|k| non_blank(neighbour.get(*k)).is_some());
            if !named {
                self.fail(JsonPath::field("target").key(key), format!("target.{key} must be a compact neighbour"));
            } else if has_screens(neighbour) {
                self.fail(JsonPath::field("target").key(key), format!("target.{key} must not contain screens"));
            }
        }
    }

    /// R38–R41: the selection mode, and for selected-only refs that resolve to an
    /// accessible available item (matched with `===` on kind and id).
    fn evidence(&mut self, value: Option<&Value>) {
        let selection = value.and_then(|e| e.get("selection")).filter(|s| s.is_object());
        let Some(selection) = selection else {
            return self.fail(JsonPath::field("evidence").key("selection"), "evidence.selection must be an object");
        };
        let mode = one_of(selection.get("mode"), EvidenceMode::parse);
        if mode.is_none() {
            self.fail(JsonPath::field("evidence").key("selection").key("mode"), "evidence.selection.mode is invalid");
        }
        if mode != Some(EvidenceMode::SelectedOnly) {
            return;
        }
        let refs = selection.get("refs").and_then(Value::as_array).filter(|r| !r.is_empty());
        let Some(refs) = refs else {
            return self.fail(
                JsonPath::field("evidence").key("selection").key("refs"),
                "selected-only evidence requires refs",
            );
        };
        let items = value.and_then(|e| e.get("availableItems")).and_then(Value::as_array);
        for (i, reference) in refs.iter().enumerate() {
            let resolves = items.into_iter().flatten().any(|item| {
                item.is_object()
                    && strict_equal(item.get("kind"), reference.get("kind"))
                    && strict_equal(item.get("id"), reference.get("id"))
                    && item.get("accessible") == Some(&Value::Bool(true))
            });
            if !resolves {
                let (kind, id) = (string_of(reference.get("kind")), string_of(reference.get("id")));
                self.fail(
                    JsonPath::field("evidence").key("selection").key("refs").index(i),
                    format!("selected evidence is unavailable or inaccessible: {kind}/{id}"),
                );
            }
        }
    }

    /// R42–R43.
    fn mappings(&mut self, root: &Map<String, Value>) {
        match root.get("variableMappings") {
            None => {}
            Some(Value::Array(mappings)) => {
                for (i, mapping) in mappings.iter().enumerate() {
                    if !mapping.get("action").and_then(Value::as_str).is_some_and(|a| MAPPING_ACTIONS.contains(&a)) {
                        self.fail(
                            JsonPath::field("variableMappings").index(i).key("action"),
                            format!("variableMappings[{i}].action is invalid"),
                        );
                    }
                }
            }
            Some(_) => self.fail(JsonPath::field("variableMappings"), "variableMappings must be an array when present"),
        }
    }

    /// R44–R46.
    fn provider(&mut self, root: &Map<String, Value>) {
        for key in ["provider", "model"] {
            if non_blank(root.get(key)).is_none() {
                self.fail(JsonPath::field(key), format!("{key} must be non-empty"));
            }
        }
        let positive_integer = |n: f64| n > 0.0 && n.fract() == 0.0;
        if let Some(tokens) = root.get("maxTokens") {
            if !tokens.as_f64().is_some_and(positive_integer) {
                self.fail(JsonPath::field("maxTokens"), "maxTokens must be a positive integer when present");
            }
        }
    }

    /// R47 with harness.toml's key list (a superset of the reference's, matched
    /// case-insensitively), not descending into a reported key.
    fn forbidden_keys(&mut self, request: &Value, config: &Config) {
        fn visit(value: &Value, path: &str, config: &Config, found: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    for (key, item) in map {
                        let at = format!("{path}.{key}");
                        if config.forbidden_of(config.agents.block_builder()).is_forbidden_key(key) {
                            found.push(at);
                        } else {
                            visit(item, &at, config, found);
                        }
                    }
                }
                Value::Array(items) => {
                    items.iter().enumerate().for_each(|(i, item)| visit(item, &index(path, i), config, found))
                }
                _ => {}
            }
        }
        let mut found = Vec::new();
        visit(request, "$", config, &mut found);
        for path in found {
            let message = format!("compile input contains forbidden material at {path}");
            // The reference's text: keys joined with dots, never quoted.
            self.fail(Location::named(path), message);
        }
    }

    /// The checks the reference does not make (see the module docs).
    fn stricter(&mut self, request: &Value, config: &Config) {
        let Some(root) = request.as_object() else { return };
        let mut trail = Trail::new(JsonPath::root());
        walk(request, &mut trail, &mut |value, _, trail| {
            if let Some(pattern) = value
                .as_str()
                .and_then(|text| config.forbidden_of(config.agents.block_builder()).matching_pattern(text))
            {
                self.findings.push(Finding::new(CHECK, trail.path(), format!("matches forbidden pattern {pattern}")));
            }
        });
        self.allow_list(root, config);
        self.ref_shape(root);
        match root.get("maxTokens") {
            None => self.fail(
                JsonPath::field("maxTokens"),
                "maxTokens is required: the packet states the token budget it was reviewed with",
            ),
            Some(tokens) if tokens.as_f64().is_some_and(|n| n >= SAFE_INTEGER_LIMIT) => self.fail(
                JsonPath::field("maxTokens"),
                format!("maxTokens {tokens} is past JavaScript's safe integers (2^53): a token budget must be exact"),
            ),
            Some(tokens) => {
                let text = |key: &str| root.get(key).and_then(Value::as_str).unwrap_or_default();
                let tokens = tokens.as_f64().unwrap_or_default();
                if let Some(problem) = config.output_limit_problem(text("provider"), text("model"), tokens) {
                    self.fail(JsonPath::field("maxTokens"), problem);
                }
            }
        }
    }

    /// The project compiles only for the providers and models it has.
    fn allow_list(&mut self, root: &Map<String, Value>, config: &Config) {
        let (Some(provider), Some(model)) = (non_blank(root.get("provider")), non_blank(root.get("model"))) else {
            return;
        };
        match config.providers.get(provider) {
            None => {
                let known: Vec<&String> = config.providers.keys().collect();
                self.fail(
                    JsonPath::field("provider"),
                    format!("unknown provider {provider:?}; harness.toml's allow-list has {known:?}"),
                );
            }
            Some(settings) if !settings.models.iter().any(|m| m == model) => self.fail(
                JsonPath::field("model"),
                format!("model {model:?} is not in harness.toml's allow-list for {provider}: {:?}", settings.models),
            ),
            Some(_) => {}
        }
    }

    /// Refs say exactly what renders: `{kind, id}` strings, each once, and only
    /// under selected-only (the other modes would silently ignore them).
    fn ref_shape(&mut self, root: &Map<String, Value>) {
        let Some(selection) = root.get("evidence").and_then(|e| e.get("selection")) else { return };
        let mode = one_of(selection.get("mode"), EvidenceMode::parse);
        let refs = selection.get("refs");
        if mode != Some(EvidenceMode::SelectedOnly) {
            let empty =
                matches!(refs, None | Some(Value::Null)) || refs.and_then(Value::as_array).is_some_and(Vec::is_empty);
            // An unknown mode is R38's finding.
            if let Some(mode) = mode.filter(|_| !empty) {
                self.fail(
                    JsonPath::field("evidence").key("selection").key("refs"),
                    format!("refs are only allowed with selected-only, not {mode}"),
                );
            }
            return;
        }
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for (i, reference) in refs.and_then(Value::as_array).into_iter().flatten().enumerate() {
            let path = JsonPath::field("evidence").key("selection").key("refs").index(i);
            let (Some(kind), Some(id)) = (non_blank(reference.get("kind")), non_blank(reference.get("id"))) else {
                self.fail(path, "expected a ref {kind, id} of two non-blank strings");
                continue;
            };
            if seen.contains(&(kind, id)) {
                self.fail(path, format!("duplicate ref {kind}:{id}"));
            } else {
                seen.push((kind, id));
            }
        }
    }
}

/// A summary carries no screens, whatever the value of the key.
fn has_screens(entry: &Value) -> bool {
    entry.as_object().is_some_and(|m| m.contains_key("screens") || m.contains_key("previewScreens"))
}
