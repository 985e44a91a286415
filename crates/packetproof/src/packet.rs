//! The packet rules of the Exact Runtime Packet Contract. Each check is a
//! function returning every finding it has (never stopping at the first); which
//! of them run on a packet is the rule book's to decide (`crate::judge`), never a
//! list kept here.

pub(crate) mod branch_consistency;
mod branch_values;
use branch_values::resolved_branch;
pub(crate) use branch_values::{builtin_branch_values, retired_values};
pub(crate) mod material;
mod provider_shape;
pub use provider_shape::provider_shape;
pub(crate) use provider_shape::provider_shape_applies;

use crate::branch::EvidenceMode;
use crate::digest;
use crate::profile::Profile;
use crate::report::{walk, Finding, Findings, JsonPath, PacketCheck, Trail};
use crate::Invocation;
use serde_json::{Map, Value};

pub(crate) const AGENT_ID: &str = crate::profile::BLOCK_AGENT_ID;
pub(crate) const TASK_TYPE: &str = crate::profile::BLOCK_TASK_TYPE;
pub(crate) const PROMPT_MODE: &str = crate::profile::BLOCK_PROMPT_MODE;

/// The block builder's resolvedBranch fields and their built-in value sets, declared
/// once in the profile (which a suite extends).
pub(crate) use crate::profile::BLOCK_BRANCH as BRANCH_FIELDS;

/// The texts that reach (or explain) the model, scanned for forbidden material.
pub(crate) const PROMPT_TEXTS: [&str; 3] = ["systemPrompt", "userMessage", "effectiveUserMessage"];

/// Fixed values, types, promptPaths/promptVersions, resolvedBranch, unknown fields;
/// the agent ids, branch fields and renderInput keys are the contract profile's.
pub fn contract(packet: &Map<String, Value>, config: &Invocation) -> Vec<Finding> {
    let profile = config.settings().agent(packet);
    let mut out = Findings::new(PacketCheck::Contract);
    let mut fail = |path: JsonPath, message: String| out.fail(path, message);
    for key in packet.keys().filter(|k| !profile.allows_field(k)) {
        fail(
            JsonPath::field(key),
            format!(
                "unknown top-level field (the contract allows only its own fields and those agent {:?} declares in \
                 packet_fields: {:?})",
                profile.name, profile.packet_fields
            ),
        );
    }
    if config.settings().agents.several() {
        let id = packet.get("agentId").and_then(Value::as_str);
        if id.is_none_or(|id| config.settings().agents.with_id(id).is_none()) {
            fail(
                JsonPath::field("agentId"),
                format!(
                    "expected the agent id of one of the suite's agents {:?}, found {}",
                    config.settings().agents.ids(),
                    describe(packet.get("agentId"))
                ),
            );
        }
    }
    for (key, expected) in [("packetVersion", Value::from(1)), ("attempt", Value::from(1))] {
        expect_equal(packet, key, &expected, &mut fail);
    }
    for (key, allowed) in
        [("agentId", &profile.agent_ids), ("taskType", &profile.task_types), ("promptMode", &profile.prompt_modes)]
    {
        expect_one_of(packet, key, allowed, &mut fail);
    }
    for key in ["model", "systemPrompt", "userMessage", "effectiveUserMessage"] {
        non_blank_string(packet.get(key), JsonPath::field(key), &mut fail);
    }
    if let Some(provider) = non_blank_string(packet.get("provider"), JsonPath::field("provider"), &mut fail) {
        if !config.settings().providers.contains_key(provider) {
            let known: Vec<&str> = config.settings().providers.keys().map(String::as_str).collect();
            fail(JsonPath::field("provider"), format!("expected one of {known:?}, found {provider:?}"));
        }
    }
    match packet.get("maxTokens") {
        // `64000.0` is the integer 64000 to JavaScript, and canonicalizes to `64000`.
        Some(Value::Number(n)) if n.as_f64().is_some_and(|t| t >= 1.0 && t.fract() == 0.0) => {}
        other => fail(JsonPath::field("maxTokens"), format!("expected a positive integer, found {}", describe(other))),
    }
    let text = |key: &str| packet.get(key).and_then(Value::as_str).unwrap_or_default();
    if let Some(problem) = model_problem(config, profile, text("provider"), text("model")) {
        fail(JsonPath::field("model"), problem);
    }
    if let Some(tokens) = packet.get("maxTokens").and_then(Value::as_f64) {
        if let Some(problem) = config.settings().output_limit_problem(text("provider"), text("model"), tokens) {
            fail(JsonPath::field("maxTokens"), problem);
        }
        // Production holds a call's budget to the agent's declaration: so is the packet.
        if let Some(budget) = profile.max_tokens.as_ref().filter(|b| tokens.fract() != 0.0 || !b.allows(tokens as u64))
        {
            let within = format!("is none of agent {:?}'s max_tokens ({})", profile.name, budget.describe());
            fail(JsonPath::field("maxTokens"), format!("maxTokens {tokens} {within}"));
        }
    }
    for key in ["renderInput", "resolvedBranch"] {
        if !packet.get(key).is_some_and(Value::is_object) {
            fail(JsonPath::field(key), format!("expected an object, found {}", describe(packet.get(key))));
        }
    }
    for key in ["exactInputHash", "checksum"] {
        match packet.get(key).and_then(Value::as_str) {
            Some(text) if digest::is_digest(text) => {}
            _ => fail(
                JsonPath::field(key),
                format!("expected sha256:<64 lowercase hex>, found {}", describe(packet.get(key))),
            ),
        }
    }
    if let Err((at, expected)) = crate::call::Call::of_packet(packet) {
        fail(at, format!("expected {expected}"));
    }
    prompt_paths(packet, &mut fail);
    resolved_branch(packet, profile, &mut fail);
    if !profile.is_block_builder() {
        // The block builder's closed renderInput set is packet::branch-consistency's,
        // which derives the branch from it; a custom profile's is this check's.
        for (at, message) in unknown_render_input_keys(packet, profile) {
            fail(at, message);
        }
    }
    inexact_numbers(packet, &mut fail);
    out.into_vec()
}

