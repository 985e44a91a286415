//! Evidence references: `@kind[id]` citations in the block's strings
//! must name evidence the branch resolved, the block's dataUsage must cite some of it, and
//! without evidence nothing may be cited or mapped.

use super::text::{any_named_array_filled, strings};
use super::{Ctx, Failures, DATA_USAGE, EVIDENCE};
use crate::branch::EvidenceMode;
use regex::Regex;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// Evidence kinds a reference may name (case-sensitive); `@other[x]` is not a reference.
const KINDS: [&str; 7] = ["insight", "review", "rating", "studyCase", "bigNumber", "task", "audience"];

fn reference() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"@([A-Za-z][A-Za-z0-9_-]*)\[[^\]\s]+\](?:\.[A-Za-z0-9_.\[\]-]+)?").expect("valid regex")
    })
}

/// Every evidence reference in the strings of `value`, in order, each once, with the
/// path of its first occurrence (under `root`).
fn located(value: &Value, root: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    strings(value, root, &mut |text, trail| {
        for m in reference().captures_iter(text) {
            let whole = m.get(0).map_or("", |m| m.as_str());
            if KINDS.contains(&&m[1]) && !found.iter().any(|(f, _)| f == whole) {
                found.push((whole.to_owned(), trail.render()));
            }
        }
    });
    found
}

fn references(value: &Value) -> Vec<String> {
    located(value, "$").into_iter().map(|(reference, _)| reference).collect()
}

/// `@kind[id]` of each resolved item, and any reference inside its value.
fn allowed(input: &Value) -> BTreeSet<String> {
    let mut refs = BTreeSet::new();
    for item in input.pointer("/evidence/items").and_then(Value::as_array).into_iter().flatten() {
        if let (Some(kind), Some(id)) =
            (item.get("kind").and_then(Value::as_str), item.get("id").and_then(Value::as_str))
        {
            refs.insert(format!("@{kind}[{id}]"));
        }
        refs.extend(references(item.get("value").unwrap_or(&Value::Null)));
    }
    refs
}

pub(crate) fn check(ctx: &Ctx, out: &mut Failures) {
    let mode = ctx
        .input
        .pointer("/evidence/mode")
        .and_then(Value::as_str)
        .or_else(|| ctx.branch.get("evidenceMode").and_then(Value::as_str));
    let cited = located(ctx.block_value, ctx.path);
    if mode == Some(EvidenceMode::NoEvidence.name()) {
        for (reference, at) in &cited {
            out.fail(EVIDENCE, format!("{at}: cites {reference}, but no evidence was resolved for this run"));
        }
        let usage_items = ctx.block.get("dataUsage").and_then(|d| d.get("dataMappingItems"));
        let mapped = any_named_array_filled(ctx.block_value, "dataMapping")
            || usage_items.and_then(Value::as_array).is_some_and(|items| !items.is_empty());
        if mapped {
            out.fail(
                EVIDENCE,
                format!("{}: maps data (dataMapping / dataUsage.dataMappingItems), but no evidence was resolved for this run", ctx.path),
            );
        }
        return;
    }
    let allowed = allowed(ctx.input);
    let shown =
        if allowed.is_empty() { "none".to_owned() } else { allowed.iter().cloned().collect::<Vec<_>>().join(", ") };
    for (reference, at) in cited.iter().filter(|(r, _)| !allowed.contains(r)) {
        out.fail(EVIDENCE, format!("{at}: cites {reference} which is not a resolved evidence item; allowed: {shown}"));
    }
    let in_usage = references(ctx.block.get("dataUsage").unwrap_or(&Value::Null));
    if !in_usage.iter().any(|r| allowed.contains(r)) {
        out.fail(DATA_USAGE, format!("{}.dataUsage: cites none of the resolved evidence ({shown})", ctx.path));
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{judge_stages, packet, valid_output, with_branch};
    use super::*;
    use serde_json::json;

    #[test]
    fn references_are_found_by_kind() {
        let v = json!({"a": "see @review[r1] and me@insight[i-2].value. and @Review[x] @other[y]", "@task[k]": 1});
        assert_eq!(references(&v), ["@review[r1]", "@insight[i-2].value."]);
        assert_eq!(references(&json!(["@review[r1]. End", "@review[r1]"])), ["@review[r1]"]);
    }

    #[test]
    fn unselected_and_unused_evidence_fail() {
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["description"] = json!("Uses @review[r9]");
        assert_eq!(judge_stages(&out, &packet()), ["evidence"]);
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["dataUsage"] = json!({"items": []});
        assert_eq!(judge_stages(&out, &packet()), ["data-usage"]);
    }

    #[test]
    fn without_evidence_nothing_is_cited_or_mapped() {
        let mut noev = with_branch("evidenceMode", json!("no-evidence"));
        noev["renderInput"]["evidence"] = json!({"mode": "no-evidence", "items": []});
        assert_eq!(judge_stages(&valid_output(), &noev), ["evidence", "evidence"], "a citation and a mapping");
        let mut out = valid_output();
        let block = &mut out["result"]["onboardingStrategySequence"][0];
        block["dataUsage"] = json!({"items": []});
        block["screens"][0]["aiMeta"]["dataMapping"] = json!([]);
        block["screens"][0]["aiMeta"]["assetIntents"][0]["linkedSourceRefs"] = json!([]);
        assert_eq!(judge_stages(&out, &noev), Vec::<&str>::new());
    }
}
