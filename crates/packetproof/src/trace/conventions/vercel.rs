//! The Vercel AI SDK (`ai`, `experimental_telemetry`): the model call is the inner span
//! (`ai.operationId` `ai.generateText.doGenerate`, `….doStream`, …; the outer
//! `ai.generateText` span holds the prompt as the caller gave it, `ai.prompt`, and is
//! not a second call). Its messages are `ai.prompt.messages` (a JSON list of
//! `{role, content}`, content text or `{type: "text", text}` parts), its model
//! `ai.model.id` (and `gen_ai.request.model`), its limit `ai.settings.maxOutputTokens`
//! (and `gen_ai.request.max_tokens`); its settings `ai.settings.*`, its tools
//! `ai.prompt.tools` and choice `ai.prompt.toolChoice` (read in `trace::settings`).

use super::{chat_messages, json_of, Attrs, Piece, Reading};
use crate::trace::record::Record;

pub(super) fn read(_record: &Record, attrs: &Attrs, out: &mut Reading) {
    let inner = attrs.str("ai.operationId").is_some_and(|op| op.contains(".do"));
    if !inner {
        return;
    }
    out.call = true;
    out.model.extend(attrs.said("ai.model.id"));
    out.max_tokens.extend(attrs.said("ai.settings.maxOutputTokens"));
    super::settings::vercel(attrs, out);
    if let Some(value) = attrs.get("ai.prompt.messages") {
        let what = "ai.prompt.messages";
        let messages = json_of(value, what).and_then(|v| chat_messages(&v, what));
        out.content.push(Piece::Whole { source: what.into(), messages });
    }
}