/// Why the packet may not name `model`: not one its agent is declared with, or (an
/// agent a suite declares) not in its provider's `models`. Packets of the built-in
/// default agent, which may come from elsewhere (the reference's samples name a
/// placeholder model), only need a model that is not blank.
fn model_problem(config: &Invocation, agent: &Profile, provider: &str, model: &str) -> Option<String> {
    if model.trim().is_empty() {
        return None;
    }
    if let Some(problem) = agent.model_problem(model) {
        return Some(problem);
    }
    let listed = config.settings().providers.get(provider)?;
    (agent.declared && !listed.models.iter().any(|m| m == model)).then(|| {
        format!(
            "model {model:?} is not in the suite's allow-list for {provider} (harness.toml providers.{provider}.models: \
             {:?})",
            listed.models
        )
    })
}

fn prompt_paths(packet: &Map<String, Value>, fail: &mut impl FnMut(JsonPath, String)) {
    let paths: Vec<&str> = match packet.get("promptPaths") {
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| non_blank_string(Some(item), JsonPath::field("promptPaths").index(i), fail))
            .collect(),
        other => {
            fail(
                JsonPath::field("promptPaths"),
                format!("expected a non-empty array of paths, found {}", describe(other)),
            );
            Vec::new()
        }
    };
    for (i, path) in paths.iter().enumerate() {
        if paths[..i].contains(path) {
            fail(JsonPath::field("promptPaths").index(i), format!("duplicate prompt path {path:?}"));
        }
    }
    let Some(versions) = packet.get("promptVersions").and_then(Value::as_object) else {
        fail(
            JsonPath::field("promptVersions"),
            format!("expected an object, found {}", describe(packet.get("promptVersions"))),
        );
        return;
    };
    for (path, version) in versions {
        let at = JsonPath::field("promptVersions").key(path);
        if !paths.contains(&path.as_str()) {
            fail(at.clone(), "names a path that is not in promptPaths".into());
        }
        non_blank_string(Some(version), at, fail);
    }
    for path in paths.iter().filter(|p| !versions.contains_key(**p)) {
        fail(JsonPath::field("promptVersions").key(path), "missing: every prompt path needs a version".into());
    }
}

