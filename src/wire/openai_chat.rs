//! OpenAI Chat Completions (POST /v1/chat/completions): `model`,
//! `max_completion_tokens`, `messages` = [system, user], and
//! `response_format: {type: "json_schema", json_schema: {name, description, schema,
//! strict: true}}` (Structured Outputs). `{type: "json_object"}` would be JSON mode
//! without the schema: a loosened request, reported.

use super::Material;
use serde_json::{json, Map, Value};

pub const LABELS: &[(&str, &str)] = &[
    ("$.model", "model"),
    ("$.max_completion_tokens", "token limit"),
    ("$.messages", "messages"),
    ("$.messages[0]", "system message"),
    ("$.messages[1]", "user message"),
    ("$.response_format", "output schema"),
];

pub fn body(m: &Material) -> Value {
    json!({
        "model": m.model,
        "max_completion_tokens": m.max_tokens,
        "messages": [
            {"role": "system", "content": m.system},
            {"role": "user", "content": m.user},
        ],
        "response_format": {"type": "json_schema", "json_schema": schema_format(m, false)},
    })
}

/// `{name, description?, schema, strict: true}`; with `typed`, led by
/// `type: "json_schema"` (the Responses API's flat form).
pub(crate) fn schema_format(m: &Material, typed: bool) -> Value {
    let mut format = Map::new();
    if typed {
        format.insert("type".into(), json!("json_schema"));
    }
    format.insert("name".into(), m.schema_name());
    if let Some(description) = m.schema.and_then(|s| s.get("description")) {
        format.insert("description".into(), description.clone());
    }
    format.insert("schema".into(), m.schema.and_then(|s| s.get("schema")).cloned().unwrap_or(Value::Null));
    format.insert("strict".into(), json!(true));
    Value::Object(format)
}

/// Equivalent forms: content as one `{type: "text", text}` part; the first
/// message in the `developer` role (what OpenAI's newer models call the system
/// message; the API treats a system message as one).
pub fn normalize(body: &mut Value) {
    if let Some(Value::Array(messages)) = body.get_mut("messages") {
        for content in messages.iter_mut().filter_map(|m| m.get_mut("content")) {
            unwrap_text_block(content, "text");
        }
        if let Some(role) = messages.first_mut().and_then(|m| m.get_mut("role")) {
            if role == "developer" {
                *role = json!("system");
            }
        }
    }
}

/// `[{type: <kind>, text}]`, exactly that and nothing more, is the text itself.
pub(crate) fn unwrap_text_block(value: &mut Value, kind: &str) {
    let Value::Array(items) = value else { return };
    let [Value::Object(block)] = items.as_slice() else { return };
    let plain = block.len() == 2 && block.get("type").and_then(Value::as_str) == Some(kind);
    if let (true, Some(Value::String(text))) = (plain, block.get("text")) {
        *value = Value::String(text.clone());
    }
}
