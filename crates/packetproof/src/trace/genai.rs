//! The GenAI calls among spans, read by the OpenTelemetry GenAI semantic conventions
//! (v1.41.0, Development status; the older forms instrumentations still send are read
//! too):
//!
//! - an inference span has `gen_ai.operation.name` `chat`, `generate_content` or
//!   `text_completion` (older spans without it: `gen_ai.system` with
//!   `gen_ai.request.model`); `gen_ai.request.model` and `gen_ai.request.max_tokens`;
//! - content, when captured: `gen_ai.system_instructions` (parts) and
//!   `gen_ai.input.messages` (messages of parts), as span attributes or on a
//!   `gen_ai.client.inference.operation.details` span event; before v1.37, span events
//!   `gen_ai.system.message` / `gen_ai.user.message` with a `content` attribute,
//!   `gen_ai.content.prompt` with `gen_ai.prompt` (a JSON list of `{role, content}`),
//!   and OpenLLMetry's flattened `gen_ai.prompt.{i}.role` / `.content` attributes.
//!
//! Every attribute is bounded ([`MAX_ATTRIBUTE_BYTES`]): a longer one is not read.

use super::otlp::{plain, KeyValue, Span};
use serde_json::Value;

/// The longest attribute value read (text or JSON); a longer one makes the call not judgeable.
pub(crate) const MAX_ATTRIBUTE_BYTES: usize = 4 * 1024 * 1024;

const INFERENCE: [&str; 3] = ["chat", "generate_content", "text_completion"];
const SYSTEM_ROLES: [&str; 2] = ["system", "developer"];

/// One model call, as its span recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub(crate) span: String,
    pub scope: String,
    pub(crate) trace_id: String,
    pub span_id: String,
    pub(crate) model: Option<String>,
    pub(crate) max_tokens: Option<u64>,
    pub(crate) content: Content,
}

impl Call {
    /// The model the call records (`gen_ai.request.model`), if any.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The trace the call belongs to (hex, as OTLP/JSON carries it).
    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }
}

/// What the span says the model received.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Content {
    /// The system text (all system parts, joined) and each other message as (role, text).
    Captured { system: String, messages: Vec<(String, String)> },
    /// No content attribute or event: capture was off.
    Missing,
    /// Content that cannot be read, and why.
    Unreadable(String),
}

/// The call a span records, if it is a GenAI inference span.
pub(crate) fn call(span: &Span) -> Option<Call> {
    let attr = |key: &str| find(&span.attributes, key);
    let operation = attr("gen_ai.operation.name").and_then(|v| v.as_str().map(str::to_owned));
    let inference = match &operation {
        Some(op) => INFERENCE.contains(&op.as_str()),
        None => attr("gen_ai.system").is_some() && attr("gen_ai.request.model").is_some(),
    };
    if !inference {
        return None;
    }
    Some(Call {
        span: span.name.clone(),
        scope: span.scope.clone(),
        trace_id: span.trace_id.clone(),
        span_id: span.span_id.clone(),
        model: attr("gen_ai.request.model").and_then(|v| v.as_str().map(str::to_owned)),
        max_tokens: attr("gen_ai.request.max_tokens").and_then(|v| v.as_u64()),
        content: content(span),
    })
}

/// The attribute `key`, as plain JSON (`None` when absent or past the bound, which
/// [`content`] reports).
fn find(attributes: &[KeyValue], key: &str) -> Option<Value> {
    attributes.iter().find(|kv| kv.key == key).map(|kv| plain(&kv.value)).filter(|v| size(v) <= MAX_ATTRIBUTE_BYTES)
}

fn size(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(size).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + size(v)).sum(),
        _ => 8,
    }
}

fn content(span: &Span) -> Content {
    if let Some(key) = oversized(&span.attributes).or_else(|| span.events.iter().find_map(|e| oversized(&e.attributes)))
    {
        return Content::Unreadable(format!("attribute {key} is longer than {MAX_ATTRIBUTE_BYTES} bytes"));
    }
    let details = span.events.iter().find(|e| e.name == "gen_ai.client.inference.operation.details");
    for attributes in std::iter::once(&span.attributes).chain(details.map(|e| &e.attributes)) {
        let system = find(attributes, "gen_ai.system_instructions");
        let input = find(attributes, "gen_ai.input.messages");
        if system.is_some() || input.is_some() {
            return structured(system.as_ref(), input.as_ref());
        }
    }
    legacy_events(span).or_else(|| flattened(&span.attributes)).unwrap_or(Content::Missing)
}

fn oversized(attributes: &[KeyValue]) -> Option<&str> {
    attributes.iter().find(|kv| size(&plain(&kv.value)) > MAX_ATTRIBUTE_BYTES).map(|kv| kv.key.as_str())
}

