//! Contract profiles: the product part of the contract, which a suite owns.
//!
//! The core rules (exact bytes and hashes, provider shaping, strict JSON, forbidden
//! material, runs) hold for any agent. What one product's agent looks like (its agent
//! ids, task types and prompt modes, the `resolvedBranch` fields and their values,
//! the renderInput keys, whether it answers in a schema or in plain text) is a
//! profile. The block builder's `updateBlockFromLibrary` agent is the built-in
//! profile and the default; a suite declares its own in harness.toml `[contract]`:
//!
//! ```toml
//! [contract]
//! profile = "custom"
//! agent_ids = ["support-reply"]
//! task_types = ["reply"]
//! prompt_modes = ["chat"]
//! output = "text"                       # or "schema": the packet carries outputSchema
//! render_input_keys = ["customer", "question"]
//! [contract.branch]
//! tone = ["formal", "casual"]           # a value set
//! escalated = "boolean"
//! ```
//!
//! Under the block-builder profile `[contract.branch]` extends the built-in value
//! sets (`insertionMode = ["replace"]`), and `prompt_modes` / `task_types` add to the
//! built-in ones, so a new branch value or prompt mode needs no release and keeps
//! every block-builder rule running.
//!
//! A suite with several agents declares each in `[agents.NAME]` (the same keys as
//! `[contract]`); a packet is judged by the agent whose `agent_ids` name its agentId
//! (crate::config::Agents). Any agent may carry extra top-level packet fields
//! (`packet_fields = ["temperature"]`, checksummed like every field) and narrow the
//! providers' model lists to its own (`models = ["gpt-5-mini"]`).

mod budget;
mod shape;
use crate::branch::{EvidenceMode, InsertionMode, Neighbours, SourceScope};
pub use budget::{Budget, Declared};
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The block builder's entry templates, under `paths.prompts` (else built in).
pub const SYSTEM_TEMPLATE: &str = "system.md.j2";
pub const USER_TEMPLATE: &str = "user.md.j2";

/// The block builder's agent id, task type and prompt mode (the seed contract's).
pub(crate) const BLOCK_AGENT_ID: &str = "updateBlockFromLibrary";
pub(crate) const BLOCK_TASK_TYPE: &str = "block-update";
pub(crate) const BLOCK_PROMPT_MODE: &str = "library-adapt";

/// The block builder's resolvedBranch fields and their built-in value sets (`None`:
/// a boolean), the value sets of [`crate::branch`].
pub(crate) const BLOCK_BRANCH: [(&str, Option<&[&str]>); 8] = [
    ("insertionMode", Some(InsertionMode::NAMES)),
    ("sourceScope", Some(SourceScope::NAMES)),
    ("evidenceMode", Some(EvidenceMode::NAMES)),
    ("neighbours", Some(Neighbours::NAMES)),
    ("hasVariableConflicts", None),
    ("hasAssetIntents", None),
    ("hasTargetTheme", None),
    ("operatorInstructionPresent", None),
];

/// The contract's top-level packet fields; an agent may declare more (`packet_fields`).
pub(crate) const CONTRACT_FIELDS: [&str; 19] = [
    "packetVersion",
    "agentId",
    "taskType",
    "promptMode",
    "attempt",
    "provider",
    "model",
    "maxTokens",
    "promptPaths",
    "promptVersions",
    "systemPrompt",
    "userMessage",
    "effectiveUserMessage",
    "renderInput",
    "outputSchema",
    "call",
    "resolvedBranch",
    "exactInputHash",
    "checksum",
];

/// `[evaluator]`: the suite's own evaluator of agent answers, run like the
/// `[exporter]` (`crate::suite_evaluator` says what it is given and must print).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evaluator {
    /// The program and its arguments; `{run_dir}`, `{packet}` and `{output}` are
    /// replaced by the paths of the run directory, the packet and the raw output.
    pub(crate) command: Vec<String>,
    /// Seconds before the evaluator is killed and the evaluation cannot be made.
    #[serde(default = "default_timeout")]
    pub(crate) timeout_seconds: u64,
}

fn default_timeout() -> u64 {
    60
}

/// `Err(message)` naming the setting when `[evaluator]` cannot be run as given.
pub(crate) fn check_evaluator(evaluator: Option<&Evaluator>) -> Result<(), String> {
    let Some(evaluator) = evaluator else { return Ok(()) };
    if evaluator.command.first().is_none_or(|program| program.trim().is_empty()) {
        return Err("evaluator.command: expected the program and its arguments".into());
    }
    if evaluator.timeout_seconds == 0 {
        return Err("evaluator.timeout_seconds: expected at least 1".into());
    }
    Ok(())
}

