//! What the screens say: motivation specs that match the
//! screen's personalization, and copy that never names the machinery behind it (update
//! modes, fallback audiences, branches, prompts, packets, compilers).

use super::text::{is_text, strings};
use super::variables::is_personalized;
use super::{Ctx, Failures, CONTENT_BOUNDARY, MOTIVATION};
use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

/// A `gain:` class names the need it targets, and `reflectsJtbd` is exactly
/// whether the screen is personalized (a missing value is not false).
pub(crate) fn motivation(ctx: &Ctx, out: &mut Failures) {
    for (i, screen) in ctx.screens().iter().enumerate() {
        let Some(spec) = screen.pointer("/aiMeta/motivationSpec").filter(|s| s.is_object()) else { continue };
        let at = format!("{}.aiMeta.motivationSpec", ctx.screen_path(i));
        let class = spec.get("class").and_then(Value::as_str).unwrap_or("");
        if class.starts_with("gain:") && !is_text(spec.get("targetsNeed")) {
            out.fail(MOTIVATION, format!("{at}.targetsNeed: a {class:?} motivation must name the need it targets"));
        }
        let personalized = is_personalized(screen);
        if spec.get("reflectsJtbd") != Some(&Value::Bool(personalized)) {
            out.fail(
                MOTIVATION,
                format!(
                    "{at}.reflectsJtbd: expected {personalized} (the screen {} personalization_source realization)",
                    if personalized { "has a" } else { "has no" }
                ),
            );
        }
    }
}

/// The six term families, matched case-insensitively as whole words (ASCII word
/// boundaries, as JavaScript's `\b`).
fn families() -> &'static [(&'static str, Regex)] {
    static FAMILIES: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    FAMILIES.get_or_init(|| {
        [
            ("update mode", r"update[ -]mode"),
            ("fallback audience", r"fallback[ -]audience"),
            ("semantic branch", r"semantic branch"),
            ("pinned insight package", r"pinned insight package"),
            ("resolved evidence fields", r"(?:resolved|eligible) (?:proof|evidence) fields?"),
            (
                "runtime plumbing",
                r"(?:compiler|compile input|runtime packet|provider request|provider response|task-debug|(?:system|model|provider|agent) prompts?|prompt (?:packet|registry|version|storage|path|section|compiler))",
            ),
        ]
        .into_iter()
        .map(|(name, body)| (name, Regex::new(&format!(r"(?i)(?-u:\b){body}(?-u:\b)")).expect("valid regex")))
        .collect()
    })
}

/// The block description, instruction texts, every string under each screen's
/// content, `aiMeta.blockRole` and every string under `aiMeta.assetIntents`. One failure
/// per field and family.
pub(crate) fn content_boundary(ctx: &Ctx, out: &mut Failures) {
    let mut scan = |at: String, text: &str| {
        for (family, re) in families() {
            if re.is_match(text) {
                out.fail(CONTENT_BOUNDARY, format!("{at}: names {family} (internal plumbing) in agent-facing copy"));
            }
        }
    };
    if let Some(text) = ctx.block.get("description").and_then(Value::as_str) {
        scan(format!("{}.description", ctx.path), text);
    }
    let instructions = ctx.block.get("instructions").and_then(Value::as_array);
    for (i, item) in instructions.into_iter().flatten().enumerate() {
        if let Some(text) = item.get("text").and_then(Value::as_str) {
            scan(format!("{}.instructions[{i}].text", ctx.path), text);
        }
    }
    for (i, screen) in ctx.screens().iter().enumerate() {
        let at = ctx.screen_path(i);
        let content = format!("{at}.content");
        strings(screen.get("content").unwrap_or(&Value::Null), &content, &mut |text, trail| scan(trail.render(), text));
        if let Some(role) = screen.pointer("/aiMeta/blockRole").and_then(Value::as_str) {
            scan(format!("{at}.aiMeta.blockRole"), role);
        }
        let intents = format!("{at}.aiMeta.assetIntents");
        strings(screen.pointer("/aiMeta/assetIntents").unwrap_or(&Value::Null), &intents, &mut |text, trail| {
            scan(trail.render(), text)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{judge_stages, packet, valid_output};
    use super::*;
    use serde_json::json;

    fn family_of(text: &str) -> Vec<&'static str> {
        families().iter().filter(|(_, re)| re.is_match(text)).map(|(name, _)| *name).collect()
    }

    #[test]
    fn terms_match_as_whole_words() {
        assert_eq!(family_of("Switch UPDATE MODE"), ["update mode"]);
        assert_eq!(family_of("the system prompt and the fallback-audience"), ["fallback audience", "runtime plumbing"]);
        for clean in
            ["prompt versions", "compilers", "update modes", "system-prompt", "system  prompt", "journaling prompt"]
        {
            assert!(family_of(clean).is_empty(), "{clean}");
        }
        assert_eq!(family_of("eligible proof fields"), ["resolved evidence fields"]);
    }

    #[test]
    fn boundary_reads_content_and_instructions_not_names() {
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["instructions"][1]["text"] = json!("Mention the runtime packet");
        assert_eq!(judge_stages(&out, &packet()), ["content-boundary"]);
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["name"] = json!("Runtime packet block");
        assert_eq!(judge_stages(&out, &packet()), Vec::<&str>::new());
    }

    #[test]
    fn motivation_matches_personalization() {
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["screens"][0]["aiMeta"]["motivationSpec"]["targetsNeed"] =
            json!(" ");
        assert_eq!(judge_stages(&out, &packet()), ["motivation"]);
        let mut out = valid_output();
        let spec = &mut out["result"]["onboardingStrategySequence"][0]["screens"][0]["aiMeta"]["motivationSpec"];
        spec.as_object_mut().unwrap().remove("reflectsJtbd");
        assert_eq!(judge_stages(&out, &packet()), ["motivation"], "absent is not false");
    }
}
