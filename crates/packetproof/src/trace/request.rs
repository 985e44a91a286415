//! `wire --check BODY --gate FILE` with no `--packet`: a production request body with
//! new data, judged as `trace --gate` judges the call. The body's texts, model and
//! output budget are read as each API sends them and recorded as the GenAI semantic
//! conventions record a call (one span: `gen_ai.input.messages`,
//! `gen_ai.request.model`, `gen_ai.request.max_tokens`); that span then goes through
//! the one path every trace takes (join, verdict, gate), so the body gets the verdict
//! its call would get in `trace` and `serve`: matched to a vouched packet, conforming
//! to the vouched templates, or the finding.

use super::vouched::Vouching;
use super::{Counts, Encoding, Judged, Options, Session, Signal};
use crate::trace::packets::Packets;
use crate::wire::capture::Captured;
use crate::wire::Api;
use crate::Invocation;
use crate::{Error, JsonPath, Result};
use serde_json::{json, Value};

/// What a request body sends: its system text (if any), its messages, model and budget.
struct Sent {
    system: Option<String>,
    messages: Vec<(String, String)>,
    model: Option<String>,
    max_tokens: Option<Value>,
}

/// The verdict on the call `captured` sends to `api` (Gemini names the model in the
/// request URL, which a HAR file records), and the counts of the one call.
pub fn judge_request(
    captured: &Captured,
    api: Api,
    packets: &Packets,
    vouching: &Vouching,
    config: &Invocation,
) -> Result<(Judged, Counts)> {
    let origin = captured.origin.as_str();
    let url = captured.url.as_ref().map(|(url, _)| url.as_str());
    let sent = read(&captured.body, api, url).map_err(|(path, expected)| Error::shape(origin, path, expected))?;
    let export = as_export(&sent, api);
    let options = Options { allow_unjudged: false };
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

type Problem = (JsonPath, String);

fn read(body: &Value, api: Api, url: Option<&str>) -> std::result::Result<Sent, Problem> {
    let text_of = |value: &Value, path: JsonPath| text(value, path);
    let model = body.get("model").and_then(Value::as_str).map(str::to_owned);
    match api {
        Api::Anthropic => Ok(Sent {
            system: body.get("system").map(|s| text_of(s, JsonPath::root().key("system"))).transpose()?,
            messages: messages(body, "messages", "content")?,
            model,
            max_tokens: body.get("max_tokens").cloned(),
        }),
        Api::OpenaiChat => {
            let mut messages = messages(body, "messages", "content")?;
            let system = match messages.first() {
                Some((role, _)) if role == "system" || role == "developer" => Some(messages.remove(0).1),
                _ => None,
            };
            let max_tokens = body.get("max_completion_tokens").or_else(|| body.get("max_tokens")).cloned();
            Ok(Sent { system, messages, model, max_tokens })
        }
        Api::OpenaiResponses => {
            let messages = match body.get("input") {
                Some(Value::String(text)) => vec![("user".to_owned(), text.clone())],
                _ => messages(body, "input", "content")?,
            };
            Ok(Sent {
                system: body
                    .get("instructions")
                    .map(|s| text_of(s, JsonPath::root().key("instructions")))
                    .transpose()?,
                messages,
                model,
                max_tokens: body.get("max_output_tokens").cloned(),
            })
        }
        Api::Gemini => {
            let system = body.get("systemInstruction").or_else(|| body.get("system_instruction"));
            let system = system.map(|s| text_of(s, JsonPath::root().key("systemInstruction"))).transpose()?;
            let config = body.get("generationConfig").or_else(|| body.get("generation_config"));
            Ok(Sent {
                system,
                messages: messages(body, "contents", "parts")?,
                model: model.or_else(|| url.and_then(gemini_model)),
                max_tokens: config
                    .and_then(|c| c.get("maxOutputTokens").or_else(|| c.get("max_output_tokens")))
                    .cloned(),
            })
        }
    }
}

/// The model a Gemini URL names: `…/models/{model}:generateContent`.
fn gemini_model(url: &str) -> Option<String> {
    let after = url.split("/models/").nth(1)?;
    Some(after.split([':', '?']).next()?.to_owned()).filter(|m| !m.is_empty())
}

/// Each message of the list at `key`: its role and its text (`content_key`: where its
/// text lives, a string or text parts).
fn messages(body: &Value, key: &str, content_key: &str) -> std::result::Result<Vec<(String, String)>, Problem> {
    let at = JsonPath::root().key(key);
    let list = body.get(key).and_then(Value::as_array).ok_or((at.clone(), "a list of messages".to_owned()))?;
    let mut out = Vec::new();
    for (i, message) in list.iter().enumerate() {
        let here = at.clone().index(i);
        let role = message.get("role").and_then(Value::as_str).unwrap_or("user");
        let role = if role == "model" { "assistant" } else { role };
        let content =
            message.get(content_key).ok_or((here.clone().key(content_key), "the message's text".to_owned()))?;
        out.push((role.to_owned(), text(content, here.key(content_key))?));
    }
    Ok(out)
}

/// A text as the APIs send it: a string, text parts (`{"text": …}` or `{"type":
/// "text"|"input_text", "text": …}`), or an object holding parts (Gemini's
/// `systemInstruction`). Parts are joined as sent, with nothing between them.
fn text(value: &Value, at: JsonPath) -> std::result::Result<String, Problem> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Array(parts) => {
            let mut whole = String::new();
            for (i, part) in parts.iter().enumerate() {
                let kind = part.get("type").and_then(Value::as_str).unwrap_or("text");
                match (kind, part.get("text").and_then(Value::as_str)) {
                    ("text" | "input_text", Some(text)) => whole.push_str(text),
                    _ => return Err((at.index(i), "a text part (only text is judged)".to_owned())),
                }
            }
            Ok(whole)
        }
        Value::Object(map) if map.contains_key("parts") => text(&map["parts"], at.key("parts")),
        _ => Err((at, "text: a string or a list of text parts".to_owned())),
    }
}

