//! Test material for the rule modules: a small valid answer, its packet and schema.

use super::{judge, Failure};
use crate::Config;
use serde_json::{json, Map, Value};

/// The project's settings, loaded afresh for each test (a run of its own).
pub(crate) fn config() -> crate::Invocation {
    Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).expect("the project's harness.toml").into()
}

/// A schema with the runtime schema's frame: one block, its lists, the declared screen keys.
pub(crate) fn schema() -> Value {
    let items = |props: Value| json!({"type": "object", "properties": props});
    json!({"type": "object", "required": ["result"], "properties": {"result": {"type": "object",
    "required": ["onboardingStrategySequence"], "properties": {"onboardingStrategySequence": {
    "type": "array", "minItems": 1, "maxItems": 1, "items": {"type": "object", "properties": {
        "instructions": {"type": "array"},
        "screens": {"type": "array", "minItems": 1, "items": items(json!({
            "id": {"type": "string"}, "name": {}, "screenType": {},
            "content": items(json!({"copy": {}, "actionBar": {}, "header": {}, "options": {}})),
            "aiMeta": items(json!({
                "blockRole": {}, "motivationSpec": {},
                "dataMapping": {"type": "array", "items": items(json!({"sourcePath": {}, "value": {}, "justification": {}}))},
                "assetIntents": {"type": "array", "items": items(json!({"role": {}, "supportsContentPath": {}, "linkedSourceRefs": {}}))},
                "variableRealizations": {"type": "array", "items": items(json!({"variableId": {}, "realizationKind": {}, "contentPath": {}}))}
            }))
        }))}
    }}}}}}})
}

fn action(kind: &str, next: Option<&str>) -> Value {
    let edges = next.map_or(json!([]), |n| json!([{"nextScreenId": n, "transitionKind": "push"}]));
    json!({"label": "Go", "action": {"kind": kind, "edges": edges}})
}

/// A two-screen block that every rule accepts for [`packet`].
pub(crate) fn valid_output() -> Value {
    let mapping = json!([{"sourcePath": "@review[r1]", "value": "v", "justification": "j"}]);
    json!({"result": {"onboardingStrategySequence": [{
    "id": "b1", "name": "Proof", "blockType": "motivation", "firstScreenId": "s1",
    "description": "Shows progress that feels achievable.",
    "instructions": [{"level": "mustHave", "text": "Keep it short"}, {"level": "should", "text": "Be warm"}],
    "dataUsage": {"items": [{"sourcePath": "@review[r1]", "value": "v", "justification": "j"}]},
    "blockContract": {"inputVariables": [], "outputAssignment": []},
    "screens": [
        {"id": "s1", "screenType": "HeroContent",
         "content": {"copy": {"title": "Your @focus today"}, "actionBar": {"primary": action("advance", Some("s2"))}},
         "aiMeta": {"blockRole": "proof", "dataMapping": mapping,
                    "assetIntents": [{"role": "hero", "supportsContentPath": "content.copy.title", "linkedSourceRefs": ["@review[r1]"]}],
                    "variableRealizations": [{"variableId": "focus", "realizationKind": "personalization_source", "contentPath": "content.copy.title"}],
                    "motivationSpec": {"class": "gain:progress", "targetsNeed": "progress", "reflectsJtbd": true}}},
        {"id": "s2", "screenType": "HeroContent",
         "content": {"copy": {"title": "Done"}, "actionBar": {"primary": action("complete", None)}},
         "aiMeta": {"dataMapping": [], "motivationSpec": {"class": "neutral", "reflectsJtbd": false}}}
    ]}]}})
}

/// The packet fields the rules read.
pub(crate) fn packet() -> Map<String, Value> {
    let packet = json!({
        "renderInput": {
            "target": {"blockId": "b1", "blockName": "Proof", "blockType": "motivation"},
            "evidence": {"mode": "selected-only", "items": [{"kind": "review", "id": "r1", "value": {"sourcePath": "@review[r1]"}}]},
            "variableMappings": []
        },
        "resolvedBranch": {"evidenceMode": "selected-only", "hasAssetIntents": true}
    });
    packet.as_object().expect("an object").clone()
}

pub(crate) fn with_branch(field: &str, value: Value) -> Map<String, Value> {
    let mut p = packet();
    p["resolvedBranch"][field] = value;
    p
}

pub(crate) fn with_input(field: &str, value: Value) -> Map<String, Value> {
    let mut p = packet();
    p["renderInput"][field] = value;
    p
}

/// The stages of every failure, in order.
pub(crate) fn judge_stages(output: &Value, packet: &Map<String, Value>) -> Vec<&'static str> {
    let judgement = judge(output, packet, Some(&schema()), &config());
    judgement.failures.list.iter().map(|f: &Failure| builtin_stage(f)).collect()
}

/// A built-in rule's stage: always one of the stage constants.
pub(crate) fn builtin_stage(f: &Failure) -> &'static str {
    match f.stage {
        std::borrow::Cow::Borrowed(stage) => stage,
        std::borrow::Cow::Owned(_) => panic!("a built-in rule names its stage with a constant"),
    }
}