/// Which profile: the built-in one, or the suite's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The block builder's agent (the seed contract): its compiler, evaluator and rules.
    #[default]
    BlockBuilder,
    /// The suite's own agent, declared in `[contract]`.
    Custom,
}

/// How the agent answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Output {
    /// In a JSON schema: the packet carries `outputSchema` (or, for a text-JSON
    /// provider, the suffix that asks for JSON).
    Schema,
    /// In plain text: no `outputSchema`, no suffix, and a wire body with no
    /// `response_format`, `tools` or JSON mode.
    Text,
}

/// harness.toml `[contract]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawContract {
    #[serde(default)]
    profile: Kind,
    agent_ids: Option<Vec<String>>,
    task_types: Option<Vec<String>>,
    prompt_modes: Option<Vec<String>>,
    output: Option<Output>,
    /// The schema file of an agent that answers in a schema (`output = "schema"`), from
    /// the suite's folder; else the suite's `paths.schema_snapshot`.
    schema: Option<std::path::PathBuf>,
    render_input_keys: Option<Vec<String>>,
    #[serde(default)]
    branch: BTreeMap<String, RawValues>,
    templates: Option<Templates>,
    /// Top-level packet fields beyond the contract's own that this agent's packets carry.
    #[serde(default)]
    packet_fields: Vec<String>,
    /// The models this agent's packets may name (each in its provider's `models`).
    models: Option<Vec<String>>,
    /// The output budgets its calls may carry (else those its vouched packets carry).
    max_tokens: Option<Budget>,
    #[serde(default)]
    call: BTreeMap<String, Declared>,
    /// The agent's own evaluator (else the suite's `[evaluator]`, else the built-in one).
    evaluator: Option<Evaluator>,
    /// Slot contracts, by the slot's name in the templates.
    #[serde(default)]
    slots: BTreeMap<String, crate::template::shape::RawSlot>,
    /// The agent's forbidden lists over the suite's `[forbidden]`.
    forbidden: Option<crate::forbidden::RawForbidden>,
    /// Built-in branch values the suite renamed: field → new name → the built-in value.
    #[serde(default)]
    renamed: BTreeMap<String, BTreeMap<String, String>>,
}

/// `[contract.templates]`: the suite's prompt templates (under `paths.prompts`) and
/// their style, so that `trace --gate` can tell a production call with real data in
/// their slots from one whose literal text differs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Templates {
    pub style: Style,
    /// The templates a system prompt may be a rendering of.
    pub system: Vec<String>,
    /// The templates a user message may be a rendering of.
    pub user: Vec<String>,
    /// What the app does to a rendering before sending it (default: nothing).
    #[serde(default)]
    pub rendering: crate::template::Trim,
    /// What the app does to one template's rendering, where it differs from `rendering`.
    #[serde(default)]
    pub renderings: BTreeMap<String, crate::template::Trim>,
    /// The jinja engine's settings as the app configures it (default: Jinja2's and
    /// minijinja's own defaults, every option off).
    #[serde(default)]
    pub jinja: crate::template::jinja::Settings,
    /// The mustache engine's settings (default: `{{name}}` is HTML-escaped, as
    /// mustache.js and the spec escape it).
    #[serde(default)]
    pub mustache: crate::template::mustache::Settings,
    /// Slots a template's rendering fills (slot name → template): the slot holds a
    /// rendering of that template, its literal text held as its own.
    #[serde(default)]
    pub fills: BTreeMap<String, String>,
}

/// A template style packetproof reads into literal text and slots. Its names (serde's
/// and strum's, the same) are the settings' and `init --style`'s: one list.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, strum::EnumString, strum::IntoStaticStr, strum::VariantNames,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Style {
    /// minijinja (the block builder's templates).
    Jinja,
    /// Python `str.format`.
    Format,
    /// mustache.
    Mustache,
}

impl Style {
    /// Every style's name, as harness.toml and `init --style` write it.
    pub const NAMES: &'static [&'static str] = <Style as strum::VariantNames>::VARIANTS;

    /// The style `name` names, if any.
    pub fn from_name(name: &str) -> Option<Style> {
        name.parse().ok()
    }

    pub fn name(self) -> &'static str {
        self.into()
    }
}

impl RawContract {
    pub(crate) fn kind(&self) -> Kind {
        self.profile
    }

    /// The agent's `forbidden` table, taken out to be resolved over the suite's lists.
    pub(crate) fn take_forbidden(&mut self) -> Option<crate::forbidden::RawForbidden> {
        self.forbidden.take()
    }
}

/// One `[contract.branch]` entry: a value set, or `"boolean"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum RawValues {
    Set(Vec<String>),
    Word(String),
}

/// One resolvedBranch field: its name and its values (`None`: a boolean).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BranchField {
    pub(crate) name: String,
    pub(crate) values: Option<Vec<String>>,
}

