//! Anthropic Messages API (POST /v1/messages): `model`, `max_tokens`, `system`,
//! one user message, and the output schema as the one tool the model is forced to
//! call (`tool_choice: {type: "tool", name}`); the answer is that tool's `input`.
//! Tool fields as the Messages API reference names them: `name`, `description`,
//! `input_schema`.

use super::Material;
use serde_json::{json, Map, Value};

pub(crate) const LABELS: &[(&str, &str)] = &[
    ("$.model", "model"),
    ("$.max_tokens", "token limit"),
    ("$.system", "system prompt"),
    ("$.messages", "messages"),
    ("$.messages[0]", "user message"),
    ("$.tools", "output schema tool"),
    ("$.tools[0].input_schema", "output schema"),
    ("$.tool_choice", "forced tool choice"),
];

pub(crate) fn body(m: &Material) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), m.schema_name());
    if let Some(description) = m.schema.and_then(|s| s.get("description")) {
        tool.insert("description".into(), description.clone());
    }
    tool.insert("input_schema".into(), m.schema.and_then(|s| s.get("schema")).cloned().unwrap_or(Value::Null));
    let mut body = json!({
        "model": m.model,
        "max_tokens": m.max_tokens,
        "system": m.system,
        "messages": [{"role": "user", "content": m.user}],
    });
    // A plain-text answer is asked for with no tool.
    if m.schema.is_some() {
        body["tools"] = json!([tool]);
        body["tool_choice"] = json!({"type": "tool", "name": m.schema_name()});
    }
    body
}

/// Equivalent forms the API documents: `system` and a message's `content` as a
/// list holding one plain text block `{type: "text", text}` are the same text.
pub(crate) fn normalize(body: &mut Value) {
    if let Some(system) = body.get_mut("system") {
        super::openai_chat::unwrap_text_block(system, "text");
    }
    if let Some(Value::Array(messages)) = body.get_mut("messages") {
        for content in messages.iter_mut().filter_map(|m| m.get_mut("content")) {
            super::openai_chat::unwrap_text_block(content, "text");
        }
    }
}
