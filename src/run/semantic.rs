//! The semantic stages of evaluation: what a schema cannot say about an agent's
//! block. Each check reads the (schema-checked, but not trusted) output defensively
//! and reports every problem it finds with the JSON path and what was expected.

use crate::report::{child, index};
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::OnceLock;

pub const IDENTITY: &str = "identity";
pub const SCREENS: &str = "screens";
pub const INSTRUCTIONS: &str = "instructions";
pub const DATA_USAGE: &str = "data-usage";
pub const ASSET_INTENTS: &str = "asset-intents";
pub const EVIDENCE: &str = "evidence";
pub const ROUTES: &str = "routes";

const SEQUENCE: &str = "$.result.onboardingStrategySequence";
const BLOCK: &str = "$.result.onboardingStrategySequence[0]";

/// The Node evaluator's `summary`, key for key.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Summary {
    pub block_found: bool,
    pub block_name: Option<String>,
    pub screen_count: usize,
    pub instruction_count: usize,
    pub data_usage_present: bool,
    pub data_mapping_count: usize,
    pub asset_intent_count: usize,
}

impl Summary {
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("blockFound".into(), self.block_found.into());
        m.insert("blockName".into(), self.block_name.clone().map_or(Value::Null, Value::from));
        m.insert("screenCount".into(), self.screen_count.into());
        m.insert("instructionCount".into(), self.instruction_count.into());
        m.insert("dataUsagePresent".into(), self.data_usage_present.into());
        m.insert("dataMappingCount".into(), self.data_mapping_count.into());
        m.insert("assetIntentCount".into(), self.asset_intent_count.into());
        Value::Object(m)
    }
}

fn block(output: &Value) -> Option<&Map<String, Value>> {
    output.pointer("/result/onboardingStrategySequence/0").and_then(Value::as_object)
}

