//! Provider shaping: what differs between providers, in one place.
//! - Text-JSON providers (Google) get no `outputSchema` and the exact suffix appended.
//! - The agent request: the only view of a packet a fresh agent ever sees.

use crate::config::{Config, OutputMode};
use serde::Serialize;
use serde_json::{Map, Value};

pub(crate) const AGENT_REQUEST_KIND: &str = "segmently.packet-only-agent-request";

/// The provider-facing user message in `mode`.
pub(crate) fn effective_user_message(config: &Config, mode: OutputMode, user_message: &str) -> String {
    match mode {
        OutputMode::TextJson => format!("{user_message}{}", config.google_suffix),
        OutputMode::Schema | OutputMode::Text => user_message.to_owned(),
    }
}

/// Whether packets in `mode` carry `outputSchema`.
pub(crate) fn carries_output_schema(mode: OutputMode) -> bool {
    mode == OutputMode::Schema
}

/// What a JSON document is when it is not a runtime packet but another file of
/// the toolchain (so `validate` can say so instead of listing missing fields).
/// Refuse a file of another kind given where a runtime packet is expected (an agent
/// request, a compile input): every command that reads a packet file says the same.
pub fn expect_packet(value: &Value, file: &str) -> crate::Result<()> {
    match other_file_kind(value) {
        Some(kind) => {
            Err(crate::Error::shape(file, crate::JsonPath::root(), format!("a runtime packet; this file is {kind}")))
        }
        None => Ok(()),
    }
}

pub fn other_file_kind(value: &Value) -> Option<&'static str> {
    if value.get("packetVersion").is_some() {
        return None;
    }
    match value.get("kind").and_then(Value::as_str) {
        Some(AGENT_REQUEST_KIND) => Some(
            "an agent request (agent-request.json): the agent's view of a runtime packet, not the packet itself; \
             validate the runtime-packet.json it was made from, or check it with `packetproof verify` on its run \
             directory or golden folder",
        ),
        _ if is_compile_input(value) => Some(
            "a compile input (request.json), not a runtime packet: compile it with `packetproof export --request FILE` \
             and validate the packet that prints",
        ),
        _ => None,
    }
}

/// A compile input has a source blueprint, a target and a provider (and no packetVersion).
fn is_compile_input(value: &Value) -> bool {
    value.pointer("/source/blueprint").is_some() && value.get("target").is_some() && value.get("provider").is_some()
}

/// `agent-request.json` for a packet, field for field as the Node tools write it:
/// only what the contract lets a fresh agent see (never userMessage as such,
/// renderInput, resolvedBranch, promptPaths or promptVersions), and outputSchema
/// only when the packet carries one.
pub fn agent_request(packet: &Map<String, Value>) -> Value {
    // Borrowed: the one copy of each field is the one serde_json makes.
    let field = |key: &str| packet.get(key).unwrap_or(&Value::Null);
    let request = AgentRequest {
        schema_version: 1,
        kind: AGENT_REQUEST_KIND,
        exact_input_hash: field("exactInputHash"),
        checksum: field("checksum"),
        provider: field("provider"),
        model: field("model"),
        max_tokens: field("maxTokens"),
        system_prompt: field("systemPrompt"),
        user_message: field("effectiveUserMessage"),
        output_schema: packet.get("outputSchema"),
        call: packet.get(crate::call::MEMBER),
        execution_policy: ExecutionPolicy {
            allowed_input: "this-file-only",
            repository_access: false,
            file_editing: false,
            tools: false,
            expected_answer_visible: false,
            response: "json-only",
        },
    };
    serde_json::to_value(request).expect("an agent request is plain data")
}

/// agent-request.json, field for field in the Node tools' order. The packet's
/// fields are copied as they are (the packet checks judge them).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AgentRequest<'a> {
    pub(crate) schema_version: u32,
    pub(crate) kind: &'static str,
    pub(crate) exact_input_hash: &'a Value,
    pub(crate) checksum: &'a Value,
    pub(crate) provider: &'a Value,
    pub(crate) model: &'a Value,
    pub(crate) max_tokens: &'a Value,
    pub(crate) system_prompt: &'a Value,
    /// The packet's `effectiveUserMessage`: what the provider would receive.
    pub(crate) user_message: &'a Value,
    /// Only when the packet carries one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) output_schema: Option<&'a Value>,
    /// The rest of the call (tools, settings), only when the packet carries it: the agent
    /// stands in for the model the call is sent to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) call: Option<&'a Value>,
    pub(crate) execution_policy: ExecutionPolicy,
}

/// What the agent may do: read this file only, no tools, no edits, answer JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExecutionPolicy {
    pub(crate) allowed_input: &'static str,
    pub(crate) repository_access: bool,
    pub(crate) file_editing: bool,
    pub(crate) tools: bool,
    pub(crate) expected_answer_visible: bool,
    pub(crate) response: &'static str,
}
