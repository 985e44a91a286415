//! The packet compiler (the preview adapter): compile input → runtime
//! packet. Bad input is refused before any packet exists, with every problem.
//!
//! - `request`: validation of the compile input (the reference's rules, and the
//!   few stricter ones); `blueprint`: its source-blueprint rules; `ecma`: the
//!   ECMAScript semantics those rules rely on
//! - `branch`: the nine resolvedBranch fields
//! - `render_input`: renderInput with only the resolved branch
//! - `prompts`: strict template rendering, promptPaths and promptVersions

mod blueprint;
mod branch;
mod ecma;
pub(crate) mod prompts;
mod render_input;
mod request;

pub use prompts::{SYSTEM_TEMPLATE, USER_TEMPLATE};
pub use request::{CHECK, MAPPING_ACTIONS};

use crate::packet::{AGENT_ID, PROMPT_MODE, TASK_TYPE};
use crate::report::{walk, Trail};
use crate::Invocation;
use crate::JsonPath;
use crate::{digest, fsutil, provider, schema, Error, Result};
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::path::Path;

/// Compile a request into a runtime packet. `file` names the request in errors.
/// A refused request is `Error::Failed` (exit 1) listing every finding (check
/// [`CHECK`]). The packet is not judged here: the commands that write one
/// (`export`, `bless`) ask the rule book (`crate::judge`), as every command does.
pub fn compile(request: &Value, config: &Invocation, file: &str) -> Result<Value> {
    // The suite's block builder: the agent a compile input (which names none) is for.
    let agent = config.settings().agents.block_builder();
    let request = &builtin_request(request, agent);
    let findings = request::check(request, config.settings());
    if !findings.is_empty() {
        return Err(Error::Failed { file: file.to_owned(), findings });
    }
    let resolution = branch::resolve(request, file)?;
    let render_input = render_input::build(request, &resolution);
    let agent_id = agent.agent_ids.first().map_or(AGENT_ID, String::as_str);
    let branch = agent.spelled_branch(std::borrow::Cow::Owned(resolution.to_json(agent_id))).into_owned();
    let provider = request["provider"].as_str().unwrap_or_default();
    // Validated against harness.toml's allow-list, so the provider has its mode.
    let mode = config
        .settings()
        .output_mode_of(agent, provider)
        .ok_or_else(|| Error::shape(file, JsonPath::field("provider"), "a provider harness.toml names"))?;
    // The prompts name the output contract for every provider; only non-Google
    // packets carry the schema itself.
    let snapshot = schema::shared_snapshot(config)?;
    let schema_name = snapshot["name"].as_str().unwrap_or_default().to_owned();
    let output_schema = provider::carries_output_schema(mode).then(|| Value::clone(&snapshot));
    let prompts = prompts::render(config, agent, &render_input, &branch, &schema_name)?;
    let effective = provider::effective_user_message(config.settings(), mode, &prompts.user);
    let packet = assemble(request, agent_id, prompts, effective, render_input, branch, output_schema);
    Ok(packet)
}

/// Where a compile input names a branch value, by the branch field it resolves.
const REQUEST_BRANCH_VALUES: [(&str, &str); 3] = [
    ("/insertionMode", "insertionMode"),
    ("/source/scope", "sourceScope"),
    ("/evidence/selection/mode", "evidenceMode"),
];

/// `request` with each value the suite renamed (`[contract.renamed]`) read as the
/// built-in one: an input written before the rename and one written after compile alike.
fn builtin_request<'a>(request: &'a Value, agent: &crate::profile::Profile) -> std::borrow::Cow<'a, Value> {
    let mut request = std::borrow::Cow::Borrowed(request);
    for (pointer, field) in REQUEST_BRANCH_VALUES {
        let Some(text) = request.pointer(pointer).and_then(Value::as_str) else { continue };
        let builtin = agent.builtin_value(field, text).to_owned();
        if builtin != text {
            if let Some(value) = request.to_mut().pointer_mut(pointer) {
                *value = Value::String(builtin);
            }
        }
    }
    request
}

/// The prompts the project's templates render over a packet's own renderInput and
/// resolvedBranch, with the templates rendered (for `packet::renders-from-input`).
pub(crate) fn render_prompts(
    config: &Invocation,
    agent: &crate::profile::Profile,
    render_input: &Value,
    branch: &Value,
) -> Result<prompts::Rendered> {
    let snapshot = schema::shared_snapshot(config)?;
    prompts::render(config, agent, render_input, branch, snapshot["name"].as_str().unwrap_or_default())
}

