//! Slot contracts under `trace --gate`: each slot of an agent's templates is held to
//! its shape, declared by the agent (`slots`), built in (the block builder's), or
//! taken from the values the agent's vouched packets fill it with; and every value,
//! each time a loop fills it, is searched for forbidden material as
//! `packet::forbidden-material` searches renderInput.

use crate::forbidden::Forbidden;
use crate::profile::Profile;
use crate::template::{Piece, Shape, SlotContract, Template};
use crate::Invocation;
use std::collections::{BTreeMap, BTreeSet};

/// A slot of one root template: the root's name and the slot's.
pub(crate) type RootSlot = (String, String);

/// The contracts of one agent's slots.
pub(crate) struct Contracts {
    /// The declared (or built-in) contracts, by slot name: one in every template.
    by_slot: BTreeMap<String, SlotContract>,
    /// The shapes taken from the reviewed texts, per root template and slot: one name in
    /// two templates may hold two kinds of value.
    inferred: BTreeMap<RootSlot, SlotContract>,
    /// Per slot held to a JSON Schema: the schema, compiled.
    schemas: BTreeMap<String, std::sync::Arc<jsonschema::Validator>>,
    /// Per slot the engine holds to a pattern (an escaped mustache slot, a `str.format`
    /// spec): what it can render there, wherever the slot stands. A declared shape is
    /// what the matcher holds the slot to; the engine's is kept here as well.
    held: BTreeMap<String, Vec<regex::Regex>>,
}

/// The block builder's slots whose shape its compiler fixes, and those that hold the
/// customer data a new block brings (any text, or the JSON its compiler writes): a new
/// block source is no drift, whatever the golden packets happen to hold.
fn built_in(agent: &Profile, config: &Invocation) -> Vec<(String, SlotContract)> {
    if !agent.is_block_builder() {
        return Vec::new();
    }
    let schema_name = crate::schema::shared_snapshot(config).ok().and_then(|s| s["name"].as_str().map(str::to_owned));
    let modes = crate::branch::EvidenceMode::NAMES.iter().map(|m| (*m).to_owned()).collect();
    let mut slots = vec![
        ("evidence.requestedMode".to_owned(), SlotContract::of(Shape::Enum(modes))),
        ("evidence.items | length".to_owned(), SlotContract::of(Shape::Integer)),
    ];
    for name in BLOCK_TEXT {
        slots.push((name.to_owned(), SlotContract::of(Shape::Text)));
    }
    for name in BLOCK_JSON {
        slots.push((format!("json.{name}"), SlotContract::of(Shape::Json)));
    }
    // Canonical JSON of each asset example and evidence value.
    slots.push(("pattern".to_owned(), SlotContract::of(Shape::Json)));
    slots.push(("item.value".to_owned(), SlotContract::of(Shape::Json)));
    // The name of the suite's output schema, which its compiler writes.
    slots.extend(schema_name.map(|name| ("schemaName".to_owned(), SlotContract::of(Shape::Literal(name)))));
    slots
}

/// The block builder's slots of request text (names, ids, evidence, the operator's words).
const BLOCK_TEXT: [&str; 9] = [
    "source.name",
    "source.exampleId",
    "source.checksum",
    "target.blockName",
    "target.blockId",
    "target.blockType",
    "item.id",
    "item.kind",
    "operatorInstruction",
];

/// The block builder's slots of JSON its compiler writes from the request (`json.NAME`).
const BLOCK_JSON: [&str; 9] =
    ["strategy", "contract", "variables", "sequence", "blueprint", "mappings", "predecessor", "successor", "theme"];

/// The contract of a slot that renders one of the agent's branch fields (`{{ audience }}`,
/// `{{ branch.audience }}`): only that field's declared values.
fn branch_field(agent: &Profile, slot: &str) -> Option<SlotContract> {
    let field = agent.branch.iter().find(|f| slot == f.name || slot.ends_with(&format!(".{}", f.name)))?;
    Some(SlotContract::of(match &field.values {
        Some(values) => Shape::Enum(values.clone()),
        None => Shape::Boolean,
    }))
}

