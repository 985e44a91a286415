//! What each instrumentation convention records of a model call, one module each:
//!
//! - [`semconv`]: the OpenTelemetry GenAI semantic conventions (v1.37+, Development
//!   status: `gen_ai.operation.name`, `gen_ai.system_instructions`, `gen_ai.input.messages`,
//!   the `gen_ai.client.inference.operation.details` event, with or without an operation
//!   name); also what LiteLLM, Logfire's default (semconv 2) and the anthropic SDK write;
//! - [`events`]: one event per message (`gen_ai.system.message`, `gen_ai.user.message`, …)
//!   as span events or log records (`body.content`), and `gen_ai.content.prompt`;
//! - [`openllmetry`]: flattened `gen_ai.prompt.{i}.role` / `.content`;
//! - [`openinference`]: `llm.input_messages.{i}.message.*`, `llm.model_name`,
//!   `llm.invocation_parameters`;
//! - [`vercel`]: the Vercel AI SDK's `ai.prompt.messages`, `ai.model.id`, `ai.settings.*`;
//! - [`logfire`]: Logfire's `version=1` `request_data` (and its stream summary, which
//!   repeats a call recorded by its own span);
//! - [`declared`]: what a family's entry in [`table`] declares (its calls, where their
//!   text is and in what shape), for the families no module above reads whole (Langfuse's
//!   generations, LangSmith, Haystack, OpenInference's Anthropic system text).
//!
//! A span that names a kind other than a model call (an agent, a loop cycle, a tool, a
//! chain, a pipeline) is context: what it holds of the messages is not a call's.
//!
//! Each reads one record ([`Record`]) through an index of its attributes ([`Attrs`]:
//! one hash per attribute when there are many, so reading is linear in the record) and adds what it found
//! to a [`Reading`]: whether the record is a call, each model and max-tokens value with
//! where it was read, and the input messages as one or more pieces of evidence.

mod declared;
mod events;
mod logfire;
mod mlflow;
mod openinference;
mod openllmetry;
mod semconv;
pub(crate) mod settings;
pub(crate) mod table;
mod vercel;

pub(crate) use table::Library;

use super::genai::{Message, MAX_ATTRIBUTE_BYTES};
use super::record::Record;
use super::value::{self, Json};
use serde_json::Value;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Display;

/// Where a value was read: mostly an attribute's name, never copied per call.
pub(crate) type Source = std::borrow::Cow<'static, str>;

/// A value and where it was read (`gen_ai.request.model`, `llm.invocation_parameters`, …).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Said {
    pub(crate) source: Source,
    pub(crate) value: Value,
}

/// Content that cannot be compared, and why: not parsed, conflicting within itself (a
/// duplicate JSON key), or recorded without its text (content capture off: the message's
/// parts are there, their content is not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unread {
    Unparsed(String),
    Conflict(String),
    Withheld(String),
}

impl Unread {
    pub(crate) fn why(&self) -> &str {
        match self {
            Unread::Unparsed(why) | Unread::Conflict(why) | Unread::Withheld(why) => why,
        }
    }
}

/// Evidence of a call's input messages.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    /// Every message, from one source.
    Whole { source: Source, messages: Result<Vec<Message>, Unread> },
    /// One message of a source that records one per event, in order.
    One { source: Source, message: Result<Message, Unread> },
    /// The system instructions alone, recorded apart from the messages (Node's Responses
    /// span: its messages are in the details event).
    System { source: Source, message: Result<Message, Unread> },
}

/// What one record says about a call.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    /// The record is a model call (a span or an inference-details event).
    pub(crate) call: bool,
    /// The record repeats a call recorded elsewhere (Logfire's stream summary): not read.
    pub(crate) repeat: bool,
    pub(crate) model: Vec<Said>,
    pub(crate) max_tokens: Vec<Said>,
    /// The call's other fields (`crate::call`) and its output format, by field name.
    pub(crate) settings: Vec<(&'static str, Said)>,
    /// The record holds the whole call (a request body of this API): what it does not
    /// send, the call does not send.
    pub(crate) whole: Option<&'static str>,
    pub(crate) content: Vec<Piece>,
    /// Evidence that contradicts itself within the record (an attribute twice).
    pub(crate) conflicts: Vec<String>,
    /// How the record was read where it is not as sent (a message recorded twice).
    pub(crate) notes: Vec<String>,
    pub(crate) library: Option<Library>,
    /// What the instrumentation never records of the call's input (its family says).
    pub(crate) unrecorded: Option<&'static str>,
}

