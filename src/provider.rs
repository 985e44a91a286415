//! Provider shaping: what differs between providers, in one place.
//! - Text-JSON providers (Google) get no `outputSchema` and the exact suffix appended.
//! - The agent request: the only view of a packet a fresh agent ever sees.

use crate::config::Config;
use serde_json::{json, Map, Value};

pub const AGENT_REQUEST_KIND: &str = "segmently.packet-only-agent-request";

/// The provider-facing user message for `provider`.
pub fn effective_user_message(config: &Config, provider: &str, user_message: &str) -> String {
    if config.is_text_json(provider) {
        format!("{user_message}{}", config.google_suffix)
    } else {
        user_message.to_owned()
    }
}

/// Whether packets for `provider` carry `outputSchema`.
pub fn carries_output_schema(config: &Config, provider: &str) -> bool {
    !config.is_text_json(provider)
}

/// What a JSON document is when it is not a runtime packet but another file of
/// the toolchain (so `validate` can say so instead of listing missing fields).
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
    let field = |key: &str| packet.get(key).cloned().unwrap_or(Value::Null);
    let mut request = Map::new();
    request.insert("schemaVersion".into(), json!(1));
    request.insert("kind".into(), json!(AGENT_REQUEST_KIND));
    for key in ["exactInputHash", "checksum", "provider", "model", "maxTokens", "systemPrompt"] {
        request.insert(key.into(), field(key));
    }
    request.insert("userMessage".into(), field("effectiveUserMessage"));
    if let Some(schema) = packet.get("outputSchema") {
        request.insert("outputSchema".into(), schema.clone());
    }
    request.insert("executionPolicy".into(), execution_policy());
    Value::Object(request)
}

fn execution_policy() -> Value {
    json!({
        "allowedInput": "this-file-only",
        "repositoryAccess": false,
        "fileEditing": false,
        "tools": false,
        "expectedAnswerVisible": false,
        "response": "json-only"
    })
}
