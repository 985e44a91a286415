//! One spec per provider API: everything packetproof knows of an API is its [`Spec`],
//! in its own module, and [`SPECS`] lists them. A spec knows every field both ways: the
//! body built from a packet's material ([`build`]), and a body read back into the
//! material it sends ([`read`]); a field no spec names is reported, never ignored. The
//! `--api` names, the endpoints, `gen_ai.provider.name` and the packet provider an API
//! serves all come from here.

use crate::call::{self, Call};
use crate::report::JsonPath;
use crate::{Error, Result};
use serde_json::{Map, Value};

/// What an API is: see the module's documentation.
#[derive(Debug)]
pub(crate) struct Spec {
    /// As `--api` takes it.
    pub(crate) name: &'static str,
    /// The packet provider whose calls go out through it.
    pub(crate) provider: &'static str,
    /// What `gen_ai.provider.name` says of its calls.
    pub(crate) telemetry: &'static str,
    /// The API's own origin, which `--base-url` replaces.
    pub(crate) origin: &'static str,
    /// Its path after the origin, as messages show it.
    pub(crate) path: &'static str,
    /// Where a request went: `None` when the path is not this API's; else the model
    /// the URL names (for an API that names it there) and whether it streams.
    pub(crate) route: fn(&str) -> Option<Route>,
    /// What the value at a body path is, for messages (longest prefix wins).
    pub(crate) labels: &'static [(&'static str, &'static str)],
    /// Each call field the API takes at a dotted body path (`generationConfig.topP`).
    pub(crate) fields: &'static [(&'static str, &'static str)],
    /// The call fields `put_tools` and `take` write and read beside those.
    pub(crate) also: &'static [&'static str],
    /// Where the body's output budget is (taken out when the call omits it).
    pub(crate) budget: &'static str,
    /// The body for the material's messages, model, budget and output format.
    pub(crate) build: fn(&Material) -> Value,
    /// Write the call's tools and tool choice (and anything else not at one path).
    pub(crate) put_tools: fn(&Call, &Material, &mut Map<String, Value>),
    /// Take what the body sends of messages, model, budget, output, tools and tool
    /// choice out of it; what is left is read by the generic part.
    pub(crate) take: fn(&mut Map<String, Value>, &mut Sent) -> Result<(), Problem>,
    /// Equivalent forms rewritten to the built ones, for the path-by-path check.
    pub(crate) normalize: fn(&mut Value),
}

/// Where a request went, as its URL says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    pub(crate) model: Option<String>,
    pub(crate) streamed: bool,
    /// Where the API's own path begins in the path given (after a proxy's prefix).
    pub(crate) at: usize,
}

impl Route {
    /// A fixed path: the route of a path that ends with `own`, if it does.
    pub(crate) fn ending(path: &str, own: &str) -> Option<Route> {
        let path = path.trim_end_matches('/');
        path.ends_with(own).then(|| Route { model: None, streamed: false, at: path.len() - own.len() })
    }
}

/// A body that cannot be read: where, and what was expected there.
pub(crate) type Problem = (JsonPath, String);

/// The packet material a request carries, borrowed from the packet.
#[derive(Debug)]
pub(crate) struct Material<'a> {
    pub(crate) model: &'a str,
    /// As a JavaScript client sends it: `6.4e4` in a packet is the integer 64000.
    pub(crate) max_tokens: Value,
    pub(crate) system: &'a str,
    pub(crate) user: &'a str,
    /// `outputSchema` ({name, description?, schema}); absent for text-JSON providers
    /// and for plain-text answers.
    pub(crate) schema: Option<&'a Map<String, Value>>,
    /// Whether the answer is asked for as JSON: a schema, or (text-JSON) the suffix
    /// appended to the user message. Neither: a plain-text call, whose body carries no
    /// output format at all.
    pub(crate) json: bool,
    /// What the call sends besides: the packet's `call` member.
    pub(crate) call: Call,
}

