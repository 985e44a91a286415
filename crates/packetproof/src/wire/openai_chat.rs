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
//!
//! Tools are `{type: "function", function: {name, description, parameters, strict}}`,
//! a tool choice `"auto"`, `"none"`, `"required"` or `{type: "function", function: {name}}`.

use super::api::{self, Material, Output, Problem, Route, Sent, Spec, Tool};
use crate::call::Call;
use crate::report::JsonPath;
use serde_json::{json, Map, Value};

pub(crate) const SPEC: Spec = Spec {
    name: "openai-chat",
    provider: "openai",
    telemetry: "openai",
    origin: "https://api.openai.com",
    path: "/v1/chat/completions",
    route,
    labels: LABELS,
    fields: &[
        ("temperature", "temperature"),
        ("topP", "top_p"),
        ("stop", "stop"),
        ("seed", "seed"),
        ("n", "n"),
        ("presencePenalty", "presence_penalty"),
        ("frequencyPenalty", "frequency_penalty"),
        ("logitBias", "logit_bias"),
        ("logprobs", "logprobs"),
        ("topLogprobs", "top_logprobs"),
        ("reasoningEffort", "reasoning_effort"),
        ("verbosity", "verbosity"),
        ("serviceTier", "service_tier"),
        ("metadata", "metadata"),
        ("user", "user"),
        ("safetyIdentifier", "safety_identifier"),
        ("promptCacheKey", "prompt_cache_key"),
        ("store", "store"),
        ("streamOptions", "stream_options"),
        ("parallelToolCalls", "parallel_tool_calls"),
    ],
    also: &["tools", "toolChoice", "strictOutput"],
    budget: "max_completion_tokens",
    build: body,
    put_tools,
    take,
    normalize,
};

fn route(path: &str) -> Option<Route> {
    Route::ending(path, "/v1/chat/completions")
}

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

fn put_tools(call: &Call, _: &Material, body: &mut Map<String, Value>) {
    let tools = api::tools_of(call);
    if !tools.is_empty() {
        let tools = tools.into_iter().map(|tool| match tool {
            Tool::Function(f) => json!({"type": "function", "function": api::function_as(f, "parameters")}),
            Tool::Own(own) => own.clone(),
        });
        body.insert("tools".into(), tools.collect());
    }
    if let Some(choice) = call.get("toolChoice") {
        body.insert(
            "tool_choice".into(),
            choice_out(choice, |name| json!({"type": "function", "function": {"name": name}})),
        );
    }
}

/// A neutral tool choice as an API writes it: `{"name"}` by `named`, the rest as is.
pub(crate) fn choice_out(choice: &Value, named: impl Fn(&Value) -> Value) -> Value {
    match choice.as_object().filter(|c| c.len() == 1).and_then(|c| c.get("name")) {
        Some(name) => named(name),
        None => choice.clone(),
    }
}

/// The neutral tool choice of `{type: "function", <function or flat>: name}`.
pub(crate) fn choice_in(choice: Value, name_of: fn(&Map<String, Value>) -> Option<&Value>) -> Value {
    match choice.as_object().filter(|c| c.get("type").and_then(Value::as_str) == Some("function")).and_then(name_of) {
        Some(name) => json!({"name": name}),
        None => choice,
    }
}

fn take(body: &mut Map<String, Value>, sent: &mut Sent) -> Result<(), Problem> {
    sent.model = body.remove("model").and_then(|m| m.as_str().map(str::to_owned)).or(sent.model.take());
    sent.max_tokens = body.remove("max_completion_tokens").or_else(|| body.remove("max_tokens"));
    let mut messages = api::take_messages(body, "messages", "content", &mut sent.unknown)?;
    if matches!(messages.first(), Some((role, _)) if role == "system" || role == "developer") {
        sent.system = Some(messages.remove(0).1);
    }
    sent.messages = messages;
    if let Some(format) = body.remove("response_format") {
        let mut strict = Vec::new();
        sent.output =
            output_in(format, JsonPath::field("response_format"), "json_schema", &mut sent.unknown, &mut strict)?;
        if let Some(strict) = strict.pop() {
            sent.call.set("strictOutput", Value::Bool(strict));
        }
    }
    if let Some(tools) = body.remove("tools") {
        let function = |t: &Map<String, Value>| {
            let inner = t.get("function")?.as_object()?;
            (t.get("type")?.as_str()? == "function" && t.len() == 2).then(|| Value::Object(inner.clone()))
        };
        sent.call.set("tools", api::tools_in(tools, function));
    }
    if let Some(choice) = body.remove("tool_choice") {
        sent.call.set("toolChoice", choice_in(choice, |c| c.get("function")?.get("name").filter(|_| c.len() == 2)));
    }
    Ok(())
}

/// The output format of `response_format` (Chat: the schema under `inner`) or
/// `text.format` (Responses: flat, `inner` empty): a schema's `strict` must be the one
/// its schema allows, or the request is loosened.
pub(crate) fn output_in(
    format: Value,
    at: JsonPath,
    inner: &str,
    unknown: &mut Vec<(JsonPath, String)>,
    strict_output: &mut Vec<bool>,
) -> Result<Output, Problem> {
    let Value::Object(mut format) = format else { return Err((at, "an object with a type".to_owned())) };
    let kind = format.remove("type");
    let output = match kind.as_ref().and_then(Value::as_str) {
        Some("text") => Output::Text,
        Some("json_object") => Output::Json,
        Some("json_schema") => {
            let (mut schema, at) = match inner {
                "" => (std::mem::take(&mut format), at.clone()),
                key => match format.remove(key) {
                    Some(Value::Object(schema)) => (schema, at.clone().key(key)),
                    _ => return Err((at.key(key), "the schema format object".to_owned())),
                },
            };
            // `strict` the schema allows is the default; another is the call's `strictOutput`.
            let allowed = schema.get("schema").is_some_and(|s| strict_problem(s, "$").is_none());
            match schema.remove("strict") {
                Some(Value::Bool(strict)) if strict == allowed => {}
                Some(Value::Bool(strict)) => strict_output.push(strict),
                None => strict_output.push(false),
                Some(other) => {
                    unknown.push((at.key("strict"), format!("is {}; expected true or false", api::shown(&other))))
                }
            }
            Output::Schema(Value::Object(schema))
        }
        _ => return Err((at.key("type"), "\"text\", \"json_object\" or \"json_schema\"".to_owned())),
    };
    for (key, value) in format {
        unknown.push((at.clone().key(&key), api::unknown(&value)));
    }
    Ok(output)
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
    let strict = m.call.get("strictOutput").and_then(Value::as_bool).unwrap_or(material_strict_problem(m).is_none());
    format.insert("strict".into(), json!(strict));
    Value::Object(format)
}

/// Why the material's output schema cannot be sent in OpenAI strict mode, if it cannot.
pub(crate) fn material_strict_problem(m: &Material) -> Option<String> {
    let schema = m.schema.and_then(|s| s.get("schema"))?;
    strict_problem(schema, "$.outputSchema.schema")
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