impl Reading {
    /// Whether the record says anything about a call.
    pub(crate) fn is_evidence(&self) -> bool {
        self.call || !self.content.is_empty()
    }
}

/// Read a record by every convention.
pub(crate) fn read(record: &Record) -> Reading {
    read_by(table::FAMILIES, record)
}

/// Read a record by every convention, its family's declarations taken from `families`.
pub(crate) fn read_by(families: &[table::Family], record: &Record) -> Reading {
    let family = table::family_of(families, &record.scope, &record.attributes);
    super::genai::mark_cut(family.and_then(|f| f.declared.cut));
    let reading = read_family(family, record);
    super::genai::mark_cut(None);
    reading
}

fn read_family(family: Option<&table::Family>, record: &Record) -> Reading {
    let attrs = Attrs::of(&record.attributes);
    let mut reading = Reading { library: family.map(|f| f.library), ..Reading::default() };
    logfire::read(record, &attrs, &mut reading);
    if reading.repeat {
        return reading;
    }
    semconv::read(record, &attrs, &mut reading);
    mlflow::read(record, &attrs, &mut reading);
    events::read(record, &attrs, &mut reading);
    openllmetry::read(record, &attrs, &mut reading);
    openinference::read(record, &attrs, &mut reading);
    vercel::read(record, &attrs, &mut reading);
    if let Some(family) = family {
        declared(&family.declared, record, &attrs, &mut reading);
    }
    if !reading.call && is_context(record, &attrs, family) {
        reading.content.clear();
    }
    reading.conflicts.extend(attrs.conflicts.into_inner());
    if !reading.is_evidence() {
        reading.model.clear();
        reading.max_tokens.clear();
        reading.settings.clear();
    }
    reading
}

/// What a family's entry declares, read (`declared`) and applied to the call.
fn declared(declared: &table::Declared, record: &Record, attrs: &Attrs, out: &mut Reading) {
    declared::read(declared, record, attrs, out);
    if !out.call {
        return;
    }
    out.unrecorded = declared.unrecorded;
}

/// A span that names its kind, and a kind other than a model call: an agent, a loop
/// cycle, a tool, a chain or a pipeline, whose messages are its calls' context.
fn is_context(record: &Record, attrs: &Attrs, family: Option<&table::Family>) -> bool {
    record.kind == super::record::Kind::Span
        && (attrs.has("gen_ai.operation.name")
            || attrs.has("openinference.span.kind")
            || family.is_some_and(|f| !f.declared.calls.is_empty()))
}

/// A record's attributes by key: the first value of each, and whether a later one differs.
/// A few are looked through in order; many (OpenLLMetry's flattened prompts) are indexed.
pub(crate) struct Attrs<'r> {
    list: &'r [(Cow<'r, str>, Json<'r>)],
    /// Each key's first and first differing later value (by position), for many attributes.
    index: Option<HashMap<&'r str, (usize, Option<usize>)>>,
    /// Keys read whose duplicates differ, said once each.
    conflicts: RefCell<Vec<String>>,
}

/// Up to this many attributes are looked through rather than indexed.
const LOOKED_THROUGH: usize = 16;

impl<'r> Attrs<'r> {
    pub(crate) fn of(attributes: &'r [(Cow<'r, str>, Json<'r>)]) -> Attrs<'r> {
        let index = (attributes.len() > LOOKED_THROUGH).then(|| {
            let mut map: HashMap<&str, (usize, Option<usize>)> = HashMap::with_capacity(attributes.len());
            for (i, (key, value)) in attributes.iter().enumerate() {
                map.entry(key.as_ref())
                    .and_modify(|(first, other)| {
                        if attributes[*first].1 != *value && other.is_none() {
                            *other = Some(i);
                        }
                    })
                    .or_insert((i, None));
            }
            map
        });
        Attrs { list: attributes, index, conflicts: RefCell::new(Vec::new()) }
    }

    /// The first value of `key`, and the first later one that differs from it.
    fn lookup(&self, key: &str) -> Option<(&'r Json<'r>, Option<&'r Json<'r>>)> {
        let list = self.list;
        if let Some(index) = &self.index {
            let &(first, other) = index.get(key)?;
            return Some((&list[first].1, other.map(|i| &list[i].1)));
        }
        let i = list.iter().position(|(k, _)| k == key)?;
        let first = &list[i].1;
        Some((first, list[i + 1..].iter().find(|(k, v)| k == key && v != first).map(|(_, v)| v)))
    }

    /// The attribute `key` (its first value; a differing duplicate is a conflict).
    pub(crate) fn get(&self, key: &str) -> Option<&'r Json<'r>> {
        let (first, other) = self.lookup(key)?;
        if let Some(other) = other {
            let said = format!(
                "attribute {} is recorded twice, as {} and as {}",
                crate::report::one_line(key),
                shown_json(first),
                shown_json(other)
            );
            let mut conflicts = self.conflicts.borrow_mut();
            if !conflicts.contains(&said) {
                conflicts.push(said);
            }
        }
        Some(first)
    }

    pub(crate) fn str(&self, key: &str) -> Option<&'r str> {
        self.get(key).and_then(Json::as_str)
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.lookup(key).is_some()
    }

