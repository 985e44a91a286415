//! OpenLLMetry's flattened attributes (traceloop, before its GenAI-conventions mode):
//! `gen_ai.prompt.{i}.role` and `gen_ai.prompt.{i}.content`, from 0 up. The span is a
//! call by the GenAI conventions (`gen_ai.system` with `gen_ai.request.model`).
//! Each index is one hash lookup: a prompt of 100,000 messages reads in linear time.

use super::{text_of, Attrs, Piece, Reading, Unread};
use crate::trace::genai::Message;
use crate::trace::record::Record;

pub(super) fn read(_record: &Record, attrs: &Attrs, out: &mut Reading) {
    if !attrs.any_starting("gen_ai.prompt.") {
        return;
    }
    let mut messages = Vec::new();
    let mut problem = None;
    for i in 0.. {
        let (role, content) =
            (attrs.get(&format!("gen_ai.prompt.{i}.role")), attrs.get(&format!("gen_ai.prompt.{i}.content")));
        if role.is_none() && content.is_none() {
            break;
        }
        let role = role.and_then(|r| r.as_str()).unwrap_or_default();
        match content.map(|c| text_of(c, format_args!("gen_ai.prompt.{i}.content"))) {
            Some(Ok(text)) => messages.push(Message::new(role, text)),
            Some(Err(e)) => problem = problem.or(Some(e)),
            None => problem = problem.or(Some(Unread::Unparsed(format!("gen_ai.prompt.{i}.content is missing")))),
        }
    }
    if messages.is_empty() && problem.is_none() {
        return;
    }
    let messages = match problem {
        Some(e) => Err(e),
        None => Ok(messages),
    };
    out.content.push(Piece::Whole { source: "the gen_ai.prompt.{i} attributes".into(), messages });
}
