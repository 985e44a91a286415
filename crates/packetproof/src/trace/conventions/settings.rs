//! What a call record says of the rest of the call (tools, sampling, the output format,
//! …): the GenAI semantic conventions' attributes (`gen_ai.request.temperature`,
//! `gen_ai.tool.definitions`, `gen_ai.output.type`, …, each one an instrumentation may
//! leave out), OpenInference's invocation parameters and the Vercel AI SDK's settings,
//! and a request body's whole call (`packetproof.request.call`, written by
//! `trace::request`). `trace::settings` judges what is read here.

use super::{json_of, Attrs, Reading, Said};
use crate::call;
use crate::trace::value::Json;
use serde_json::Value;

/// The attribute that carries the whole rest of a call read from its request body.
pub(crate) const CALL_ATTRIBUTE: &str = "packetproof.request.call";
/// The field name a call's output format goes by.
pub(crate) const OUTPUT: &str = "output";

/// The semantic-convention attributes of call fields.
const ATTRIBUTES: &[(&str, &str)] = &[
    ("gen_ai.request.temperature", "temperature"),
    ("gen_ai.request.top_p", "topP"),
    ("gen_ai.request.top_k", "topK"),
    ("gen_ai.request.stop_sequences", "stop"),
    ("gen_ai.request.seed", "seed"),
    ("gen_ai.request.choice.count", "n"),
    ("gen_ai.request.frequency_penalty", "frequencyPenalty"),
    ("gen_ai.request.presence_penalty", "presencePenalty"),
    ("openai.request.service_tier", "serviceTier"),
    ("gen_ai.openai.request.service_tier", "serviceTier"),
];

/// Read what a call record says of its settings. OpenLIT writes its own defaults for
/// settings a call does not send (`temperature` 1.0, `seed` 0, …) and `gen_ai.output.type`
/// "text" for any call: its settings attributes are not read as what was sent.
pub(crate) fn read(attrs: &Attrs, out: &mut Reading) {
    // One pass over the keys finds the few a record has: most have none of them.
    let mut found: Vec<&str> = Vec::new();
    for key in attrs.keys() {
        let known = ATTRIBUTES.iter().any(|(attribute, _)| *attribute == key)
            || [OUTPUT_TYPE, TOOLS, CALL_ATTRIBUTE].contains(&key);
        if known && !found.contains(&key) {
            found.push(key);
        }
    }
    for key in found {
        read_one(attrs, key, out);
    }
}

const OUTPUT_TYPE: &str = "gen_ai.output.type";
const TOOLS: &str = "gen_ai.tool.definitions";

fn read_one(attrs: &Attrs, key: &str, out: &mut Reading) {
    let Some(value) = attrs.get(key) else { return };
    if key == CALL_ATTRIBUTE {
        match json_of(value, key).map(|v| v.to_value()) {
            Ok(record) => whole_call(&record, out),
            Err(why) => out.conflicts.push(why.why().to_owned()),
        }
        return;
    }
    if out.library == Some(super::Library::OpenLit) {
        return;
    }
    if let Some((attribute, field)) = ATTRIBUTES.iter().find(|(attribute, _)| *attribute == key) {
        out.settings.push((field, Said { source: (*attribute).into(), value: value.to_value() }));
    } else if key == OUTPUT_TYPE {
        out.settings.push((OUTPUT, Said { source: OUTPUT_TYPE.into(), value: value.to_value() }));
    } else {
        match json_of(value, TOOLS) {
            Ok(tools) => {
                out.settings.push(("tools", Said { source: TOOLS.into(), value: neutral_tools(tools.to_value()) }))
            }
            Err(why) => out.conflicts.push(format!("tools: {}", why.why())),
        }
    }
}

/// An instrumentation's record of a call's parameters (OpenInference's
/// `llm.invocation_parameters`: the SDK call's arguments without its messages), read by
/// the provider's API spec: each call field, and the output format when it names one.
pub(crate) fn parameters(provider: &str, value: &Value, source: &'static str, out: &mut Reading) {
    let Some((call, output, unknown)) = crate::wire::specs::parameters(provider, value) else { return };
    for (name, value) in call.iter().filter(|(name, _)| *name != call::MAX_TOKENS_OMITTED) {
        out.settings.push((name, Said { source: source.into(), value: value.clone() }));
    }
    if let Some(output) = output {
        out.settings.push((OUTPUT, Said { source: source.into(), value: output.to_value() }));
    }
    out.conflicts.extend(unknown.into_iter().map(|why| format!("{source} {why}")));
}