impl<'a> Material<'a> {
    /// Read the material from a packet; `file` names the packet in errors.
    pub(crate) fn of(packet: &'a Map<String, Value>, file: &str) -> Result<Material<'a>> {
        let text = |key: &str| {
            packet.get(key).and_then(Value::as_str).ok_or_else(|| Error::shape(file, JsonPath::field(key), "a string"))
        };
        // Whole by value, as packet::contract holds it (`64000.0` and `6.4e4` are 64000).
        let max_tokens = packet
            .get("maxTokens")
            .and_then(Value::as_f64)
            .filter(|t| *t >= 1.0 && t.fract() == 0.0 && *t <= 9_007_199_254_740_991.0)
            .map(|t| Value::from(t as u64))
            .ok_or_else(|| Error::shape(file, JsonPath::field("maxTokens"), "a positive integer"))?;
        let schema = match packet.get("outputSchema") {
            None => None,
            Some(Value::Object(schema)) if schema.get("name").is_some_and(Value::is_string) => Some(schema),
            Some(_) => return Err(Error::shape(file, JsonPath::field("outputSchema"), "an object with a string name")),
        };
        let user = text("effectiveUserMessage")?;
        let json = schema.is_some() || packet.get("userMessage").and_then(Value::as_str) != Some(user);
        let call = Call::of_packet(packet).map_err(|(at, expected)| Error::shape(file, at, expected))?;
        Ok(Material { model: text("model")?, max_tokens, system: text("systemPrompt")?, user, schema, json, call })
    }

    pub(crate) fn schema_name(&self) -> Value {
        self.schema.and_then(|s| s.get("name")).cloned().unwrap_or(Value::Null)
    }
}

/// The answer's format as a call asks for it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Output {
    /// Plain text: no format at all.
    Text,
    /// JSON without a schema (Gemini's `responseMimeType`, OpenAI's `json_object`).
    Json,
    /// A schema `{name, description?, schema}`.
    Schema(Value),
}

impl Output {
    /// As a call record writes it: `"text"`, `"json"`, or the schema.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Output::Text => Value::from("text"),
            Output::Json => Value::from("json"),
            Output::Schema(schema) => schema.clone(),
        }
    }

    /// As the packet's material asks for it.
    #[cfg(test)]
    pub(crate) fn of(m: &Material) -> Output {
        match (m.schema, m.json) {
            (Some(schema), _) => Output::Schema(Value::Object(schema.clone())),
            (None, true) => Output::Json,
            (None, false) => Output::Text,
        }
    }
}

/// Everything a request body sends, read back.
#[derive(Debug, Clone)]
pub(crate) struct Sent {
    pub(crate) system: Option<String>,
    /// Each message after the system text: its role and its text.
    pub(crate) messages: Vec<(String, String)>,
    pub(crate) model: Option<String>,
    /// As sent: a budget that is no number is kept, to be refused by name.
    pub(crate) max_tokens: Option<Value>,
    pub(crate) output: Output,
    pub(crate) call: Call,
    /// What the spec does not know, or what contradicts itself: each path, and what
    /// is wrong there.
    pub(crate) unknown: Vec<(JsonPath, String)>,
    pub(crate) streamed: bool,
}

impl Sent {
    fn new() -> Sent {
        Sent {
            system: None,
            messages: Vec::new(),
            model: None,
            max_tokens: None,
            output: Output::Text,
            call: Call::default(),
            unknown: Vec::new(),
            streamed: false,
        }
    }
}

/// The whole body for the packet's material in `spec`'s format: the API's own part,
/// then every call field at its path, then tools.
pub(crate) fn build(spec: &Spec, m: &Material) -> Value {
    let mut body = (spec.build)(m);
    let Value::Object(map) = &mut body else { return body };
    for (name, value) in m.call.iter() {
        if let Some((_, path)) = spec.fields.iter().find(|(field, _)| *field == name) {
            put(map, path, value.clone());
        }
    }
    (spec.put_tools)(&m.call, m, map);
    if m.call.omits_max_tokens() {
        take(map, spec.budget);
    }
    body
}

/// A reviewed call and output format as `spec`'s body sends them, read back: what a
/// body the spec read is compared with. In Anthropic's and Bedrock's format a schema is
/// sent as the forced last tool, so a call forcing its own last tool and a schema
/// answer are one body; read the same way on both sides, they compare as sent.
pub(crate) fn as_sent(spec: &Spec, call: &Call, output: &Value) -> (Call, Value) {
    let schema = output.as_object().filter(|s| s.get("name").is_some_and(Value::is_string));
    let material = Material {
        model: "",
        max_tokens: Value::from(1),
        system: "",
        user: "",
        schema,
        json: schema.is_some() || output == "json",
        call: call.clone(),
    };
    match read(spec, &build(spec, &material), None) {
        Ok(sent) => (sent.call, sent.output.to_value()),
        Err(_) => (call.clone(), output.clone()),
    }
}

