//! AWS Bedrock Converse (POST /model/{modelId}/converse, or /converse-stream): the
//! model is in the URL (percent-encoded: `anthropic.claude-sonnet-4-5-v1%3A0`). `system`
//! is a list of text blocks, `messages` `[{role, content: [{text}]}]`,
//! `inferenceConfig: {maxTokens, temperature, topP, stopSequences}`. Tools are
//! `toolConfig.tools: [{toolSpec: {name, description, inputSchema: {json}}}]` and the
//! choice `toolConfig.toolChoice` (`{auto: {}}`, `{any: {}}`: `"required"`, `{tool:
//! {name}}`); the output schema is the forced last tool, as for Anthropic. Provider
//! fields a model takes beside these are `additionalModelRequestFields`.

use super::api::{self, Material, Output, Problem, Route, Sent, Spec, Tool};
use crate::call::Call;
use crate::report::JsonPath;
use serde_json::{json, Map, Value};

pub(crate) const SPEC: Spec = Spec {
    name: "bedrock-converse",
    provider: "bedrock",
    telemetry: "aws.bedrock",
    origin: "https://bedrock-runtime.us-east-1.amazonaws.com",
    path: "/model/{model}/converse (or /converse-stream)",
    route,
    labels: &[
        ("$.system", "system prompt"),
        ("$.messages", "messages"),
        ("$.messages[0]", "user message"),
        ("$.inferenceConfig.maxTokens", "token limit"),
        ("$.toolConfig", "tools"),
    ],
    fields: &[
        ("temperature", "inferenceConfig.temperature"),
        ("topP", "inferenceConfig.topP"),
        ("stop", "inferenceConfig.stopSequences"),
        ("metadata", "requestMetadata"),
        ("guardrail", "guardrailConfig"),
        ("performance", "performanceConfig"),
        ("modelFields", "additionalModelRequestFields"),
    ],
    also: &["tools", "toolChoice"],
    budget: "inferenceConfig.maxTokens",
    build: body,
    put_tools,
    take,
    normalize: |_| {},
};

/// `/model/{modelId}/converse` after any prefix; the id percent-decoded.
fn route(path: &str) -> Option<Route> {
    let path = path.trim_end_matches('/');
    let (head, streamed) = match path.rsplit_once('/')? {
        (head, "converse") => (head, false),
        (head, "converse-stream") => (head, true),
        _ => return None,
    };
    let (before, model) = head.rsplit_once('/')?;
    let model = percent_decode(model)?;
    let at = before.strip_suffix("/model")?.len();
    (!model.is_empty()).then_some(Route { model: Some(model), streamed, at })
}

/// `%XX` escapes of a path segment (hand-written: a dozen lines, where a URL crate
/// would be a dependency for one call).
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

pub(crate) fn body(m: &Material) -> Value {
    json!({
        "system": [{"text": m.system}],
        "messages": [{"role": "user", "content": [{"text": m.user}]}],
        "inferenceConfig": {"maxTokens": m.max_tokens},
    })
}

fn spec_of(name: &Value, description: Option<&Value>, schema: Value) -> Value {
    let mut spec = Map::new();
    spec.insert("name".into(), name.clone());
    if let Some(description) = description {
        spec.insert("description".into(), description.clone());
    }
    spec.insert("inputSchema".into(), json!({"json": schema}));
    json!({"toolSpec": spec})
}

fn put_tools(call: &Call, m: &Material, body: &mut Map<String, Value>) {
    let mut tools: Vec<Value> = api::tools_of(call)
        .into_iter()
        .map(|tool| match tool {
            Tool::Function(f) => spec_of(
                f.get("name").unwrap_or(&Value::Null),
                f.get("description"),
                f.get("parameters").cloned().unwrap_or_else(|| json!({"type": "object"})),
            ),
            Tool::Own(own) => own.clone(),
        })
        .collect();
    let mut choice = call.get("toolChoice").map(|choice| match choice {
        Value::String(s) if s == "required" => json!({"any": {}}),
        Value::String(s) => json!({s.as_str(): {}}),
        named => super::openai_chat::choice_out(named, |name| json!({"tool": {"name": name}})),
    });
    if let Some(schema) = m.schema {
        let inner = schema.get("schema").cloned().unwrap_or(Value::Null);
        tools.push(spec_of(&m.schema_name(), schema.get("description"), inner));
        choice = Some(json!({"tool": {"name": m.schema_name()}}));
    }
    let mut config = Map::new();
    if !tools.is_empty() {
        config.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = choice {
        config.insert("toolChoice".into(), choice);
    }
    if !config.is_empty() {
        body.insert("toolConfig".into(), Value::Object(config));
    }
}

/// The neutral function of `{toolSpec: {name, description?, inputSchema: {json}}}`.
fn function_of(tool: &Map<String, Value>) -> Option<Map<String, Value>> {
    let spec = tool.get("toolSpec")?.as_object().filter(|_| tool.len() == 1)?;
    let schema = spec.get("inputSchema")?.as_object().filter(|s| s.len() == 1)?.get("json")?;
    let mut function = Map::new();
    for (key, value) in spec {
        match key.as_str() {
            "inputSchema" => function.insert("parameters".into(), schema.clone()),
            _ => function.insert(key.clone(), value.clone()),
        };
    }
    Some(function)
}

fn take(body: &mut Map<String, Value>, sent: &mut Sent) -> Result<(), Problem> {
    if let Some(id) = body.remove("modelId") {
        sent.model = id.as_str().map(str::to_owned).or(sent.model.take());
    }
    sent.system = api::take_text(body, "system", JsonPath::field("system"), &mut sent.unknown)?;
    sent.messages = api::take_messages(body, "messages", "content", &mut sent.unknown)?;
    sent.max_tokens = api::take(body, "inferenceConfig.maxTokens");
    let Some(config) = body.remove("toolConfig") else { return Ok(()) };
    let at = JsonPath::field("toolConfig");
    let Value::Object(mut config) = config else { return Err((at, "an object of tools".to_owned())) };
    let mut tools = match config.remove("tools") {
        Some(Value::Array(tools)) => tools,
        Some(_) => return Err((at.key("tools"), "a list of tools".to_owned())),
        None => Vec::new(),
    };
    let mut choice = config.remove("toolChoice");
    for (key, value) in config {
        sent.unknown.push((at.clone().key(&key), api::unknown(&value)));
    }
    let forced = choice.as_ref().and_then(|c| c.get("tool")).and_then(|t| t.get("name")).cloned();
    let last = tools.last().and_then(Value::as_object).and_then(function_of);
    if let (Some(name), Some(last)) = (forced, last) {
        if last.get("name") == Some(&name) {
            tools.pop();
            let schema = last.into_iter().map(|(k, v)| (if k == "parameters" { "schema".to_owned() } else { k }, v));
            sent.output = Output::Schema(Value::Object(schema.collect()));
            choice = None;
        }
    }
    if !tools.is_empty() {
        let neutral = tools.into_iter().map(|t| t.as_object().and_then(function_of).map_or(t, Value::Object));
        sent.call.set("tools", neutral.collect());
    }
    if let Some(choice) = choice {
        let only = |key: &str| choice.get(key).filter(|v| v.as_object().is_some_and(Map::is_empty)).is_some();
        let neutral = match () {
            _ if only("auto") => json!("auto"),
            _ if only("any") => json!("required"),
            _ => match choice.get("tool").and_then(|t| t.get("name")) {
                Some(name) => json!({"name": name}),
                None => choice.clone(),
            },
        };
        sent.call.set("toolChoice", neutral);
    }
    Ok(())
}