/// A JSON attribute may be recorded as a JSON string or structured.
fn json_of(value: &Value) -> Option<Value> {
    match value {
        Value::String(text) => serde_json::from_str(text).ok(),
        other => Some(other.clone()),
    }
}

/// v1.37+: system instructions as parts, input messages as `{role, parts}`.
fn structured(system: Option<&Value>, input: Option<&Value>) -> Content {
    let mut system_text = String::new();
    if let Some(value) = system {
        match json_of(value) {
            Some(Value::String(text)) => system_text.push_str(&text),
            Some(Value::Array(parts)) => system_text.push_str(&parts_text(&parts)),
            _ => return Content::Unreadable("gen_ai.system_instructions is not a JSON list of parts".into()),
        }
    }
    let mut messages = Vec::new();
    if let Some(value) = input {
        let Some(Value::Array(items)) = json_of(value) else {
            return Content::Unreadable("gen_ai.input.messages is not a JSON list of messages".into());
        };
        for item in &items {
            let role = item.get("role").and_then(Value::as_str).unwrap_or_default().to_owned();
            let text = match (item.get("parts"), item.get("content")) {
                (Some(Value::Array(parts)), _) => parts_text(parts),
                (_, Some(Value::String(text))) => text.clone(),
                _ => return Content::Unreadable("a message of gen_ai.input.messages has no parts".into()),
            };
            push_message(&mut system_text, &mut messages, role, text);
        }
    }
    Content::Captured { system: system_text, messages }
}

/// The text of `{type: "text", content}` parts, joined; any other part is marked, so
/// the call can match no packet (a packet's messages are text only).
fn parts_text(parts: &[Value]) -> String {
    parts
        .iter()
        .map(|part| match (part.get("type").and_then(Value::as_str), part.get("content")) {
            (Some("text") | None, Some(Value::String(text))) => text.clone(),
            (kind, _) => format!("\u{fffc}[{} part]", kind.unwrap_or("unknown")),
        })
        .collect()
}

fn push_message(system: &mut String, messages: &mut Vec<(String, String)>, role: String, text: String) {
    if SYSTEM_ROLES.contains(&role.as_str()) {
        system.push_str(&text);
    } else {
        messages.push((role, text));
    }
}

/// Before v1.37: span events per message, or one `gen_ai.content.prompt` event.
fn legacy_events(span: &Span) -> Option<Content> {
    let mut system = String::new();
    let mut messages = Vec::new();
    let mut found = false;
    for event in &span.events {
        let role = match event.name.as_str() {
            "gen_ai.system.message" => "system",
            "gen_ai.user.message" => "user",
            "gen_ai.assistant.message" => "assistant",
            "gen_ai.tool.message" => "tool",
            "gen_ai.content.prompt" => {
                let prompt = find(&event.attributes, "gen_ai.prompt")?;
                return Some(role_content_list(&prompt));
            }
            _ => continue,
        };
        found = true;
        let text = match find(&event.attributes, "content").as_ref().and_then(json_of) {
            Some(Value::Array(parts)) => parts_text(&parts),
            _ => find(&event.attributes, "content").and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default(),
        };
        push_message(&mut system, &mut messages, role.to_owned(), text);
    }
    found.then_some(Content::Captured { system, messages })
}

/// `[{role, content}]`, as a JSON string or structured.
fn role_content_list(value: &Value) -> Content {
    let Some(Value::Array(items)) = json_of(value) else {
        return Content::Unreadable("gen_ai.prompt is not a JSON list of messages".into());
    };
    let (mut system, mut messages) = (String::new(), Vec::new());
    for item in &items {
        let role = item.get("role").and_then(Value::as_str).unwrap_or_default().to_owned();
        let text = match item.get("content") {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(parts)) => parts_text(parts),
            _ => String::new(),
        };
        push_message(&mut system, &mut messages, role, text);
    }
    Content::Captured { system, messages }
}

