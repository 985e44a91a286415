//! `packet::provider-shape`: how the packet carries the answer's format for its
//! provider (a schema, the text-JSON suffix, or plain text).

use super::describe;
use crate::config::{Config, OutputMode};
use crate::report::{Finding, Findings, JsonPath, PacketCheck};
use serde_json::{Map, Value};

/// Whether `packet::provider-shape` can judge the packet: `Err(why not)` when its
/// provider is not one harness.toml names (packet::contract reports that).
pub(crate) fn provider_shape_applies(packet: &Map<String, Value>, config: &Config) -> Result<(), String> {
    let provider = packet.get("provider").and_then(Value::as_str).unwrap_or("");
    match config.output_mode(packet) {
        Some(_) => Ok(()),
        None => Err(format!(
            "the packet's provider {provider:?} is not in harness.toml's providers, so it has no output mode"
        )),
    }
}

/// Google text-JSON packets omit outputSchema and append the exact suffix; all
/// others carry outputSchema and send userMessage unchanged.
pub fn provider_shape(packet: &Map<String, Value>, config: &Config) -> Vec<Finding> {
    let mut out = Findings::new(PacketCheck::ProviderShape);
    let mut fail = |path: JsonPath, message: String| out.fail(path, message);
    let provider = packet.get("provider").and_then(Value::as_str).unwrap_or("");
    let user = packet.get("userMessage").and_then(Value::as_str);
    let effective = packet.get("effectiveUserMessage").and_then(Value::as_str);
    // A provider harness.toml does not name has no shape to meet (see `provider_shape_applies`).
    let Some(mode) = config.output_mode(packet) else { return Vec::new() };
    match mode {
        OutputMode::TextJson => text_json_shape(packet, config, &mut fail),
        OutputMode::Text => {
            if packet.contains_key("outputSchema") {
                fail(
                    JsonPath::field("outputSchema"),
                    "must be absent: the suite's contract profile answers in plain text (contract.output = \"text\")"
                        .into(),
                );
            }
        }
        OutputMode::Schema => match packet.get("outputSchema") {
            Some(Value::Object(schema)) => {
                if schema.get("name").and_then(Value::as_str).is_none_or(|s| s.trim().is_empty()) {
                    fail(JsonPath::field("outputSchema").key("name"), "expected a non-blank tool name".into());
                }
                if !schema.get("schema").is_some_and(Value::is_object) {
                    fail(JsonPath::field("outputSchema").key("schema"), "expected a JSON Schema object".into());
                }
            }
            other => fail(
                JsonPath::field("outputSchema"),
                format!("expected the runtime output schema object, found {}", describe(other)),
            ),
        },
    }
    if mode != OutputMode::TextJson && user.is_some() && effective != user {
        fail(
            JsonPath::field("effectiveUserMessage"),
            format!("expected to equal userMessage for provider {provider:?}"),
        );
    }
    out.into_vec()
}

/// Text-JSON (Google): no outputSchema, and userMessage followed by the exact suffix.
fn text_json_shape(packet: &Map<String, Value>, config: &Config, fail: &mut impl FnMut(JsonPath, String)) {
    let provider = packet.get("provider").and_then(Value::as_str).unwrap_or("");
    let user = packet.get("userMessage").and_then(Value::as_str);
    let effective = packet.get("effectiveUserMessage").and_then(Value::as_str);
    if packet.contains_key("outputSchema") {
        fail(JsonPath::field("outputSchema"), format!("must be absent (not null) for {provider} text-JSON packets"));
    }
    if let (Some(user), Some(effective)) = (user, effective) {
        if effective.strip_prefix(user) != Some(config.google_suffix.as_str()) {
            fail(
                JsonPath::field("effectiveUserMessage"),
                format!(
                    "expected userMessage followed by the exact text-JSON suffix {} (a packet from another \
                     exporter carries its own: name it with --google-suffix-file FILE)",
                    crate::report::excerpt(&config.google_suffix)
                ),
            );
        }
    }
}