/// The provider as `gen_ai.provider.name` names it.
fn provider(api: Api) -> &'static str {
    match api {
        Api::Anthropic => "anthropic",
        Api::OpenaiChat | Api::OpenaiResponses => "openai",
        Api::Gemini => "gcp.gemini",
    }
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
        json!({"key": "gen_ai.provider.name", "value": {"stringValue": provider(api)}}),
        json!({"key": "gen_ai.input.messages", "value": {"stringValue": Value::Array(messages).to_string()}}),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_body_is_read_as_its_call() {
        let anthropic = json!({"model": "m", "max_tokens": 5, "system": [{"type": "text", "text": "S"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "U"}]}]});
        let sent = read(&anthropic, Api::Anthropic, None).unwrap();
        assert_eq!((sent.system.as_deref(), sent.messages.as_slice()), (Some("S"), &[("user".into(), "U".into())][..]));
        let chat = json!({"model": "m", "max_completion_tokens": 5,
            "messages": [{"role": "developer", "content": "S"}, {"role": "user", "content": "U"}]});
        let sent = read(&chat, Api::OpenaiChat, None).unwrap();
        assert_eq!((sent.system.as_deref(), sent.max_tokens), (Some("S"), Some(json!(5))));
        let responses = json!({"model": "m", "instructions": "S", "input": "U", "max_output_tokens": 5});
        assert_eq!(read(&responses, Api::OpenaiResponses, None).unwrap().messages[0].1, "U");
        let gemini = json!({"systemInstruction": {"parts": [{"text": "S"}]},
            "contents": [{"role": "user", "parts": [{"text": "U1"}, {"text": "U2"}]}],
            "generationConfig": {"maxOutputTokens": 5}});
        let url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent";
        let sent = read(&gemini, Api::Gemini, Some(url)).unwrap();
        assert_eq!((sent.model.as_deref(), sent.messages[0].1.as_str()), (Some("gemini-2.5-pro"), "U1U2"));
        let image = json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]});
        let (at, expected) = read(&image, Api::Anthropic, None).err().unwrap();
        assert_eq!(
            (at.to_string().as_str(), expected.as_str()),
            ("$.messages[0].content[0]", "a text part (only text is judged)")
        );
    }
}
