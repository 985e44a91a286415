//! Gemini generateContent (POST /v1beta/models/{model}:generateContent): the model
//! is in the URL, not the body. `systemInstruction.parts[0].text`, one user content
//! with effectiveUserMessage (which already carries the JSON suffix), and
//! `generationConfig: {maxOutputTokens, responseMimeType: "application/json"}`: JSON
//! mode without a schema (Google packets carry none; the held-back snapshot
//! validates the answer).

use super::Material;
use serde_json::{json, Value};

pub(crate) const LABELS: &[(&str, &str)] = &[
    ("$.systemInstruction", "system prompt"),
    ("$.contents", "contents"),
    ("$.contents[0]", "user message"),
    ("$.generationConfig", "generation config"),
    ("$.generationConfig.maxOutputTokens", "token limit"),
    ("$.generationConfig.responseMimeType", "JSON mode"),
];

pub(crate) fn body(m: &Material) -> Value {
    let mut body = json!({
        "systemInstruction": {"parts": [{"text": m.system}]},
        "contents": [{"role": "user", "parts": [{"text": m.user}]}],
        "generationConfig": {"maxOutputTokens": m.max_tokens},
    });
    // JSON mode only when the packet asks for JSON (the text-JSON suffix); a plain-text answer is plain.
    if m.json {
        body["generationConfig"]["responseMimeType"] = json!("application/json");
    }
    body
}

/// What the official SDKs send (tests/recordings/sdk): google-genai, for Python and
/// Node, puts the system instruction in a content with `"role": "user"`; the API reads
/// a system instruction's parts whatever its role says. That role, and no other, is
/// the same request.
pub(crate) fn normalize(body: &mut Value) {
    if let Some(Value::Object(instruction)) = body.get_mut("systemInstruction") {
        if instruction.get("role").and_then(Value::as_str) == Some("user") {
            instruction.remove("role");
        }
    }
}
