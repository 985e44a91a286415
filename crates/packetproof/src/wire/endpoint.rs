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

use super::Api;
use crate::{Check, Finding, Location};
use serde_json::Value;

/// The API's own origin, which `--base-url` replaces.
pub(crate) fn default_base(api: Api) -> &'static str {
    api.spec().origin
}

/// What the URL check found: findings go to the caller's list; `streamed` when the
/// URL is a streaming method.
pub(super) struct UrlCheck {
    pub(crate) streamed: bool,
}

/// Where a captured request went: its URL and where the capture records it (a HAR
/// entry's; none for a bare body), and what stands in for the API's origin.
pub(super) struct Went<'a> {
    pub(super) url: Option<&'a (String, Location)>,
    pub(super) base_url: Option<&'a str>,
}

/// Check the captured URL (a HAR entry's) against the API's endpoint and the packet's
/// model. A bare body has no URL: said in a note for an API whose model is in it.
pub(super) fn check_url(
    api: Api,
    model: &str,
    captured: Went,
    check: Check,
    findings: &mut Vec<Finding>,
    notes: &mut Vec<String>,
) -> UrlCheck {
    let spec = api.spec();
    let expected = spec.path.replace("{model}", model);
    let Some((url, at)) = captured.url else {
        if spec.path.contains("{model}") {
            notes.push(format!(
                "the model of a {} request is in its URL (and so is streaming); a bare body cannot show them",
                api.name()
            ));
        }
        return UrlCheck { streamed: false };
    };
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let base = captured.base_url.unwrap_or(default_base(api)).trim_end_matches('/');
    let mut fail = |message: String| findings.push(Finding::new(check, at.clone(), message));
    let Some(rest) = path.strip_prefix(base).filter(|rest| rest.starts_with('/')) else {
        let how = match captured.base_url {
            Some(_) => "the --base-url given",
            None => "the API's host; `wire --check --base-url` names a proxy or a local capture server",
        };
        fail(format!("endpoint: the request went to {path}; expected {base}{expected} ({how})"));
        return UrlCheck { streamed: false };
    };
    // The whole rest is the API's path: a route found after a prefix is another path.
    let Some(route) = (spec.route)(rest).filter(|route| route.at == 0) else {
        fail(format!("endpoint: the request went to path {rest}; expected {expected}"));
        return UrlCheck { streamed: false };
    };
    if let Some(found) = route.model.as_deref().filter(|found| *found != model) {
        fail(format!("model: the URL names model {found:?}; expected {model:?}"));
    }
    UrlCheck { streamed: route.streamed }
}

/// Whether a URL's path is the API's endpoint (for picking a HAR entry): by path
/// only, so a capture through any host is found and then judged by `check_url`.
pub(crate) fn is_endpoint(api: Api, url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    (api.spec().route)(path).is_some()
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
    Api::all().any(|api| is_endpoint(api, path)) || OTHER_GENERATION.iter().any(|p| path.ends_with(p))
}

/// Take `"stream": true` out of a body: true when it was there. Any other value of
/// `stream` stays, and the comparison reports it.
pub(super) fn take_stream(body: &mut Value) -> bool {
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

    fn route(name: &str, path: &str) -> Option<(Option<String>, bool)> {
        (Api::from_name(name).unwrap().spec().route)(path).map(|r| (r.model, r.streamed))
    }

    #[test]
    fn model_naming_paths_name_model_and_method() {
        assert_eq!(route("gemini", "/v1beta/models/m:generateContent"), Some((Some("m".into()), false)));
        assert_eq!(route("gemini", "/v1/models/m:streamGenerateContent"), Some((Some("m".into()), true)));
        assert_eq!(route("gemini", "/v1beta/models/m:countTokens"), None);
        assert_eq!(route("gemini", "/v1beta/tunedModels/m:generateContent"), None);
        assert_eq!(route("gemini", "/v1beta/models/a/b:generateContent"), None);
        let bedrock = route("bedrock-converse", "/model/anthropic.claude-sonnet-4-5-v1%3A0/converse-stream");
        assert_eq!(bedrock, Some((Some("anthropic.claude-sonnet-4-5-v1:0".into()), true)));
        assert_eq!(route("bedrock-converse", "/model/m%zz/converse"), None);
    }
}
