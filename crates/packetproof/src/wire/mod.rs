//! Provenance to the wire: the exact provider request body a packet implies, and
//! the check of a captured request against it.
//!
//! - [`Api`] names the four request formats; each has its own module with the
//!   body it builds, the equivalent forms it accepts, and what each path means.
//! - [`capture`] reads what was captured: a bare JSON body or a HAR file.
//! - `diff` compares a captured body with the expected one, path by path.
//!
//! The packet is the only source: nothing here invents request material. Settings
//! outside the packet (temperature, metadata, …) pass only when harness.toml lists
//! them under `[wire.allowed_settings]` for the API.

pub(crate) mod anthropic;
pub mod capture;
pub(crate) mod diff;
pub(crate) mod endpoint;
pub(crate) mod gemini;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;

use crate::branch::Vendor;
use crate::config::{AllowedSettings, Config};
use crate::report::{walk, Trail};
use crate::JsonPath;
use crate::{Check, Error, Finding, Outcome, Result};
use capture::Captured;
use serde_json::{Map, Value};

/// The check of `packetproof wire --check`.
pub const CHECK: Check = Check::Input(crate::InputCheck::WireRequest);
/// The check of `verify` on a run's provider-request.json.
pub(crate) const RUN_CHECK: Check = Check::Run(crate::RunCheck::ProviderRequest);
/// The captured request a run directory may carry.
pub(crate) const RUN_FILE: &str = "provider-request.json";

/// A provider request format, named as `--api` takes it (`anthropic`, `openai-chat`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum Api {
    /// Anthropic Messages API, POST /v1/messages.
    Anthropic,
    /// OpenAI Chat Completions, POST /v1/chat/completions.
    OpenaiChat,
    /// OpenAI Responses API, POST /v1/responses.
    OpenaiResponses,
    /// Gemini generateContent, POST /v1beta/models/{model}:generateContent.
    Gemini,
}

impl Api {
    pub const ALL: [Api; 4] = [Api::Anthropic, Api::OpenaiChat, Api::OpenaiResponses, Api::Gemini];

    /// The API of a name as `--api` takes it (`None`: no API has the name).
    pub fn from_name(name: &str) -> Option<Api> {
        name.parse().ok()
    }

    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The vendor whose API this is (a packet's `provider` names it).
    pub fn vendor(self) -> Vendor {
        match self {
            Api::Anthropic => Vendor::Anthropic,
            Api::OpenaiChat | Api::OpenaiResponses => Vendor::Openai,
            Api::Gemini => Vendor::Google,
        }
    }

    /// The APIs a vendor's packets go out through.
    pub(crate) fn of(vendor: Vendor) -> &'static [Api] {
        match vendor {
            Vendor::Anthropic => &[Api::Anthropic],
            Vendor::Openai => &[Api::OpenaiResponses, Api::OpenaiChat],
            Vendor::Google => &[Api::Gemini],
        }
    }

    /// Whether a request URL is this API's endpoint (for picking a HAR entry).
    pub(crate) fn is_endpoint(self, url: &str) -> bool {
        endpoint::is_endpoint(self, url)
    }

    fn allowed(self, settings: &AllowedSettings) -> &[String] {
        match self {
            Api::Anthropic => &settings.anthropic,
            Api::OpenaiChat => &settings.openai_chat,
            Api::OpenaiResponses => &settings.openai_responses,
            Api::Gemini => &settings.gemini,
        }
    }

    fn build(self, m: &Material) -> Value {
        match self {
            Api::Anthropic => anthropic::body(m),
            Api::OpenaiChat => openai_chat::body(m),
            Api::OpenaiResponses => openai_responses::body(m),
            Api::Gemini => gemini::body(m),
        }
    }

    fn normalize(self, body: &mut Value) {
        match self {
            Api::Anthropic => anthropic::normalize(body),
            Api::OpenaiChat => openai_chat::normalize(body),
            Api::OpenaiResponses => openai_responses::normalize(body),
            Api::Gemini => gemini::normalize(body),
        }
    }

    /// What the value at a body path is, for messages ("system prompt", …).
    fn label(self, path: &str) -> Option<&'static str> {
        let labels: &[(&str, &str)] = match self {
            Api::Anthropic => anthropic::LABELS,
            Api::OpenaiChat => openai_chat::LABELS,
            Api::OpenaiResponses => openai_responses::LABELS,
            Api::Gemini => gemini::LABELS,
        };
        // The longest matching prefix names it: `$.messages[0].content` is the user message.
        labels
            .iter()
            .filter(|(prefix, _)| {
                path.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
            })
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, label)| *label)
    }
}

/// The packet material a request carries, borrowed from the packet.
#[derive(Debug)]
pub(crate) struct Material<'a> {
    pub(crate) model: &'a str,
    /// As a JavaScript client sends it: `6.4e4` in a packet is the integer 64000.
    pub(crate) max_tokens: Value,
    pub(crate) system: &'a str,
    pub(crate) user: &'a str,
    /// `outputSchema` ({name, description?, schema}); absent for text-JSON providers
    /// and for plain-text answers.
    pub(crate) schema: Option<&'a Map<String, Value>>,
    /// Whether the answer is asked for as JSON: a schema, or (text-JSON) the suffix
    /// appended to the user message. Neither: a plain-text call, whose body carries no
    /// output format at all.
    pub(crate) json: bool,
}

