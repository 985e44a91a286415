//! OpenInference (Arize; Python and JS): a call is a span whose
//! `openinference.span.kind` is `LLM`; its messages are `llm.input_messages.{i}.message.role`
//! with `.message.content`, or `.message.contents.{j}.message_content.type` / `.text`; the
//! request's model and max tokens are inside the `llm.invocation_parameters` JSON string
//! (`llm.model_name` is the model the response names, as 0.1.66 records it: not the
//! request's, so it is not compared).

use super::{json_of, max_tokens_in, Attrs, Piece, Reading, Said, Unread};
use crate::trace::genai::Message;
use crate::trace::record::Record;

pub(super) fn read(_record: &Record, attrs: &Attrs, out: &mut Reading) {
    if attrs.str("openinference.span.kind").map(str::to_ascii_uppercase).as_deref() != Some("LLM") {
        return;
    }
    out.call = true;
    let mut model = None;
    if let Some(parameters) = attrs.get("llm.invocation_parameters") {
        match json_of(parameters, "llm.invocation_parameters") {
            Ok(settings) => {
                if let Some(named) = settings.get("model") {
                    model = Some(Said { source: "llm.invocation_parameters model".into(), value: named.to_value() });
                }
                out.max_tokens.extend(max_tokens_in(&settings, "llm.invocation_parameters"));
                let provider = attrs.str("llm.provider").or_else(|| attrs.str("llm.system")).unwrap_or_default();
                super::settings::parameters(provider, &settings.to_value(), "llm.invocation_parameters", out);
            }
            Err(unread) => out
                .max_tokens
                .push(Said { source: "llm.invocation_parameters".into(), value: serde_json::json!(unread.why()) }),
        }
    }
    out.model.extend(model);
    let mut messages = Vec::new();
    for i in 0.. {
        let at = format!("llm.input_messages.{i}.message");
        let role = attrs.str(&format!("{at}.role"));
        let content = attrs.get(&format!("{at}.content"));
        let mut parts = String::new();
        let mut has_parts = false;
        for j in 0.. {
            let part = format!("{at}.contents.{j}.message_content");
            let (kind, text) = (attrs.str(&format!("{part}.type")), attrs.str(&format!("{part}.text")));
            if kind.is_none() && text.is_none() {
                break;
            }
            has_parts = true;
            match (kind, text) {
                (Some("text") | None, Some(text)) => parts.push_str(text),
                (kind, _) => parts.push_str(&format!("\u{fffc}[{} part]", kind.unwrap_or("unknown"))),
            }
        }
        if role.is_none() && content.is_none() && !has_parts {
            break;
        }
        let text = match content {
            Some(crate::trace::value::Json::String(text)) => text.to_string(),
            Some(_) => {
                let why = Unread::Unparsed(format!("{at}.content is not text"));
                out.content.push(Piece::Whole { source: "llm.input_messages".into(), messages: Err(why) });
                return;
            }
            None => parts,
        };
        messages.push(Message::new(role.unwrap_or_default(), &text));
    }
    if !messages.is_empty() {
        out.content.push(Piece::Whole { source: "llm.input_messages".into(), messages: Ok(messages) });
    }
}
