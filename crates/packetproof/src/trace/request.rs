//! `wire --check BODY --gate FILE` with no `--packet`: a production request body with
//! new data, judged as `trace --gate` judges the call. The body is read by its API's
//! spec (`crate::wire::api`) and recorded as the GenAI semantic conventions record a
//! call (one span: `gen_ai.input.messages`, `gen_ai.request.model`,
//! `gen_ai.request.max_tokens`), with the rest of the call in one attribute of
//! packetproof's own (`packetproof.request.call`: every call field, the output format
//! and what the spec could not read, from a body that holds them all); that span then
//! goes through the one path every trace takes (join, verdict, gate), so the body gets
//! the verdict its call would get in `trace` and `serve`.

use super::vouched::Vouching;
use super::{Counts, Encoding, Judged, Options, Session, Signal};
use crate::trace::packets::Packets;
use crate::wire::api::{self, Sent};
use crate::wire::capture::Captured;
use crate::wire::Api;
use crate::Error;
use crate::{Invocation, Result};
use serde_json::{json, Value};

use super::conventions::settings::CALL_ATTRIBUTE;

/// The verdict on the call `captured` sends to `api` (Gemini and Bedrock name the model
/// in the request URL, which a HAR file records), and the counts of the one call.
pub fn judge_request(
    captured: &Captured,
    api: Api,
    packets: &Packets,
    vouching: &Vouching,
    config: &Invocation,
    require: super::settings::Required,
) -> Result<(Judged, Counts)> {
    let origin = captured.origin.as_str();
    let url = captured.url.as_ref().map(|(url, _)| url.as_str());
    let sent =
        api::read(api.spec(), &captured.body, url).map_err(
            |(path, expected)| match crate::wire::specs::another_api(&captured.body, api.spec()) {
                Some(why) => Error::shape(origin, path, format!("{expected}; {why}")),
                None => Error::shape(origin, path, expected),
            },
        )?;
    let export = as_export(&sent, api);
    let options = Options { allow_unjudged: false, require };
    let mut session = Session::new(packets, options).held_to(vouching, config);
    session.read(export.to_string().as_bytes(), Encoding::Json, Some(Signal::Traces), origin, 1)?;
    let mut judged = None;
    let counts = session.finish(&mut |call| {
        judged.get_or_insert_with(|| call.clone());
        Ok(())
    })?;
    let judged = judged.ok_or_else(|| Error::Internal(format!("{origin}: the request was read as no call")))?;
    Ok((judged, counts))
}

/// The rest of the call as [`CALL_ATTRIBUTE`] carries it.
fn call_record(sent: &Sent, api: Api) -> Value {
    let unknown: Vec<String> = sent.unknown.iter().map(|(at, why)| format!("{at}: {why}")).collect();
    json!({"api": api.name(), "call": sent.call.to_value(), "output": sent.output.to_value(), "unknown": unknown})
}

/// The call as one OTLP/JSON span of the GenAI semantic conventions.
fn as_export(sent: &Sent, api: Api) -> Value {
    let part = |text: &str| json!([{"type": "text", "content": text}]);
    let mut messages = Vec::new();
    if let Some(system) = &sent.system {
        messages.push(json!({"role": "system", "parts": part(system)}));
    }
    for (role, text) in &sent.messages {
        messages.push(json!({"role": role, "parts": part(text)}));
    }
    let mut attributes = vec![
        json!({"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}),
        json!({"key": "gen_ai.provider.name", "value": {"stringValue": api.spec().telemetry}}),
        json!({"key": "gen_ai.input.messages", "value": {"stringValue": Value::Array(messages).to_string()}}),
        json!({"key": CALL_ATTRIBUTE, "value": {"stringValue": call_record(sent, api).to_string()}}),
    ];
    if let Some(model) = &sent.model {
        attributes.push(json!({"key": "gen_ai.request.model", "value": {"stringValue": model}}));
    }
    match &sent.max_tokens {
        Some(Value::Number(n)) if n.is_u64() || n.is_i64() => {
            attributes.push(json!({"key": "gen_ai.request.max_tokens", "value": {"intValue": n.to_string()}}))
        }
        Some(Value::Number(n)) => {
            attributes.push(json!({"key": "gen_ai.request.max_tokens", "value": {"doubleValue": n.as_f64()}}))
        }
        // A budget that is no number (`"99999999"`, `[1]`) is kept as it was sent, and
        // judged as trace judges it: not a number.
        Some(other) => {
            attributes.push(json!({"key": "gen_ai.request.max_tokens", "value": {"stringValue": other.to_string()}}))
        }
        None => {}
    }
    let name = format!("chat {}", sent.model.as_deref().unwrap_or(""));
    let span = json!({
        "traceId": "0".repeat(31) + "1", "spanId": "0".repeat(15) + "1", "name": name.trim_end(), "kind": 3,
        "attributes": attributes,
    });
    json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "packetproof.wire"}, "spans": [span]}]}]})
}
