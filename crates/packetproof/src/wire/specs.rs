//! The list of provider APIs: each is one spec in its own module (`super::api::Spec`),
//! and [`SPECS`] names them all. What needs every API (the one a name or a provider
//! means, the API a body of another reads as) asks here.

use super::api::{read, Output, Spec};
use super::{anthropic, bedrock, gemini, openai_chat, openai_responses};
use crate::call::Call;
use crate::report::JsonPath;
use serde_json::Value;

/// Every API, in the order `--api` lists them. Adding one is its module and its entry.
pub(crate) const SPECS: &[&Spec] =
    &[&anthropic::SPEC, &openai_chat::SPEC, &openai_responses::SPEC, &gemini::SPEC, &bedrock::SPEC];

/// The other APIs whose spec reads `body` whole (no member left unread): what a body
/// sent to the wrong `--api` is.
pub(crate) fn reading_whole(body: &Value, not: &Spec) -> Vec<&'static str> {
    SPECS
        .iter()
        .filter(|spec| spec.name != not.name)
        .filter(|spec| read(spec, body, None).is_ok_and(|sent| sent.unknown.is_empty()))
        .map(|spec| spec.name)
        .collect()
}

/// Why `body` is not `spec`'s, when another API reads it whole.
pub(crate) fn another_api(body: &Value, spec: &Spec) -> Option<String> {
    let others = reading_whole(body, spec);
    (!others.is_empty()).then(|| {
        let name = spec.name;
        format!(
            "the body is no request of the {name} API: it reads whole as {} (`--api {}`)",
            others.join(" or "),
            others[0]
        )
    })
}

/// The call fields and output format of a request's settings without its messages (an
/// instrumentation's record of the call's parameters), read by the first spec of
/// `provider` that reads them: each field with its value, the output format when
/// the parameters name one, and the members no spec of the provider reads.
pub(crate) fn parameters(provider: &str, parameters: &Value) -> Option<(Call, Option<Output>, Vec<String>)> {
    let Value::Object(map) = parameters else { return None };
    SPECS.iter().filter(|spec| spec.provider == provider).find_map(|spec| {
        // The messages are recorded apart: an empty list stands in for them.
        let mut body = map.clone();
        let placed: Vec<&str> =
            ["messages", "contents", "input"].into_iter().filter(|k| !map.contains_key(*k)).collect();
        for key in &placed {
            body.insert((*key).to_owned(), Value::Array(Vec::new()));
        }
        let sent = read(spec, &Value::Object(body), None).ok()?;
        let named = ["response_format", "text", "tools", "generationConfig"].iter().any(|k| map.contains_key(*k));
        let placeholder = |at: &JsonPath| placed.iter().any(|k| *at == JsonPath::field(k));
        let unknown =
            sent.unknown.iter().filter(|(at, _)| !placeholder(at)).map(|(at, why)| format!("{at}: {why}")).collect();
        Some((sent.call, named.then_some(sent.output), unknown))
    })
}

/// The spec of an API by name.
pub(crate) fn named(name: &str) -> Option<&'static Spec> {
    SPECS.iter().copied().find(|spec| spec.name == name)
}
