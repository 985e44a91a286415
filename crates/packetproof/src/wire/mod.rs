//! Provenance to the wire: the exact provider request body a packet implies, and
//! the check of a captured request against it.
//!
//! - [`Api`] names a request format; each is one spec (`api::SPECS`), in its own module,
//!   that knows every field of its body both ways.
//! - [`capture`] reads what was captured: a bare JSON body or a HAR file.
//! - `diff` compares a captured body with the expected one, path by path.
//!
//! The packet is the only source: nothing here invents request material. What the call
//! sends besides its messages (tools, sampling, …) is the packet's `call` member
//! (`crate::call`); a setting outside it is a finding.

pub(crate) mod anthropic;
pub(crate) mod api;
pub(crate) mod bedrock;
pub mod capture;
pub(crate) mod diff;
pub(crate) mod endpoint;
pub(crate) mod gemini;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;
pub(crate) mod specs;

use crate::config::Config;
use crate::report::{walk, Trail};
use crate::JsonPath;
use crate::{Check, Error, Finding, Outcome, Result};
use api::{Material, Spec};
use capture::Captured;
use serde_json::{Map, Value};

/// The check of `packetproof wire --check`.
pub const CHECK: Check = Check::Input(crate::InputCheck::WireRequest);
/// The check of `verify` on a run's provider-request.json.
pub(crate) const RUN_CHECK: Check = Check::Run(crate::RunCheck::ProviderRequest);
/// The captured request a run directory may carry.
pub(crate) const RUN_FILE: &str = "provider-request.json";

/// A provider request format, named as `--api` takes it (`anthropic`, `openai-chat`, …).
#[derive(Clone, Copy)]
pub struct Api(&'static Spec);

impl PartialEq for Api {
    fn eq(&self, other: &Api) -> bool {
        // By name: each name is one spec (a test holds the names apart).
        self.0.name == other.0.name
    }
}

impl Eq for Api {}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

impl Api {
    /// Every API, in the order `--api` lists them.
    pub fn all() -> impl Iterator<Item = Api> {
        specs::SPECS.iter().map(|spec| Api(spec))
    }

    /// The API of a name as `--api` takes it (`None`: no API has the name).
    pub fn from_name(name: &str) -> Option<Api> {
        Api::all().find(|api| api.name() == name)
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The packet provider whose calls this API carries.
    pub fn provider(self) -> &'static str {
        self.0.provider
    }

    /// The APIs a provider's packets go out through.
    pub fn of_provider(provider: &str) -> impl Iterator<Item = Api> + '_ {
        Api::all().filter(move |api| api.provider() == provider)
    }

    pub(crate) fn of(provider: &str) -> Vec<Api> {
        Api::of_provider(provider).collect()
    }

    pub(crate) fn spec(self) -> &'static Spec {
        self.0
    }

    /// Whether a request URL is this API's endpoint (for picking a HAR entry).
    pub(crate) fn is_endpoint(self, url: &str) -> bool {
        endpoint::is_endpoint(self, url)
    }

    /// What the value at a body path is, for messages ("system prompt", …).
    fn label(self, path: &str) -> Option<&'static str> {
        // The longest matching prefix names it: `$.messages[0].content` is the user message.
        self.0
            .labels
            .iter()
            .filter(|(prefix, _)| {
                path.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
            })
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, label)| *label)
    }
}

/// The exact request body for `packet` in `api`'s format. The packet's provider
/// must be the API's; judging the packet is the caller's (the `wire` command asks
/// the rule book first, and a run's packet is judged by the packet rules).
pub fn body(packet: &Value, api: Api, file: &str) -> Result<Value> {
    let map = sound_packet(packet, api, file)?;
    let material = Material::of(map, file)?;
    let unplaceable = api::unplaceable(api.spec(), &material.call);
    if !unplaceable.is_empty() {
        return Err(Error::refused(
            format!("{file} $.call"),
            format!("the {} API has no place for {unplaceable:?}: no body of it sends this call", api.name()),
        ));
    }
    Ok(api::build(api.spec(), &material))
}

