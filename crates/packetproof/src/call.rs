//! The rest of the call: what an app sends besides its messages, model, budget and
//! output format, named once for every provider API. A packet carries it in its `call`
//! member (bound by the checksum like every field; absent, the call sends none of it);
//! each API's spec (`crate::wire::api`) writes it into a request body and reads it back,
//! and production judges each field a call sends against the reviewed packets.
//!
//! Tools are `{name, description?, parameters?, strict?}` (a function the model may
//! call, its parameters a JSON Schema); any other tool object (a provider's built-in
//! tool: `{"type": "web_search"}`) is kept as the API writes it. A tool choice is
//! `"auto"`, `"none"`, `"required"`, `{"name": …}` (that function), or a provider's own
//! object.

use crate::report::JsonPath;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The packet member that carries the call.
pub const MEMBER: &str = "call";

/// What a field's value must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Number,
    Integer,
    Text,
    Bool,
    /// A list of strings (stop sequences).
    Texts,
    Object,
    /// A list of tools.
    Tools,
    /// A tool choice.
    Choice,
    /// Any JSON value (a provider's own setting object).
    Any,
}

/// One field of a call.
#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    /// What it is, for the docs and messages.
    pub what: &'static str,
}

/// Every field a call may carry, in the order messages list them.
pub const FIELDS: &[Field] = &[
    Field { name: "tools", kind: Kind::Tools, what: "the tools the model may call" },
    Field { name: "toolChoice", kind: Kind::Choice, what: "which tool the model must call, if any" },
    Field { name: "parallelToolCalls", kind: Kind::Bool, what: "whether the model may call several tools at once" },
    Field {
        name: MAX_TOKENS_OMITTED,
        kind: Kind::Bool,
        what: "true: the call sends no output budget (the provider's default applies; maxTokens records it)",
    },
    Field {
        name: "strictOutput",
        kind: Kind::Bool,
        what: "whether OpenAI enforces the output schema (strict mode); absent: strict when the schema allows it",
    },
    Field { name: "temperature", kind: Kind::Number, what: "sampling temperature" },
    Field { name: "topP", kind: Kind::Number, what: "nucleus sampling mass" },
    Field { name: "topK", kind: Kind::Integer, what: "top-k sampling" },
    Field { name: "stop", kind: Kind::Texts, what: "stop sequences" },
    Field { name: "seed", kind: Kind::Integer, what: "sampling seed" },
    Field { name: "n", kind: Kind::Integer, what: "number of choices" },
    Field { name: "presencePenalty", kind: Kind::Number, what: "presence penalty" },
    Field { name: "frequencyPenalty", kind: Kind::Number, what: "frequency penalty" },
    Field { name: "logitBias", kind: Kind::Object, what: "token logit bias" },
    Field { name: "logprobs", kind: Kind::Bool, what: "whether log probabilities are returned" },
    Field { name: "topLogprobs", kind: Kind::Integer, what: "how many log probabilities are returned" },
    Field { name: "reasoningEffort", kind: Kind::Text, what: "reasoning effort" },
    Field { name: "reasoningSummary", kind: Kind::Text, what: "reasoning summary" },
    Field { name: "thinkingBudget", kind: Kind::Integer, what: "extended thinking budget in tokens" },
    Field { name: "verbosity", kind: Kind::Text, what: "answer verbosity" },
    Field { name: "serviceTier", kind: Kind::Text, what: "service tier" },
    Field { name: "speed", kind: Kind::Text, what: "inference speed mode" },
    Field { name: "inferenceGeo", kind: Kind::Text, what: "where the model runs" },
    Field { name: "metadata", kind: Kind::Object, what: "request metadata" },
    Field { name: "user", kind: Kind::Text, what: "end-user identifier" },
    Field { name: "safetyIdentifier", kind: Kind::Text, what: "end-user safety identifier" },
    Field { name: "promptCacheKey", kind: Kind::Text, what: "prompt cache key" },
    Field { name: "cacheControl", kind: Kind::Object, what: "prompt caching of the system prompt" },
    Field { name: "promptCaching", kind: Kind::Object, what: "automatic prompt caching of the request" },
    Field { name: "container", kind: Kind::Any, what: "the code-execution container the call reuses" },
    Field { name: "diagnostics", kind: Kind::Any, what: "diagnostics the response carries" },
    Field { name: "userProfileId", kind: Kind::Text, what: "the end user's profile" },
    Field { name: "workspaceId", kind: Kind::Text, what: "the workspace the call is billed to" },
    Field { name: "store", kind: Kind::Bool, what: "whether the provider stores the call" },
    Field { name: "streamOptions", kind: Kind::Object, what: "streaming options" },
    Field { name: "truncation", kind: Kind::Text, what: "how an overlong input is truncated" },
    Field { name: "include", kind: Kind::Texts, what: "extra output the response includes" },
    Field { name: "maxToolCalls", kind: Kind::Integer, what: "the most built-in tool calls" },
    Field { name: "safetySettings", kind: Kind::Any, what: "content safety thresholds" },
    Field { name: "labels", kind: Kind::Object, what: "billing labels" },
    Field { name: "guardrail", kind: Kind::Object, what: "guardrail configuration" },
    Field { name: "performance", kind: Kind::Object, what: "latency configuration" },
    Field { name: "modelFields", kind: Kind::Object, what: "model-specific request fields" },
];

/// The field of a call that sends no output budget.
pub const MAX_TOKENS_OMITTED: &str = "maxTokensOmitted";

/// The field of a name.
pub fn field(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name)
}

/// The fields a call sends, by name (ordered as [`FIELDS`] when listed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Call {
    fields: BTreeMap<&'static str, Value>,
}

