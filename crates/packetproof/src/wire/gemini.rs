//! Gemini generateContent (POST /v1beta/models/{model}:generateContent): the model
//! is in the URL, not the body. `systemInstruction.parts[0].text`, one user content
//! with effectiveUserMessage (which already carries the JSON suffix), and
//! `generationConfig: {maxOutputTokens, responseMimeType: "application/json"}`: JSON
//! mode without a schema (Google packets carry none; the held-back snapshot
//! validates the answer). Tools are `{functionDeclarations: [{name, description,
//! parameters}]}`; a choice is `toolConfig.functionCallingConfig` (`AUTO`, `NONE`, `ANY`,
//! `ANY` with one allowed function: that function). The REST API also takes the
//! protobuf field names (`system_instruction`, `generation_config`,
//! `max_output_tokens`): read as the same fields.

use super::api::{self, Material, Output, Problem, Route, Sent, Spec, Tool};
use crate::call::Call;
use crate::report::JsonPath;
use serde_json::{json, Map, Value};

pub(crate) const SPEC: Spec = Spec {
    name: "gemini",
    provider: "google",
    telemetry: "gcp.gemini",
    origin: "https://generativelanguage.googleapis.com",
    path: "/v1beta/models/{model}:generateContent (or :streamGenerateContent)",
    route,
    labels: LABELS,
    fields: &[
        ("temperature", "generationConfig.temperature"),
        ("topP", "generationConfig.topP"),
        ("topK", "generationConfig.topK"),
        ("stop", "generationConfig.stopSequences"),
        ("seed", "generationConfig.seed"),
        ("n", "generationConfig.candidateCount"),
        ("presencePenalty", "generationConfig.presencePenalty"),
        ("frequencyPenalty", "generationConfig.frequencyPenalty"),
        ("logprobs", "generationConfig.responseLogprobs"),
        ("topLogprobs", "generationConfig.logprobs"),
        ("thinkingBudget", "generationConfig.thinkingConfig.thinkingBudget"),
        ("safetySettings", "safetySettings"),
        ("labels", "labels"),
    ],
    also: &["tools", "toolChoice"],
    budget: "generationConfig.maxOutputTokens",
    build: body,
    put_tools,
    take,
    normalize,
};

pub(crate) const LABELS: &[(&str, &str)] = &[
    ("$.systemInstruction", "system prompt"),
    ("$.contents", "contents"),
    ("$.contents[0]", "user message"),
    ("$.generationConfig", "generation config"),
    ("$.generationConfig.maxOutputTokens", "token limit"),
    ("$.generationConfig.responseMimeType", "JSON mode"),
];

/// Gemini's API versions (google-genai for Python addresses `/v1`, for Node `/v1beta`)
/// and methods (`:streamGenerateContent` is the streamed call).
const VERSIONS: [&str; 2] = ["/v1beta/models/", "/v1/models/"];
const METHODS: [&str; 2] = ["generateContent", "streamGenerateContent"];

/// `/v1beta/models/{model}:{method}`, after any prefix (a proxy's).
fn route(path: &str) -> Option<Route> {
    let path = path.trim_end_matches('/');
    let (head, method) = path.rsplit_once(':')?;
    if !METHODS.contains(&method) {
        return None;
    }
    let (at, model) = VERSIONS.iter().find_map(|v| head.rfind(v).map(|at| (at, &head[at + v.len()..])))?;
    (!model.is_empty() && !model.contains('/')).then(|| Route {
        model: Some(model.to_owned()),
        streamed: method == "streamGenerateContent",
        at,
    })
}

pub(crate) fn body(m: &Material) -> Value {
    let mut body = json!({
        "systemInstruction": {"parts": [{"text": m.system}]},
        "contents": [{"role": "user", "parts": [{"text": m.user}]}],
        "generationConfig": {"maxOutputTokens": m.max_tokens},
    });
    // JSON mode only when the packet asks for JSON (the text-JSON suffix); a plain-text answer is plain.
    if m.json {
        body["generationConfig"]["responseMimeType"] = json!("application/json");
    }
    if let Some(schema) = m.schema.and_then(|s| s.get("schema")) {
        body["generationConfig"]["responseJsonSchema"] = schema.clone();
    }
    body
}

