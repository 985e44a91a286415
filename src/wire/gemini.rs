//! Gemini generateContent (POST /v1beta/models/{model}:generateContent): the model
//! is in the URL, not the body. `systemInstruction.parts[0].text`, one user content
//! with effectiveUserMessage (which already carries the JSON suffix), and
//! `generationConfig: {maxOutputTokens, responseMimeType: "application/json"}`: JSON
//! mode without a schema (Google packets carry none; the held-back snapshot
//! validates the answer).

use super::capture::Captured;
use super::Material;
use crate::{Check, Finding};
use serde_json::{json, Value};

pub const LABELS: &[(&str, &str)] = &[
    ("$.systemInstruction", "system prompt"),
    ("$.contents", "contents"),
    ("$.contents[0]", "user message"),
    ("$.generationConfig", "generation config"),
    ("$.generationConfig.maxOutputTokens", "token limit"),
    ("$.generationConfig.responseMimeType", "JSON mode"),
];

pub fn body(m: &Material) -> Value {
    json!({
        "systemInstruction": {"parts": [{"text": m.system}]},
        "contents": [{"role": "user", "parts": [{"text": m.user}]}],
        "generationConfig": {"maxOutputTokens": m.max_tokens, "responseMimeType": "application/json"},
    })
}

/// The model of a Gemini request is the `models/{model}` segment of its URL: known
/// only when the capture has one (a HAR entry).
pub(super) fn check_model(
    model: &str,
    captured: &Captured,
    check: Check,
    findings: &mut Vec<Finding>,
    notes: &mut Vec<String>,
) {
    let Some((url, at)) = &captured.url else {
        notes.push("the model of a Gemini request is in its URL; a bare body cannot show it".into());
        return;
    };
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let found = path.rsplit_once("/models/").and_then(|(_, rest)| rest.split_once(':')).map(|(m, _)| m);
    match found {
        Some(found) if found == model => {}
        Some(found) => findings.push(Finding::new(
            check,
            at.clone(),
            format!("model: the URL names model {found:?}; expected {model:?}"),
        )),
        None => findings.push(Finding::new(
            check,
            at.clone(),
            format!("model: the URL has no models/{{model}}:generateContent segment; expected model {model:?}"),
        )),
    }
}