impl Call {
    /// The packet's call: its `call` member, each field of its kind; absent, none.
    pub fn of_packet(packet: &Map<String, Value>) -> Result<Call, (JsonPath, String)> {
        match packet.get(MEMBER) {
            None => Ok(Call::default()),
            Some(value) => Call::from_value(value, JsonPath::field(MEMBER)),
        }
    }

    /// A call written as an object of fields.
    pub fn from_value(value: &Value, at: JsonPath) -> Result<Call, (JsonPath, String)> {
        let Value::Object(map) = value else {
            return Err((at, "an object of call fields".to_owned()));
        };
        let mut call = Call::default();
        for (name, value) in map {
            let here = at.clone().key(name);
            let Some(field) = field(name) else {
                let names: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
                return Err((here, format!("a call field, one of {names:?}")));
            };
            if let Some(expected) = kind_problem(field.kind, value) {
                return Err((here, expected));
            }
            call.fields.insert(field.name, value.clone());
        }
        Ok(call)
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.fields.get(name)
    }

    /// Set a field (a name of [`FIELDS`]; any other is a mistake of the caller's).
    pub fn set(&mut self, name: &str, value: Value) {
        let field = field(name).unwrap_or_else(|| panic!("{name:?} is not a call field"));
        self.fields.insert(field.name, value);
    }

    /// Whether the call sends no output budget (`maxTokensOmitted: true`).
    pub fn omits_max_tokens(&self) -> bool {
        self.get(MAX_TOKENS_OMITTED) == Some(&Value::Bool(true))
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Each field sent, in the order of [`FIELDS`].
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        FIELDS.iter().filter_map(|f| self.fields.get(f.name).map(|v| (f.name, v)))
    }

    /// The call as its packet member writes it.
    pub fn to_value(&self) -> Value {
        Value::Object(self.iter().map(|(name, value)| (name.to_owned(), value.clone())).collect())
    }
}

/// What `value` should be for `kind`, when it is not.
fn kind_problem(kind: Kind, value: &Value) -> Option<String> {
    let fine = match kind {
        Kind::Number => value.is_number(),
        Kind::Integer => value.is_i64() || value.is_u64(),
        Kind::Text => value.is_string(),
        Kind::Bool => value.is_boolean(),
        Kind::Texts => value.as_array().is_some_and(|items| items.iter().all(Value::is_string)),
        Kind::Object => value.is_object(),
        Kind::Tools => return tools_problem(value),
        Kind::Choice => {
            matches!(value, Value::String(s) if ["auto", "none", "required"].contains(&s.as_str())) || value.is_object()
        }
        Kind::Any => true,
    };
    (!fine).then(|| {
        match kind {
            Kind::Number => "a number",
            Kind::Integer => "an integer",
            Kind::Text => "a string",
            Kind::Bool => "true or false",
            Kind::Texts => "a list of strings",
            Kind::Object => "an object",
            Kind::Choice => "\"auto\", \"none\", \"required\" or an object ({\"name\": …} for one function)",
            Kind::Tools | Kind::Any => unreachable!("judged above"),
        }
        .to_owned()
    })
}

/// Tools: a list of objects; a function tool (one with a `name` and no `type`) names
/// itself with a string, and its parameters are a JSON Schema object.
fn tools_problem(value: &Value) -> Option<String> {
    let Value::Array(tools) = value else { return Some("a list of tools".to_owned()) };
    for (i, tool) in tools.iter().enumerate() {
        let Value::Object(tool) = tool else { return Some(format!("a tool object at [{i}]")) };
        if is_function(tool) {
            if !tool.get("name").is_some_and(Value::is_string) {
                return Some(format!("a tool name (a string) at [{i}].name"));
            }
            if tool.get("parameters").is_some_and(|p| !p.is_object()) {
                return Some(format!("a JSON Schema object at [{i}].parameters"));
            }
        }
    }
    None
}

/// A function tool in the neutral form: `name` and no `type`.
pub fn is_function(tool: &Map<String, Value>) -> bool {
    tool.contains_key("name") && !tool.contains_key("type")
}

/// Whether two values are the same setting: numbers by value (`0` and `0.0`), the rest
/// as JSON.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_packet_call_is_read_field_by_field_and_refused_by_path() {
        let packet = json!({"call": {"temperature": 0, "tools": [{"name": "f", "parameters": {"type": "object"}}],
            "toolChoice": "required"}});
        let call = Call::of_packet(packet.as_object().unwrap()).unwrap();
        let names: Vec<&str> = call.iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["tools", "toolChoice", "temperature"]);
        assert_eq!(call.to_value(), packet["call"]);
        assert!(Call::of_packet(&Map::new()).unwrap().is_empty());
        let refused = |call: Value| {
            let (at, expected) = Call::of_packet(json!({"call": call}).as_object().unwrap()).unwrap_err();
            format!("{at}: {expected}")
        };
        assert!(refused(json!({"temprature": 1})).starts_with("$.call.temprature: a call field, one of"));
        assert_eq!(refused(json!({"temperature": "0.9"})), "$.call.temperature: a number");
        assert_eq!(refused(json!({"seed": 1.5})), "$.call.seed: an integer");
        assert_eq!(refused(json!({"tools": [{"name": 5}]})), "$.call.tools: a tool name (a string) at [0].name");
        assert_eq!(refused(json!({"toolChoice": "any"})).split(':').next(), Some("$.call.toolChoice"));
        assert_eq!(refused(json!([])), "$.call: an object of call fields");
    }

    #[test]
    fn settings_compare_numbers_by_value() {
        assert!(same(&json!({"a": [0, 1.0]}), &json!({"a": [0.0, 1]})));
        assert!(!same(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!same(&json!(0.9), &json!(0)));
    }
}