fn put_tools(call: &Call, _: &Material, body: &mut Map<String, Value>) {
    let mut functions = Vec::new();
    let mut tools = Vec::new();
    for tool in api::tools_of(call) {
        match tool {
            Tool::Function(f) => functions.push(Value::Object(f.clone())),
            Tool::Own(own) => tools.push(own.clone()),
        }
    }
    if !functions.is_empty() {
        tools.insert(0, json!({"functionDeclarations": functions}));
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    let config = match call.get("toolChoice") {
        None => return,
        Some(Value::String(s)) if s == "auto" => json!({"mode": "AUTO"}),
        Some(Value::String(s)) if s == "none" => json!({"mode": "NONE"}),
        Some(Value::String(_)) => json!({"mode": "ANY"}),
        Some(Value::Object(c)) if c.len() == 1 && c.contains_key("name") => {
            json!({"mode": "ANY", "allowedFunctionNames": [c["name"]]})
        }
        Some(own) => {
            body.insert("toolConfig".into(), own.clone());
            return;
        }
    };
    body.insert("toolConfig".into(), json!({"functionCallingConfig": config}));
}

fn take(body: &mut Map<String, Value>, sent: &mut Sent) -> Result<(), Problem> {
    for (proto, json_name) in [("system_instruction", "systemInstruction"), ("generation_config", "generationConfig")] {
        if let Some(value) = body.remove(proto) {
            body.entry(json_name).or_insert(value);
        }
    }
    if let Some(Value::Object(instruction)) = body.remove("systemInstruction") {
        let at = JsonPath::field("systemInstruction");
        let mut instruction = instruction;
        // google-genai sends the instruction in a content with the role "user", which the API ignores.
        if instruction.get("role").and_then(Value::as_str) == Some("user") {
            instruction.remove("role");
        }
        sent.system = api::take_text(&mut instruction, "parts", at.clone().key("parts"), &mut sent.unknown)?;
        for (key, value) in instruction {
            sent.unknown.push((at.clone().key(&key), api::unknown(&value)));
        }
    }
    sent.messages = api::take_messages(body, "contents", "parts", &mut sent.unknown)?;
    if let Some(Value::Object(config)) = body.get_mut("generationConfig") {
        sent.max_tokens = config.remove("maxOutputTokens").or_else(|| config.remove("max_output_tokens"));
        let schema = config.remove("responseJsonSchema").or_else(|| config.remove("responseSchema"));
        sent.output = match (config.remove("responseMimeType"), schema) {
            (_, Some(schema)) => Output::Schema(json!({"schema": schema})),
            (Some(mime), None) if mime == "application/json" => Output::Json,
            (Some(mime), None) if mime == "text/plain" => Output::Text,
            (Some(mime), None) => {
                let at = JsonPath::field("generationConfig").key("responseMimeType");
                return Err((at, format!("application/json or text/plain, not {}", api::shown(&mime))));
            }
            (None, None) => Output::Text,
        };
        if config.is_empty() {
            body.remove("generationConfig");
        }
    }
    if let Some(tools) = body.remove("tools") {
        let Value::Array(list) = tools else { return Err((JsonPath::field("tools"), "a list of tools".to_owned())) };
        let mut neutral = Vec::new();
        for tool in list {
            match tool.get("functionDeclarations").and_then(Value::as_array) {
                Some(functions) if tool.as_object().is_some_and(|t| t.len() == 1) => {
                    neutral.extend(functions.iter().cloned())
                }
                _ => neutral.push(tool),
            }
        }
        sent.call.set("tools", Value::Array(neutral));
    }
    if let Some(config) = body.remove("toolConfig") {
        let calling = config.get("functionCallingConfig").filter(|_| config.as_object().is_some_and(|c| c.len() == 1));
        let mode = calling.and_then(|c| c.get("mode")).and_then(Value::as_str);
        let names = calling.and_then(|c| c.get("allowedFunctionNames"));
        let keys = calling.and_then(Value::as_object).map_or(0, Map::len);
        let choice = match (mode, names, keys) {
            (Some("AUTO"), None, 1) => json!("auto"),
            (Some("NONE"), None, 1) => json!("none"),
            (Some("ANY"), None, 1) => json!("required"),
            (Some("ANY"), Some(Value::Array(names)), 2) if names.len() == 1 => json!({"name": names[0]}),
            _ => config,
        };
        sent.call.set("toolChoice", choice);
    }
    Ok(())
}

/// What the official SDKs send (tests/recordings/sdk): google-genai, for Python and
/// Node, puts the system instruction in a content with `"role": "user"`; the API reads
/// a system instruction's parts whatever its role says. That role, and no other, is
/// the same request.
pub(crate) fn normalize(body: &mut Value) {
    if let Some(Value::Object(instruction)) = body.get_mut("systemInstruction") {
        if instruction.get("role").and_then(Value::as_str) == Some("user") {
            instruction.remove("role");
        }
    }
}