/// The Vercel AI SDK's `ai.settings.*` (named as call fields are, `stopSequences` as
/// `stop`), `ai.prompt.tools` (one JSON text per tool) and `ai.prompt.toolChoice`.
pub(crate) fn vercel(attrs: &Attrs, out: &mut Reading) {
    for key in attrs.keys().filter_map(|k| k.strip_prefix("ai.settings.")) {
        let name = if key == "stopSequences" { "stop" } else { key };
        let (Some(field), Some(said)) = (call::field(name), attrs.said_owned(&format!("ai.settings.{key}"))) else {
            continue;
        };
        if !out.settings.iter().any(|(f, s)| *f == field.name && s.source == said.source) {
            out.settings.push((field.name, said));
        }
    }
    if let Some(Json::Array(tools)) = attrs.get("ai.prompt.tools") {
        let parsed: Result<Vec<Value>, _> =
            tools.iter().map(|t| json_of(t, "ai.prompt.tools").map(|v| v.to_value())).collect();
        match parsed {
            Ok(tools) => {
                let tools = neutral_tools(Value::Array(tools));
                out.settings.push(("tools", Said { source: "ai.prompt.tools".into(), value: tools }));
            }
            Err(why) => out.conflicts.push(format!("tools: {}", why.why())),
        }
    }
    if let Some(choice) = attrs.get("ai.prompt.toolChoice") {
        if let Ok(choice) = json_of(choice, "ai.prompt.toolChoice") {
            let choice = choice.to_value();
            let neutral = match (choice.get("type").and_then(Value::as_str), choice.get("toolName")) {
                (Some("tool"), Some(name)) => serde_json::json!({"name": name}),
                (Some(kind), _) => Value::from(kind),
                _ => choice.clone(),
            };
            out.settings.push(("toolChoice", Said { source: "ai.prompt.toolChoice".into(), value: neutral }));
        }
    }
}

/// A request body's whole call, as `trace::request` records it.
fn whole_call(record: &Value, out: &mut Reading) {
    let source = || std::borrow::Cow::Borrowed("the request body");
    let api = record.get("api").and_then(Value::as_str).and_then(crate::wire::specs::named);
    // A record that names no API of ours holds the whole call all the same.
    out.whole = Some(api.map_or("", |spec| spec.name));
    if let Some(Value::Object(call)) = record.get("call") {
        for (name, value) in call {
            if let Some(field) = call::field(name) {
                out.settings.push((field.name, Said { source: source(), value: value.clone() }));
            }
        }
    }
    if let Some(output) = record.get("output") {
        out.settings.push((OUTPUT, Said { source: source(), value: output.clone() }));
    }
    for unknown in record.get("unknown").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        out.conflicts.push(format!("the request body {unknown}"));
    }
}

/// Tool definitions as instrumentations record them in the neutral form: the
/// conventions' `{type: "function", name, description, parameters}`, or an API's own
/// (`{type: "function", function: {…}}`, Anthropic's `input_schema`).
fn neutral_tools(tools: Value) -> Value {
    let Value::Array(items) = tools else { return tools };
    let neutral = items.into_iter().map(|tool| {
        let Value::Object(mut t) = tool else { return tool };
        if t.get("type") == Some(&Value::from("function")) {
            if let Some(Value::Object(inner)) = t.get("function").filter(|_| t.len() == 2) {
                t = inner.clone();
            }
            t.remove("type");
        }
        // Anthropic's `input_schema`, the Vercel AI SDK's `inputSchema`.
        for key in ["input_schema", "inputSchema"] {
            if let Some(schema) = t.remove(key) {
                t.insert("parameters".into(), schema);
            }
        }
        Value::Object(t)
    });
    Value::Array(neutral.collect())
}