/// renderInput's top-level keys are the profile's closed set (`[packet] render_input_keys`
/// for the block builder, `contract.render_input_keys` for a custom profile): one rule,
/// reported by the profile's check (see [`contract`] and [`branch_consistency`]).
pub(crate) fn unknown_render_input_keys(packet: &Map<String, Value>, profile: &Profile) -> Vec<(JsonPath, String)> {
    let Some(input) = packet.get("renderInput").and_then(Value::as_object) else { return Vec::new() };
    let allowed = &profile.render_input_keys;
    let setting = if profile.is_block_builder() { "packet.render_input_keys" } else { "contract.render_input_keys" };
    let unknown = input.keys().filter(|k| !allowed.contains(k));
    unknown
        .map(|key| {
            let why = format!(
                "unknown renderInput key {key:?}: renderInput's keys are a closed set (harness.toml {setting}: {allowed:?})"
            );
            (JsonPath::field("renderInput").key(key), why)
        })
        .collect()
}

/// I-JSON: a number that a double cannot hold exactly would hash differently in JavaScript.
fn inexact_numbers(packet: &Map<String, Value>, fail: &mut impl FnMut(JsonPath, String)) {
    for (key, value) in packet {
        let mut trail = Trail::new(JsonPath::root());
        trail.push_key(key);
        walk(value, &mut trail, &mut |v, _, trail| {
            if let Value::Number(n) = v {
                if !crate::canonical::is_exact_double(n) {
                    fail(trail.path(), format!("number {n} cannot be held exactly by a double"));
                }
            }
        });
    }
}

/// Forbidden keys anywhere in renderInput; forbidden value patterns in renderInput
/// strings and in the prompt texts; evidence that the resolved branch excludes.
pub fn forbidden_material(packet: &Map<String, Value>, config: &Invocation) -> Vec<Finding> {
    let mut out = Vec::new();
    let forbidden = config.settings().forbidden_of(config.settings().agent(packet));
    if let Some(input) = packet.get("renderInput") {
        scan(input, JsonPath::field("renderInput"), forbidden, PacketCheck::ForbiddenMaterial, &mut out);
        evidence_boundary(packet, input, &mut out);
        out.extend(material::findings(input, config));
    }
    for key in PROMPT_TEXTS {
        if let Some(Value::String(text)) = packet.get(key) {
            if let Some(pattern) = forbidden.matching_pattern(text) {
                out.push(Finding::new(
                    PacketCheck::ForbiddenMaterial,
                    JsonPath::field(key),
                    format!("matches forbidden pattern {pattern}"),
                ));
            }
        }
    }
    out
}

/// Walk a value for forbidden keys and string values matching forbidden patterns.
pub(crate) fn scan(
    value: &Value,
    root: JsonPath,
    forbidden: &crate::forbidden::Forbidden,
    check: impl Into<crate::Check>,
    out: &mut Vec<Finding>,
) {
    let check: crate::Check = check.into();
    let mut flag = |v: &Value, key: Option<&str>, trail: &Trail| {
        if let Some(key) = key.filter(|k| forbidden.is_forbidden_key(k)) {
            out.push(Finding::new(check, trail.path(), format!("forbidden key {key:?}")));
        }
        if let Some(pattern) = v.as_str().and_then(|text| forbidden.matching_pattern(text)) {
            out.push(Finding::new(check, trail.path(), format!("matches forbidden pattern {pattern}")));
        }
    };
    let mut trail = Trail::new(root);
    flag(value, None, &trail);
    walk(value, &mut trail, &mut flag);
}

