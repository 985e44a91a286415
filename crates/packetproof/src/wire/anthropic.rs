//! Anthropic Messages API (POST /v1/messages): `model`, `max_tokens`, `system`,
//! one user message, and the output schema as the one tool the model is forced to
//! call (`tool_choice: {type: "tool", name}`); the answer is that tool's `input`.
//! Tool fields as the Messages API reference names them: `name`, `description`,
//! `input_schema`. The call's own tools come before the output schema's; a forced
//! choice of the last tool is read back as the output schema. A choice is `{type:
//! "auto" | "any" | "none"}` (`any` is `"required"`) or `{type: "tool", name}`;
//! `disable_parallel_tool_use: true` is `parallelToolCalls: false`. Extended thinking is
//! `thinking: {type: "enabled", budget_tokens}`; prompt caching of the system prompt is
//! its one text block's `cache_control`. The structured-outputs form of a schema answer,
//! `output_config.format: {type: "json_schema", schema}`, is read as one (built from a
//! packet, a schema is the forced tool); `output_config.effort` is the reasoning effort.

use super::api::{self, Material, Output, Problem, Route, Sent, Spec, Tool};
use crate::call::Call;
use crate::report::JsonPath;
use serde_json::{json, Map, Value};

pub(crate) const SPEC: Spec = Spec {
    name: "anthropic",
    provider: "anthropic",
    telemetry: "anthropic",
    origin: "https://api.anthropic.com",
    path: "/v1/messages",
    route,
    labels: LABELS,
    fields: &[
        ("temperature", "temperature"),
        ("topP", "top_p"),
        ("topK", "top_k"),
        ("stop", "stop_sequences"),
        ("serviceTier", "service_tier"),
        ("metadata", "metadata"),
        ("thinkingBudget", "thinking.budget_tokens"),
        ("reasoningEffort", "output_config.effort"),
        ("speed", "speed"),
        ("inferenceGeo", "inference_geo"),
        ("promptCaching", "cache_control"),
        ("container", "container"),
        ("diagnostics", "diagnostics"),
        ("userProfileId", "user_profile_id"),
        ("workspaceId", "workspace_id"),
    ],
    also: &["tools", "toolChoice", "parallelToolCalls", "cacheControl"],
    budget: "max_tokens",
    build: body,
    put_tools,
    take,
    normalize,
};

pub(crate) const LABELS: &[(&str, &str)] = &[
    ("$.model", "model"),
    ("$.max_tokens", "token limit"),
    ("$.system", "system prompt"),
    ("$.messages", "messages"),
    ("$.messages[0]", "user message"),
    ("$.tools", "tools"),
    ("$.tool_choice", "tool choice"),
];

fn route(path: &str) -> Option<Route> {
    Route::ending(path, "/v1/messages")
}

pub(crate) fn body(m: &Material) -> Value {
    json!({
        "model": m.model,
        "max_tokens": m.max_tokens,
        "system": m.system,
        "messages": [{"role": "user", "content": m.user}],
    })
}

