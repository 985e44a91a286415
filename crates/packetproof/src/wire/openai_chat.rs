//! OpenAI Chat Completions (POST /v1/chat/completions): `model`,
//! `max_completion_tokens`, `messages` = [system, user], and
//! `response_format: {type: "json_schema", json_schema: {name, description, schema,
//! strict}}` (Structured Outputs). `{type: "json_object"}` would be JSON mode
//! without the schema: a loosened request, reported.
//!
//! `strict` is decided by the schema, so the body is one the API accepts: strict
//! mode requires `additionalProperties: false` on every object and every property
//! listed in `required` (the Structured Outputs guide), and a schema that breaks
//! either is sent with `strict: false` (the schema still guides the model; the
//! held-back snapshot validates the answer). Keyword support, which has changed
//! between documentation versions, is not judged here.

use super::Material;
use serde_json::{json, Map, Value};

pub(crate) const LABELS: &[(&str, &str)] = &[
    ("$.model", "model"),
    ("$.max_completion_tokens", "token limit"),
    ("$.messages", "messages"),
    ("$.messages[0]", "system message"),
    ("$.messages[1]", "user message"),
    ("$.response_format", "output schema"),
];

pub(crate) fn body(m: &Material) -> Value {
    let mut body = json!({
        "model": m.model,
        "max_completion_tokens": m.max_tokens,
        "messages": [
            {"role": "system", "content": m.system},
            {"role": "user", "content": m.user},
        ],
    });
    // A plain-text answer is asked for with no output format at all.
    if m.schema.is_some() {
        body["response_format"] = json!({"type": "json_schema", "json_schema": schema_format(m, false)});
    }
    body
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
    format.insert("strict".into(), json!(m.strict_problem().is_none()));
    Value::Object(format)
}

/// The first place where `schema` breaks the two structural rules of strict mode.
pub(crate) fn strict_problem(schema: &Value, path: &str) -> Option<String> {
    let Value::Object(node) = schema else { return None };
    if node.get("type").and_then(Value::as_str) == Some("object") || node.contains_key("properties") {
        if node.get("additionalProperties") != Some(&Value::Bool(false)) {
            return Some(format!("{path}: an object without additionalProperties: false"));
        }
        let required: Vec<&str> =
            node.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let properties = node.get("properties").and_then(Value::as_object);
        if let Some(key) = properties.into_iter().flatten().map(|(k, _)| k).find(|k| !required.contains(&k.as_str())) {
            return Some(format!("{path}: property {key:?} is not in required"));
        }
    }
    subschemas(node, path).into_iter().find_map(|(sub, at)| strict_problem(sub, &at))
}

/// The schemas nested in a schema node, with their paths.
fn subschemas<'a>(node: &'a Map<String, Value>, path: &str) -> Vec<(&'a Value, String)> {
    let mut out = Vec::new();
    for key in ["properties", "$defs", "definitions"] {
        for (name, sub) in node.get(key).and_then(Value::as_object).into_iter().flatten() {
            out.push((sub, crate::report::child(&crate::report::child(path, key), name)));
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = node.get(key).filter(|v| v.is_object()) {
            out.push((sub, crate::report::child(path, key)));
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        for (i, sub) in node.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
            out.push((sub, crate::report::index(&crate::report::child(path, key), i)));
        }
    }
    out
}

/// Equivalent forms: content as one `{type: "text", text}` part; the first
/// message in the `developer` role (what OpenAI's newer models call the system
/// message; the API treats a system message as one).
pub(crate) fn normalize(body: &mut Value) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_mode_needs_closed_objects_with_every_property_required() {
        let closed = json!({"type": "object", "additionalProperties": false, "required": ["a"],
            "properties": {"a": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                "required": [], "properties": {}}}}});
        assert_eq!(strict_problem(&closed, "$"), None);
        let mut open = closed.clone();
        open["properties"]["a"]["items"]["properties"]["b"] = json!({"type": "string"});
        assert_eq!(strict_problem(&open, "$").unwrap(), "$.properties.a.items: property \"b\" is not in required");
        let mut loose = closed;
        loose["properties"]["a"]["items"].as_object_mut().unwrap().remove("additionalProperties");
        assert_eq!(
            strict_problem(&loose, "$").unwrap(),
            "$.properties.a.items: an object without additionalProperties: false"
        );
    }
}
