//! OpenAI Responses API (POST /v1/responses): `model`, `max_output_tokens`,
//! `instructions` (the system prompt), `input` with one user message, and
//! `text.format: {type: "json_schema", name, description, schema, strict}`, `strict`
//! decided by the schema as for Chat Completions.

use super::Material;
use serde_json::{json, Value};

pub(crate) const LABELS: &[(&str, &str)] = &[
    ("$.model", "model"),
    ("$.max_output_tokens", "token limit"),
    ("$.instructions", "system prompt"),
    ("$.input", "input messages"),
    ("$.input[0]", "user message"),
    ("$.text", "output schema"),
];

pub(crate) fn body(m: &Material) -> Value {
    let mut body = json!({
        "model": m.model,
        "max_output_tokens": m.max_tokens,
        "instructions": m.system,
        "input": [{"role": "user", "content": m.user}],
    });
    // A plain-text answer is asked for with no output format at all.
    if m.schema.is_some() {
        body["text"] = json!({"format": super::openai_chat::schema_format(m, true)});
    }
    body
}

/// Equivalent forms the API documents: `input` as a plain string is one user
/// message; an input message may say `type: "message"`; its content may be one
/// `{type: "input_text", text}` part.
pub(crate) fn normalize(body: &mut Value) {
    let Some(input) = body.get_mut("input") else { return };
    if let Value::String(text) = input {
        *input = json!([{"role": "user", "content": text}]);
    }
    if let Value::Array(items) = input {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            if item.get("type").and_then(Value::as_str) == Some("message") {
                item.remove("type");
            }
            if let Some(content) = item.get_mut("content") {
                super::openai_chat::unwrap_text_block(content, "input_text");
            }
        }
    }
}
