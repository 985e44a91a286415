//! Langfuse (v3+ SDKs, OpenTelemetry based; `langfuse.openai`): a call is a span whose
//! `langfuse.observation.type` is `generation`; its input is `langfuse.observation.input`
//! (a JSON list of chat messages, `{messages, tools…}`, or a Responses
//! `{instructions, input}`), its max tokens inside `langfuse.observation.model.parameters`
//! (`max_tokens`, `max_completion_tokens` or `max_output_tokens`; `"Infinity"` is
//! Langfuse's "not given"). `langfuse.observation.model.name` is the model the response
//! names (langfuse 5.2 overwrites the request's with it), so the model is not compared.

use super::{json_of, max_tokens_in, request_messages, Attrs, Piece, Reading, Said};
use crate::trace::record::Record;

pub(super) fn read(_record: &Record, attrs: &Attrs, out: &mut Reading) {
    if attrs.str("langfuse.observation.type") != Some("generation") {
        return;
    }
    out.call = true;
    let parameters = "langfuse.observation.model.parameters";
    if let Some(value) = attrs.get(parameters) {
        match json_of(value, parameters) {
            Ok(settings) => out.max_tokens.extend(max_tokens_in(&settings, parameters)),
            Err(unread) => {
                out.max_tokens.push(Said { source: parameters.into(), value: serde_json::json!(unread.why()) })
            }
        }
    }
    if let Some(input) = attrs.get("langfuse.observation.input") {
        let what = "langfuse.observation.input";
        let messages = json_of(input, what).and_then(|v| request_messages(&v, what));
        out.content.push(Piece::Whole { source: what.into(), messages });
    }
}
