//! Logfire (`logfire.instrument_openai()` / `instrument_anthropic()`): by default
//! (semconv 2) its span carries the GenAI conventions (read by `semconv`); with
//! `version=1` it carries only `request_data`, the request body as JSON (messages or
//! input, model, max tokens). A streamed call adds a second, zero-length span, the
//! stream's summary (`logfire.msg_template` "streaming response from …"), that repeats
//! the call: it is not a call of its own.

use super::{json_of, max_tokens_in, request_messages, Attrs, Piece, Reading, Said};
use crate::trace::record::Record;

pub(super) fn read(_record: &Record, attrs: &Attrs, out: &mut Reading) {
    if attrs.str("logfire.msg_template").is_some_and(|t| t.starts_with("streaming response from")) {
        out.repeat = true;
        return;
    }
    let Some(value) = attrs.get("request_data") else { return };
    let what = "request_data";
    let Ok(request) = json_of(value, what) else { return };
    // semconv 2 keeps only {model, stream} in request_data: the messages are elsewhere.
    if request.get("messages").is_none() && request.get("input").is_none() {
        return;
    }
    out.call = true;
    if let Some(model) = request.get("model") {
        out.model.push(Said { source: "request_data.model".into(), value: model.to_value() });
    }
    out.max_tokens.extend(max_tokens_in(&request, what));
    out.content.push(Piece::Whole { source: what.into(), messages: request_messages(&request, what) });
}
