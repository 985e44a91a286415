//! Variables: no foreign `{{…}}` syntax in screen content,
//! every personalization realization points at a string that carries `@id`, and the
//! packet's variable mappings are carried out (no source id left, every target realized).

use super::text::{keys, strings};
use super::{Ctx, Failures, VARIABLES};
use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

const PERSONALIZATION: &str = "personalization_source";

fn mustache() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\{\{[^{}]+\}\}").expect("valid regex"))
}

/// Stage `variables`: mustache syntax under `content`, and personalization realizations.
pub(crate) fn check_screens(ctx: &Ctx, out: &mut Failures) {
    for (i, screen) in ctx.screens().iter().enumerate() {
        let at = format!("{}.content", ctx.screen_path(i));
        strings(screen.get("content").unwrap_or(&Value::Null), &at, &mut |text, trail| {
            if mustache().is_match(text) {
                out.fail(VARIABLES, format!("{}: uses mustache syntax; use @variable", trail.render()));
            }
        });
        let realizations = screen.pointer("/aiMeta/variableRealizations").and_then(Value::as_array);
        for (j, item) in realizations.into_iter().flatten().enumerate() {
            if item.get("realizationKind").and_then(Value::as_str) == Some(PERSONALIZATION) {
                realization(screen, item, &format!("{}.aiMeta.variableRealizations[{j}]", ctx.screen_path(i)), out);
            }
        }
    }
}

/// The screen has at least one personalization realization (what `reflectsJtbd` states).
pub(crate) fn is_personalized(screen: &Value) -> bool {
    let realizations = screen.pointer("/aiMeta/variableRealizations").and_then(Value::as_array);
    realizations
        .into_iter()
        .flatten()
        .any(|r| r.get("realizationKind").and_then(Value::as_str) == Some(PERSONALIZATION))
}

fn realization(screen: &Value, item: &Value, at: &str, out: &mut Failures) {
    let path = item.get("contentPath").and_then(Value::as_str).unwrap_or("");
    let Some(text) = resolve(screen, path).and_then(Value::as_str) else {
        out.fail(
            VARIABLES,
            format!("{at}.contentPath: {path:?} does not lead (from the screen) to a string of this screen"),
        );
        return;
    };
    let id = item.get("variableId").and_then(Value::as_str).unwrap_or("");
    if id.is_empty() || !has_token(text, id) {
        out.fail(
            VARIABLES,
            format!("{at}: the text at {path:?} does not realize @{id} (expected the token @{id}, not a longer word)"),
        );
    }
}