/// The packet, field for field in the key order of the Node packets.
fn assemble(
    request: &Value,
    agent_id: &str,
    prompts: prompts::Rendered,
    effective: String,
    render_input: Value,
    branch: Value,
    output_schema: Option<Value>,
) -> Value {
    let mut packet = Map::new();
    packet.insert("packetVersion".into(), json!(1));
    packet.insert("agentId".into(), json!(agent_id));
    packet.insert("taskType".into(), json!(TASK_TYPE));
    packet.insert("promptMode".into(), json!(PROMPT_MODE));
    packet.insert("attempt".into(), json!(1));
    for key in ["provider", "model"] {
        packet.insert(key.into(), request[key].clone());
    }
    // Validated as a safe positive integer; `6.4e+4` is the same value, written as 64000.
    let tokens = request["maxTokens"].as_f64().unwrap_or_default();
    packet.insert("maxTokens".into(), json!(tokens as u64));
    packet.insert("promptPaths".into(), json!(prompts.paths));
    packet.insert("promptVersions".into(), Value::Object(prompts.versions));
    packet.insert("systemPrompt".into(), json!(prompts.system));
    packet.insert("userMessage".into(), json!(prompts.user));
    packet.insert("effectiveUserMessage".into(), json!(effective));
    packet.insert("renderInput".into(), render_input);
    packet.insert("resolvedBranch".into(), branch);
    if let Some(schema) = output_schema {
        packet.insert("outputSchema".into(), schema);
    }
    digest::seal(&mut packet);
    Value::Object(packet)
}

/// Strings (at least `taint.min_length` characters) from the regions of
/// `request` that its resolved branch leaves out: unselected and inaccessible
/// evidence, asset-example prompt texts, the source's own data mappings, and
/// anything under a forbidden key. None of them may occur in the packet.
///
/// A string that also occurs in a region that does render is not listed: its
/// presence in the packet would prove nothing.
pub fn excluded_text(request: &Value, config: &Invocation) -> Vec<(String, String)> {
    // A request asking for no known evidence mode renders no evidence (and its
    // compile fails, saying why): every available item is then excluded.
    let items = branch::requested_mode(request, "").map_or_else(|_| Vec::new(), |m| branch::resolved_items(request, m));
    let mut regions = render_input::excluded_regions(request, &items);
    let mut trail = Trail::new(crate::report::JsonPath::root());
    walk(request, &mut trail, &mut |value, key, trail| {
        if key.is_some_and(|k| {
            config.settings().forbidden_of(config.settings().agents.block_builder()).is_forbidden_key(k)
        }) {
            regions.push((trail.render(), value));
        }
    });
    let excluded_paths: HashSet<String> = regions.iter().map(|(path, _)| path.clone()).collect();
    let long = |text: &str| text.chars().count() >= config.settings().taint.min_length;
    let mut rendered = HashSet::new();
    let mut trail = Trail::new(crate::report::JsonPath::root());
    walk(request, &mut trail, &mut |value, _, trail| {
        if let Some(text) = value.as_str().filter(|t| long(t)) {
            if !inside(&trail.render(), &excluded_paths) {
                rendered.insert(text);
            }
        }
    });
    let mut out = Vec::new();
    for (path, value) in &regions {
        let mut trail = Trail::new(crate::report::JsonPath::root());
        let mut take = |v: &Value, trail: &str| {
            if let Some(text) = v.as_str().filter(|t| long(t) && !rendered.contains(t)) {
                out.push((trail.to_owned(), text.to_owned()));
            }
        };
        take(value, path);
        walk(value, &mut trail, &mut |v, _, trail| take(v, &trail.render_under(path)));
    }
    out.sort();
    out.dedup();
    out
}

/// Whether `path` is one of `regions` or lies below one.
fn inside(path: &str, regions: &HashSet<String>) -> bool {
    regions.iter().any(|region| {
        path.strip_prefix(region.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    })
}

/// The compile request in `file`, read bounded and strictly.
pub fn read_request(config: &Invocation, file: &Path) -> Result<Value> {
    fsutil::read_json(file, config.settings().limits.max_file_bytes)
}