impl Contracts {
    /// The contract of each of `slots` (every slot the agent's vouched templates have),
    /// given the values the vouched packets filled each with; an error names a schema
    /// that cannot be read. (A declared slot no template has is refused when the gate
    /// is signed: [`undeclared`].)
    pub(crate) fn new(
        agent: &Profile,
        slots: &BTreeSet<RootSlot>,
        observe: &dyn Fn() -> BTreeMap<RootSlot, Vec<String>>,
        config: &Invocation,
        setting: &str,
        admitted: &dyn Fn(&[u8]) -> bool,
    ) -> Result<Contracts, String> {
        let built_in = built_in(agent, config);
        let mut by_slot = BTreeMap::new();
        let mut schemas = BTreeMap::new();
        let mut inferred = BTreeMap::new();
        // Splitting every reviewed text is the dearest part: done only for a slot with no declared shape.
        let observed = std::cell::OnceCell::new();
        for slot @ (_, name) in slots {
            let declared = agent.slots.get(name).or_else(|| built_in.iter().find(|(n, _)| n == name).map(|(_, c)| c));
            let declared =
                declared.cloned().or_else(|| (!agent.is_block_builder()).then(|| branch_field(agent, name)).flatten());
            let Some(contract) = declared else {
                let values = observed.get_or_init(observe).get(slot).into_iter().flatten().map(String::as_str);
                inferred.insert(slot.clone(), SlotContract::of(Shape::of_values(values).unwrap_or(Shape::Text)));
                continue;
            };
            if by_slot.contains_key(name) {
                continue;
            }
            if let Some(file) = &contract.schema {
                schemas.insert(
                    name.clone(),
                    schema(config, file, admitted).map_err(|e| format!("[{setting}.slots] {name:?}: {e}"))?,
                );
            }
            by_slot.insert(name.clone(), contract);
        }
        Ok(Contracts { by_slot, inferred, schemas, held: BTreeMap::new() })
    }

    /// The contract of `slot` in the root template `root`.
    fn contract(&self, root: &str, slot: &str) -> Option<&SlotContract> {
        self.by_slot.get(slot).or_else(|| self.inferred.get(&(root.to_owned(), slot.to_owned())))
    }

    /// Whether the shape of `slot` in `root` is taken from the reviewed texts (a name
    /// declared anywhere is in `by_slot` only).
    pub(crate) fn is_inferred(&self, root: &str, slot: &str) -> bool {
        self.inferred.contains_key(&(root.to_owned(), slot.to_owned()))
    }

    /// The regular expression a value of `slot` in `root` must match whole (`None`: any text).
    pub(crate) fn pattern(&self, root: &str, slot: &str) -> Option<String> {
        self.contract(root, slot).and_then(|c| c.shape.pattern())
    }

    /// Why `value` is outside the shape of `slot` in `root`, if it is.
    pub(crate) fn outside_shape(&self, root: &str, slot: &str, value: &str) -> Option<String> {
        let contract = self.contract(root, slot)?;
        let pattern = contract.shape.pattern()?;
        let whole = regex::Regex::new(&format!(r"\A(?:{pattern})\z")).ok()?;
        (!whole.is_match(value)).then(|| format!("it is not {}", contract.shape.describe()))
    }