fn screens(block: &Map<String, Value>) -> &[Value] {
    block.get("screens").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn array_len(value: Option<&Value>) -> usize {
    value.and_then(Value::as_array).map_or(0, Vec::len)
}

/// `blockFound` means a block object is where the envelope puts it; whether it is
/// the right block is the identity stage's question.
pub(crate) fn summarize(output: Option<&Value>) -> Summary {
    let Some(block) = output.and_then(block) else { return Summary::default() };
    let screens = screens(block);
    let per_screen = |key: &str| screens.iter().map(|s| array_len(s.get("aiMeta").and_then(|m| m.get(key)))).sum();
    Summary {
        block_found: true,
        block_name: block.get("name").and_then(Value::as_str).map(str::to_owned),
        screen_count: screens.len(),
        instruction_count: array_len(block.get("instructions")),
        data_usage_present: array_len(block.get("dataUsage").and_then(|d| d.get("items"))) > 0,
        data_mapping_count: per_screen("dataMapping"),
        asset_intent_count: per_screen("assetIntents"),
    }
}

/// Every semantic stage, in order; `fail(stage, message)` for each problem.
pub(crate) fn check(output: &Value, packet: &Map<String, Value>, fail: &mut dyn FnMut(&'static str, String)) {
    let input = packet.get("renderInput").unwrap_or(&Value::Null);
    let branch = packet.get("resolvedBranch").unwrap_or(&Value::Null);
    let Some(block) = identity(output, input.get("target").unwrap_or(&Value::Null), fail) else { return };
    let ids = screen_ids(block, fail);
    instructions(block, fail);
    let resolved = resolved_refs(input);
    data_usage(block, &ids, EvidenceUse::of(branch, &resolved), fail);
    asset_intents(block, branch.get("hasAssetIntents") == Some(&Value::Bool(true)), fail);
    evidence(block, &resolved, fail);
    routes(block, &ids, fail);
}

fn identity<'a>(
    output: &'a Value,
    target: &Value,
    fail: &mut dyn FnMut(&'static str, String),
) -> Option<&'a Map<String, Value>> {
    let count = array_len(output.pointer("/result/onboardingStrategySequence"));
    if count != 1 {
        fail(IDENTITY, format!("{SEQUENCE}: expected exactly one adapted block, found {count}"));
    }
    let Some(block) = block(output) else {
        fail(IDENTITY, format!("{BLOCK}: expected the adapted block object, found none"));
        return None;
    };
    for (field, target_key) in [("id", "blockId"), ("name", "blockName"), ("blockType", "blockType")] {
        let Some(expected) = target.get(target_key).and_then(Value::as_str) else {
            fail(
                IDENTITY,
                format!("renderInput.target.{target_key}: missing, so the block's {field} cannot be checked"),
            );
            continue;
        };
        let found = block.get(field).and_then(Value::as_str);
        if found != Some(expected) {
            fail(
                IDENTITY,
                format!(
                    "{}: expected {expected:?} (renderInput.target.{target_key}), found {}",
                    child(BLOCK, field),
                    shown(block.get(field))
                ),
            );
        }
    }
    Some(block)
}

/// Screen ids in order (blank ids skipped after being reported).
fn screen_ids<'a>(block: &'a Map<String, Value>, fail: &mut dyn FnMut(&'static str, String)) -> Vec<&'a str> {
    let screens = screens(block);
    if screens.is_empty() {
        fail(SCREENS, format!("{BLOCK}.screens: expected at least one screen, found {}", shown(block.get("screens"))));
    }
    let mut ids = Vec::new();
    for (i, screen) in screens.iter().enumerate() {
        match screen.get("id").and_then(Value::as_str) {
            Some(id) if !id.trim().is_empty() => ids.push(id),
            other => fail(
                SCREENS,
                format!(
                    "{}.id: expected a non-blank screen id, found {}",
                    index(&format!("{BLOCK}.screens"), i),
                    shown(other.map(Value::from).as_ref())
                ),
            ),
        }
    }
    ids
}

fn instructions(block: &Map<String, Value>, fail: &mut dyn FnMut(&'static str, String)) {
    let path = format!("{BLOCK}.instructions");
    let items = block.get("instructions").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    if items.is_empty() {
        fail(
            INSTRUCTIONS,
            format!("{path}: expected at least one instruction, found {}", shown(block.get("instructions"))),
        );
    }
    for (i, item) in items.iter().enumerate() {
        if !is_text(item.get("text")) {
            fail(INSTRUCTIONS, format!("{}.text: expected non-blank instruction text", index(&path, i)));
        }
    }
}

/// What the branch asks of the answer's data usage, as the prompts state it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EvidenceUse {
    /// The operator selected evidence: it must be used.
    Required,
    /// A strategy's default set only offers evidence ("use the ones that serve").
    Optional,
    /// No evidence resolved: data usage and every mapping stay empty.
    Forbidden,
}

impl EvidenceUse {
    fn of(branch: &Value, resolved: &BTreeSet<String>) -> Self {
        match branch.get("evidenceMode").and_then(Value::as_str) {
            Some("no-evidence") => EvidenceUse::Forbidden,
            Some("selected-only") if !resolved.is_empty() => EvidenceUse::Required,
            _ => EvidenceUse::Optional,
        }
    }
}

/// dataUsage items and purposes are consistent, every screen's dataMapping is
/// complete, and every evidence citation in a mapping is recorded in dataUsage.
fn data_usage(block: &Map<String, Value>, ids: &[&str], rule: EvidenceUse, fail: &mut dyn FnMut(&'static str, String)) {
    let path = format!("{BLOCK}.dataUsage");
    let Some(usage) = block.get("dataUsage").and_then(Value::as_object) else {
        fail(DATA_USAGE, format!("{path}: expected an object with items (required even without evidence)"));
        return;
    };
    let items = usage.get("items").and_then(Value::as_array);
    if items.is_none() {
        fail(DATA_USAGE, format!("{path}.items: expected an array"));
    }
    let items = items.map_or(&[][..], Vec::as_slice);
    if rule == EvidenceUse::Required && items.is_empty() {
        fail(
            DATA_USAGE,
            format!("{path}.items: the operator selected evidence for this run but no data usage is recorded"),
        );
    }
    if rule == EvidenceUse::Forbidden && !items.is_empty() {
        fail(DATA_USAGE, format!("{path}.items: no evidence was resolved for this run, so data usage must stay empty"));
    }
    let purposes = usage.get("purposes").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let purpose_ids: HashSet<&str> = purposes.iter().filter_map(|p| p.get("id").and_then(Value::as_str)).collect();
    for (i, item) in items.iter().enumerate() {
        let at = index(&format!("{path}.items"), i);
        mapping_fields(item, &at, fail);
        if let Some(purpose) = item.get("purposeId").and_then(Value::as_str) {
            if !purpose_ids.contains(purpose) {
                fail(DATA_USAGE, format!("{at}.purposeId: {purpose:?} is not a declared dataUsage purpose"));
            }
        }
    }
    for (i, purpose) in purposes.iter().enumerate() {
        let at = index(&format!("{path}.purposes"), i);
        for (j, n) in purpose.get("itemIndices").and_then(Value::as_array).into_iter().flatten().enumerate() {
            if n.as_u64().is_none_or(|n| (n as usize) >= items.len()) {
                fail(
                    DATA_USAGE,
                    format!("{at}.itemIndices[{j}]: {n} is not an index of dataUsage.items (0..{})", items.len()),
                );
            }
        }
        for (j, screen) in purpose.get("appliedTo").and_then(Value::as_array).into_iter().flatten().enumerate() {
            if !screen.as_str().is_some_and(|s| ids.contains(&s)) {
                fail(DATA_USAGE, format!("{at}.appliedTo[{j}]: {screen} is not a screen of this block"));
            }
        }
    }
    let recorded: HashSet<&str> = items.iter().filter_map(|i| i.get("sourcePath").and_then(Value::as_str)).collect();
    for (i, screen) in screens(block).iter().enumerate() {
        let at = format!("{}.aiMeta.dataMapping", index(&format!("{BLOCK}.screens"), i));
        let Some(mappings) = screen.pointer("/aiMeta/dataMapping").and_then(Value::as_array) else {
            fail(DATA_USAGE, format!("{at}: expected an array of data mappings"));
            continue;
        };
        if rule == EvidenceUse::Forbidden && !mappings.is_empty() {
            fail(
                DATA_USAGE,
                format!("{at}: no evidence was resolved for this run, so every data mapping must stay empty"),
            );
        }
        for (j, mapping) in mappings.iter().enumerate() {
            let at = index(&at, j);
            mapping_fields(mapping, &at, fail);
            if let Some(source) = mapping.get("sourcePath").and_then(Value::as_str) {
                if evidence_ref().is_match(source) && !recorded.contains(source) {
                    fail(
                        DATA_USAGE,
                        format!("{at}.sourcePath: {source:?} is cited but not recorded in dataUsage.items"),
                    );
                }
            }
        }
    }
}

fn mapping_fields(item: &Value, at: &str, fail: &mut dyn FnMut(&'static str, String)) {
    for field in ["sourcePath", "value", "justification"] {
        if !is_text(item.get(field)) {
            fail(DATA_USAGE, format!("{at}.{field}: expected a non-blank string, found {}", shown(item.get(field))));
        }
    }
}

/// Asset intents are required when the source carried asset intents or examples;
/// each must point at content that exists on its screen.
fn asset_intents(block: &Map<String, Value>, required: bool, fail: &mut dyn FnMut(&'static str, String)) {
    let mut count = 0;
    for (i, screen) in screens(block).iter().enumerate() {
        let at = format!("{}.aiMeta.assetIntents", index(&format!("{BLOCK}.screens"), i));
        for (j, intent) in
            screen.pointer("/aiMeta/assetIntents").and_then(Value::as_array).into_iter().flatten().enumerate()
        {
            count += 1;
            if let Some(path) = intent.get("supportsContentPath").and_then(Value::as_str) {
                if lookup(screen, path).is_none() {
                    fail(
                        ASSET_INTENTS,
                        format!("{}.supportsContentPath: {path:?} names no content on this screen", index(&at, j)),
                    );
                }
            }
        }
    }
    if required && count == 0 {
        fail(ASSET_INTENTS, format!("{BLOCK}.screens[*].aiMeta.assetIntents: resolvedBranch.hasAssetIntents is true but no screen declares an asset intent"));
    }
}

/// A dotted path such as `content.copy.title`; an array index may be written as
/// a step (`content.options.items.0.title`) or in brackets
/// (`content.options.items[0].title`), the notation every report message uses.
fn lookup<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').flat_map(steps).try_fold(value, |v, step| match v {
        Value::Array(items) => step.parse::<usize>().ok().and_then(|i| items.get(i)),
        Value::Object(map) => map.get(step),
        _ => None,
    })
}

/// `items[0][1]` as the steps `items`, `0`, `1`; any other segment as itself.
fn steps(segment: &str) -> Vec<&str> {
    let Some((name, mut rest)) = segment.split_once('[') else { return vec![segment] };
    let mut out = if name.is_empty() { Vec::new() } else { vec![name] };
    loop {
        match rest.split_once(']') {
            Some((index, after)) if !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) => {
                out.push(index);
                match after.strip_prefix('[') {
                    Some(next) => rest = next,
                    None if after.is_empty() => return out,
                    None => return vec![segment],
                }
            }
            _ => return vec![segment],
        }
    }
}

/// `@kind[id]` citations of evidence, e.g. `@review[review-achievable-progress]`.
fn evidence_ref() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Any kind the compiler accepts (e.g. `app-review`), so no citation slips past.
    RE.get_or_init(|| Regex::new(r"@([^\s@\[\]]+)\[([^\]\s]+)\]").expect("valid regex"))
}