    /// Each attribute's key, in order (duplicates too).
    pub(crate) fn keys(&self) -> impl Iterator<Item = &'r str> {
        self.list.iter().map(|(k, _)| k.as_ref())
    }

    /// Whether any attribute's key starts with `prefix`.
    pub(crate) fn any_starting(&self, prefix: &str) -> bool {
        self.list.iter().any(|(k, _)| k.starts_with(prefix))
    }

    /// `Said` of the attribute `key` (a name made at run time), when present.
    pub(crate) fn said_owned(&self, key: &str) -> Option<Said> {
        self.get(key).map(|value| Said { source: key.to_owned().into(), value: value.to_value() })
    }

    /// `Said` of the attribute `key`, when present.
    pub(crate) fn said(&self, key: &'static str) -> Option<Said> {
        self.get(key).map(|value| Said { source: key.into(), value: value.to_value() })
    }
}

/// A value as a bounded excerpt.
pub(crate) fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => crate::report::excerpt(s),
        other => crate::report::excerpt(&other.to_string()),
    }
}

fn shown_json(value: &Json) -> String {
    match value {
        Json::String(s) => crate::report::excerpt(s),
        other => shown(&other.to_value()),
    }
}

/// The size of a value's text, for the attribute bound.
fn size(value: &Json) -> usize {
    match value {
        Json::String(s) => s.len(),
        Json::Array(items) => items.iter().map(size).sum(),
        Json::Object(map) => map.iter().map(|(k, v)| k.len() + size(v)).sum(),
        _ => 8,
    }
}

/// A JSON attribute, recorded as a JSON string or structured; strictly parsed (a
/// duplicate key is a conflict) and bounded.
pub(crate) fn json_of<'v>(value: &'v Json, what: impl Display) -> Result<Json<'v>, Unread> {
    if size(value) > MAX_ATTRIBUTE_BYTES {
        return Err(Unread::Unparsed(format!("{what} is longer than {MAX_ATTRIBUTE_BYTES} bytes")));
    }
    if let Some(withheld) = value.as_str().and_then(|text| placeholder(text, &what)) {
        return Err(withheld);
    }
    match value {
        Json::String(text) => value::parse(text.as_bytes()).map_err(|e| {
            let message = format!("{what} is not JSON ({})", crate::report::one_line(&e.to_string()));
            match e.message.starts_with("duplicate object key") {
                true => Unread::Conflict(message),
                false => Unread::Unparsed(message),
            }
        }),
        other => Ok(other.clone()),
    }
}

/// A text attribute, bounded.
pub(crate) fn text_of<'v>(value: &'v Json, what: impl Display) -> Result<&'v str, Unread> {
    if size(value) > MAX_ATTRIBUTE_BYTES {
        return Err(Unread::Unparsed(format!("{what} is longer than {MAX_ATTRIBUTE_BYTES} bytes")));
    }
    match value {
        Json::String(text) => match placeholder(text, &what) {
            Some(withheld) => Err(withheld),
            None => Ok(text),
        },
        _ => Err(Unread::Unparsed(format!("{what} is not text"))),
    }
}

/// A message's content: text, or a list of parts (`{type: "text", text | content}`);
/// any other part is marked, so the call can match no packet (a packet's messages are
/// text only).
pub(crate) fn content_text<'v>(content: &'v Json, what: impl Display + Copy) -> Result<Cow<'v, str>, Unread> {
    match content {
        Json::String(text) => unredacted(text, what),
        Json::Array(parts) if parts.len() == 1 => part_text(&parts[0], what),
        Json::Array(parts) => {
            parts.iter().map(|part| part_text(part, what)).collect::<Result<String, _>>().map(Cow::Owned)
        }
        Json::Object(_) => part_text(content, what),
        _ => Err(Unread::Unparsed(format!("{what} is neither text nor a list of parts"))),
    }
}

