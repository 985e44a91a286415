//! Slot contracts under `trace --gate`: each slot of an agent's templates is held to
//! its shape, declared by the agent (`slots`), built in (the block builder's), or
//! taken from the values the agent's vouched packets fill it with; and every value,
//! each time a loop fills it, is searched for forbidden material as
//! `packet::forbidden-material` searches renderInput.

use crate::profile::Profile;
use crate::template::{Piece, Shape, SlotContract, Template};
use crate::Invocation;
use std::collections::{BTreeMap, BTreeSet};

/// The contracts of one agent's slots.
pub(super) struct Contracts {
    by_slot: BTreeMap<String, SlotContract>,
    /// Per slot held to a JSON Schema: the schema, compiled.
    schemas: BTreeMap<String, std::sync::Arc<jsonschema::Validator>>,
}

/// The block builder's slots whose shape its compiler fixes.
fn built_in(agent: &Profile) -> Vec<(&'static str, SlotContract)> {
    if !agent.is_block_builder() {
        return Vec::new();
    }
    let modes = crate::branch::EvidenceMode::NAMES.iter().map(|m| (*m).to_owned()).collect();
    vec![
        ("evidence.requestedMode", SlotContract::of(Shape::Enum(modes))),
        ("evidence.items | length", SlotContract::of(Shape::Integer)),
    ]
}

impl Contracts {
    /// The contract of each of `slots` (every slot the agent's vouched templates have),
    /// given the values the vouched packets filled each with; an error names a schema
    /// that cannot be read. (A declared slot no template has is refused when the gate
    /// is signed: [`undeclared`].)
    pub(super) fn new(
        agent: &Profile,
        slots: &BTreeSet<String>,
        observed: &BTreeMap<String, Vec<String>>,
        config: &Invocation,
        setting: &str,
    ) -> Result<Contracts, String> {
        let built_in = built_in(agent);
        let mut by_slot = BTreeMap::new();
        let mut schemas = BTreeMap::new();
        for name in slots {
            let declared = agent.slots.get(name).or_else(|| built_in.iter().find(|(n, _)| n == name).map(|(_, c)| c));
            let contract = match declared {
                Some(contract) => contract.clone(),
                None => {
                    let values = observed.get(name).into_iter().flatten().map(String::as_str);
                    SlotContract::of(Shape::of_values(values).unwrap_or(Shape::Text))
                }
            };
            if let Some(file) = &contract.schema {
                schemas.insert(
                    name.clone(),
                    schema(config, file).map_err(|e| format!("[{setting}.slots] {name:?}: {e}"))?,
                );
            }
            by_slot.insert(name.clone(), contract);
        }
        Ok(Contracts { by_slot, schemas })
    }

    /// The regular expression a value of `slot` must match whole (`None`: any text).
    pub(super) fn pattern(&self, slot: &str) -> Option<String> {
        self.by_slot.get(slot).and_then(|c| c.shape.pattern())
    }

    /// Why `value` is outside the shape of `slot`, if it is.
    pub(super) fn outside_shape(&self, slot: &str, value: &str) -> Option<String> {
        let contract = self.by_slot.get(slot)?;
        let pattern = contract.shape.pattern()?;
        let whole = regex::Regex::new(&format!(r"\A(?:{pattern})\z")).ok()?;
        (!whole.is_match(value)).then(|| format!("it is not {}", contract.shape.describe()))
    }

    /// Why `value`, taken out of `slot`, breaks the slot's contract once taken out:
    /// longer than its maximum, no strict JSON, or against its schema.
    pub(super) fn breach(&self, slot: &str, value: &str) -> Option<String> {
        let contract = self.by_slot.get(slot)?;
        let length = value.chars().count();
        if let Some(max) = contract.max_length.filter(|max| length > *max) {
            return Some(format!("it is {length} characters long, past its maximum of {max}"));
        }
        if contract.shape != Shape::Json {
            return None;
        }
        let json = match crate::canonical::parse(value.as_bytes()) {
            Ok(json) => json,
            Err(e) => return Some(format!("it is not {} ({e})", Shape::Json.describe())),
        };
        let validator = self.schemas.get(slot)?;
        let error = validator.iter_errors(&json).next()?;
        Some(format!("at {} it breaks its schema: {error}", error.instance_path))
    }
}

fn schema(config: &Invocation, file: &str) -> Result<std::sync::Arc<jsonschema::Validator>, String> {
    let path = config.root.join(file);
    let bytes = crate::fsutil::read_bytes(&path, config.limits.max_file_bytes).map_err(|e| e.to_string())?;
    let value = crate::canonical::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    crate::evaluator::schema::validator(&value).map_err(|e| format!("{}: {e}", path.display()))
}

