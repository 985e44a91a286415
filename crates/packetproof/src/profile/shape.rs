//! What each profile does with the `[contract]` keys of an agent's shape: the block
//! builder fixes or extends them, a custom profile declares them. [`SHAPE_KEYS`] is the
//! one list the parse, its messages and the docs' table follow.

use super::{BranchField, Kind, Output, Profile, RawValues, Templates, BLOCK_AGENT_ID, BLOCK_BRANCH};
use super::{BLOCK_PROMPT_MODE, BLOCK_TASK_TYPE};
use std::collections::BTreeMap;

/// The keys of `[contract]` that give an agent's shape, as written.
pub(super) struct Shape {
    pub(super) agent_ids: Option<Vec<String>>,
    pub(super) task_types: Option<Vec<String>>,
    pub(super) prompt_modes: Option<Vec<String>>,
    pub(super) output: Option<Output>,
    pub(super) schema: Option<std::path::PathBuf>,
    pub(super) render_input_keys: Option<Vec<String>>,
    pub(super) branch: BTreeMap<String, RawValues>,
    pub(super) templates: Option<Templates>,
    pub(super) renamed: BTreeMap<String, BTreeMap<String, String>>,
}

/// What the block-builder profile does with a `[contract]` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockBuilder {
    /// Its own value; giving one is an error.
    Fixes(&'static str),
    /// What a suite gives adds to its own.
    Extends(&'static str),
    /// What a suite gives replaces its own: a second agent of the block builder's shape
    /// (its own agent ids, its own templates) keeps every block-builder rule.
    Own(&'static str),
}

/// What a custom profile does with a `[contract]` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Custom {
    /// It must be given: what it declares.
    Required(&'static str),
    Optional(&'static str),
}

/// A `[contract]` key of the agent's shape, and what each profile does with it.
pub(crate) struct ShapeKey {
    pub(crate) key: &'static str,
    given: fn(&Shape) -> bool,
    pub(crate) block_builder: BlockBuilder,
    pub(crate) custom: Custom,
}

/// The keys a custom profile declares and the block builder fixes or extends: the one
/// list the parse and its messages follow, and the table of `docs/gating-any-agent.md`
/// ("What a profile declares", checked by `profile::tests`).
pub(crate) const SHAPE_KEYS: [ShapeKey; 8] = [
    ShapeKey {
        key: "agent_ids",
        given: |raw| raw.agent_ids.is_some(),
        block_builder: BlockBuilder::Own("`updateBlockFromLibrary`, or the agent's own list"),
        custom: Custom::Required("a list of names"),
    },
    ShapeKey {
        key: "task_types",
        given: |raw| raw.task_types.is_some(),
        block_builder: BlockBuilder::Extends("to `block-update`"),
        custom: Custom::Required("a list of names"),
    },
    ShapeKey {
        key: "prompt_modes",
        given: |raw| raw.prompt_modes.is_some(),
        block_builder: BlockBuilder::Extends("to `library-adapt`"),
        custom: Custom::Required("a list of names"),
    },
    ShapeKey {
        key: "output",
        given: |raw| raw.output.is_some(),
        block_builder: BlockBuilder::Fixes("`\"schema\"` (Google: text-JSON)"),
        custom: Custom::Required("\"schema\" or \"text\""),
    },
    ShapeKey {
        key: "schema",
        given: |raw| raw.schema.is_some(),
        block_builder: BlockBuilder::Fixes("the suite's schema snapshot"),
        custom: Custom::Optional(
            "the agent's schema file, with `output = \"schema\"` (a missing file is a settings error)",
        ),
    },
    ShapeKey {
        key: "render_input_keys",
        given: |raw| raw.render_input_keys.is_some(),
        block_builder: BlockBuilder::Fixes("`[packet] render_input_keys`"),
        custom: Custom::Required("the list of renderInput's keys (a closed set)"),
    },
    ShapeKey {
        key: "branch",
        given: |raw| !raw.branch.is_empty(),
        block_builder: BlockBuilder::Extends("values to a built-in set: `insertionMode = [\"replace\"]`"),
        custom: Custom::Optional("each field: a list of values, or `\"boolean\"`"),
    },
    ShapeKey {
        key: "templates",
        given: |raw| raw.templates.is_some(),
        block_builder: BlockBuilder::Own(
            "the built-in minijinja `system.md.j2` and `user.md.j2`, or the agent's own: `style = \"jinja\"` and one \
             `system` and one `user` template under `paths.prompts` (partials shared); each rendering's end trimmed \
             (`\"trim-end\"`)",
        ),
        custom: Custom::Optional(
            "`style` (`format`, `mustache`, `jinja`), `system` and `user` template lists under `paths.prompts`, \
             and `rendering` (below; default `\"as-rendered\"`)",
        ),
    },
];

pub(super) fn block_builder(raw: Shape, render_input_keys: &[String]) -> std::result::Result<Profile, String> {
    let fixed = |k: &&ShapeKey| matches!(k.block_builder, BlockBuilder::Fixes(_)) && (k.given)(&raw);
    if let Some(ShapeKey { key, .. }) = SHAPE_KEYS.iter().find(fixed) {
        return Err(format!(
            "contract.{key}: the block-builder profile fixes it; declare `profile = \"custom\"` to give your own"
        ));
    }
    let mut branch: Vec<BranchField> = BLOCK_BRANCH
        .iter()
        .map(|(name, values)| BranchField {
            name: (*name).to_owned(),
            values: values.map(|v| v.iter().map(|s| (*s).to_owned()).collect()),
        })
        .collect();
    let mut extended = Vec::new();
    let mut added = |key: &str, field: &str, builtin: &str, list: Option<Vec<String>>| {
        let mut all = vec![builtin.to_owned()];
        for value in list.unwrap_or_default() {
            if value.trim().is_empty() || all.contains(&value) {
                return Err(format!("contract.{key}: {value:?} is blank or already declared (built-in: {builtin:?})"));
            }
            all.push(value.clone());
            extended.push((field.to_owned(), value));
        }
        Ok(all)
    };
    let task_types = added("task_types", "taskType", BLOCK_TASK_TYPE, raw.task_types)?;
    let prompt_modes = added("prompt_modes", "promptMode", BLOCK_PROMPT_MODE, raw.prompt_modes)?;
    for (field, values) in raw.branch {
        let Some(slot) = branch.iter_mut().find(|f| f.name == field) else {
            return Err(format!(
                "contract.branch.{field}: not a block-builder branch field (fields: {}); a new field needs \
                 `profile = \"custom\"`",
                BLOCK_BRANCH.map(|(n, _)| n).join(", ")
            ));
        };
        let (Some(known), RawValues::Set(added)) = (slot.values.as_mut(), values) else {
            return Err(format!(
                "contract.branch.{field}: expected a list of values to add to the built-in set {:?}",
                slot.values.as_deref().unwrap_or(&[])
            ));
        };
        for value in added {
            check_value(&field, &value)?;
            if known.contains(&value) {
                return Err(format!("contract.branch.{field}: {value:?} is already a built-in value"));
            }
            known.push(value.clone());
            extended.push((field.clone(), value));
        }
    }
    let renamed = renames(raw.renamed, &mut branch)?;
    Ok(Profile {
        name: String::new(),
        kind: Kind::BlockBuilder,
        agent_ids: own_agent_ids(raw.agent_ids)?,
        task_types,
        prompt_modes,
        output: Output::Schema,
        schema: None,
        render_input_keys: render_input_keys.to_vec(),
        branch,
        extended,
        renamed,
        templates: own_templates(raw.templates)?,
        packet_fields: Vec::new(),
        models: None,
        max_tokens: None,
        call: BTreeMap::new(),
        evaluator: None,
        slots: BTreeMap::new(),
        forbidden: None,
        declared: true,
    })
}

/// `[contract.renamed]`: each new name of a built-in value, added to its field's value
/// set (as a built-in value, not an extension: every rule reads it as the one it renames).
fn renames(
    raw: BTreeMap<String, BTreeMap<String, String>>,
    branch: &mut [BranchField],
) -> std::result::Result<Vec<(String, String, String)>, String> {
    let mut renamed = Vec::new();
    for (field, names) in raw {
        let slot = branch.iter_mut().find(|f| f.name == field);
        let Some((slot, builtin)) = slot.and_then(|slot| {
            let builtin = BLOCK_BRANCH.iter().find(|(name, _)| *name == field).and_then(|(_, values)| *values)?;
            Some((slot, builtin))
        }) else {
            return Err(format!("contract.renamed.{field}: not a block-builder branch field with a value set"));
        };
        let known = slot.values.get_or_insert_with(Vec::new);
        for (new, old) in names {
            check_value(&field, &new)?;
            if !builtin.contains(&old.as_str()) {
                return Err(format!("contract.renamed.{field}.{new}: {old:?} is not a built-in value ({builtin:?})"));
            }
            if known.contains(&new) || renamed.iter().any(|(f, _, o)| *f == field && *o == old) {
                return Err(format!("contract.renamed.{field}.{new}: already a value, or {old:?} renamed twice"));
            }
            known.push(new.clone());
            renamed.push((field.clone(), new, old));
        }
    }
    Ok(renamed)
}

/// A block-builder agent's own agent ids, else the built-in one.
fn own_agent_ids(list: Option<Vec<String>>) -> std::result::Result<Vec<String>, String> {
    match list {
        None => Ok(vec![BLOCK_AGENT_ID.into()]),
        Some(list) if list.is_empty() || list.iter().any(|id| id.trim().is_empty()) => {
            Err("contract.agent_ids: expected a non-empty list of non-blank names".into())
        }
        Some(list) => Ok(list),
    }
}

/// A block-builder agent's own entry templates: read and rendered as the built-in ones
/// are (minijinja, the same branch partials, each rendering's end trimmed), so every
/// block-builder rule runs on its packets. Anything else the table could say is another
/// engine's, which the built-in renderer is not.
fn own_templates(templates: Option<Templates>) -> std::result::Result<Option<Templates>, String> {
    let Some(t) = templates else { return Ok(None) };
    let plain = t.renderings.is_empty()
        && t.fills.is_empty()
        && t.rendering == crate::template::Trim::AsRendered
        && t.jinja == crate::template::jinja::Settings::default();
    if t.style != super::Style::Jinja || t.system.len() != 1 || t.user.len() != 1 || !plain {
        return Err("contract.templates: a block-builder agent names its own templates as `style = \"jinja\"`, one \
                    `system` and one `user` template, rendered as the built-in ones (no `rendering`, `renderings`, \
                    `fills` or `jinja` settings); declare `profile = \"custom\"` for another engine"
            .into());
    }
    Ok(Some(t))
}

pub(super) fn custom(raw: Shape) -> std::result::Result<Profile, String> {
    if !raw.renamed.is_empty() {
        return Err("contract.renamed: a custom profile declares its own branch values ([contract.branch])".into());
    }
    for ShapeKey { key, given, custom, .. } in &SHAPE_KEYS {
        if let (Custom::Required(what), false) = (custom, given(&raw)) {
            return Err(format!("contract.{key}: a custom profile declares it: {what}"));
        }
    }
    let required = |key: &str, list: Option<Vec<String>>| -> std::result::Result<Vec<String>, String> {
        let list = list.unwrap_or_default();
        if list.is_empty() || list.iter().any(|v| v.trim().is_empty()) {
            return Err(format!("contract.{key}: expected a non-empty list of non-blank names"));
        }
        Ok(list)
    };
    let mut branch = Vec::new();
    for (field, values) in raw.branch {
        let values = match values {
            RawValues::Word(word) if word == "boolean" => None,
            RawValues::Word(word) => {
                return Err(format!(
                    "contract.branch.{field}: expected a list of values or \"boolean\", found {word:?}"
                ))
            }
            RawValues::Set(set) if set.is_empty() => {
                return Err(format!("contract.branch.{field}: expected at least one value"))
            }
            RawValues::Set(set) => {
                for value in &set {
                    check_value(&field, value)?;
                }
                Some(set)
            }
        };
        if field == "agentId" {
            return Err("contract.branch.agentId: resolvedBranch.agentId is always the packet's agentId".into());
        }
        branch.push(BranchField { name: field, values });
    }
    // Present: SHAPE_KEYS requires it (as `render_input_keys` below).
    let output = raw.output.unwrap_or(Output::Schema);
    if output == Output::Text && raw.schema.is_some() {
        return Err("contract.schema: the agent answers in plain text (output = \"text\"), so it names no schema \
                    file"
            .into());
    }
    Ok(Profile {
        name: String::new(),
        kind: Kind::Custom,
        agent_ids: required("agent_ids", raw.agent_ids)?,
        task_types: required("task_types", raw.task_types)?,
        prompt_modes: required("prompt_modes", raw.prompt_modes)?,
        output,
        schema: raw.schema,
        render_input_keys: raw.render_input_keys.unwrap_or_default(),
        branch,
        extended: Vec::new(),
        renamed: Vec::new(),
        templates: match raw.templates {
            Some(t) if t.system.is_empty() || t.user.is_empty() => {
                return Err("contract.templates: name at least one system and one user template".into())
            }
            other => other,
        },
        packet_fields: Vec::new(),
        models: None,
        max_tokens: None,
        call: BTreeMap::new(),
        evaluator: None,
        slots: BTreeMap::new(),
        forbidden: None,
        declared: true,
    })
}

fn check_value(field: &str, value: &str) -> std::result::Result<(), String> {
    if value.trim().is_empty() {
        return Err(format!("contract.branch.{field}: a value is blank"));
    }
    Ok(())
}