/// The contract's product part, resolved from settings.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The agent's name: `NAME` of `[agents.NAME]`, or `contract` for `[contract]`.
    pub name: String,
    pub kind: Kind,
    pub(crate) agent_ids: Vec<String>,
    pub(crate) task_types: Vec<String>,
    pub(crate) prompt_modes: Vec<String>,
    pub output: Output,
    /// The agent's own schema file (`schema`; the config makes it absolute): its
    /// packets' outputSchema. `None`: the suite's schema snapshot.
    pub schema: Option<std::path::PathBuf>,
    /// renderInput's top-level keys: a closed set.
    pub(crate) render_input_keys: Vec<String>,
    pub(crate) branch: Vec<BranchField>,
    /// Under the block-builder profile: the values a suite added to a built-in set.
    pub(crate) extended: Vec<(String, String)>,
    /// Under the block-builder profile: built-in values the suite renamed (field, new
    /// name, built-in value). Every rule reads the new name as the built-in value; the
    /// built-in name stays valid in packets already blessed and is refused in new ones.
    pub(crate) renamed: Vec<(String, String, String)>,
    /// A custom profile's templates, when it declares them.
    pub templates: Option<Templates>,
    /// Top-level packet fields beyond the contract's own.
    pub(crate) packet_fields: Vec<String>,
    /// The models the agent's packets may name (`None`: its providers' lists).
    pub(crate) models: Option<Vec<String>>,
    /// The output budgets its packets and calls may carry (`None`: any within the
    /// model's limit in a packet, and in production one its vouched packets carry).
    pub max_tokens: Option<Budget>,
    /// Values call fields may take beside the reviewed ones (`[agents.NAME.call]`).
    pub call: BTreeMap<String, Declared>,
    /// The agent's own evaluator, when it declares one.
    pub evaluator: Option<Evaluator>,
    /// The slot contracts the agent declares, by slot name.
    pub slots: BTreeMap<String, crate::template::SlotContract>,
    /// The agent's own forbidden material, when it narrows or replaces the suite's
    /// (`None`: the suite's `[forbidden]`).
    pub(crate) forbidden: Option<crate::forbidden::Forbidden>,
    /// Whether a suite declared the agent (`[contract]` or `[agents.NAME]`), not the
    /// built-in default: a declared agent's packets name only its providers' models.
    pub(crate) declared: bool,
}

impl Profile {
    /// Resolve `[contract]`; `block_render_input_keys` is `[packet] render_input_keys`
    /// (the block-builder profile's closed set). Errors are settings messages.
    pub(crate) fn resolve(
        name: &str,
        raw: RawContract,
        block_render_input_keys: &[String],
    ) -> std::result::Result<Profile, String> {
        // Every key of `[contract]` is taken here by name, so a key added to RawContract
        // that is given no place below does not build (an unused binding, a warning CI
        // denies): a setting cannot be accepted and ignored.
        let RawContract {
            profile: kind,
            agent_ids,
            task_types,
            prompt_modes,
            output,
            schema,
            render_input_keys,
            branch,
            templates,
            packet_fields,
            models,
            max_tokens,
            call,
            evaluator,
            slots,
            // Resolved over the suite's lists by `config::Agents` (`take_forbidden`).
            forbidden: _,
            renamed,
        } = raw;
        let packet_fields = self::packet_fields(&packet_fields)?;
        let models = match models {
            Some(list) if list.is_empty() || list.iter().any(|m| m.trim().is_empty()) => {
                return Err("contract.models: expected a non-empty list of model names".into())
            }
            other => other,
        };
        let call = budget::declared_fields(&call)?;
        if let Some(problem) = max_tokens.as_ref().and_then(Budget::problem) {
            return Err(format!("contract.max_tokens: {problem}"));
        }
        let slots = slots
            .into_iter()
            .map(|(slot, declared)| Ok((slot.clone(), declared.resolve(&slot).map_err(|e| format!("contract.{e}"))?)))
            .collect::<std::result::Result<BTreeMap<_, _>, String>>()?;
        let shape = shape::Shape {
            agent_ids,
            task_types,
            prompt_modes,
            output,
            schema,
            render_input_keys,
            branch,
            templates,
            renamed,
        };
        let mut profile = match kind {
            Kind::BlockBuilder => shape::block_builder(shape, block_render_input_keys)?,
            Kind::Custom => shape::custom(shape)?,
        };
        profile.name = name.to_owned();
        profile.packet_fields = packet_fields;
        profile.models = models;
        profile.max_tokens = max_tokens;
        profile.call = call;
        profile.evaluator = evaluator;
        profile.slots = slots;
        profile.declared = true;
        Ok(profile)
    }

