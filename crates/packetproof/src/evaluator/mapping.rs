//! Screen metadata: every screen's `aiMeta.dataMapping`, a
//! grounded block (some data mapping) unless no evidence was resolved, asset intents when
//! the branch has them, and the canonical screen shape the schema declares.

use super::text::{count_named_arrays, shown};
use super::{Ctx, Failures, ASSET_INTENTS, CANONICAL_SHAPE, DATA_MAPPING, SCHEMA_CONTRACT};
use crate::branch::EvidenceMode;
use serde_json::{Map, Value};

pub(crate) fn check(ctx: &Ctx, out: &mut Failures) {
    data_mapping(ctx, out);
    if ctx.branch.get("hasAssetIntents") == Some(&Value::Bool(true))
        && count_named_arrays(ctx.block_value, "assetIntents") == 0
    {
        out.fail(
            ASSET_INTENTS,
            format!(
                "{}: resolvedBranch.hasAssetIntents is true but the block holds no asset intent (aiMeta.assetIntents)",
                ctx.path
            ),
        );
    }
    canonical_shape(ctx, out);
}

fn data_mapping(ctx: &Ctx, out: &mut Failures) {
    for (i, screen) in ctx.screens().iter().enumerate() {
        let at = format!("{}.aiMeta", ctx.screen_path(i));
        match screen.get("aiMeta") {
            Some(Value::Object(meta)) if !meta.get("dataMapping").is_some_and(Value::is_array) => out.fail(
                DATA_MAPPING,
                format!("{at}.dataMapping: expected an array, found {}", shown(meta.get("dataMapping"))),
            ),
            Some(Value::Object(_)) => {}
            other => out.fail(DATA_MAPPING, format!("{at}: screen {i} has no aiMeta object (found {})", shown(other))),
        }
    }
    let grounded = ctx.branch.get("evidenceMode").and_then(Value::as_str) != Some(EvidenceMode::NoEvidence.name());
    if grounded && count_named_arrays(ctx.block_value, "dataMapping") == 0 {
        out.fail(
            DATA_MAPPING,
            format!(
                "{}: evidence was resolved for this run but no screen maps any data (aiMeta.dataMapping)",
                ctx.path
            ),
        );
    }
}

/// The declared keys of a schema node (`None` when it declares none).
fn declared(node: Option<&Value>) -> Option<&Map<String, Value>> {
    node.and_then(|n| n.get("properties")).and_then(Value::as_object)
}

/// Keys not declared by the runtime schema, at the six places the reference checks:
/// the screen, its `content`, its `aiMeta`, and each item of `aiMeta.dataMapping`,
/// `aiMeta.assetIntents` and `aiMeta.variableRealizations`.
fn canonical_shape(ctx: &Ctx, out: &mut Failures) {
    let screen_schema = ctx.schema.and_then(|s| {
        s.pointer("/properties/result/properties/onboardingStrategySequence/items/properties/screens/items")
    });
    let Some(screen_keys) = declared(screen_schema) else {
        out.fail(
            SCHEMA_CONTRACT,
            "the validation schema declares no screen properties (result.onboardingStrategySequence[].screens[]), so the screen shape cannot be checked",
        );
        return;
    };
    let content = screen_keys.get("content");
    let meta = screen_keys.get("aiMeta");
    let meta_item = |list: &str| declared(meta).and_then(|m| m.get(list)).and_then(|l| l.get("items"));
    for (i, screen) in ctx.screens().iter().enumerate() {
        let at = ctx.screen_path(i);
        undeclared(screen, Some(screen_keys), &at, out);
        undeclared(screen.get("content").unwrap_or(&Value::Null), declared(content), &format!("{at}.content"), out);
        let Some(ai_meta) = screen.get("aiMeta") else { continue };
        undeclared(ai_meta, declared(meta), &format!("{at}.aiMeta"), out);
        for list in ["dataMapping", "assetIntents", "variableRealizations"] {
            let items = ai_meta.get(list).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
            for (j, item) in items.iter().enumerate() {
                undeclared(item, declared(meta_item(list)), &format!("{at}.aiMeta.{list}[{j}]"), out);
            }
        }
    }
}

fn undeclared(value: &Value, keys: Option<&Map<String, Value>>, at: &str, out: &mut Failures) {
    let (Some(map), Some(keys)) = (value.as_object(), keys) else { return };
    for key in map.keys().filter(|k| !keys.contains_key(*k)) {
        out.fail(CANONICAL_SHAPE, format!("{}: key not declared by the runtime schema", crate::report::child(at, key)));
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{judge_stages, packet, valid_output, with_branch};
    use serde_json::json;

    #[test]
    fn every_screen_needs_ai_meta_with_a_mapping_list() {
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["screens"][0].as_object_mut().unwrap().remove("aiMeta");
        assert_eq!(judge_stages(&out, &packet())[0], "data-mapping");
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["screens"][0]["aiMeta"]["dataMapping"] = json!(null);
        assert_eq!(judge_stages(&out, &packet()), ["schema", "data-mapping", "data-mapping"], "no list, so no mapping");
    }

    #[test]
    fn grounding_counts_mappings_anywhere_unless_no_evidence() {
        let mut out = valid_output();
        let block = &mut out["result"]["onboardingStrategySequence"][0];
        let moved = block["screens"][0]["aiMeta"]["dataMapping"].take();
        block["screens"][0]["aiMeta"]["dataMapping"] = json!([]);
        assert_eq!(judge_stages(&out, &with_branch("evidenceMode", json!("selected-only")))[0], "data-mapping");
        out["result"]["onboardingStrategySequence"][0]["dataMapping"] = moved;
        assert!(!judge_stages(&out, &packet()).contains(&"data-mapping"));
    }

    #[test]
    fn asset_intents_are_required_when_the_branch_has_them() {
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["screens"][0]["aiMeta"]["assetIntents"] = json!([]);
        assert_eq!(judge_stages(&out, &packet()), ["asset-intents"]);
        assert_eq!(judge_stages(&out, &with_branch("hasAssetIntents", json!(false))), Vec::<&str>::new());
    }

    /// The reference crashes on these; here they are refused.
    #[test]
    fn non_lists_where_lists_belong_are_refused_not_crashed() {
        for (pointer, value) in [
            ("/result/onboardingStrategySequence/0/screens", json!({"0": {}})),
            ("/result/onboardingStrategySequence/0/screens/0/aiMeta/dataMapping", json!("none")),
            ("/result/onboardingStrategySequence/0/screens/0/aiMeta/assetIntents", json!(7)),
            ("/result/onboardingStrategySequence/0/screens/0/aiMeta/variableRealizations", json!({"a": 1})),
        ] {
            let mut out = valid_output();
            *out.pointer_mut(pointer).unwrap() = value;
            let stages = judge_stages(&out, &packet());
            assert_eq!(stages.first(), Some(&"schema"), "{pointer}: {stages:?}");
            assert!(stages.len() > 1, "{pointer}: a rule reading the list fails too: {stages:?}");
        }
    }

    #[test]
    fn undeclared_keys_fail_the_canonical_shape() {
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["screens"][0]["content"]["button"] = json!({});
        assert_eq!(judge_stages(&out, &packet()), ["canonical-shape"]);
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["screens"][0]["content"]["copy"]["deep"] = json!(1);
        assert_eq!(judge_stages(&out, &packet()), Vec::<&str>::new(), "copy is not checked");
    }
}