/// What a reader of the body should know: for the OpenAI APIs, why `strict` is false.
pub fn notes(packet: &Value, api: Api, file: &str) -> Vec<String> {
    let Some(map) = packet.as_object() else { return Vec::new() };
    Material::of(map, file).map(|m| material_notes(api, &m)).unwrap_or_default()
}

fn material_notes(api: Api, m: &Material) -> Vec<String> {
    let strict = m.call.get("strictOutput").is_none().then(|| openai_chat::material_strict_problem(m)).flatten();
    match (api.provider(), strict) {
        ("openai", Some(problem)) => {
            vec![format!("strict is false: OpenAI strict mode would refuse the schema ({problem})")]
        }
        _ => Vec::new(),
    }
}

/// Refuse a packet whose provider is not the API's: a body built from it would
/// prove nothing.
fn sound_packet<'a>(packet: &'a Value, api: Api, file: &str) -> Result<&'a Map<String, Value>> {
    let map = packet.as_object().ok_or_else(|| Error::shape(file, JsonPath::root(), "a JSON object"))?;
    let provider = map.get("provider").and_then(Value::as_str).unwrap_or_default();
    if provider != api.provider() {
        return Err(Error::refused(
            format!("{file} $.provider"),
            format!(
                "the packet is for provider {provider:?}; the {} API serves provider {:?}",
                api.name(),
                api.provider()
            ),
        ));
    }
    Ok(map)
}

/// Check a captured request against the body the packet implies. Every difference
/// is a finding under `check`, its path naming the captured file and the JSON path.
pub fn check(
    packet: &Value,
    api: Api,
    captured: &Captured,
    config: &Config,
    packet_file: &str,
    check: Check,
) -> Result<Outcome> {
    let map = sound_packet(packet, api, packet_file)?;
    let material = Material::of(map, packet_file)?;
    let expected = api::build(api.spec(), &material);
    let mut body = captured.body.clone();
    let stream_field = endpoint::take_stream(&mut body);
    (api.spec().normalize)(&mut body);
    let taint = Taint::of(map, config);
    let mut findings: Vec<Finding> = diff::compare(&expected, &body)
        .into_iter()
        .map(|d| {
            let label = api.label(&d.path.to_string()).map(|l| format!("{l}: ")).unwrap_or_default();
            let hint = d.captured.and_then(|v| taint.hint(v)).unwrap_or_default();
            Finding::new(check, captured.at(d.path), format!("{label}{}{hint}", d.message))
        })
        .collect();
    for (url, at) in &captured.others {
        let url = crate::report::excerpt(url);
        findings.push(Finding::new(
            check,
            at.clone(),
            format!("another generation request: the capture also POSTs to {url}, which is not the reviewed call"),
        ));
    }
    for name in api::unplaceable(api.spec(), &material.call) {
        let message =
            format!("the packet's call.{name} has no place in the {} API: no body of it sends it", api.name());
        findings.push(Finding::new(
            check,
            crate::Location::in_file(packet_file, JsonPath::field("call").key(name)),
            message,
        ));
    }
    let mut notes = material_notes(api, &material);
    if !findings.is_empty() {
        notes.extend(specs::another_api(&captured.body, api.spec()));
    }
    let went = endpoint::Went { url: captured.url.as_ref(), base_url: captured.base_url.as_deref() };
    let url = endpoint::check_url(api, material.model, went, check, &mut findings, &mut notes);
    if stream_field || url.streamed {
        let how = if url.streamed { "the :streamGenerateContent method" } else { "\"stream\": true" };
        notes.push(format!("the request was streamed ({how}): streaming changes the transport, not the model's input"));
    }
    let mut outcome = Outcome::new(captured.origin.clone(), findings);
    outcome.notes = notes;
    Ok(outcome)
}