/// A dotted path from the screen object, `[n]` read as a step `n`; every step must exist.
fn resolve<'a>(screen: &'a Value, path: &str) -> Option<&'a Value> {
    let normalized = path.replace('[', ".").replace(']', "");
    normalized.split('.').try_fold(screen, |value, step| match value {
        Value::Object(map) => map.get(step),
        Value::Array(items) => step.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// `@id` in `text`, not followed by a letter, digit, `_` or `-` (a `.key` suffix is fine).
fn has_token(text: &str, id: &str) -> bool {
    let token = format!("@{id}");
    text.match_indices(&token).any(|(at, _)| {
        !text[at + token.len()..].chars().next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    })
}

/// "Contains id X" of the variable-mapping rule: an object key equal to X, or a string containing X with no
/// ASCII letter, digit or `_` right before or after it.
fn contains_id(value: &Value, id: &str) -> bool {
    if id.is_empty() {
        return false;
    }
    let mut found = false;
    keys(value, &mut |key, _| found |= key == id);
    strings(value, "$", &mut |text, _| found |= has_word(text, id));
    found
}

fn has_word(text: &str, id: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    text.match_indices(id)
        .any(|(at, _)| !word(text[..at].chars().next_back()) && !word(text[at + id.len()..].chars().next()))
}

/// Each variable mapping is carried out. The source id must be gone, and when the
/// source blueprint used it, the target id must be realized. A mapping onto itself (bind
/// `goal` to `goal`) only needs the id realized: the reference demands both that it is gone
/// and that it is present, which no answer can satisfy (a reference bug).
pub(crate) fn check_mappings(ctx: &Ctx, out: &mut Failures) {
    let mappings = ctx.input.get("variableMappings").and_then(Value::as_array);
    let blueprint = ctx.input.pointer("/sourceExample/blueprint").unwrap_or(&Value::Null);
    for (i, mapping) in mappings.into_iter().flatten().enumerate() {
        let at = format!("renderInput.variableMappings[{i}]");
        let source = mapping.get("sourceVariableId").and_then(Value::as_str).unwrap_or("");
        let action = mapping.get("action").and_then(Value::as_str).unwrap_or("(no action)");
        let target = target_id(mapping, action);
        if target != Some(source) && contains_id(ctx.block_value, source) {
            out.fail(
                VARIABLES,
                format!("{}: source variable {source:?} remains referenced after {action} ({at})", ctx.path),
            );
        }
        if let Some(target) = target {
            if contains_id(blueprint, source) && !contains_id(ctx.block_value, target) {
                out.fail(
                    VARIABLES,
                    format!(
                        "{}: mapped target variable {target:?} is not realized ({at}: {action} of {source:?})",
                        ctx.path
                    ),
                );
            }
        }
    }
}

/// The id a mapping's source becomes: bind and a rewriting incompatible mapping name
/// `targetVariableId`, create names `targetVariable.id`; drop and others name none.
fn target_id<'a>(mapping: &'a Value, action: &str) -> Option<&'a str> {
    let rewrite = mapping.get("resolution").and_then(Value::as_str) == Some("rewrite-to-target");
    match action {
        "bind" => mapping.get("targetVariableId"),
        "create" => mapping.pointer("/targetVariable/id"),
        "incompatible" if rewrite => mapping.get("targetVariableId"),
        _ => None,
    }
    .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{judge_stages, packet, valid_output, with_input};
    use super::*;
    use serde_json::json;

    #[test]
    fn tokens_and_words() {
        assert!(has_token("for @focus.", "focus") && has_token("me@focus.label now", "focus"));
        assert!(!has_token("@focused", "focus") && !has_token("@focus-area", "focus") && !has_token("@Focus", "focus"));
        assert!(has_token("a @f(x)? b", "f(x)?"), "ids are literal text");
        assert!(has_word("the goal-setting", "goal") && has_word("@goal.", "goal"));
        assert!(!has_word("goal_setting", "goal") && !has_word("goals", "goal"));
        assert!(contains_id(&json!({"goal": 1}), "goal") && !contains_id(&json!({"a": "Goal"}), "goal"));
    }

    #[test]
    fn paths_resolve_from_the_screen() {
        let screen = json!({"content": {"copy": {"title": "t"}, "options": {"items": [{"title": "o"}]}}});
        assert_eq!(resolve(&screen, "content.copy.title"), Some(&json!("t")));
        assert_eq!(resolve(&screen, "content.options.items[0].title"), Some(&json!("o")));
        assert_eq!(resolve(&screen, "copy.title"), None);
    }

    #[test]
    fn mustache_and_unrealized_personalization_fail() {
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["screens"][0]["content"]["copy"]["title"] =
            json!("Hi {{ name }} @focus");
        assert_eq!(judge_stages(&out, &packet()), ["variables"]);
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["screens"][0]["content"]["copy"]["title"] = json!("Hi @focused");
        assert_eq!(judge_stages(&out, &packet()), ["variables"]);
    }

    fn mapping_packet(mapping: Value) -> serde_json::Map<String, Value> {
        let mut p = with_input("variableMappings", json!([mapping]));
        p["renderInput"]["sourceExample"] = json!({"blueprint": {"copy": "Your @goal"}});
        p
    }

    #[test]
    fn mappings_are_carried_out() {
        let bind = json!({"action": "bind", "sourceVariableId": "goal", "targetVariableId": "focus"});
        let out = valid_output(); // realizes @focus, never says the source id
        assert_eq!(judge_stages(&out, &mapping_packet(bind.clone())), Vec::<&str>::new());
        let mut left = valid_output();
        left["result"]["onboardingStrategySequence"][0]["description"] = json!("Keeps the goal");
        assert_eq!(judge_stages(&left, &mapping_packet(bind)), ["variables"]);
        let create = json!({"action": "create", "sourceVariableId": "goal", "targetVariable": {"id": "pace"}});
        assert_eq!(judge_stages(&out, &mapping_packet(create)), ["variables"], "target not realized");
        let drop = json!({"action": "incompatible", "sourceVariableId": "goal", "resolution": "drop"});
        assert_eq!(judge_stages(&out, &mapping_packet(drop)), Vec::<&str>::new());
    }

    #[test]
    fn an_identity_bind_passes_when_realized() {
        let same = json!({"action": "bind", "sourceVariableId": "focus", "targetVariableId": "focus"});
        let mut p = mapping_packet(same);
        p["renderInput"]["sourceExample"] = json!({"blueprint": {"copy": "Your @focus"}});
        assert_eq!(judge_stages(&valid_output(), &p), Vec::<&str>::new());
        let mut absent = valid_output();
        absent["result"]["onboardingStrategySequence"][0]["screens"][0]["content"]["copy"]["title"] = json!("Plain");
        absent["result"]["onboardingStrategySequence"][0]["screens"][0]["aiMeta"]["variableRealizations"] = json!([]);
        absent["result"]["onboardingStrategySequence"][0]["screens"][0]["aiMeta"]["motivationSpec"]["reflectsJtbd"] =
            json!(false);
        assert_eq!(judge_stages(&absent, &p), ["variables"], "the id must still be realized");
    }
}
