//! The provenance commands: `wire` (the provider request body a packet implies, or
//! the check of a captured one) and `attest` (sign a completed run). The library
//! (`packetproof::wire`, `packetproof::run::attestation`) returns data; this module reads the
//! files the flags name and hands the results to [`print`](super::print).

use super::print;
use packetproof::reporter::{Event, Kind, Reporter};
use packetproof::wire::{self, Api};
use packetproof::{canonical, fsutil, Config, Format, Result, Status};
use std::path::Path;

/// `--api`: one of the names [`Api::name`] gives.
pub fn parse_api(name: &str) -> std::result::Result<Api, String> {
    Api::from_name(name).ok_or_else(|| {
        // A provider's name (`google`, `openai`) is a near miss: name its APIs.
        let serving: Vec<&str> =
            Api::ALL.iter().filter(|api| api.vendor().name() == name).map(|api| api.name()).collect();
        if !serving.is_empty() {
            return format!("unknown API {name:?}; {name} packets go out through {}", serving.join(" or "));
        }
        let names: Vec<&str> = Api::ALL.iter().map(|api| api.name()).collect();
        format!("unknown API {name:?}; expected one of {}", names.join(", "))
    })
}

/// `--base-url`: an http(s) URL with no query or fragment.
pub fn parse_base_url(url: &str) -> std::result::Result<String, String> {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(rest) if !rest.is_empty() && !rest.starts_with('/') && !rest.contains(['?', '#', ' ']) => {
            Ok(url.trim_end_matches('/').to_owned())
        }
        _ => Err(format!("expected an http:// or https:// URL without query or fragment, found {url:?}")),
    }
}

/// `wire --check`: the captured file, and what stands in for the API's origin.
pub struct Capture<'a> {
    pub file: Option<&'a Path>,
    pub base_url: Option<&'a str>,
    /// `--gate FILE`, the keys it must be signed by and its maximum age.
    pub gate: Option<GateArgs<'a>>,
}

/// `--gate FILE --trusted-key PUB… [--gate-max-age AGE]`.
pub type GateArgs<'a> = (&'a Path, Vec<ed25519_dalek::VerifyingKey>, Option<std::time::Duration>);

/// `--gate FILE --trusted-key PUB…`: the file and the keys, read now, and the maximum age.
pub fn gate<'a>(
    file: Option<&'a Path>,
    keys: &[std::path::PathBuf],
    max_age: Option<std::time::Duration>,
) -> Result<Option<GateArgs<'a>>> {
    file.map(|file| Ok((file, trusted_keys(keys)?, max_age))).transpose()
}

/// `wire`: the body (stdout, or `--out` written atomically), or with `--check` the
/// findings on a captured request.
pub fn wire(
    config: &Config,
    packet: &Path,
    api: Api,
    capture: Capture,
    out: Option<&Path>,
    format: Format,
) -> Result<Status> {
    let shown = packet.display().to_string();
    if let Some(out) = out.filter(|_| capture.file.is_none()) {
        packetproof::run::refuse_foreign_output(out, packetproof::run::OutputKind::RequestBody, config, &[packet])?;
    }
    let packet_bytes = fsutil::read_bytes(packet, config.limits.max_file_bytes)?;
    let value = canonical::parse(&packet_bytes).map_err(|e| e.in_file(packet.display()))?;
    packetproof::provider::expect_packet(&value, &shown)?;
    let Some(captured) = capture.file else {
        let judged = packetproof::judge::wire_body(config, packet, &value, api)?;
        let body = canonical::to_pretty(&judged.value);
        print::notes(&wire::notes(&value, api, &shown));
        print::skipped_notes(&judged.skipped);
        match out {
            Some(out) => fsutil::write_atomic(out, body.as_bytes())?,
            None => print::bytes(body.as_bytes())?,
        }
        return Ok(Status::Holds);
    };
    let bytes = fsutil::read_bytes(captured, config.limits.max_file_bytes)?;
    let captured = wire::capture::parse(&bytes, &captured.display().to_string(), api)?.through(capture.base_url);
    let mut outcome = packetproof::judge::wire_check(config, packet, &value, api, &captured)?;
    if let Some((file, keys, max_age)) = &capture.gate {
        let gate = packetproof::attest::vouch::Gate::read(file, keys, config, *max_age)?;
        gate.hold(&mut outcome, &packet_bytes);
    }
    print::outcomes(&[outcome], format)
}

/// `wire --check BODY --gate FILE` without `--packet`: the production request body
/// judged as `trace --gate` judges its call, against the suite's golden packets and
/// the templates the gate vouched for; reported as `trace` reports a call.
pub fn wire_production(config: &Config, api: Api, capture: Capture, format: Format) -> Result<Status> {
    let (Some(file), Some((gate, keys, max_age))) = (capture.file, capture.gate) else {
        return Err(packetproof::Error::Internal("wire without --packet needs --check and --gate".into()));
    };
    let packets = packetproof::trace::packets::Packets::of_suite(config, "wire --check without --packet")?;
    let gate = packetproof::attest::vouch::Gate::read(gate, &keys, config, max_age)?;
    let vouching = packetproof::trace::vouched::Vouching::new(gate, config, &packets);
    if let Some(why) = vouching.templates_unavailable() {
        print::note(&format!("calls are not matched to templates: {why}"));
    }
    let bytes = fsutil::read_bytes(file, config.limits.max_file_bytes)?;
    let captured = wire::capture::parse(&bytes, &file.display().to_string(), api)?.through(capture.base_url);
    let (judged, counts) = packetproof::trace::request::judge_request(&captured, api, &packets, &vouching, config)?;
    let format = if format == Format::Json { Format::Json } else { Format::Text };
    let mut reporter = Reporter::new(format, Kind::Trace, print::color())?;
    print::report(&reporter.report(Event::TraceCall(&judged))?)?;
    print::report(&reporter.report(Event::TraceEnd { counts: &counts, skipped: packets.skipped() })?)?;
    Ok(Status::from_ok(counts.ok()))
}

/// `attest`: sign a completed run with a PKCS#8 PEM Ed25519 key.
pub fn attest(config: &Config, run_dir: &Path, key: &Path, out: Option<&Path>) -> Result<Status> {
    let key = packetproof::attest::keys::signing_key(key)?;
    let judged = packetproof::judge::attest(config, run_dir, &key, out)?;
    print::attested(&judged.value, &packetproof::attest::keys::key_id(&key.verifying_key()))?;
    print::skipped(&judged.skipped)?;
    Ok(Status::Holds)
}

/// `verify --trusted-key`: the SPKI PEM public keys.
pub fn trusted_keys(paths: &[std::path::PathBuf]) -> Result<Vec<ed25519_dalek::VerifyingKey>> {
    paths.iter().map(|path| packetproof::attest::keys::verifying_key(path)).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_provider_name_suggests_its_apis() {
        let google = super::parse_api("google").unwrap_err();
        assert_eq!(google, "unknown API \"google\"; google packets go out through gemini");
        let openai = super::parse_api("openai").unwrap_err();
        assert_eq!(openai, "unknown API \"openai\"; openai packets go out through openai-chat or openai-responses");
        assert!(super::parse_api("bard").unwrap_err().contains("expected one of anthropic, openai-chat"));
    }
}