/// The citations the resolved branch allows: each resolved item as `@kind[id]`
/// and its own `value.sourcePath`.
fn resolved_refs(input: &Value) -> BTreeSet<String> {
    let mut refs = BTreeSet::new();
    for item in input.pointer("/evidence/items").and_then(Value::as_array).into_iter().flatten() {
        if let (Some(kind), Some(id)) =
            (item.get("kind").and_then(Value::as_str), item.get("id").and_then(Value::as_str))
        {
            refs.insert(format!("@{kind}[{id}]"));
        }
        if let Some(path) = item.pointer("/value/sourcePath").and_then(Value::as_str) {
            refs.insert(path.to_owned());
        }
    }
    refs
}

/// Every citation anywhere in the block (sourcePath, linkedSourceRefs, copy) must
/// name a resolved evidence item: unselected evidence must not leak into output.
fn evidence(block: &Map<String, Value>, resolved: &BTreeSet<String>, fail: &mut dyn FnMut(&'static str, String)) {
    let mut trail = crate::report::Trail::new(BLOCK);
    let allowed = if resolved.is_empty() {
        "none (no evidence resolved)".to_owned()
    } else {
        resolved.iter().map(String::as_str).collect::<Vec<_>>().join(", ")
    };
    crate::report::walk_map(block, &mut trail, &mut |v, _, trail| {
        let Some(text) = v.as_str() else { return };
        for found in evidence_ref().find_iter(text) {
            if !resolved.contains(found.as_str()) {
                fail(
                    EVIDENCE,
                    format!(
                        "{}: cites {} which is not a resolved evidence item; allowed: {allowed}",
                        trail.render(),
                        found.as_str()
                    ),
                );
            }
        }
    });
}

/// Unique ids, a valid first screen, known edge targets, every screen reachable
/// from the first, and a completing action on a reachable screen.
fn routes(block: &Map<String, Value>, ids: &[&str], fail: &mut dyn FnMut(&'static str, String)) {
    let mut seen = HashSet::new();
    for id in ids {
        if !seen.insert(*id) {
            fail(ROUTES, format!("{BLOCK}.screens: screen id {id:?} is used more than once"));
        }
    }
    let mut edges: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut completes: HashSet<&str> = HashSet::new();
    for (i, screen) in screens(block).iter().enumerate() {
        let Some(id) = screen.get("id").and_then(Value::as_str) else { continue };
        let root = format!("{}.content", index(&format!("{BLOCK}.screens"), i));
        for (path, action) in actions(screen.get("content").unwrap_or(&Value::Null), &root) {
            if action.get("kind").and_then(Value::as_str) == Some("complete") {
                completes.insert(id);
            }
            for (j, edge) in action.get("edges").and_then(Value::as_array).into_iter().flatten().enumerate() {
                match edge.get("nextScreenId").and_then(Value::as_str) {
                    Some(next) if seen.contains(next) => edges.entry(id).or_default().push(next),
                    other => fail(
                        ROUTES,
                        format!(
                            "{path}.edges[{j}].nextScreenId: {} is not a screen of this block",
                            shown(other.map(Value::from).as_ref())
                        ),
                    ),
                }
            }
        }
    }
    let first = block.get("firstScreenId").and_then(Value::as_str);
    let Some(first) = first.filter(|f| seen.contains(f)) else {
        fail(
            ROUTES,
            format!(
                "{BLOCK}.firstScreenId: expected one of the screen ids {ids:?}, found {}",
                shown(block.get("firstScreenId"))
            ),
        );
        return;
    };
    let reachable = reach(first, &edges);
    for id in ids.iter().filter(|id| !reachable.contains(*id)) {
        fail(ROUTES, format!("{BLOCK}.screens: screen {id:?} is not reachable from firstScreenId {first:?}"));
    }
    if !reachable.iter().any(|id| completes.contains(id)) {
        fail(
            ROUTES,
            format!("{BLOCK}.screens: no reachable screen has an action of kind \"complete\"; the block never ends"),
        );
    }
}

fn reach<'a>(first: &'a str, edges: &HashMap<&'a str, Vec<&'a str>>) -> HashSet<&'a str> {
    let mut reachable = HashSet::from([first]);
    let mut queue = VecDeque::from([first]);
    while let Some(id) = queue.pop_front() {
        for next in edges.get(id).into_iter().flatten() {
            if reachable.insert(next) {
                queue.push_back(next);
            }
        }
    }
    reachable
}