/// The call's tools, then the output schema's tool, forced; the choice, thinking and
/// caching the call sets.
fn put_tools(call: &Call, m: &Material, body: &mut Map<String, Value>) {
    let mut tools: Vec<Value> = api::tools_of(call)
        .into_iter()
        .map(|tool| match tool {
            Tool::Function(f) => Value::Object(api::function_as(f, "input_schema")),
            Tool::Own(own) => own.clone(),
        })
        .collect();
    let mut choice = call.get("toolChoice").map(|choice| match choice {
        Value::String(s) if s == "required" => json!({"type": "any"}),
        Value::String(s) => json!({"type": s}),
        named => super::openai_chat::choice_out(named, |name| json!({"type": "tool", "name": name})),
    });
    if let Some(schema) = m.schema {
        let mut tool = Map::new();
        tool.insert("name".into(), m.schema_name());
        if let Some(description) = schema.get("description") {
            tool.insert("description".into(), description.clone());
        }
        tool.insert("input_schema".into(), schema.get("schema").cloned().unwrap_or(Value::Null));
        tools.push(Value::Object(tool));
        choice = Some(json!({"type": "tool", "name": m.schema_name()}));
    }
    if let Some(Value::Bool(parallel)) = call.get("parallelToolCalls") {
        let choice = choice.get_or_insert_with(|| json!({"type": "auto"}));
        choice["disable_parallel_tool_use"] = json!(!parallel);
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = choice {
        body.insert("tool_choice".into(), choice);
    }
    if let Some(Value::Object(thinking)) = body.get_mut("thinking") {
        thinking.insert("type".into(), json!("enabled"));
    }
    if let Some(cache) = call.get("cacheControl") {
        body["system"] = json!([{"type": "text", "text": m.system, "cache_control": cache}]);
    }
}

fn take(body: &mut Map<String, Value>, sent: &mut Sent) -> Result<(), Problem> {
    sent.model = body.remove("model").and_then(|m| m.as_str().map(str::to_owned)).or(sent.model.take());
    sent.max_tokens = body.remove("max_tokens");
    if let Some(Value::Array(blocks)) = body.get_mut("system") {
        if let [Value::Object(block)] = blocks.as_mut_slice() {
            if let Some(cache) = block.remove("cache_control") {
                sent.call.set("cacheControl", cache);
            }
        }
    }
    sent.system = api::take_text(body, "system", JsonPath::field("system"), &mut sent.unknown)?;
    sent.messages = api::take_messages(body, "messages", "content", &mut sent.unknown)?;
    // Structured outputs: `output_config.format` is a schema answer without a tool.
    if let Some(format) = api::take(body, "output_config.format") {
        match format.get("type").and_then(Value::as_str) {
            Some("json_schema") if format.as_object().is_some_and(|f| f.len() == 2) => {
                sent.output = Output::Schema(json!({"schema": format["schema"]}))
            }
            _ => {
                let at = JsonPath::field("output_config").key("format");
                sent.unknown
                    .push((at, format!("is {}; expected {{type: \"json_schema\", schema}}", api::shown(&format))));
            }
        }
    }
    if body.get("thinking").and_then(|t| t.get("type")) == Some(&json!("enabled")) {
        if let Some(Value::Object(thinking)) = body.get_mut("thinking") {
            thinking.remove("type");
        }
    }
    let mut choice = body.remove("tool_choice");
    if let Some(Value::Object(c)) = &mut choice {
        if let Some(disabled) = c.remove("disable_parallel_tool_use") {
            match disabled.as_bool() {
                Some(disabled) => sent.call.set("parallelToolCalls", Value::Bool(!disabled)),
                None => sent.unknown.push((
                    JsonPath::field("tool_choice").key("disable_parallel_tool_use"),
                    format!("is {}; expected true or false", api::shown(&disabled)),
                )),
            }
        }
    }
    let mut tools = match body.remove("tools") {
        Some(Value::Array(tools)) => Some(tools),
        Some(_) => return Err((JsonPath::field("tools"), "a list of tools".to_owned())),
        None => None,
    };
    // The forced last tool is the output schema.
    let forced = choice.as_ref().filter(|c| c.get("type") == Some(&json!("tool")) && c.as_object().unwrap().len() == 2);
    let forced_name = forced.and_then(|c| c.get("name")).cloned();
    if let (Some(name), Some(list)) = (forced_name, tools.as_mut()) {
        if list.last().and_then(|t| t.get("name")) == Some(&name) {
            let tool = list.pop().and_then(|t| t.as_object().cloned()).unwrap_or_default();
            let schema = tool.into_iter().map(|(k, v)| (if k == "input_schema" { "schema".to_owned() } else { k }, v));
            sent.output = Output::Schema(Value::Object(schema.collect()));
            choice = None;
        }
    }
    if let Some(tools) = tools.filter(|t| !t.is_empty()) {
        let function = |t: &Map<String, Value>| {
            (!t.contains_key("type") || t.get("type") == Some(&json!("custom"))).then(|| {
                let mut f = api::function_from(t, "input_schema");
                f.remove("type");
                Value::Object(f)
            })
        };
        sent.call.set("tools", api::tools_in(Value::Array(tools), function));
    }
    if let Some(choice) = choice {
        let neutral = match choice.get("type").and_then(Value::as_str) {
            Some("auto" | "none") if choice.as_object().is_some_and(|c| c.len() == 1) => choice["type"].clone(),
            Some("any") if choice.as_object().is_some_and(|c| c.len() == 1) => json!("required"),
            Some("tool") if choice.as_object().is_some_and(|c| c.len() == 2) => json!({"name": choice["name"]}),
            _ => choice,
        };
        // A choice of auto said only to carry disable_parallel_tool_use is no choice.
        let implied = neutral == json!("auto") && sent.call.get("parallelToolCalls").is_some();
        if !implied {
            sent.call.set("toolChoice", neutral);
        }
    }
    Ok(())
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
