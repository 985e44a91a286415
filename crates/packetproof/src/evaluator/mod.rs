//! The reference (Node) evaluator's rules, as pure functions over the parsed
//! answer and the packet. `run::evaluate` reads the files, runs the packet and snapshot
//! stages and calls [`judge`] for everything after json-parse; the evaluation document is built
//! by [`document`].
//!
//! Stage order is the reference's: packet, schema-snapshot, json-parse, schema,
//! asset-isolation, then the semantic checks in the reference's order. A failure does
//! not stop later checks (only the packet, snapshot and parse gates stop evaluation), and
//! `earliestFailureStage` is the stage of the first failure in that fixed order.
//!
//! Where the reference is wrong, packetproof does the right thing: a falsy answer
//! (`null`, `0`, `""`) is judged like any other and fails the schema; non-list values where
//! lists belong are read as empty lists instead of crashing; an identity bind (a variable
//! bound to itself) passes when the id is realized.

mod block;
mod copy;
pub(crate) mod document;
mod evidence;
mod isolation;
mod mapping;
pub(crate) mod parse;
mod routes;
pub(crate) mod schema;
mod text;
mod variables;

use crate::Invocation;
use serde_json::{Map, Value};

pub(crate) const PACKET: &str = "packet";
pub(crate) const SCHEMA_SNAPSHOT: &str = "schema-snapshot";
pub(crate) const JSON_PARSE: &str = "json-parse";
pub(crate) const SCHEMA: &str = "schema";
pub(crate) const ASSET_ISOLATION: &str = "asset-isolation";
pub(crate) const DOMAIN: &str = "domain";
pub(crate) const IDENTITY: &str = "identity";
pub(crate) const INSTRUCTIONS: &str = "instructions";
pub(crate) const DATA_USAGE: &str = "data-usage";
pub(crate) const VARIABLES: &str = "variables";
pub(crate) const DATA_MAPPING: &str = "data-mapping";
pub(crate) const ASSET_INTENTS: &str = "asset-intents";
pub(crate) const SCHEMA_CONTRACT: &str = "schema-contract";
pub(crate) const CANONICAL_SHAPE: &str = "canonical-shape";
pub(crate) const MOTIVATION: &str = "motivation";
pub(crate) const CONTENT_BOUNDARY: &str = "content-boundary";
pub(crate) const ROUTES: &str = "routes";
pub(crate) const EVIDENCE: &str = "evidence";

/// One failed rule, as evaluation.json records it. The built-in rules name their
/// stages with the constants above; a suite's own evaluator names its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) stage: std::borrow::Cow<'static, str>,
    pub(crate) message: String,
}

/// Failures recorded per stage; the rest are counted in one closing failure, so a
/// hostile answer (300,000 duplicate screens) cannot make evaluation.json huge.
pub(crate) const MAX_FAILURES_PER_STAGE: usize = 100;

/// The failures found so far, in check order (at most [`MAX_FAILURES_PER_STAGE`]
/// per stage, then one that counts the rest).
#[derive(Debug, Default, Clone)]
pub(crate) struct Failures {
    pub(crate) list: Vec<Failure>,
    /// Per stage: failures found, and the index of its closing count, once there is one.
    counts: std::collections::HashMap<&'static str, (usize, Option<usize>)>,
}

impl Failures {
    pub(crate) fn fail(&mut self, stage: &'static str, message: impl Into<String>) {
        let Failures { list, counts } = self;
        let (count, closing) = counts.entry(stage).or_default();
        *count += 1;
        if *count <= MAX_FAILURES_PER_STAGE {
            list.push(Failure { stage: stage.into(), message: message.into() });
            return;
        }
        let more = *count - MAX_FAILURES_PER_STAGE;
        let message = format!(
            "and {more} more {stage} failure(s) not listed (at most {MAX_FAILURES_PER_STAGE} per stage are recorded)"
        );
        match closing {
            Some(at) => list[*at].message = message,
            None => {
                *closing = Some(list.len());
                list.push(Failure { stage: stage.into(), message });
            }
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// What the stages after json-parse concluded about one parsed answer.
#[derive(Debug, Clone)]
pub(crate) struct Judgement {
    pub(crate) failures: Failures,
    pub(crate) schema_applied: bool,
}

/// The block under evaluation and what the rules read beside it.
pub(crate) struct Ctx<'a> {
    pub(crate) block: &'a Map<String, Value>,
    pub(crate) block_value: &'a Value,
    /// JSONPath of the block in the answer.
    pub(crate) path: &'static str,
    /// The packet's `renderInput` and `resolvedBranch` (null when absent).
    pub(crate) input: &'a Value,
    pub(crate) branch: &'a Value,
    pub(crate) schema: Option<&'a Value>,
}

impl Ctx<'_> {
    /// The block's screens; a non-list is read as none (the schema reports it; the
    /// reference crashes here).
    pub(crate) fn screens(&self) -> &[Value] {
        self.block.get("screens").and_then(Value::as_array).map_or(&[], Vec::as_slice)
    }

    pub(crate) fn screen_path(&self, i: usize) -> String {
        format!("{}.screens[{i}]", self.path)
    }
}

/// What the built-in evaluator judges under the suite's contract profile, when the
/// suite declares no `[evaluator]` of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The block builder's answers: every stage.
    Block,
    /// A custom profile's JSON answers: json-parse and the packet's schema. The block
    /// builder's answer rules (asset isolation, the block, its screens) are not its.
    Schema,
}

impl Scope {
    /// Said beside a verdict of this scope (nothing for the block builder's).
    pub(crate) fn note(self) -> Option<&'static str> {
        (self == Scope::Schema).then_some(
            "judged by its schema only: the block builder's answer rules are not this contract's, and the suite \
             declares no [evaluator] to judge the answer's content",
        )
    }
}