/// The fields of a call the API has no place for (a packet for another API's provider).
pub(crate) fn unplaceable(spec: &Spec, call: &Call) -> Vec<&'static str> {
    call.iter()
        .map(|(name, _)| name)
        .filter(|name| {
            *name != call::MAX_TOKENS_OMITTED
                && !spec.also.contains(name)
                && !spec.fields.iter().any(|(f, _)| f == name)
        })
        .collect()
}

/// Read what `body` sends (Gemini and Bedrock name the model in the URL).
pub(crate) fn read(spec: &Spec, body: &Value, url: Option<&str>) -> Result<Sent, Problem> {
    let Value::Object(map) = body else { return Err((JsonPath::root(), "a JSON object".to_owned())) };
    let mut rest = map.clone();
    let mut sent = Sent::new();
    if let Some(stream) = rest.remove("stream") {
        match stream {
            Value::Bool(streamed) => sent.streamed = streamed,
            other => {
                sent.unknown.push((JsonPath::field("stream"), format!("is {}; expected true or false", shown(&other))))
            }
        }
    }
    if let Some(route) = url.and_then(|url| (spec.route)(url.split(['?', '#']).next().unwrap_or(url))) {
        sent.streamed |= route.streamed;
        sent.model = route.model;
    }
    (spec.take)(&mut rest, &mut sent)?;
    if sent.max_tokens.is_none() {
        sent.call.set(call::MAX_TOKENS_OMITTED, Value::Bool(true));
    }
    for (name, path) in spec.fields {
        // Kept as sent, whatever its type: the comparison names a value of the wrong kind.
        if let Some(value) = take(&mut rest, path) {
            sent.call.set(name, value);
        }
    }
    let containers: Vec<&str> = spec.fields.iter().flat_map(|(_, path)| prefixes(path)).collect();
    leftovers(&rest, &JsonPath::root(), "", &containers, &mut sent.unknown);
    Ok(sent)
}

/// Each proper prefix of a dotted path: `a.b.c` gives `a` and `a.b`.
fn prefixes(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('.').map(move |(i, _)| &path[..i])
}

/// Take the value at a dotted path out of `map`; an object emptied by it goes too.
pub(crate) fn take(map: &mut Map<String, Value>, path: &str) -> Option<Value> {
    match path.split_once('.') {
        None => map.remove(path),
        Some((head, tail)) => {
            let inner = map.get_mut(head)?.as_object_mut()?;
            let value = take(inner, tail);
            if inner.is_empty() {
                map.remove(head);
            }
            value
        }
    }
}

/// Put `value` at a dotted path of `map`, making the objects on the way.
pub(crate) fn put(map: &mut Map<String, Value>, path: &str, value: Value) {
    match path.split_once('.') {
        None => {
            map.insert(path.to_owned(), value);
        }
        Some((head, tail)) => {
            let inner = map.entry(head).or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(inner) = inner {
                put(inner, tail, value);
            }
        }
    }
}

/// Every member left in `map`: a container the spec reads into is looked inside.
fn leftovers(
    map: &Map<String, Value>,
    at: &JsonPath,
    prefix: &str,
    containers: &[&str],
    out: &mut Vec<(JsonPath, String)>,
) {
    for (key, value) in map {
        let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
        match value {
            Value::Object(inner) if containers.contains(&path.as_str()) => {
                leftovers(inner, &at.clone().key(key), &path, containers, out)
            }
            _ => out.push((at.clone().key(key), unknown(value))),
        }
    }
}

/// The message on a member no spec reads.
pub(crate) fn unknown(value: &Value) -> String {
    format!("{} is a field packetproof does not read in this API: no review covers it", shown(value))
}

/// A value for a message: JSON, cut short.
pub(crate) fn shown(value: &Value) -> String {
    super::diff::show(value)
}

/// Take `key` out of `map` and read it as text: a string, or text parts (`{"text": …}`
/// or `{"type": "text"|"input_text", "text": …}`) joined as sent. A part's other members
/// are reported as unknown.
pub(crate) fn take_text(
    map: &mut Map<String, Value>,
    key: &str,
    at: JsonPath,
    unknown: &mut Vec<(JsonPath, String)>,
) -> Result<Option<String>, Problem> {
    match map.remove(key) {
        None => Ok(None),
        Some(value) => text(&value, at, unknown).map(Some),
    }
}

