//! The OpenTelemetry GenAI semantic conventions (v1.37 to v1.41, Development status):
//! an inference span has `gen_ai.operation.name` `chat`, `generate_content`,
//! `text_completion` (and LiteLLM's `responses` and `anthropic_messages`); older spans
//! without it have `gen_ai.system` or `gen_ai.provider.name` with `gen_ai.request.model`.
//! The model is `gen_ai.request.model`, the limit `gen_ai.request.max_tokens`. Content,
//! when captured: `gen_ai.system_instructions` (a JSON list of parts, or plain text as
//! LiteLLM and Node's Responses span write it) and `gen_ai.input.messages` (messages of
//! parts), as span attributes, on a `gen_ai.client.inference.operation.details` span
//! event, or as the attributes of that event exported as a log record (which is a call
//! whether or not it names its operation).

use super::{chat_messages, content_text, json_of, Attrs, Piece, Reading, Unread};
use crate::trace::genai::Message;
use crate::trace::record::{Kind, Record};
use crate::trace::value::Json;
use crate::trace::DETAILS_EVENT;
use std::borrow::Cow;

const INFERENCE: [&str; 5] = ["chat", "generate_content", "text_completion", "responses", "anthropic_messages"];

pub(super) fn read(record: &Record, attrs: &Attrs, out: &mut Reading) {
    let call = match record.kind {
        Kind::Span => match attrs.str("gen_ai.operation.name") {
            Some(op) => INFERENCE.contains(&op),
            None => {
                (attrs.has("gen_ai.system") || attrs.has("gen_ai.provider.name")) && attrs.has("gen_ai.request.model")
            }
        },
        Kind::Log => record.name == DETAILS_EVENT,
    };
    if !call {
        return;
    }
    out.call = true;
    out.model.extend(attrs.said("gen_ai.request.model"));
    match attrs.said("gen_ai.request.max_tokens") {
        // OpenLIT writes -1 for a budget the call does not set, and no API takes 0: a
        // placeholder for none, not a wrong budget.
        Some(said) if said.value == -1 || said.value == 0 => out.notes.push(format!(
            "gen_ai.request.max_tokens is recorded as {}, a placeholder for none: max tokens are not compared",
            said.value
        )),
        said => out.max_tokens.extend(said),
    }
    super::settings::read(attrs, out);
    let source = match record.kind {
        Kind::Span => "the span's gen_ai.input.messages",
        Kind::Log => "the inference details event",
    };
    out.content.extend(structured(attrs, source, &mut out.notes));
    // One call's details may be split over several events of its span (Strands Agents:
    // the system instructions in one, the input messages in the next): read as one.
    let mut details = record.events.iter().filter(|e| e.name == DETAILS_EVENT);
    let joined: Vec<_>;
    let attributes = match (details.next(), details.next()) {
        (None, _) => return,
        (Some(only), None) => &only.attributes,
        (Some(first), Some(second)) => {
            let rest = [first, second].into_iter().chain(details);
            joined = rest.flat_map(|e| e.attributes.iter().cloned()).collect();
            &joined
        }
    };
    let piece = structured(&Attrs::of(attributes), "the span's inference details event", &mut out.notes);
    out.content.extend(piece);
}

/// `gen_ai.system_instructions` and `gen_ai.input.messages`: one piece, when either is
/// there. An empty list of messages is none (OpenLIT's event with content capture off);
/// the system text recorded in both (OpenLIT) is one message, and a note says so.
fn structured(attrs: &Attrs, source: &'static str, notes: &mut Vec<String>) -> Option<Piece> {
    let system = attrs.get("gen_ai.system_instructions");
    let input = attrs.get("gen_ai.input.messages").filter(|v| !is_empty_list(v));
    if system.is_none() && input.is_none() {
        return None;
    }
    if let (Some(value), None) = (system, input) {
        let message = system_text(value).map(|text| Message::new("system", &text));
        return Some(Piece::System { source: format!("{source} (gen_ai.system_instructions alone)").into(), message });
    }
    let messages = (|| {
        let mut messages = Vec::new();
        let system = system.map(system_text).transpose()?;
        if let Some(text) = &system {
            messages.push(Message::new("system", text));
        }
        if let Some(value) = input {
            let input = chat_messages(&json_of(value, "gen_ai.input.messages")?, "gen_ai.input.messages")?;
            // The second may be cut short (OpenLIT's max_content_length cuts the messages only).
            let again = |first: &Message| match (&first.cut, &system) {
                (Some(cut), Some(text)) => first.role == "system" && text.starts_with(&**cut),
                _ => false,
            };
            let twice = matches!((messages.first(), input.first()), (Some(system), Some(first)) if system == first || again(first));
            if twice {
                notes.push(TWICE.to_owned());
            }
            messages.extend(input.into_iter().skip(usize::from(twice)));
        }
        Ok(messages)
    })();
    Some(Piece::Whole { source: source.into(), messages })
}

const TWICE: &str = "the system text is recorded twice (gen_ai.system_instructions and the first message of \
                     gen_ai.input.messages): counted once";

fn is_empty_list(value: &Json) -> bool {
    match value {
        Json::Array(items) => items.is_empty(),
        Json::String(text) => text.trim() == "[]",
        _ => false,
    }
}

/// System instructions: a JSON list of parts, or plain text.
fn system_text<'v>(value: &'v Json) -> Result<Cow<'v, str>, Unread> {
    let what = "gen_ai.system_instructions";
    match json_of(value, what) {
        Ok(parts @ Json::Array(_)) => content_text(&parts, what).map(|text| Cow::Owned(text.into_owned())),
        Ok(_) | Err(Unread::Unparsed(_)) => match value {
            Json::String(text) => Ok(Cow::Borrowed(text)),
            _ => Err(Unread::Unparsed(format!("{what} is neither text nor a list of parts"))),
        },
        Err(conflict) => Err(conflict),
    }
}