/// The built-in evaluator's scope under `config`'s profile, or why it cannot judge the
/// answers at all (a plain-text answer has no schema and no rules here). One decision
/// for `evaluate`, `complete` and the `evaluator-runs` need of the rule book.
pub(crate) fn scope(agent: &crate::profile::Profile) -> std::result::Result<Scope, String> {
    match (agent.is_block_builder(), agent.output) {
        (true, _) => Ok(Scope::Block),
        (false, crate::profile::Output::Schema) => Ok(Scope::Schema),
        (false, crate::profile::Output::Text) => Err(format!(
            "the suite's contract profile is {:?} with plain-text answers and declares no [evaluator]; \
             packetproof's built-in evaluator judges JSON answers (their schema, and the block builder's rules), \
             so it cannot judge a plain-text answer: declare the suite's own [evaluator]",
            agent.kind_name()
        )),
    }
}

/// Every stage after json-parse, in the reference's order, over the parsed `output`.
/// `schema` is the run's validation schema (None: unavailable, itself a failure).
/// Under a custom profile only the schema stage applies ([`Scope::Schema`]).
pub(crate) fn judge(
    output: &Value,
    packet: &Map<String, Value>,
    schema: Option<&Value>,
    config: &Invocation,
) -> Judgement {
    let mut out = Failures::default();
    let schema_applied = schema::check(schema, output, &mut out, config);
    if !config.settings().agent(packet).is_block_builder() {
        return Judgement { failures: out, schema_applied };
    }
    isolation::check(output, config, &mut out);
    let Some((block_value, path)) = block::find(output) else {
        out.fail(
            DOMAIN,
            "$.result.onboardingStrategySequence: expected exactly one block (an array holding one object)",
        );
        return Judgement { failures: out, schema_applied };
    };
    let ctx = Ctx {
        block: block_value.as_object().expect("block::find returns objects"),
        block_value,
        path,
        input: packet.get("renderInput").unwrap_or(&Value::Null),
        branch: packet.get("resolvedBranch").unwrap_or(&Value::Null),
        schema,
    };
    block::check(&ctx, &mut out);
    mapping::check(&ctx, &mut out);
    variables::check_screens(&ctx, &mut out);
    copy::motivation(&ctx, &mut out);
    copy::content_boundary(&ctx, &mut out);
    routes::check(&ctx, &mut out);
    evidence::check(&ctx, &mut out);
    variables::check_mappings(&ctx, &mut out);
    Judgement { failures: out, schema_applied }
}

#[cfg(test)]
pub(crate) mod testkit;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn failures_are_capped_per_stage_with_a_count() {
        let mut out = Failures::default();
        for i in 0..MAX_FAILURES_PER_STAGE + 7 {
            out.fail(ROUTES, format!("duplicate {i}"));
        }
        out.fail(EVIDENCE, "one");
        assert_eq!(out.list.len(), MAX_FAILURES_PER_STAGE + 2);
        let closing = &out.list[MAX_FAILURES_PER_STAGE];
        assert_eq!(closing.stage, ROUTES);
        assert!(closing.message.starts_with("and 7 more routes failure(s) not listed"), "{}", closing.message);
        assert_eq!(out.list.last().unwrap().message, "one");
    }

    fn custom(output: &str) -> crate::profile::Profile {
        let text = format!(
            "profile = \"custom\"\nagent_ids = [\"a\"]\ntask_types = [\"t\"]\nprompt_modes = [\"m\"]\n\
             output = \"{output}\"\nrender_input_keys = [\"q\"]"
        );
        crate::profile::Profile::resolve("contract", toml::from_str(&text).unwrap(), &[]).unwrap()
    }

    /// The project's settings with a custom `[contract]` of `output`.
    fn custom_config(output: &str) -> crate::Invocation {
        let text = format!(
            "[contract]\nprofile = \"custom\"\nagent_ids = [\"a\"]\ntask_types = [\"t\"]\nprompt_modes = [\"m\"]\n\
             output = \"{output}\"\nrender_input_keys = [\"q\"]"
        );
        let root = std::path::Path::new(crate::PROJECT_ROOT);
        crate::Invocation::from(crate::Config::from_toml(root, Some(&root.join("harness.toml")), &text, None).unwrap())
    }

    #[test]
    fn a_custom_profile_is_judged_by_its_schema_and_a_plain_text_one_not_by_the_built_in_evaluator() {
        assert_eq!(scope(&testkit::config().settings().agents.all()[0]), Ok(Scope::Block));
        assert_eq!(scope(&custom("schema")), Ok(Scope::Schema));
        let why = scope(&custom("text")).unwrap_err();
        assert!(why.contains("plain-text answers and declares no [evaluator]"), "{why}");

        let schema = json!({"type": "object", "required": ["reply"], "properties": {"reply": {"type": "string"}}});
        let answer = json!({"reply": "Hello", "aiAssets": []});
        let packet = testkit::packet();
        let judged = judge(&answer, &packet, Some(&schema), &custom_config("schema"));
        assert!(judged.schema_applied && judged.failures.is_empty(), "{:?}", judged.failures.list);
        // The same answer under the block builder fails its own rules.
        let stages: Vec<_> = judge(&answer, &packet, Some(&schema), &testkit::config()).failures.list;
        let stages: Vec<&str> = stages.iter().map(|f| &*f.stage).collect();
        assert_eq!(stages, [ASSET_ISOLATION, DOMAIN]);
        let wrong = judge(&json!({"reply": 7}), &packet, Some(&schema), &custom_config("schema"));
        assert_eq!(wrong.failures.list.len(), 1);
        assert_eq!(wrong.failures.list[0].stage, SCHEMA);
    }
}
