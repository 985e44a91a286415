//! What the trace and serve benchmarks share: the spans they send (included by each
//! with `#[path]`, so Cargo does not take this folder for a benchmark of its own).

use serde_json::{json, Value};

/// Span `i` of a flood: one in a hundred carries the reviewed packet's messages, one
/// in a hundred (the next) carries no messages, the rest other prompts.
pub fn span(i: usize, system: &str, user: &str, model: &str) -> Value {
    let (system, user) = match i % 100 {
        0 => (system.to_owned(), user.to_owned()),
        _ => (format!("You are assistant {}.", i % 7), format!("Summarise ticket {i} in one line.")),
    };
    let messages = json!([
        {"role": "system", "parts": [{"type": "text", "content": system}]},
        {"role": "user", "parts": [{"type": "text", "content": user}]},
    ]);
    let mut attributes = vec![
        json!({"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}),
        json!({"key": "gen_ai.request.model", "value": {"stringValue": model}}),
    ];
    if i % 100 != 1 {
        attributes.push(json!({"key": "gen_ai.input.messages", "value": {"stringValue": messages.to_string()}}));
    }
    json!({
        "traceId": format!("{i:032x}"), "spanId": format!("{i:016x}"), "name": format!("chat {model}"), "kind": 3,
        "attributes": attributes,
    })
}