    /// The engine's patterns of each held slot of `templates`.
    pub(crate) fn hold<'a>(&mut self, templates: impl Iterator<Item = &'a Template>) -> Result<(), String> {
        let mut patterns = BTreeMap::new();
        templates.for_each(|t| held_patterns(t, &mut patterns));
        for (name, patterns) in patterns.into_iter().filter(|(_, p)| !p.iter().any(|p| p == ANY_TEXT)) {
            let whole = patterns
                .iter()
                .map(|p| regex::Regex::new(&format!(r"\A(?:{p})\z")).map_err(|e| format!("the slot {name}: {e}")))
                .collect::<Result<_, _>>()?;
            self.held.insert(name, whole);
        }
        Ok(())
    }

    /// Why `value`, taken out of `slot`, breaks the slot's contract once taken out:
    /// not what the engine renders there, longer than its maximum, no strict JSON, or
    /// against its schema.
    pub(crate) fn breach(&self, root: &str, slot: &str, value: &str) -> Option<String> {
        if self.held.get(slot).is_some_and(|held| !held.iter().any(|p| p.is_match(value))) {
            return Some("it is nothing the template engine renders there (its escaping or format spec)".to_owned());
        }
        let contract = self.contract(root, slot)?;
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

/// A slot's schema, when `admitted` counts its bytes (in production: the gate statement
/// lists them among its materials, so a schema loosened after signing holds nothing).
fn schema(
    config: &Invocation,
    file: &str,
    admitted: &dyn Fn(&[u8]) -> bool,
) -> Result<std::sync::Arc<jsonschema::Validator>, String> {
    let path = config.settings().root.join(file);
    let bytes = crate::fsutil::read_bytes(&path, config.settings().limits.max_file_bytes).map_err(|e| e.to_string())?;
    if !admitted(&bytes) {
        return Err(format!("the schema {file} is not the one the gate statement vouches for (a material it names)"));
    }
    let value = crate::canonical::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    crate::evaluator::schema::validator(&value, config).map_err(|e| format!("{}: {e}", path.display()))
}

/// The slots `agent` declares that none of its templates has, each named with the
/// setting (`test --attest` refuses to sign over them: a misspelt slot would leave the
/// real one to its vouched values).
pub(crate) fn undeclared(agent: &Profile, templates: &[&Template], setting: &str) -> Vec<String> {
    let mut names = BTreeSet::new();
    templates.iter().for_each(|t| slot_names(t, &mut names));
    agent
        .slots
        .keys()
        .filter(|name| !names.contains(*name))
        .map(|name| format!("[{setting}.slots] names {name:?}, which no template of agent {:?} has", agent.name))
        .collect()
}

/// What a slot the engine does not hold can render.
const ANY_TEXT: &str = "(?s:.*)";

/// The engine's pattern of every held slot in `template`, by name.
fn held_patterns(template: &Template, patterns: &mut BTreeMap<String, Vec<String>>) {
    each_slot(template, &mut |name, held| {
        // The same name unescaped elsewhere takes any text there.
        let pattern = held.unwrap_or(ANY_TEXT);
        let known = patterns.entry(name.to_owned()).or_default();
        if !known.iter().any(|p| p == pattern) {
            known.push(pattern.to_owned());
        }
    });
}

/// The name of every slot in `template`.
pub(crate) fn slot_names(template: &Template, names: &mut BTreeSet<String>) {
    each_slot(template, &mut |name, _| {
        names.insert(name.to_owned());
    });
}

/// Each slot of `template`, at any depth: its name, and the engine's pattern when the
/// engine holds it.
fn each_slot(template: &Template, visit: &mut dyn FnMut(&str, Option<&str>)) {
    for piece in &template.pieces {
        match piece {
            Piece::Literal(_) => {}
            Piece::Slot(name) => visit(name, None),
            Piece::Held { name, pattern } => visit(name, Some(pattern)),
            Piece::Branch(bodies) => bodies.iter().for_each(|(_, body)| each_slot(body, visit)),
            Piece::Choice(bodies) => bodies.iter().for_each(|body| each_slot(body, visit)),
            Piece::Repeat(body) => each_slot(body, visit),
        }
    }
}

/// Forbidden material in a slot value, by the scanner `packet::forbidden-material`
/// runs on renderInput: a value pattern in the text; a forbidden key written as a
/// JSON key anywhere in the text (so a value that is not strict JSON, with a comment,
/// a duplicate key or nesting past the parser's depth, still shows it); and in a value
/// that parses as strict JSON, a forbidden key or pattern named by its JSON path.
/// JSON that strict parsing refuses for a duplicate key or its depth is refused.
pub(crate) fn forbidden(value: &str, forbidden: &Forbidden) -> Option<String> {
    let keys = forbidden.written_keys();
    for (view, how) in views(value) {
        if let Some(pattern) = forbidden.matching_pattern(&view) {
            return Some(format!("it matches forbidden pattern {pattern}{how}"));
        }
        if let Some(key) = keys.and_then(|keys| keys.find(&view)) {
            return Some(format!("it holds the forbidden key {}{how}", crate::report::excerpt(key.as_str())));
        }
    }
    let looks_like_json = value.trim_start().starts_with(['{', '[']);
    match crate::canonical::parse(value.as_bytes()) {
        Ok(json) => {
            let mut found = Vec::new();
            crate::packet::scan(
                &json,
                crate::JsonPath::root(),
                forbidden,
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

/// The readings of a slot value that forbidden material may hide in, each with how it
/// was read: as written; its JSON string escapes decoded (`\u0055`); its percent
/// escapes decoded (`gs%3A//`); and each of those in NFKC (a fullwidth `：`).
fn views(value: &str) -> Vec<(std::borrow::Cow<'_, str>, &'static str)> {
    use std::borrow::Cow;
    let mut views: Vec<(Cow<str>, &str)> = vec![(Cow::Borrowed(value), "")];
    if value.contains('\\') {
        views.push((Cow::Owned(json_unescaped(value)), " once its JSON escapes are decoded"));
    }
    if value.contains('%') {
        let decoded = percent_encoding::percent_decode_str(value).decode_utf8_lossy().into_owned();
        views.push((Cow::Owned(decoded), " once its percent escapes are decoded"));
    }
    if !value.is_ascii() {
        let nfkc = icu_normalizer::ComposingNormalizerBorrowed::new_nfkc();
        let normalized: Vec<(Cow<str>, &str)> = views
            .iter()
            .filter_map(|(view, _)| match nfkc.normalize(view) {
                Cow::Owned(changed) => Some((Cow::Owned(changed), " in its NFKC form")),
                Cow::Borrowed(_) => None,
            })
            .collect();
        views.extend(normalized);
    }
    views
}

/// `text` with each JSON string escape (`\"`, `\\`, `\n`, `\uXXXX`, surrogate pairs)
/// decoded wherever it stands; anything else is kept as written.
fn json_unescaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let (decoded, used) = json_escape(rest);
        match decoded {
            Some(c) => out.push(c),
            None => out.push_str(&rest[..used]),
        }
        rest = &rest[used..];
    }
    out.push_str(rest);
    out
}

/// The character of the escape `text` starts with, and the bytes it takes (`None`: not
/// an escape JSON decodes: kept as written).
fn json_escape(text: &str) -> (Option<char>, usize) {
    let hex = |s: &str| {
        s.get(..4).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit())).and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    let simple = match text.as_bytes().get(1) {
        Some(b'"') => Some('"'),
        Some(b'\\') => Some('\\'),
        Some(b'/') => Some('/'),
        Some(b'n') => Some('\n'),
        Some(b'r') => Some('\r'),
        Some(b't') => Some('\t'),
        Some(b'b') => Some('\u{8}'),
        Some(b'f') => Some('\u{c}'),
        _ => None,
    };
    if simple.is_some() {
        return (simple, 2);
    }
    let Some(high) = text.strip_prefix("\\u").and_then(hex) else { return (None, 1) };
    if (0xD800..0xDC00).contains(&high) {
        if let Some(low) = text[6..].strip_prefix("\\u").and_then(hex).filter(|l| (0xDC00..0xE000).contains(l)) {
            return (char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)), 12);
        }
    }
    (char::from_u32(high), 6)
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
        let scan = |value: &str| forbidden(value, &config.settings().forbidden);
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
        let scan = |value: &str| forbidden(value, &config.settings().forbidden);
        assert!(scan("{\"posterUrl\": \"x\"} // a comment").unwrap().contains("posterUrl"));
        assert!(scan("{\"PosterURL\" : \"x\"}").unwrap().contains("PosterURL"));
        let deep = format!("{}{{\"a\": 1}}{}", "[".repeat(200), "]".repeat(200));
        assert!(scan(&deep).unwrap().contains("strict JSON refuses"), "{:?}", scan(&deep));
        let duplicate = r#"{"title": "x", "title": "y"}"#;
        assert!(scan(duplicate).unwrap().contains("duplicate"), "{:?}", scan(duplicate));
        // An escaped key is no written key, but strict JSON reads it.
        assert!(scan(r#"{"poster\u0055rl": "x"}"#).unwrap().contains("posterUrl"));
    }

    /// Round 6's hiding places: escapes in text that is not strict JSON, other key
    /// syntaxes, percent-encoding and compatibility forms; and prose is no key.
    #[test]
    fn forbidden_material_is_seen_however_it_is_written() {
        let config = config();
        let scan = |value: &str| forbidden(value, &config.settings().forbidden);
        let escaped = scan(r#"note: {"poster\u0055rl": "x"} // not strict"#).unwrap();
        assert!(escaped.contains("JSON escapes"), "{escaped}");
        assert!(scan("{'posterUrl': 'x'}").unwrap().contains("posterUrl"));
        assert!(scan("screens:\n  - posterUrl: x\n").unwrap().contains("posterUrl"));
        assert!(scan("{posterUrl:\"x\"}").unwrap().contains("posterUrl"));
        assert!(scan("see gs%3A//private-bucket/contract").unwrap().contains("percent escapes"));
        assert!(scan("see gs\u{FF1A}//private-bucket/contract").unwrap().contains("NFKC"));
        assert_eq!(scan("Give your verdict: yes or no, and 100% honest."), None);
        assert_eq!(scan("A path like C:\\temp\\new is text."), None);
    }

    #[test]
    fn json_escapes_decode_wherever_they_stand() {
        assert_eq!(json_unescaped(r"a\u0055b\n\ud83d\ude00\q"), "aUb\n\u{1F600}\\q");
    }
}