/// Every `action` object with a `kind`, anywhere under a screen's content.
fn actions<'a>(content: &'a Value, root: &str) -> Vec<(String, &'a Map<String, Value>)> {
    let mut found = Vec::new();
    // The trail borrows for as long as the content; the root is prefixed after.
    let mut trail = crate::report::Trail::new("$");
    crate::report::walk(content, &mut trail, &mut |v, key, trail| {
        if key == Some("action") {
            if let Some(action) = v.as_object().filter(|a| a.get("kind").is_some_and(Value::is_string)) {
                found.push((format!("{root}{}", &trail.render()[1..]), action));
            }
        }
    });
    found
}

fn is_text(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).is_some_and(|s| !s.trim().is_empty())
}

fn shown(value: Option<&Value>) -> String {
    crate::packet::describe(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn packet() -> Map<String, Value> {
        json!({
            "renderInput": {
                "target": {"blockId": "b1", "blockName": "Proof", "blockType": "motivation"},
                "evidence": {"items": [{"kind": "review", "id": "r1", "value": {"sourcePath": "@review[r1]"}}]}
            },
            "resolvedBranch": {"hasAssetIntents": true}
        })
        .as_object()
        .unwrap()
        .clone()
    }

    fn screen(id: &str, action: Value) -> Value {
        json!({"id": id, "screenType": "HeroContent",
            "content": {"copy": {"title": "t"}, "actionBar": {"primary": {"label": "Go", "action": action}}},
            "aiMeta": {"dataMapping": [{"sourcePath": "@review[r1]", "value": "v", "justification": "j"}],
                       "assetIntents": [{"supportsContentPath": "content.copy.title", "linkedSourceRefs": ["@review[r1]"]}]}})
    }

    fn output(screens: Vec<Value>) -> Value {
        json!({"result": {"onboardingStrategySequence": [{
            "id": "b1", "name": "Proof", "blockType": "motivation", "firstScreenId": "s1",
            "instructions": [{"level": "mustHave", "text": "x"}],
            "dataUsage": {"items": [{"sourcePath": "@review[r1]", "value": "v", "justification": "j"}]},
            "screens": screens}]}})
    }

    fn failures(output: &Value) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        check(output, &packet(), &mut |stage, message| out.push((stage, message)));
        out
    }

    #[test]
    fn a_two_screen_route_holds() {
        let advance =
            json!({"kind": "advance", "edges": [{"nextScreenId": "s2", "transitionKind": "push", "conditions": []}]});
        let out = output(vec![screen("s1", advance), screen("s2", json!({"kind": "complete", "edges": []}))]);
        assert_eq!(failures(&out), vec![]);
        let summary = summarize(Some(&out));
        assert_eq!((summary.screen_count, summary.data_mapping_count, summary.asset_intent_count), (2, 2, 2));
    }

    #[test]
    fn route_problems_are_each_reported() {
        let dangling = json!({"kind": "advance", "edges": [{"nextScreenId": "nowhere"}]});
        let out = output(vec![
            screen("s1", dangling),
            screen("s1", json!({"kind": "advance", "edges": []})),
            screen("s3", json!({"kind": "noop", "edges": []})),
        ]);
        let messages: Vec<String> = failures(&out).into_iter().map(|(s, m)| format!("{s}: {m}")).collect();
        let text = messages.join("\n");
        assert!(
            text.contains(
                "routes: $.result.onboardingStrategySequence[0].screens: screen id \"s1\" is used more than once"
            ),
            "{text}"
        );
        assert!(text.contains("\"nowhere\" is not a screen of this block"), "{text}");
        assert!(text.contains("screen \"s3\" is not reachable"), "{text}");
        assert!(text.contains("no reachable screen has an action of kind \"complete\""), "{text}");
    }

    #[test]
    fn content_paths_take_indices_as_steps_or_in_brackets() {
        let screen = json!({"content": {"options": {"items": [{"title": "a"}, {"title": "b"}]}, "grid": [[1, 2]]}});
        for path in ["content.options.items.1.title", "content.options.items[1].title"] {
            assert_eq!(lookup(&screen, path), Some(&json!("b")), "{path}");
        }
        assert_eq!(lookup(&screen, "content.grid[0][1]"), Some(&json!(2)));
        for missing in [
            "content.options.items[2].title",
            "content.options.items[].title",
            "content.options.items[x].title",
            "content.options[0]",
        ] {
            assert_eq!(lookup(&screen, missing), None, "{missing}");
        }
        assert_eq!(steps("items[0]x"), vec!["items[0]x"], "trailing text keeps the segment whole");
    }

    #[test]
    fn asset_intent_paths_must_name_content() {
        let mut s = screen("s1", json!({"kind": "complete", "edges": []}));
        s["aiMeta"]["assetIntents"][0]["supportsContentPath"] = json!("content.copy.subtitle");
        let text: String = failures(&output(vec![s])).into_iter().map(|(_, m)| m).collect();
        assert!(text.contains("\"content.copy.subtitle\" names no content"), "{text}");
    }
}