    /// Whether a packet of this agent may carry the top-level field `key`.
    pub(crate) fn allows_field(&self, key: &str) -> bool {
        CONTRACT_FIELDS.contains(&key) || self.packet_fields.iter().any(|f| f == key)
    }

    /// Why the agent's packets may not name `model`, if they may not (`None`: its list allows it).
    pub(crate) fn model_problem(&self, model: &str) -> Option<String> {
        let models = self.models.as_ref()?;
        (!models.iter().any(|m| m == model))
            .then(|| format!("model {model:?} is not one agent {:?} is declared with (models: {models:?})", self.name))
    }

    pub(crate) fn is_block_builder(&self) -> bool {
        self.kind == Kind::BlockBuilder
    }

    /// A block-builder agent's entry templates (system, user): its own, else the built-in
    /// names, under `paths.prompts`.
    pub(crate) fn entries(&self) -> (&str, &str) {
        match &self.templates {
            Some(t) if self.is_block_builder() => (&t.system[0], &t.user[0]),
            _ => (SYSTEM_TEMPLATE, USER_TEMPLATE),
        }
    }

    /// The values of a value-set branch field (`None`: a boolean or no such field).
    #[cfg(test)]
    pub(crate) fn values_of(&self, field: &str) -> Option<&[String]> {
        self.branch.iter().find(|f| f.name == field).and_then(|f| f.values.as_deref())
    }

    /// Whether `value` of `field` is one the suite added to a built-in value set: the
    /// built-in compiler and evaluator do not know it.
    /// (`promptMode` and `taskType` added to the block builder's are recorded too; they
    /// change no branch derivation, so the branch rules keep running on their packets.)
    pub(crate) fn is_extension(&self, field: &str, value: &str) -> bool {
        self.extended.iter().any(|(f, v)| f == field && v == value)
    }

    /// The built-in value `value` of `field` stands for: itself, unless it is a name the
    /// suite gave a built-in value (`[contract.renamed]`).
    pub(crate) fn builtin_value<'a>(&'a self, field: &str, value: &'a str) -> &'a str {
        self.renamed.iter().find(|(f, new, _)| f == field && new == value).map_or(value, |(_, _, old)| old.as_str())
    }

    /// The name packets give the built-in `value` of `field` now: its new name when the
    /// suite renamed it.
    pub(crate) fn spelled<'a>(&'a self, field: &str, value: &'a str) -> &'a str {
        self.renamed.iter().find(|(f, _, old)| f == field && old == value).map_or(value, |(_, new, _)| new.as_str())
    }

    /// `branch` (a resolvedBranch) with every renamed value read as the built-in one;
    /// borrowed as it is when it names none.
    pub(crate) fn builtin_branch<'b>(&self, branch: &'b serde_json::Value) -> Cow<'b, serde_json::Value> {
        self.renaming(Cow::Borrowed(branch), |field, value| self.builtin_value(field, value).to_owned())
    }

    /// `branch` with every built-in value the suite renamed given its new name: what new
    /// packets carry and the templates render.
    pub(crate) fn spelled_branch<'b>(&self, branch: Cow<'b, serde_json::Value>) -> Cow<'b, serde_json::Value> {
        self.renaming(branch, |field, value| self.spelled(field, value).to_owned())
    }

    /// `branch` with each string value replaced by what `name` makes of it (field, value),
    /// copied only when one changes; as it is when the suite renames nothing.
    fn renaming<'b>(
        &self,
        mut branch: Cow<'b, serde_json::Value>,
        name: impl Fn(&str, &str) -> String,
    ) -> Cow<'b, serde_json::Value> {
        if self.renamed.is_empty() {
            return branch;
        }
        let fields: Vec<String> = branch.as_object().into_iter().flatten().map(|(field, _)| field.clone()).collect();
        for field in fields {
            let Some(text) = branch[&field].as_str() else { continue };
            let named = name(&field, text);
            if named != text {
                branch.to_mut()[&field] = serde_json::Value::String(named);
            }
        }
        branch
    }

    /// The profile's kind as messages give it.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::BlockBuilder => "block-builder",
            Kind::Custom => "custom",
        }
    }
}

/// `packet_fields`: names of extra top-level fields, none a contract field.
fn packet_fields(list: &[String]) -> std::result::Result<Vec<String>, String> {
    for (i, field) in list.iter().enumerate() {
        if field.trim().is_empty() || list[..i].contains(field) {
            return Err(format!("contract.packet_fields: {field:?} is blank or named twice"));
        }
        if CONTRACT_FIELDS.contains(&field.as_str()) {
            return Err(format!("contract.packet_fields: {field:?} is already a contract field"));
        }
    }
    Ok(list.to_vec())
}

#[cfg(test)]
mod tests;
