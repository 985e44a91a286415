//! `run::provider-request`: a run directory may carry `provider-request.json`, the
//! request the runner actually POSTed (a bare body or a HAR file). It must carry
//! exactly the run's packet material (see `crate::wire`). Which API: the packet's
//! provider decides (the APIs that serve it; a provider no API serves has no known
//! API, and the file is then a finding), and for OpenAI the body
//! (`input`/`instructions`: Responses API; otherwise Chat Completions) or, in a HAR
//! file, the endpoint it was sent to.

use super::Run;
use crate::wire::{self, capture, Api, RUN_CHECK, RUN_FILE};
use crate::{canonical, Config, Error, Finding, Location, Result};
use serde_json::Value;
use std::path::Path;

/// Findings for the run's provider-request.json; none when the run has none.
pub(crate) fn check(dir: &Path, config: &Config) -> Vec<Finding> {
    let Ok(run) = Run::open(dir, config) else {
        return Vec::new(); // the run checks already report an unopenable run
    };
    let Ok(path) = run.dir.resolve(RUN_FILE, RUN_FILE) else {
        return vec![Finding::new(RUN_CHECK, Location::named(RUN_FILE), "leads outside the run directory")];
    };
    if path.symlink_metadata().is_err() {
        return Vec::new();
    }
    match check_file(&run, &path, config) {
        Ok(findings) => findings,
        Err(e) => vec![Finding::new(RUN_CHECK, Location::named(RUN_FILE), e.to_string())],
    }
}

fn check_file(run: &Run, path: &Path, config: &Config) -> Result<Vec<Finding>> {
    let packet = run.packet(None)?;
    let bytes = crate::fsutil::read_bytes(path, config.limits.max_file_bytes)?;
    let provider = packet.get("provider").and_then(Value::as_str).unwrap_or_default();
    let (api, captured) = captured_for(provider, &bytes)?;
    let outcome = wire::check(packet, api, &captured, config, "the run's packet", RUN_CHECK)?;
    Ok(outcome.findings)
}

fn captured_for(provider: &str, bytes: &[u8]) -> Result<(Api, capture::Captured)> {
    let apis = Api::of(provider);
    if apis.is_empty() {
        let mut known: Vec<&str> = Api::all().map(Api::provider).collect();
        known.dedup();
        return Err(Error::refused(
            "the run's packet $.provider",
            format!(
                "provider {provider:?} is served by no known request API (the APIs serve {known:?}), so {RUN_FILE} \
                 cannot be checked"
            ),
        ));
    }
    let value = canonical::parse(bytes).map_err(|e| e.in_file(RUN_FILE))?;
    let is_har = value.get("log").is_some_and(|log| log.get("entries").is_some());
    if !is_har {
        // OpenAI's two APIs: a body with `input` or `instructions` is a Responses body.
        let responses = value.get("input").is_some() || value.get("instructions").is_some();
        let api = match apis.as_slice() {
            [one] => *one,
            several => {
                *several.iter().find(|api| (api.name() == "openai-responses") == responses).unwrap_or(&several[0])
            }
        };
        return Ok((api, capture::Captured::body(value, RUN_FILE)));
    }
    // A HAR file: the API whose endpoint it has an entry for.
    let mut last = None;
    for api in apis {
        match capture::parse(bytes, RUN_FILE, api) {
            Ok(captured) => return Ok((api, captured)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("at least one API serves the provider"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_provider_is_an_error_not_openai() {
        let body = br#"{"model": "m", "messages": []}"#;
        let err = captured_for("azure-openai", body).unwrap_err().to_string();
        assert!(err.contains(r#"provider "azure-openai" is served by no known request API"#), "{err}");
        assert!(err.contains("$.provider") && err.contains("cannot be checked"), "{err}");
        let api = |provider: &str, body: &[u8]| captured_for(provider, body).unwrap().0.name();
        assert_eq!(api("openai", body), "openai-chat");
        assert_eq!(api("openai", br#"{"input": []}"#), "openai-responses");
        assert_eq!(api("google", body), "gemini");
        assert_eq!(api("anthropic", body), "anthropic");
        assert_eq!(api("bedrock", body), "bedrock-converse");
    }
}