/// The slots `agent` declares that none of its templates has, each named with the
/// setting (`test --attest` refuses to sign over them: a misspelt slot would leave the
/// real one to its vouched values).
pub(super) fn undeclared(agent: &Profile, templates: &[&Template], setting: &str) -> Vec<String> {
    let mut names = BTreeSet::new();
    templates.iter().for_each(|t| slot_names(t, &mut names));
    agent
        .slots
        .keys()
        .filter(|name| !names.contains(*name))
        .map(|name| format!("[{setting}.slots] names {name:?}, which no template of agent {:?} has", agent.name))
        .collect()
}

/// The name of every slot in `template`.
pub(super) fn slot_names(template: &Template, names: &mut BTreeSet<String>) {
    for piece in &template.pieces {
        match piece {
            Piece::Literal(_) => {}
            Piece::Slot(name) => {
                names.insert(name.clone());
            }
            Piece::Branch(bodies) => bodies.iter().for_each(|(_, body)| slot_names(body, names)),
            Piece::Choice(bodies) => bodies.iter().for_each(|body| slot_names(body, names)),
            Piece::Repeat(body) => slot_names(body, names),
        }
    }
}

/// Forbidden material in a slot value, by the scanner `packet::forbidden-material`
/// runs on renderInput: a value pattern in the text; a forbidden key written as a
/// JSON key anywhere in the text (so a value that is not strict JSON, with a comment,
/// a duplicate key or nesting past the parser's depth, still shows it); and in a value
/// that parses as strict JSON, a forbidden key or pattern named by its JSON path.
/// JSON that strict parsing refuses for a duplicate key or its depth is refused.
pub(super) fn forbidden(value: &str, config: &Invocation, keys: Option<&regex::Regex>) -> Option<String> {
    if let Some(pattern) = config.forbidden.matching_pattern(value) {
        return Some(format!("it matches forbidden pattern {pattern}"));
    }
    if let Some(key) = keys.and_then(|keys| keys.find(value)) {
        return Some(format!("it holds the forbidden key {}", crate::report::excerpt(key.as_str())));
    }
    let looks_like_json = value.trim_start().starts_with(['{', '[']);
    match crate::canonical::parse(value.as_bytes()) {
        Ok(json) => {
            let mut found = Vec::new();
            crate::packet::scan(
                &json,
                crate::JsonPath::root(),
                config,
                crate::PacketCheck::ForbiddenMaterial,
                &mut found,
            );
            found.first().map(|f| format!("{}: {}", f.path, f.message))
        }
        Err(e) if looks_like_json && e.refusal != crate::canonical::Refusal::Syntax => {
            Some(format!("it holds JSON that strict JSON refuses ({e}), which the packet rule would refuse too"))
        }
        Err(_) => None,
    }
}

/// The forbidden keys as written JSON keys (`"posterUrl" :`), any case.
pub(super) fn key_finder(config: &Invocation) -> Option<regex::Regex> {
    let keys = &config.forbidden.keys;
    if keys.is_empty() {
        return None;
    }
    let alternatives: Vec<String> = keys.iter().map(|k| regex::escape(k)).collect();
    regex::Regex::new(&format!(r#"(?i)"(?:{})"\s*:"#, alternatives.join("|"))).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> crate::Invocation {
        crate::Invocation::from(crate::Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap())
    }

    #[test]
    fn slot_values_are_scanned_as_text_and_as_json() {
        let config = config();
        let keys = key_finder(&config);
        let scan = |value: &str| forbidden(value, &config, keys.as_ref());
        assert_eq!(scan("Kundin 4711: Müller GmbH"), None);
        assert!(scan("see gs://private-bucket/contract").unwrap().contains("forbidden pattern"));
        let key = scan(r#"{"screens": [{"posterUrl": "x"}]}"#).unwrap();
        assert!(key.contains("posterUrl"), "{key}");
        assert_eq!(scan(r#"{"screens": [{"title": "x"}]}"#), None);
        assert_eq!(scan("[draft] a title with {braces}"), None);
    }

    /// What serde's defaults let through: a trailing comment, a duplicate key hiding
    /// the first, nesting past the parser's depth.
    #[test]
    fn json_that_is_not_strict_still_shows_its_forbidden_keys() {
        let config = config();
        let keys = key_finder(&config);
        let scan = |value: &str| forbidden(value, &config, keys.as_ref());
        assert!(scan("{\"posterUrl\": \"x\"} // a comment").unwrap().contains("posterUrl"));
        assert!(scan("{\"PosterURL\" : \"x\"}").unwrap().contains("PosterURL"));
        let deep = format!("{}{{\"a\": 1}}{}", "[".repeat(200), "]".repeat(200));
        assert!(scan(&deep).unwrap().contains("strict JSON refuses"), "{:?}", scan(&deep));
        let duplicate = r#"{"title": "x", "title": "y"}"#;
        assert!(scan(duplicate).unwrap().contains("duplicate"), "{:?}", scan(duplicate));
        // An escaped key is no written key, but strict JSON reads it.
        assert!(scan(r#"{"poster\u0055rl": "x"}"#).unwrap().contains("posterUrl"));
    }
}