/// Packet material that must not reach a request beyond the prompts: renderInput
/// text and the base userMessage (for text-JSON providers, without its suffix).
struct Taint<'a> {
    leaves: Vec<(String, &'a str)>,
    user_message: Option<&'a str>,
    prompts: [&'a str; 2],
}

impl<'a> Taint<'a> {
    fn of(packet: &'a Map<String, Value>, config: &Config) -> Taint<'a> {
        let text = |key: &str| packet.get(key).and_then(Value::as_str).unwrap_or_default();
        let prompts = [text("systemPrompt"), text("effectiveUserMessage")];
        let mut leaves = Vec::new();
        if let Some(render) = packet.get("renderInput") {
            let mut trail = Trail::new(crate::report::JsonPath::field("renderInput"));
            walk(render, &mut trail, &mut |value, _, trail| {
                if let Some(s) = value.as_str().filter(|s| s.chars().count() >= config.taint.min_length) {
                    // Text the prompts already carry is the reviewed material, not a leak.
                    if !prompts.iter().any(|p| p.contains(s)) {
                        leaves.push((trail.render(), s));
                    }
                }
            });
        }
        let user_message = packet.get("userMessage").and_then(Value::as_str).filter(|u| *u != prompts[1]);
        Taint { leaves, user_message, prompts }
    }

    /// Why a captured value that differs from the expected one is worse than an edit.
    fn hint(&self, captured: &Value) -> Option<String> {
        let mut found = None;
        let mut visit = |value: &Value| {
            let Some(text) = value.as_str() else { return };
            if found.is_some() || self.prompts.contains(&text) {
                return;
            }
            if self.user_message == Some(text) {
                found = Some(" (it is the packet's userMessage without the provider suffix)".to_owned());
            } else if let Some((path, _)) = self.leaves.iter().find(|(_, leaf)| text.contains(leaf)) {
                found = Some(format!(" (it carries renderInput text from {path})"));
            }
        };
        visit(captured);
        walk(captured, &mut Trail::new(crate::report::JsonPath::root()), &mut |value, _, _| visit(value));
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(name: &str) -> Api {
        Api::from_name(name).unwrap()
    }

    #[test]
    fn endpoints_are_recognised_by_path_only() {
        assert!(api("anthropic").is_endpoint("https://api.anthropic.com/v1/messages"));
        assert!(!api("anthropic").is_endpoint("https://api.anthropic.com/v1/messages/count_tokens"));
        assert!(api("openai-chat").is_endpoint("https://api.openai.com/v1/chat/completions?x=1"));
        assert!(api("openai-responses").is_endpoint("https://api.openai.com/v1/responses"));
        assert!(!api("openai-responses").is_endpoint("https://api.openai.com/v1/chat/completions"));
        assert!(api("gemini").is_endpoint("https://h/v1beta/models/gemini-2.5-flash:generateContent"));
        assert!(!api("gemini").is_endpoint("https://h/v1beta/models/gemini-2.5-flash:countTokens"));
        assert!(api("bedrock-converse").is_endpoint("https://h/model/anthropic.claude-v1%3A0/converse"));
        assert!(!api("bedrock-converse").is_endpoint("https://h/model/m/invoke"));
    }

    #[test]
    fn api_names_round_trip_and_unknown_names_are_none() {
        let names: Vec<&str> = Api::all().map(Api::name).collect();
        assert_eq!(names, ["anthropic", "openai-chat", "openai-responses", "gemini", "bedrock-converse"]);
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "each API has its own name");
        for api in Api::all() {
            assert_eq!(Api::from_name(api.name()), Some(api));
            assert!(Api::of(api.provider()).contains(&api));
        }
        assert_eq!(Api::from_name("openai"), None);
        assert_eq!(Api::from_name("Gemini"), None);
    }

    #[test]
    fn labels_pick_the_longest_prefix() {
        assert_eq!(api("openai-chat").label("$.messages[1].content"), Some("user message"));
        assert_eq!(api("openai-chat").label("$.messages[2]"), Some("messages"));
        assert_eq!(api("openai-chat").label("$.modelx"), None);
    }
}