fn part_text<'v>(part: &'v Json, what: impl Display) -> Result<Cow<'v, str>, Unread> {
    let kind = part.get("type").and_then(Json::as_str);
    let text = part.get("text").or_else(|| part.get("content"));
    match (kind, text) {
        (Some("text" | "input_text") | None, Some(Json::String(text))) => unredacted(text, what),
        (Some("text" | "input_text"), None) => {
            Err(Unread::Withheld(format!("{what} has a text part without its content")))
        }
        (Some(kind), _) => Ok(Cow::Owned(format!("\u{fffc}[{} part]", crate::report::one_line(kind)))),
        (None, _) if part.is_string() => Ok(Cow::Borrowed(part.as_str().unwrap_or_default())),
        (None, _) => Err(Unread::Unparsed(format!("{what} has a part that is neither text nor typed"))),
    }
}

/// What instrumentations write in place of content they do not capture (Strands Agents'
/// `[REDACTED]`, OpenInference's `__REDACTED__`, `<hidden>`), and an empty text: not the
/// call's text, so never judged as a drift.
const PLACEHOLDERS: [&str; 3] = ["[REDACTED]", "__REDACTED__", "<hidden>"];

/// Why `text` is no content, when it is a placeholder or empty.
pub(crate) fn placeholder(text: &str, what: impl Display) -> Option<Unread> {
    let why = match text.trim() {
        "" => format!("{what} is recorded empty: a text the instrumentation did not capture is not judged as sent"),
        shown if PLACEHOLDERS.contains(&shown) => {
            format!("{what} is recorded as {shown}: content capture is off")
        }
        _ => return None,
    };
    Some(Unread::Withheld(why))
}

fn unredacted<'v>(text: &'v str, what: impl Display) -> Result<Cow<'v, str>, Unread> {
    match placeholder(text, what) {
        Some(withheld) => Err(withheld),
        None => Ok(Cow::Borrowed(text)),
    }
}

/// Chat messages `[{role, content | parts}]`.
pub(crate) fn chat_messages(value: &Json, what: impl Display + Copy) -> Result<Vec<Message>, Unread> {
    let Json::Array(items) = value else {
        return Err(Unread::Unparsed(format!("{what} is not a list of messages")));
    };
    items
        .iter()
        .map(|item| {
            let role = item.get("role").and_then(Json::as_str).unwrap_or_default();
            let content = item.get("parts").or_else(|| item.get("content")).unwrap_or(&Json::Null);
            Ok(Message::new(role, &content_text(content, format_args!("a message of {what}"))?))
        })
        .collect()
}

/// A request body as an instrumentation recorded it (Logfire's `request_data`,
/// Langfuse's input): chat `messages`, a Responses `input` with `instructions`, an
/// Anthropic `system` with `messages`, or a bare list of messages; and the model and max
/// tokens it names.
pub(crate) fn request_messages(value: &Json, what: &str) -> Result<Vec<Message>, Unread> {
    if value.is_array() {
        return chat_messages(value, what);
    }
    let mut messages = Vec::new();
    for key in ["system", "instructions"] {
        if let Some(system) = value.get(key).filter(|v| !v.is_null()) {
            messages.push(Message::new("system", &content_text(system, format_args!("{what}.{key}"))?));
        }
    }
    match (value.get("messages"), value.get("input")) {
        (Some(list), _) => messages.extend(chat_messages(list, format_args!("{what}.messages"))?),
        (None, Some(Json::String(text))) => messages.push(Message::new("user", text)),
        (None, Some(list)) => messages.extend(chat_messages(list, format_args!("{what}.input"))?),
        (None, None) => return Err(Unread::Unparsed(format!("{what} has no messages or input"))),
    }
    Ok(messages)
}

/// The max-tokens members a request body may carry, in the order looked for.
pub(crate) const MAX_TOKENS_KEYS: [&str; 4] =
    ["max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens"];

/// The max tokens a JSON object of request settings names (`Infinity`, Langfuse's "not
/// given", is none).
pub(crate) fn max_tokens_in(settings: &Json, source: &str) -> Option<Said> {
    MAX_TOKENS_KEYS.iter().find_map(|key| {
        let value = settings.get(key).filter(|v| !v.is_null() && v.as_str() != Some("Infinity"))?;
        Some(Said { source: format!("{source} {key}").into(), value: value.to_value() })
    })
}
