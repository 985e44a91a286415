//! OpenAI Responses API (POST /v1/responses): `model`, `max_output_tokens`,
//! `instructions` (the system prompt), `input` with one user message, and
//! `text.format: {type: "json_schema", name, description, schema, strict}`, `strict`
//! decided by the schema as for Chat Completions. Tools are flat (`{type: "function",
//! name, description, parameters, strict}`), and so is a forced function choice
//! (`{type: "function", name}`). The system prompt may also come as the first input
//! message in the `system` or `developer` role (the Vercel AI SDK sends it so).

use super::api::{self, Material, Problem, Route, Sent, Spec, Tool};
use super::openai_chat::{choice_in, choice_out, output_in};
use crate::call::Call;
use crate::report::JsonPath;
use serde_json::{json, Map, Value};

pub(crate) const SPEC: Spec = Spec {
    name: "openai-responses",
    provider: "openai",
    telemetry: "openai",
    origin: "https://api.openai.com",
    path: "/v1/responses",
    route,
    labels: LABELS,
    fields: &[
        ("temperature", "temperature"),
        ("topP", "top_p"),
        ("topLogprobs", "top_logprobs"),
        ("reasoningEffort", "reasoning.effort"),
        ("reasoningSummary", "reasoning.summary"),
        ("verbosity", "text.verbosity"),
        ("serviceTier", "service_tier"),
        ("metadata", "metadata"),
        ("user", "user"),
        ("safetyIdentifier", "safety_identifier"),
        ("promptCacheKey", "prompt_cache_key"),
        ("store", "store"),
        ("streamOptions", "stream_options"),
        ("parallelToolCalls", "parallel_tool_calls"),
        ("truncation", "truncation"),
        ("include", "include"),
        ("maxToolCalls", "max_tool_calls"),
    ],
    also: &["tools", "toolChoice", "strictOutput"],
    budget: "max_output_tokens",
    build: body,
    put_tools,
    take,
    normalize,
};

pub(crate) const LABELS: &[(&str, &str)] = &[
    ("$.model", "model"),
    ("$.max_output_tokens", "token limit"),
    ("$.instructions", "system prompt"),
    ("$.input", "input messages"),
    ("$.input[0]", "user message"),
    ("$.text", "output schema"),
];

fn route(path: &str) -> Option<Route> {
    Route::ending(path, "/v1/responses")
}

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

fn put_tools(call: &Call, _: &Material, body: &mut Map<String, Value>) {
    let tools = api::tools_of(call);
    if !tools.is_empty() {
        let tools = tools.into_iter().map(|tool| match tool {
            Tool::Function(f) => {
                let mut flat = Map::from_iter([("type".to_owned(), json!("function"))]);
                flat.extend(api::function_as(f, "parameters"));
                Value::Object(flat)
            }
            Tool::Own(own) => own.clone(),
        });
        body.insert("tools".into(), tools.collect());
    }
    if let Some(choice) = call.get("toolChoice") {
        body.insert("tool_choice".into(), choice_out(choice, |name| json!({"type": "function", "name": name})));
    }
}

fn take(body: &mut Map<String, Value>, sent: &mut Sent) -> Result<(), Problem> {
    sent.model = body.remove("model").and_then(|m| m.as_str().map(str::to_owned)).or(sent.model.take());
    sent.max_tokens = body.remove("max_output_tokens");
    sent.system = api::take_text(body, "instructions", JsonPath::field("instructions"), &mut sent.unknown)?;
    let mut messages = match body.get("input") {
        Some(Value::String(text)) => {
            let text = text.clone();
            body.remove("input");
            vec![("user".to_owned(), text)]
        }
        _ => api::take_messages(body, "input", "content", &mut sent.unknown)?,
    };
    let leads = matches!(messages.first(), Some((role, _)) if role == "system" || role == "developer");
    if sent.system.is_none() && leads {
        sent.system = Some(messages.remove(0).1);
    }
    sent.messages = messages;
    if let Some(format) = api::take(body, "text.format") {
        let mut strict = Vec::new();
        sent.output = output_in(format, JsonPath::field("text").key("format"), "", &mut sent.unknown, &mut strict)?;
        if let Some(strict) = strict.pop() {
            sent.call.set("strictOutput", Value::Bool(strict));
        }
    }
    if let Some(tools) = body.remove("tools") {
        let function = |t: &Map<String, Value>| {
            (t.get("type")?.as_str()? == "function").then(|| {
                let mut f = t.clone();
                f.remove("type");
                Value::Object(f)
            })
        };
        sent.call.set("tools", api::tools_in(tools, function));
    }
    if let Some(choice) = body.remove("tool_choice") {
        sent.call.set("toolChoice", choice_in(choice, |c| c.get("name").filter(|_| c.len() == 2)));
    }
    Ok(())
}

/// Equivalent forms the API documents: `input` as a plain string is one user
/// message; an input message may say `type: "message"`; its content may be one
/// `{type: "input_text", text}` part; the system prompt may be the first input
/// message, in the `system` or `developer` role, when `instructions` is absent.
pub(crate) fn normalize(body: &mut Value) {
    let Some(map) = body.as_object_mut() else { return };
    let Some(input) = map.get_mut("input") else { return };
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
        let first = items.first().and_then(Value::as_object);
        let system = first.filter(|m| m.len() == 2 && matches!(m["role"].as_str(), Some("system" | "developer")));
        if let Some(text) = system.and_then(|m| m.get("content")).filter(|c| c.is_string()).cloned() {
            if !map.contains_key("instructions") {
                if let Some(Value::Array(items)) = map.get_mut("input") {
                    items.remove(0);
                }
                map.insert("instructions".into(), text);
            }
        }
    }
}