/// OpenLLMetry's flattened attributes: `gen_ai.prompt.0.role`, `gen_ai.prompt.0.content`, …
fn flattened(attributes: &[KeyValue]) -> Option<Content> {
    let (mut system, mut messages) = (String::new(), Vec::new());
    let mut i = 0;
    while let Some(role) = find(attributes, &format!("gen_ai.prompt.{i}.role")) {
        let text = find(attributes, &format!("gen_ai.prompt.{i}.content"));
        let text = text.and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        push_message(&mut system, &mut messages, role.as_str().unwrap_or_default().to_owned(), text);
        i += 1;
    }
    (i > 0).then_some(Content::Captured { system, messages })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::otlp::Event;
    use serde_json::json;

    fn kv(key: &str, value: Value) -> KeyValue {
        let value = match value {
            Value::String(s) => json!({"stringValue": s}),
            Value::Number(n) => json!({"intValue": n.to_string()}),
            other => other,
        };
        KeyValue { key: key.into(), value }
    }

    fn span(attributes: Vec<KeyValue>, events: Vec<Event>) -> Span {
        Span { name: "chat m".into(), attributes, events, ..Span::default() }
    }

    fn captured(system: &str, user: &str) -> Content {
        Content::Captured { system: system.into(), messages: vec![("user".into(), user.into())] }
    }

    #[test]
    fn only_inference_spans_are_calls() {
        let chat =
            span(vec![kv("gen_ai.operation.name", json!("chat")), kv("gen_ai.request.max_tokens", json!(5))], vec![]);
        let call = call(&chat).unwrap();
        assert_eq!((call.max_tokens, call.content), (Some(5), Content::Missing));
        assert!(super::call(&span(vec![kv("gen_ai.operation.name", json!("embeddings"))], vec![])).is_none());
        assert!(super::call(&span(vec![kv("http.method", json!("POST"))], vec![])).is_none());
        let legacy = span(vec![kv("gen_ai.system", json!("openai")), kv("gen_ai.request.model", json!("m"))], vec![]);
        assert_eq!(super::call(&legacy).unwrap().model.as_deref(), Some("m"));
    }

    #[test]
    fn every_content_form_gives_the_same_texts() {
        let op = || kv("gen_ai.operation.name", json!("chat"));
        let attributes = span(
            vec![
                op(),
                kv("gen_ai.system_instructions", json!(r#"[{"type":"text","content":"S"}]"#)),
                kv("gen_ai.input.messages", json!(r#"[{"role":"user","parts":[{"type":"text","content":"U"}]}]"#)),
            ],
            vec![],
        );
        let in_messages = span(
            vec![
                op(),
                kv(
                    "gen_ai.input.messages",
                    json!(
                        r#"[{"role":"system","parts":[{"content":"S","type":"text"}]},{"role":"user","parts":[{"content":"U","type":"text"}]}]"#
                    ),
                ),
            ],
            vec![],
        );
        let details = span(
            vec![op()],
            vec![Event {
                name: "gen_ai.client.inference.operation.details".into(),
                attributes: vec![kv(
                    "gen_ai.input.messages",
                    json!(r#"[{"role":"system","content":"S"},{"role":"user","content":"U"}]"#),
                )],
            }],
        );
        let events = span(
            vec![op()],
            vec![
                Event { name: "gen_ai.system.message".into(), attributes: vec![kv("content", json!("S"))] },
                Event { name: "gen_ai.user.message".into(), attributes: vec![kv("content", json!("U"))] },
            ],
        );
        let prompt = span(
            vec![op()],
            vec![Event {
                name: "gen_ai.content.prompt".into(),
                attributes: vec![kv(
                    "gen_ai.prompt",
                    json!(r#"[{"role":"system","content":"S"},{"role":"user","content":"U"}]"#),
                )],
            }],
        );
        let flat = span(
            vec![
                op(),
                kv("gen_ai.prompt.0.role", json!("system")),
                kv("gen_ai.prompt.0.content", json!("S")),
                kv("gen_ai.prompt.1.role", json!("user")),
                kv("gen_ai.prompt.1.content", json!("U")),
            ],
            vec![],
        );
        for (form, s) in [
            ("attributes", attributes),
            ("system in messages", in_messages),
            ("details event", details),
            ("message events", events),
            ("prompt event", prompt),
            ("flattened", flat),
        ] {
            assert_eq!(call(&s).unwrap().content, captured("S", "U"), "{form}");
        }
    }

    #[test]
    fn oversized_or_malformed_content_is_unreadable_and_non_text_parts_are_marked() {
        let big = "x".repeat(MAX_ATTRIBUTE_BYTES + 1);
        let s = span(vec![kv("gen_ai.operation.name", json!("chat")), kv("gen_ai.input.messages", json!(big))], vec![]);
        assert!(
            matches!(call(&s).unwrap().content, Content::Unreadable(m) if m.contains("gen_ai.input.messages is longer"))
        );
        let s =
            span(vec![kv("gen_ai.operation.name", json!("chat")), kv("gen_ai.input.messages", json!("{oops"))], vec![]);
        assert!(matches!(call(&s).unwrap().content, Content::Unreadable(_)));
        let image = json!(
            r#"[{"role":"user","parts":[{"type":"text","content":"U"},{"type":"blob","mime_type":"image/png"}]}]"#
        );
        let s = span(vec![kv("gen_ai.operation.name", json!("chat")), kv("gen_ai.input.messages", image)], vec![]);
        let Content::Captured { messages, .. } = call(&s).unwrap().content else { panic!() };
        assert_eq!(messages[0].1, "U\u{fffc}[blob part]");
    }
}
