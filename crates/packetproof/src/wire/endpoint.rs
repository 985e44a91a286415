//! Where a captured request went, and whether it was streamed.
//!
//! A HAR entry records the URL: it must be the API's host and path
//! (`https://api.anthropic.com/v1/messages`, …; for Gemini
//! `/v1beta/models/{model}:generateContent`, the model the packet's). A request made
//! through a proxy or a local capture server goes elsewhere: `--base-url` names what
//! stands in place of the API's origin (`http://127.0.0.1:8080`, or a gateway URL with
//! its own path prefix), and the API's own path must follow it.
//!
//! Streaming changes the transport, not what the model receives: `"stream": true` in
//! an Anthropic or OpenAI body, and Gemini's `:streamGenerateContent`, pass and are
//! reported as streamed.

use super::capture::Captured;
use super::Api;
use crate::{Check, Finding};
use serde_json::Value;

/// The API's own origin, which `--base-url` replaces.
pub(crate) fn default_base(api: Api) -> &'static str {
    match api {
        Api::Anthropic => "https://api.anthropic.com",
        Api::OpenaiChat | Api::OpenaiResponses => "https://api.openai.com",
        Api::Gemini => "https://generativelanguage.googleapis.com",
    }
}

/// The API's path after the origin (Gemini's names the model).
fn api_path(api: Api, model: &str) -> String {
    match api {
        Api::Anthropic => "/v1/messages".into(),
        Api::OpenaiChat => "/v1/chat/completions".into(),
        Api::OpenaiResponses => "/v1/responses".into(),
        Api::Gemini => format!("/v1beta/models/{model}:generateContent (or :streamGenerateContent)"),
    }
}

/// Gemini's API versions (google-genai for Python addresses `/v1`, for Node `/v1beta`)
/// and methods (`:streamGenerateContent` is the streamed call).
const GEMINI_VERSIONS: [&str; 2] = ["/v1beta/models/", "/v1/models/"];
const GEMINI_METHODS: [&str; 2] = ["generateContent", "streamGenerateContent"];

/// What the URL check found: findings go to the caller's list; `streamed` when the
/// URL is a streaming method.
pub(super) struct UrlCheck {
    pub(crate) streamed: bool,
}

/// Check the captured URL (a HAR entry's) against the API's endpoint and the packet's
/// model. A bare body has no URL: said in a note for Gemini, whose model is in it.
pub(super) fn check_url(
    api: Api,
    model: &str,
    captured: &Captured,
    check: Check,
    findings: &mut Vec<Finding>,
    notes: &mut Vec<String>,
) -> UrlCheck {
    let Some((url, at)) = &captured.url else {
        if api == Api::Gemini {
            notes.push(
                "the model of a Gemini request is in its URL (and so is streaming); a bare body cannot show them"
                    .into(),
            );
        }
        return UrlCheck { streamed: false };
    };
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let base = captured.base_url.as_deref().unwrap_or(default_base(api)).trim_end_matches('/');
    let mut fail = |message: String| findings.push(Finding::new(check, at.clone(), message));
    let Some(rest) = path.strip_prefix(base).filter(|rest| rest.starts_with('/')) else {
        let how = match &captured.base_url {
            Some(_) => "the --base-url given",
            None => "the API's host; `wire --check --base-url` names a proxy or a local capture server",
        };
        fail(format!("endpoint: the request went to {path}; expected {base}{} ({how})", api_path(api, model)));
        return UrlCheck { streamed: false };
    };
    if api != Api::Gemini {
        if rest != api_path(api, model) {
            fail(format!("endpoint: the request went to path {rest}; expected {}", api_path(api, model)));
        }
        return UrlCheck { streamed: false };
    }
    let Some((found, method)) = gemini_model(rest) else {
        fail(format!("endpoint: the request went to path {rest}; expected {}", api_path(api, model)));
        return UrlCheck { streamed: false };
    };
    if found != model {
        fail(format!("model: the URL names model {found:?}; expected {model:?}"));
    }
    UrlCheck { streamed: method == "streamGenerateContent" }
}

/// `(model, method)` of a Gemini path `/v1beta/models/{model}:{method}`.
fn gemini_model(rest: &str) -> Option<(&str, &str)> {
    let tail = GEMINI_VERSIONS.iter().find_map(|v| rest.strip_prefix(v))?;
    let (model, method) = tail.split_once(':')?;
    (!model.is_empty() && !model.contains('/') && GEMINI_METHODS.contains(&method)).then_some((model, method))
}

/// Whether a URL's path is the API's endpoint (for picking a HAR entry): by path
/// only, so a capture through any host is found and then judged by `check_url`.
pub(crate) fn is_endpoint(api: Api, url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or(url).trim_end_matches('/');
    match api {
        Api::Anthropic => path.ends_with("/v1/messages"),
        Api::OpenaiChat => path.ends_with("/chat/completions"),
        Api::OpenaiResponses => path.ends_with("/v1/responses"),
        Api::Gemini => GEMINI_METHODS.iter().any(|m| path.ends_with(&format!(":{m}"))),
    }
}

/// Endpoints that generate beside the four APIs: batches, legacy completions, Vertex's
/// predict methods. A POST to any of them, or to another API's endpoint, in a capture
/// is a request the reviewed call does not account for.
const OTHER_GENERATION: [&str; 7] = [
    "/v1/messages/batches",
    "/v1/complete",
    "/v1/completions",
    "/v1/batches",
    ":batchGenerateContent",
    ":rawPredict",
    ":streamRawPredict",
];

/// Whether a URL's path is a generation endpoint of any vendor (by path only).
pub(crate) fn is_generation(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or(url).trim_end_matches('/');
    Api::ALL.iter().any(|api| is_endpoint(*api, path)) || OTHER_GENERATION.iter().any(|p| path.ends_with(p))
}

/// Take `"stream": true` out of an Anthropic or OpenAI body: true when it was there.
/// Any other value of `stream` stays, and the comparison reports it.
pub(super) fn take_stream(api: Api, body: &mut Value) -> bool {
    if api == Api::Gemini {
        return false;
    }
    let Some(map) = body.as_object_mut() else { return false };
    if map.get("stream") == Some(&Value::Bool(true)) {
        map.remove("stream");
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_paths_name_model_and_method() {
        assert_eq!(gemini_model("/v1beta/models/m:generateContent"), Some(("m", "generateContent")));
        assert_eq!(gemini_model("/v1/models/m:streamGenerateContent"), Some(("m", "streamGenerateContent")));
        assert_eq!(gemini_model("/v1beta/models/m:countTokens"), None);
        assert_eq!(gemini_model("/v1beta/tunedModels/m:generateContent"), None);
        assert_eq!(gemini_model("/v1beta/models/a/b:generateContent"), None);
    }
}