/// renderInput.evidence may hold only accessible items, and none under no-evidence.
fn evidence_boundary(packet: &Map<String, Value>, input: &Value, out: &mut Vec<Finding>) {
    let Some(items) = input.pointer("/evidence/items").and_then(Value::as_array) else { return };
    let mode = packet.get("resolvedBranch").and_then(|b| b.get("evidenceMode")).and_then(Value::as_str);
    if mode == Some(EvidenceMode::NoEvidence.name()) && !items.is_empty() {
        out.push(Finding::new(
            PacketCheck::ForbiddenMaterial,
            JsonPath::field("renderInput").key("evidence").key("items"),
            "evidence items present although evidenceMode is no-evidence",
        ));
    }
    for (i, item) in items.iter().enumerate() {
        if item.get("accessible") == Some(&Value::Bool(false)) {
            out.push(Finding::new(
                PacketCheck::ForbiddenMaterial,
                JsonPath::field("renderInput").key("evidence").key("items").index(i),
                "inaccessible evidence item rendered",
            ));
        }
    }
}

/// `exactInputHash`; on a mismatch, the known exporter mistake that explains it.
pub fn exact_input_hash(packet: &Map<String, Value>, config: &Invocation) -> Vec<Finding> {
    exact_input_hash_in(packet, config, config.settings().canonical.accept_locale_key_order)
}

/// [`exact_input_hash`], accepting the reference's key order or not.
fn exact_input_hash_in(packet: &Map<String, Value>, config: &Invocation, accept: bool) -> Vec<Finding> {
    let actual = digest::exact_input_hash(packet);
    recomputed(packet, "exactInputHash", PacketCheck::ExactInputHash, actual, accept, |stored| {
        let schema = crate::schema::snapshot_of(config, config.settings().agent(packet)).ok();
        let context = digest::forensics::Context { suffix: &config.settings().google_suffix, schema: schema.as_ref() };
        digest::forensics::exact_input_hash(packet, stored, &context)
    })
}

/// `checksum`; on a mismatch, the known exporter mistake that explains it.
pub fn checksum(packet: &Map<String, Value>, config: &Invocation) -> Vec<Finding> {
    checksum_in(packet, config.settings().canonical.accept_locale_key_order)
}

/// [`checksum`], accepting the reference's key order or not.
fn checksum_in(packet: &Map<String, Value>, accept: bool) -> Vec<Finding> {
    recomputed(packet, "checksum", PacketCheck::Checksum, digest::packet_checksum(packet), accept, |stored| {
        digest::forensics::checksum(packet, stored)
    })
}

/// The forensics id of a hash made in the reference's key order (JavaScript
/// `localeCompare`), which `[canonical] accept_locale_key_order` accepts.
pub(crate) const LOCALE_ORDER: &str = "locale-compare-key-order";

/// Notes naming each stored hash that holds only in the reference's key order
/// (accepted under `[canonical] accept_locale_key_order`).
fn locale_hash_notes(packet: &Map<String, Value>, config: &Invocation) -> Vec<String> {
    [PacketCheck::ExactInputHash, PacketCheck::Checksum]
        .into_iter()
        .filter_map(|check| locale_order_note(check, packet, config))
        .collect()
}

/// The note for `check` (exactInputHash or checksum) when the packet's stored hash
/// holds only in the reference's key order, which the suite accepts.
pub(crate) fn locale_order_note(
    check: PacketCheck,
    packet: &Map<String, Value>,
    config: &Invocation,
) -> Option<String> {
    if !config.settings().canonical.accept_locale_key_order {
        return None;
    }
    let (key, findings_without) = match check {
        PacketCheck::ExactInputHash => ("exactInputHash", exact_input_hash_in(packet, config, false)),
        PacketCheck::Checksum => ("checksum", checksum_in(packet, false)),
        _ => return None,
    };
    findings_without.iter().any(|f| f.cause.as_deref() == Some(LOCALE_ORDER)).then(|| {
        format!(
            "$.{key}: accepted in JavaScript localeCompare key order (ICU root collation), not RFC 8785 \
             ([canonical] accept_locale_key_order = true); packetproof never writes such hashes"
        )
    })
}