impl<'a> Material<'a> {
    /// Read the material from a packet; `file` names the packet in errors.
    pub(crate) fn of(packet: &'a Map<String, Value>, file: &str) -> Result<Material<'a>> {
        let text = |key: &str| {
            packet.get(key).and_then(Value::as_str).ok_or_else(|| Error::shape(file, JsonPath::field(key), "a string"))
        };
        // Whole by value, as packet::contract holds it (`64000.0` and `6.4e4` are 64000).
        let max_tokens = packet
            .get("maxTokens")
            .and_then(Value::as_f64)
            .filter(|t| *t >= 1.0 && t.fract() == 0.0 && *t <= 9_007_199_254_740_991.0)
            .map(|t| Value::from(t as u64))
            .ok_or_else(|| Error::shape(file, JsonPath::field("maxTokens"), "a positive integer"))?;
        let schema = match packet.get("outputSchema") {
            None => None,
            Some(Value::Object(schema)) if schema.get("name").is_some_and(Value::is_string) => Some(schema),
            Some(_) => return Err(Error::shape(file, JsonPath::field("outputSchema"), "an object with a string name")),
        };
        let user = text("effectiveUserMessage")?;
        let json = schema.is_some() || packet.get("userMessage").and_then(Value::as_str) != Some(user);
        Ok(Material { model: text("model")?, max_tokens, system: text("systemPrompt")?, user, schema, json })
    }

    /// Why the output schema cannot be sent in OpenAI strict mode, if it cannot.
    pub(crate) fn strict_problem(&self) -> Option<String> {
        let schema = self.schema.and_then(|s| s.get("schema"))?;
        openai_chat::strict_problem(schema, "$.outputSchema.schema")
    }

    pub(crate) fn schema_name(&self) -> Value {
        self.schema.and_then(|s| s.get("name")).cloned().unwrap_or(Value::Null)
    }
}

/// The exact request body for `packet` in `api`'s format. The packet's provider
/// must be the API's; judging the packet is the caller's (the `wire` command asks
/// the rule book first, and a run's packet is judged by the packet rules).
pub fn body(packet: &Value, api: Api, file: &str) -> Result<Value> {
    let map = sound_packet(packet, api, file)?;
    Ok(api.build(&Material::of(map, file)?))
}

/// What a reader of the body should know: for the OpenAI APIs, why `strict` is false.
pub fn notes(packet: &Value, api: Api, file: &str) -> Vec<String> {
    let Some(map) = packet.as_object() else { return Vec::new() };
    match (api, Material::of(map, file).ok().and_then(|m| m.strict_problem())) {
        (Api::OpenaiChat | Api::OpenaiResponses, Some(problem)) => {
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
    if provider != api.vendor().name() {
        return Err(Error::refused(
            format!("{file} $.provider"),
            format!(
                "the packet is for provider {provider:?}; the {} API serves provider {:?}",
                api.name(),
                api.vendor().name()
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
    let expected = api.build(&material);
    let mut body = captured.body.clone();
    let stream_field = endpoint::take_stream(api, &mut body);
    api.normalize(&mut body);
    let taint = Taint::of(map, config);
    let mut findings: Vec<Finding> = diff::compare(&expected, &body, api.allowed(&config.wire.allowed_settings))
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
    let mut notes = notes(packet, api, packet_file);
    let url = endpoint::check_url(api, material.model, captured, check, &mut findings, &mut notes);
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

    #[test]
    fn endpoints_are_recognised_by_path_only() {
        assert!(Api::Anthropic.is_endpoint("https://api.anthropic.com/v1/messages"));
        assert!(!Api::Anthropic.is_endpoint("https://api.anthropic.com/v1/messages/count_tokens"));
        assert!(Api::OpenaiChat.is_endpoint("https://api.openai.com/v1/chat/completions?x=1"));
        assert!(Api::OpenaiResponses.is_endpoint("https://api.openai.com/v1/responses"));
        assert!(!Api::OpenaiResponses.is_endpoint("https://api.openai.com/v1/chat/completions"));
        assert!(Api::Gemini.is_endpoint("https://h/v1beta/models/gemini-2.5-flash:generateContent"));
        assert!(!Api::Gemini.is_endpoint("https://h/v1beta/models/gemini-2.5-flash:countTokens"));
    }

    #[test]
    fn api_names_round_trip_and_unknown_names_are_none() {
        let names = Api::ALL.map(Api::name);
        assert_eq!(names, ["anthropic", "openai-chat", "openai-responses", "gemini"]);
        for api in Api::ALL {
            assert_eq!(Api::from_name(api.name()), Some(api));
        }
        assert_eq!(Api::from_name("openai"), None);
        assert_eq!(Api::from_name("Gemini"), None);
    }

    #[test]
    fn each_vendor_is_served_by_its_own_apis() {
        for vendor in Vendor::ALL {
            assert!(!Api::of(*vendor).is_empty());
            assert!(Api::of(*vendor).iter().all(|api| api.vendor() == *vendor), "{vendor}");
        }
        assert!(Api::ALL.iter().all(|api| Api::of(api.vendor()).contains(api)));
    }

    #[test]
    fn labels_pick_the_longest_prefix() {
        assert_eq!(Api::OpenaiChat.label("$.messages[1].content"), Some("user message"));
        assert_eq!(Api::OpenaiChat.label("$.messages[2]"), Some("messages"));
        assert_eq!(Api::OpenaiChat.label("$.modelx"), None);
    }
}
