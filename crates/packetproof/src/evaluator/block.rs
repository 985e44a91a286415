//! The block and its frame: exactly one block, its identity
//! against `renderInput.target`, screens present, instructions, dataUsage and
//! blockContract shapes.

use super::text::{is_text, shown, truthy};
use super::{Ctx, Failures, DATA_USAGE, DOMAIN, IDENTITY, INSTRUCTIONS, VARIABLES};
use serde_json::Value;

const LEVELS: [&str; 4] = ["mustHave", "should", "niceToHave", "forbidden"];

/// The block list is `result.onboardingStrategySequence` unless that is null or absent,
/// else a root-level `onboardingStrategySequence`; it must hold exactly one object.
pub(crate) fn find(output: &Value) -> Option<(&Value, &'static str)> {
    let (list, path) = match output.get("result").and_then(|r| r.get("onboardingStrategySequence")) {
        Some(list) if !list.is_null() => (list, "$.result.onboardingStrategySequence[0]"),
        _ => (output.get("onboardingStrategySequence")?, "$.onboardingStrategySequence[0]"),
    };
    match list.as_array().map(Vec::as_slice) {
        Some([block]) if block.is_object() => Some((block, path)),
        _ => None,
    }
}

pub(crate) fn check(ctx: &Ctx, out: &mut Failures) {
    identity(ctx, out);
    if ctx.screens().is_empty() {
        let found = shown(ctx.block.get("screens"));
        out.fail(DOMAIN, format!("{}.screens: expected at least one screen, found {found}", ctx.path));
    }
    instructions(ctx, out);
    if !ctx.block.get("dataUsage").is_some_and(Value::is_object) {
        let found = shown(ctx.block.get("dataUsage"));
        out.fail(DATA_USAGE, format!("{}.dataUsage: expected an object, found {found}", ctx.path));
    }
    let contract = ctx.block.get("blockContract");
    for list in ["inputVariables", "outputAssignment"] {
        if !contract.and_then(|c| c.get(list)).is_some_and(Value::is_array) {
            out.fail(
                VARIABLES,
                format!("{}.blockContract.{list}: expected an array (the block's variable contract)", ctx.path),
            );
        }
    }
}

/// The block keeps the target's id and type (when the target names them). The name is
/// not compared: adapting a block may rename it.
fn identity(ctx: &Ctx, out: &mut Failures) {
    let target = ctx.input.get("target");
    for (field, target_key) in [("id", "blockId"), ("blockType", "blockType")] {
        let expected = target.and_then(|t| t.get(target_key));
        if truthy(expected) && !expected.is_some_and(|e| crate::numbers::same_opt(ctx.block.get(field), e)) {
            out.fail(
                IDENTITY,
                format!(
                    "{}.{field}: expected {} (renderInput.target.{target_key}), found {}",
                    ctx.path,
                    shown(expected),
                    shown(ctx.block.get(field))
                ),
            );
        }
    }
}

/// Two to six instructions, each with a known level and non-blank text.
fn instructions(ctx: &Ctx, out: &mut Failures) {
    let path = format!("{}.instructions", ctx.path);
    let items = match ctx.block.get("instructions").and_then(Value::as_array) {
        Some(items) if (2..=6).contains(&items.len()) => items,
        _ => {
            let found = shown(ctx.block.get("instructions"));
            out.fail(INSTRUCTIONS, format!("{path}: expected 2 to 6 instructions, found {found}"));
            return;
        }
    };
    for (i, item) in items.iter().enumerate() {
        let level_ok = item.get("level").and_then(Value::as_str).is_some_and(|l| LEVELS.contains(&l));
        if !level_ok || !is_text(item.get("text")) {
            out.fail(
                INSTRUCTIONS,
                format!("{path}[{i}]: expected an object with level in {LEVELS:?} and non-blank text"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{judge_stages, packet, valid_output};
    use serde_json::json;

    #[test]
    fn a_valid_block_passes() {
        assert_eq!(judge_stages(&valid_output(), &packet()), Vec::<&str>::new());
    }

    #[test]
    fn the_block_must_be_one_object() {
        let mut two = valid_output();
        let block = two["result"]["onboardingStrategySequence"][0].clone();
        two["result"]["onboardingStrategySequence"] = json!([block.clone(), block.clone()]);
        assert_eq!(judge_stages(&two, &packet()), ["schema", "domain"]);
        let root_level = json!({"onboardingStrategySequence": [block]});
        assert_eq!(judge_stages(&root_level, &packet()).first(), Some(&"schema"));
        assert!(!judge_stages(&root_level, &packet()).contains(&"domain"), "a root-level list is found");
    }

    #[test]
    fn identity_compares_id_and_type_not_name() {
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["name"] = json!("Renamed");
        assert_eq!(judge_stages(&out, &packet()), Vec::<&str>::new());
        out["result"]["onboardingStrategySequence"][0]["id"] = json!("other");
        assert_eq!(judge_stages(&out, &packet()), ["identity"]);
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["blockType"] = json!("welcome");
        assert_eq!(judge_stages(&out, &packet()), ["identity"]);
    }

    #[test]
    fn instructions_count_and_items() {
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["instructions"] = json!([{"level": "should", "text": "x"}]);
        assert_eq!(judge_stages(&out, &packet()), ["instructions"]);
        out["result"]["onboardingStrategySequence"][0]["instructions"] =
            json!([{"level": "should", "text": "x"}, {"level": "should", "text": "\u{a0}"}]);
        assert_eq!(judge_stages(&out, &packet()), ["instructions"]);
        out["result"]["onboardingStrategySequence"][0]["instructions"] = json!("do it");
        assert_eq!(judge_stages(&out, &packet()), ["schema", "instructions"], "a string is refused, not a crash");
    }

    #[test]
    fn data_usage_and_contract_must_be_there() {
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0].as_object_mut().unwrap().remove("blockContract");
        assert!(judge_stages(&out, &packet()).contains(&"variables"));
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["dataUsage"] = json!([]);
        assert!(judge_stages(&out, &packet()).contains(&"data-usage"));
    }
}