fn recomputed(
    packet: &Map<String, Value>,
    key: &str,
    check: PacketCheck,
    actual: String,
    accept_locale_order: bool,
    forensics: impl FnOnce(&str) -> Option<digest::forensics::Cause>,
) -> Vec<Finding> {
    let stored = packet.get(key).and_then(Value::as_str);
    if stored == Some(actual.as_str()) {
        return Vec::new();
    }
    let message = format!(
        "{key} does not match the packet: stored {}, recomputed {actual}",
        describe(stored.map(Value::from).as_ref())
    );
    match stored.filter(|s| digest::is_digest(s)).and_then(forensics) {
        Some(cause) if accept_locale_order && cause.id == LOCALE_ORDER => Vec::new(),
        Some(cause) => {
            let message = format!("{message}; the stored {key} is what {} gives", cause.explanation);
            vec![Finding::new(check, JsonPath::field(key), message).with_cause(cause.id)]
        }
        None => vec![Finding::new(check, JsonPath::field(key), message)],
    }
}

/// `key` holds one of `allowed` (with one, the message names it as the contract's fixed value).
fn expect_one_of(packet: &Map<String, Value>, key: &str, allowed: &[String], fail: &mut impl FnMut(JsonPath, String)) {
    let found = packet.get(key);
    if found.and_then(Value::as_str).is_some_and(|s| allowed.iter().any(|a| a == s)) {
        return;
    }
    let expected = match allowed {
        [one] => format!("{:?}", one),
        many => format!("one of {many:?} (harness.toml contract)"),
    };
    fail(JsonPath::field(key), format!("expected {expected}, found {}", describe(found)));
}

fn expect_equal(packet: &Map<String, Value>, key: &str, expected: &Value, fail: &mut impl FnMut(JsonPath, String)) {
    let found = packet.get(key);
    // By value: `"attempt": 1e0` is the attempt 1.
    if !crate::numbers::same_opt(found, expected) {
        fail(JsonPath::field(key), format!("expected {expected}, found {}", describe(found)));
    }
}

fn non_blank_string<'a>(
    value: Option<&'a Value>,
    path: JsonPath,
    fail: &mut impl FnMut(JsonPath, String),
) -> Option<&'a str> {
    match value {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s),
        other => {
            fail(path, format!("expected a non-blank string, found {}", describe(other)));
            None
        }
    }
}

/// A short description of what was found, for messages.
pub(crate) fn describe(value: Option<&Value>) -> String {
    match value {
        None => "nothing (missing)".into(),
        Some(Value::String(s)) if s.trim().is_empty() => "a blank string".into(),
        Some(Value::String(s)) if s.len() > 80 => format!("a string of {} bytes", s.len()),
        Some(Value::Array(_)) => "an array".into(),
        Some(Value::Object(_)) => "an object".into(),
        Some(other) => other.to_string(),
    }
}

/// Everything worth saying about a packet that does not fail it: key orders the
/// Node tools would hash differently, and material the policy only warns about.
pub fn notes(packet: &Value, config: &Invocation) -> Vec<String> {
    let mut notes = key_order_notes(packet);
    if let Some(map) = packet.as_object() {
        notes.extend(locale_hash_notes(map, config));
    }
    let text = |key: &str| packet.get(key).and_then(Value::as_str).unwrap_or_default();
    let (provider, model) = (text("provider"), text("model"));
    if config.settings().has_output_limit(provider, model) == Some(false) {
        notes.push(format!(
            "maxTokens is not checked against an output limit: harness.toml gives none for model {model:?} \
             (providers.{provider}.max_output_tokens)"
        ));
    }
    if let Some(input) = packet.get("renderInput") {
        notes.extend(material::warnings(input, config));
    }
    notes
}

