//! MLflow tracing (`mlflow.openai.autolog()` and the like, exported over OTLP). In its
//! default format a call is a span whose `mlflow.spanType` is `"CHAT_MODEL"` or `"LLM"`
//! (each MLflow attribute is a JSON text), and the request it was given is
//! `mlflow.spanInputs`: its messages, model and max tokens. With
//! `MLFLOW_ENABLE_OTEL_GENAI_SEMCONV=true` the span carries the GenAI conventions (read by
//! `semconv`), but its `gen_ai.request.model` is the model the response names; the
//! request's is the flattened `model` attribute (JSON text), its limit `max_tokens` or
//! `max_completion_tokens`.

use super::{json_of, max_tokens_in, request_messages, Attrs, Library, Piece, Reading, Said, MAX_TOKENS_KEYS};
use crate::trace::record::Record;
use crate::trace::value::Json;

const CALL_TYPES: [&str; 2] = ["CHAT_MODEL", "LLM"];

pub(super) fn read(_record: &Record, attrs: &Attrs, out: &mut Reading) {
    if out.library != Some(Library::Mlflow) {
        return;
    }
    if out.call && attrs.has("gen_ai.operation.name") {
        return genai_semconv(attrs, out);
    }
    let kind = attrs.get("mlflow.spanType").and_then(|v| json_of(v, "mlflow.spanType").ok());
    if !kind.as_ref().and_then(Json::as_str).is_some_and(|k| CALL_TYPES.contains(&k)) {
        return;
    }
    out.call = true;
    let what = "mlflow.spanInputs";
    let Some(inputs) = attrs.get(what) else { return };
    let request = match json_of(inputs, what) {
        Ok(request) => request,
        Err(unread) => return out.content.push(Piece::Whole { source: what.into(), messages: Err(unread) }),
    };
    if let Some(model) = request.get("model") {
        out.model.push(Said { source: "mlflow.spanInputs model".into(), value: model.to_value() });
    }
    out.max_tokens.extend(max_tokens_in(&request, what));
    out.content.push(Piece::Whole { source: what.into(), messages: request_messages(&request, what) });
}

/// The request's model and max tokens, in place of the response's model.
fn genai_semconv(attrs: &Attrs, out: &mut Reading) {
    out.model.retain(|said| said.source != "gen_ai.request.model");
    if let Some(model) = attrs.get("model").and_then(|v| json_of(v, "model").ok()) {
        out.model.push(Said { source: "the model attribute".into(), value: model.to_value() });
    }
    if out.max_tokens.is_empty() {
        let found = MAX_TOKENS_KEYS.iter().find_map(|key| Some((key, json_of(attrs.get(key)?, key).ok()?)));
        if let Some((key, value)) = found {
            out.max_tokens.push(Said { source: format!("the {key} attribute").into(), value: value.to_value() });
        }
    }
}
