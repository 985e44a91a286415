//! One event per input message (GenAI conventions before v1.37, Node's
//! @opentelemetry/instrumentation-openai for chat, OpenLLMetry's events mode):
//! `gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message` and
//! `gen_ai.tool.message`, as span events (a `content` attribute) or as log records (the
//! body's `content`, its `role` when it names one). Each is one message of its call, in
//! the order read. Also the one `gen_ai.content.prompt` span event whose `gen_ai.prompt`
//! is a JSON list of `{role, content}`.

use super::{chat_messages, content_text, json_of, Attrs, Piece, Reading, Unread};
use crate::trace::genai::Message;
use crate::trace::record::{Kind, Record};
use crate::trace::value::Json;
use std::borrow::Cow;

fn role_of(event: &str) -> Option<&'static str> {
    Some(match event {
        "gen_ai.system.message" => "system",
        "gen_ai.user.message" => "user",
        "gen_ai.assistant.message" => "assistant",
        "gen_ai.tool.message" => "tool",
        _ => return None,
    })
}

pub(super) fn read(record: &Record, _attrs: &Attrs, out: &mut Reading) {
    match record.kind {
        Kind::Log => {
            let Some(role) = role_of(&record.name) else { return };
            let what = format_args!("the body of a {} log event", record.name);
            let parsed = message_text(&record.body, what);
            let body = parsed.as_ref().unwrap_or(&record.body);
            let role = body.get("role").and_then(Json::as_str).unwrap_or(role);
            let content = match body {
                Json::String(_) => Some(body),
                body => body.get("content"),
            };
            let attrs = Attrs::of(&record.attributes);
            let message = match content.or_else(|| attrs.get("content")) {
                Some(content) => text(content, what).map(|text| Message::new(role, &text)),
                None => Err(Unread::Withheld(format!("{what} has no content"))),
            };
            out.content.push(Piece::One { source: "the gen_ai.*.message log events".into(), message });
        }
        Kind::Span => {
            for event in &record.events {
                let attrs = Attrs::of(&event.attributes);
                if event.name == "gen_ai.content.prompt" {
                    let messages = match attrs.get("gen_ai.prompt") {
                        Some(prompt) => {
                            json_of(prompt, "gen_ai.prompt").and_then(|v| chat_messages(&v, "gen_ai.prompt"))
                        }
                        None => Err(Unread::Unparsed("the gen_ai.content.prompt event has no gen_ai.prompt".into())),
                    };
                    out.content.push(Piece::Whole { source: "the gen_ai.content.prompt event".into(), messages });
                    continue;
                }
                let Some(role) = role_of(&event.name) else { continue };
                let what = format_args!("the content of a {} span event", event.name);
                let message = match attrs.get("content") {
                    Some(content) => text(content, what).map(|text| Message::new(role, &text)),
                    None => Err(Unread::Withheld(format!("{what} is missing"))),
                };
                out.content.push(Piece::One { source: "the gen_ai.*.message span events".into(), message });
            }
        }
    }
}

/// A body that is a message as JSON text (Semantic Kernel logs `{"role", "content"}`
/// through Python's logging): the message. Any other text is the message's content.
fn message_text<'v>(body: &'v Json, what: impl std::fmt::Display) -> Option<Json<'v>> {
    let Json::String(text) = body else { return None };
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let message = json_of(body, what).ok()?;
    (message.get("role").is_some_and(Json::is_string) && message.get("content").is_some()).then_some(message)
}

/// Text, or a list of parts (given as JSON text or structured).
fn text<'v>(content: &'v Json, what: impl std::fmt::Display + Copy) -> Result<Cow<'v, str>, Unread> {
    match content {
        Json::String(s) if s.starts_with('[') => match json_of(content, what) {
            Ok(parts @ Json::Array(_)) => content_text(&parts, what).map(|text| Cow::Owned(text.into_owned())),
            Err(withheld @ Unread::Withheld(_)) => Err(withheld),
            _ => Ok(Cow::Borrowed(s)),
        },
        other => content_text(other, what),
    }
}