/// See [`take_text`].
pub(crate) fn text(value: &Value, at: JsonPath, unknown: &mut Vec<(JsonPath, String)>) -> Result<String, Problem> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Array(parts) => {
            let mut whole = String::new();
            for (i, part) in parts.iter().enumerate() {
                let here = at.clone().index(i);
                let Value::Object(part) = part else { return Err((here, "a text part".to_owned())) };
                let kind = part.get("type").and_then(Value::as_str).unwrap_or("text");
                match (kind, part.get("text").and_then(Value::as_str)) {
                    ("text" | "input_text", Some(text)) => whole.push_str(text),
                    _ => return Err((here, "a text part (only text is judged)".to_owned())),
                }
                for (key, value) in part.iter().filter(|(k, _)| !["type", "text"].contains(&k.as_str())) {
                    unknown.push((here.clone().key(key), self::unknown(value)));
                }
            }
            Ok(whole)
        }
        _ => Err((at, "text: a string or a list of text parts".to_owned())),
    }
}

/// Messages `[{role, <content key>}]` taken out of `map[key]`: each role (`model` is
/// `assistant`) and text; any other member of a message is reported as unknown.
pub(crate) fn take_messages(
    map: &mut Map<String, Value>,
    key: &str,
    content_key: &str,
    unknown: &mut Vec<(JsonPath, String)>,
) -> Result<Vec<(String, String)>, Problem> {
    let at = JsonPath::field(key);
    let Some(Value::Array(list)) = map.remove(key) else { return Err((at, "a list of messages".to_owned())) };
    let mut out = Vec::new();
    for (i, message) in list.iter().enumerate() {
        let here = at.clone().index(i);
        let Value::Object(message) = message else { return Err((here, "a message object".to_owned())) };
        let role = message.get("role").and_then(Value::as_str).unwrap_or("user");
        let role = if role == "model" { "assistant" } else { role };
        let content =
            message.get(content_key).ok_or((here.clone().key(content_key), "the message's text".to_owned()))?;
        let content = match content {
            Value::Object(parts) if parts.contains_key("parts") => &parts["parts"],
            other => other,
        };
        out.push((role.to_owned(), text(content, here.clone().key(content_key), unknown)?));
        for (k, value) in message.iter().filter(|(k, _)| !["role", content_key].contains(&k.as_str())) {
            // The Responses API's `type: "message"` says what the item is.
            if !(k == "type" && value == "message") {
                unknown.push((here.clone().key(k), self::unknown(value)));
            }
        }
    }
    Ok(out)
}

/// Neutral function tools from an API's tool list: `read` gives the neutral tool of an
/// entry, or `None` for a provider's own tool, kept as written.
pub(crate) fn tools_in(list: Value, read: impl Fn(&Map<String, Value>) -> Option<Value>) -> Value {
    let Value::Array(items) = list else { return list };
    Value::Array(
        items
            .into_iter()
            .map(|item| match item.as_object().and_then(&read) {
                Some(neutral) => neutral,
                None => item,
            })
            .collect(),
    )
}

/// Each neutral tool of a call: a function's `(name, description, parameters, rest)`,
/// or a provider's own tool as written.
pub(crate) enum Tool<'a> {
    Function(&'a Map<String, Value>),
    Own(&'a Value),
}

pub(crate) fn tools_of(call: &Call) -> Vec<Tool<'_>> {
    let Some(Value::Array(tools)) = call.get("tools") else { return Vec::new() };
    tools
        .iter()
        .map(|tool| match tool.as_object().filter(|t| call::is_function(t)) {
            Some(function) => Tool::Function(function),
            None => Tool::Own(tool),
        })
        .collect()
}

/// A neutral function tool renamed: `parameters` under `params_key`, the rest as is.
pub(crate) fn function_as(tool: &Map<String, Value>, params_key: &str) -> Map<String, Value> {
    tool.iter().map(|(k, v)| (if k == "parameters" { params_key.to_owned() } else { k.clone() }, v.clone())).collect()
}

/// The neutral function of an API's `{name, <params_key>, …}`.
pub(crate) fn function_from(tool: &Map<String, Value>, params_key: &str) -> Map<String, Value> {
    tool.iter().map(|(k, v)| (if k == params_key { "parameters".to_owned() } else { k.clone() }, v.clone())).collect()
}

#[cfg(test)]
#[path = "api_tests.rs"]
mod tests;
