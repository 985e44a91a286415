//! The one reader of what a family's entry declares (`table::Declared`): which of its
//! records are model calls, and where their text is, in what shape. A record of the
//! family that is no model call is context (a pipeline, an agent, a chain): its text is
//! not read here, whatever it holds.

use super::table::{At, Declared, Mark, Shape};
use super::{content_text, json_of, max_tokens_in, request_messages, Attrs, Piece, Reading, Said, Source, Unread};
use crate::trace::genai::Message;
use crate::trace::record::{Kind, Record};
use crate::trace::value::Json;

pub(super) fn read(declared: &Declared, record: &Record, attrs: &Attrs, out: &mut Reading) {
    if !out.call && record.kind == Kind::Span && declared.calls.iter().any(|mark| marks(mark, attrs)) {
        out.call = true;
    }
    if !out.call {
        return;
    }
    for read in declared.reads {
        match read.shape {
            Shape::Request => request(read.at, attrs, out),
            Shape::System => system(read.at, attrs, out),
            Shape::Settings => settings(read.at, attrs, out),
        }
    }
}

/// Whether the record's `mark.key` has one of its values or suffixes.
pub(super) fn marks(mark: &Mark, attrs: &Attrs) -> bool {
    let Some(value) = attrs.str(mark.key) else { return false };
    mark.values.contains(&value) || mark.suffixes.iter().any(|suffix| value.ends_with(suffix))
}

fn source(at: At) -> Source {
    match at {
        At::Attribute(key) => key.into(),
        At::Member(key, member) => format!("{key} {member}").into(),
    }
}

/// The value at `at`: the attribute, or its member (none when the attribute is not a
/// JSON object with it; a value that cannot be read is the reason).
fn value<'r>(at: At, attrs: &Attrs<'r>) -> Option<Result<Json<'r>, Unread>> {
    match at {
        At::Attribute(key) => attrs.get(key).map(|v| json_of(v, key)),
        At::Member(key, member) => match json_of(attrs.get(key)?, key) {
            Ok(object) => object.get(member).filter(|v| !v.is_null()).cloned().map(Ok),
            Err(unread) => Some(Err(unread)),
        },
    }
}

/// A request body (or a component's inputs): its messages, model and max tokens.
fn request(at: At, attrs: &Attrs, out: &mut Reading) {
    let Some(found) = value(at, attrs) else { return };
    let what = source(at);
    let request = match found {
        Ok(request) => request,
        Err(unread) => return out.content.push(Piece::Whole { source: what, messages: Err(unread) }),
    };
    if matches!(&request, Json::Object(map) if map.is_empty()) {
        let why = format!("{what} is recorded as {{}}: the instrumentation hides the call's inputs");
        return out.content.push(Piece::Whole { source: what, messages: Err(Unread::Withheld(why)) });
    }
    if let Some(model) = request.get("model").filter(|m| m.is_string()) {
        out.model.push(Said { source: format!("{what} model").into(), value: model.to_value() });
    }
    // A component's inputs carry the call's settings as generation_kwargs.
    let settings = request.get("generation_kwargs").filter(|v| matches!(v, Json::Object(_))).unwrap_or(&request);
    out.max_tokens.extend(max_tokens_in(settings, &what));
    let messages = request_messages(&request, &what);
    out.content.push(Piece::Whole { source: what, messages });
}

/// The system text recorded apart: the first message of the messages read elsewhere that
/// leave it out, or the system instructions alone.
fn system(at: At, attrs: &Attrs, out: &mut Reading) {
    let Some(found) = value(at, attrs) else { return };
    let what = source(at);
    let message = found.and_then(|v| content_text(&v, &*what).map(|text| Message::new("system", &text)));
    let apart = out.content.iter_mut().find_map(|piece| match piece {
        Piece::Whole { source, messages: Ok(messages) } if !messages.iter().any(|m| m.role == "system") => {
            Some((source, messages))
        }
        _ => None,
    });
    match (apart, message) {
        (Some((source, messages)), Ok(message)) => {
            messages.insert(0, message);
            *source = format!("{what} with {source}").into();
        }
        (_, message) => out.content.push(Piece::System { source: what, message }),
    }
}

/// A JSON object of the request's settings: its max tokens (a value that cannot be read is
/// recorded as what was read, and named as no number).
fn settings(at: At, attrs: &Attrs, out: &mut Reading) {
    let Some(found) = value(at, attrs) else { return };
    let what = source(at);
    match found {
        Ok(settings) => out.max_tokens.extend(max_tokens_in(&settings, &what)),
        Err(unread) => out.max_tokens.push(Said { source: what, value: serde_json::json!(unread.why()) }),
    }
}