/// Objects whose keys the Node tools (which sort with `localeCompare`) would
/// order differently from RFC 8785, so their hashes would differ from ours.
/// These are notes, not failures: the packet itself may be fine.
pub(crate) fn key_order_notes(packet: &Value) -> Vec<String> {
    let mut notes = Vec::new();
    let mut note = |value: &Value, _key: Option<&str>, trail: &Trail| {
        let Value::Object(map) = value else { return };
        let mut code_units: Vec<&str> = map.keys().map(String::as_str).collect();
        code_units.sort_by(|a, b| crate::canonical::utf16_order(a, b));
        // A stable sort leaves a list alone exactly when it is already in order, so
        // comparing neighbours decides it: n - 1 collations instead of a sort's.
        let locale_sorted = code_units
            .windows(2)
            .all(|pair| crate::canonical::node_locale_order(pair[0], pair[1]) != std::cmp::Ordering::Greater);
        if !locale_sorted {
            let mut locale = code_units.clone();
            locale.sort_by(|a, b| crate::canonical::node_locale_order(a, b));
            notes.push(format!(
                "{}: keys sort as {code_units:?} in RFC 8785 but as {locale:?} under Node's localeCompare; Node-computed hashes will differ",
                trail.render()
            ));
        }
    };
    let mut trail = Trail::new(JsonPath::root());
    note(packet, None, &trail);
    walk(packet, &mut trail, &mut note);
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_tokens_is_a_positive_whole_number_in_any_spelling() {
        let config =
            crate::Invocation::from(crate::Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap());
        let findings = |tokens: &str| {
            let packet: Value = crate::canonical::parse(format!(r#"{{"maxTokens": {tokens}}}"#).as_bytes()).unwrap();
            contract(packet.as_object().unwrap(), &config)
                .into_iter()
                .filter(|f| f.path == JsonPath::field("maxTokens").into())
                .count()
        };
        for ok in ["64000", "64000.0", "6.4e4", "1"] {
            assert_eq!(findings(ok), 0, "{ok}");
        }
        for bad in ["0", "-5", "0.5", "64000.5", "\"64000\"", "null", "true"] {
            assert_eq!(findings(bad), 1, "{bad}");
        }
    }

    /// The output mode is decided by the provider harness.toml names: text-JSON rules for
    /// google, schema rules for openai, and none (the check says why) for a provider it does not name.
    #[test]
    fn provider_shape_follows_the_configured_output_mode_and_skips_an_unnamed_provider() {
        let config =
            crate::Invocation::from(crate::Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap());
        let packet = |provider: &str| {
            serde_json::json!({"provider": provider, "userMessage": "u", "effectiveUserMessage": "u"})
                .as_object()
                .unwrap()
                .clone()
        };
        let paths = |provider: &str| -> Vec<String> {
            provider_shape(&packet(provider), config.settings()).into_iter().map(|f| f.path.to_string()).collect()
        };
        assert_eq!(paths("google"), ["$.effectiveUserMessage"]);
        assert_eq!(paths("openai"), ["$.outputSchema"]);
        assert_eq!(provider_shape_applies(&packet("openai"), config.settings()), Ok(()));
        let why = provider_shape_applies(&packet("mistral"), config.settings()).unwrap_err();
        assert!(why.contains("\"mistral\" is not in harness.toml's providers"), "{why}");
        let outcome =
            crate::judge::packet(&Value::Object(packet("mistral")), None, &config, crate::judge::Step::Validate);
        assert!(
            outcome.findings.iter().any(|f| f.path == JsonPath::field("provider").into()),
            "{:?}",
            outcome.findings
        );
        assert!(outcome.findings.iter().all(|f| f.check != PacketCheck::ProviderShape.into()));
        let skipped = outcome.skipped.iter().find(|s| s.check == PacketCheck::ProviderShape.into());
        assert!(skipped.is_some_and(|s| s.reason == why), "{:?}", outcome.skipped);
    }

    #[test]
    fn key_order_notes_flag_case_and_punctuation_sensitive_keys() {
        // Node 20: ["_a","a","A","a_b","a-b","a1","ab","aB","Ab"].sort((x, y) => x.localeCompare(y))
        let keys = ["_a", "a", "A", "a_b", "a-b", "a1", "ab", "aB", "Ab"];
        let mut sorted = keys;
        sorted.reverse();
        sorted.sort_by(|a, b| crate::canonical::node_locale_order(a, b));
        assert_eq!(sorted, keys);
        let agreeing: Value = serde_json::json!({"alpha": 1, "beta": {"gamma": 2, "delta": 3}});
        assert!(key_order_notes(&agreeing).is_empty());
        let differing: Value = serde_json::json!({"x": {"Zeta": 1, "alpha": 2}});
        let notes = key_order_notes(&differing);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("$.x: "), "{notes:?}");
    }
}
