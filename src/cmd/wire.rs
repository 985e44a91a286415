//! `packetproof wire`: the provider request body a packet implies, or the check of a
//! captured one. The library (`packetproof::wire`) returns data; this module reads the
//! files the flags name and hands the results to [`print`](crate::print).

use crate::flags::{formats, SuffixArg, OUTCOMES};
use crate::print;
use crate::provenance::{self, GateArgs};
use crate::settings::Settings;
use packetproof::reporter::{Event, Kind, Reporter};
use packetproof::wire::{self, Api};
use packetproof::{canonical, fsutil, Format, Invocation, Result, Status};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, clap::Args)]
// The gate judges a captured request: here --gate needs --check too.
#[command(group(clap::ArgGroup::new("gated").arg("gate").requires("check")))]
pub struct WireArgs {
    /// The runtime packet whose provider request body is printed or checked. Without it,
    /// `--check BODY --gate FILE` judges a production body with new data as `trace --gate`
    /// judges the call, against the suite's golden packets and vouched templates.
    #[arg(long, value_name = "FILE", required_unless_present = "gate")]
    pub packet: Option<PathBuf>,
    /// anthropic, openai-chat, openai-responses, gemini or bedrock-converse.
    #[arg(long, value_parser = parse_api)]
    pub api: Api,
    /// A captured request (a bare JSON body or a HAR file) to check instead of printing.
    #[arg(long, value_name = "CAPTURED", conflicts_with = "out")]
    pub check: Option<PathBuf>,
    /// With --check on a HAR: what stands in place of the API's origin in the request URL
    /// (a proxy, a gateway or a local capture server: `http://127.0.0.1:8080`); the API's
    /// own path (`/v1/messages`, …) must follow it. Default: the API's host.
    #[arg(long, value_name = "URL", requires = "check", value_parser = parse_base_url)]
    pub base_url: Option<String>,
    #[command(flatten)]
    pub gate: crate::flags::GateFlags,
    /// Write the body here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// `text` or `json` (for --check).
    #[arg(long, value_parser = formats(OUTCOMES), default_value = OUTCOMES[0].name())]
    pub format: Format,
    #[command(flatten)]
    pub require: crate::flags::RequireArg,
    #[command(flatten)]
    pub suffix: SuffixArg,
}

pub fn run(settings: &Settings, args: WireArgs) -> Result<Status> {
    let gate = provenance::gate(args.gate.file.as_deref(), &args.gate.trusted_keys, args.gate.max_age)?;
    let capture = Capture { file: args.check.as_deref(), base_url: args.base_url.as_deref(), gate };
    let config = settings.load()?;
    match &args.packet {
        Some(packet) => wire(&config, packet, args.api, capture, args.out.as_deref(), args.format),
        None => wire_production(&config, args.api, capture, args.format, args.require.required()),
    }
}

/// `--api`: one of the names [`Api::name`] gives.
pub fn parse_api(name: &str) -> std::result::Result<Api, String> {
    Api::from_name(name).ok_or_else(|| {
        // A provider's name (`google`, `openai`) is a near miss: name its APIs.
        let serving: Vec<&str> = Api::of_provider(name).map(Api::name).collect();
        if !serving.is_empty() {
            return format!("unknown API {name:?}; {name} packets go out through {}", serving.join(" or "));
        }
        let names: Vec<&str> = Api::all().map(Api::name).collect();
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
struct Capture<'a> {
    file: Option<&'a Path>,
    base_url: Option<&'a str>,
    /// `--gate FILE`, the keys it must be signed by and its maximum age.
    gate: Option<GateArgs<'a>>,
}

/// `wire`: the body (stdout, or `--out` written atomically), or with `--check` the
/// findings on a captured request.
fn wire(
    config: &Invocation,
    packet: &Path,
    api: Api,
    capture: Capture,
    out: Option<&Path>,
    format: Format,
) -> Result<Status> {
    let shown = packet.display().to_string();
    if let Some(out) = out.filter(|_| capture.file.is_none()) {
        packetproof::run::refuse_foreign_output(
            out,
            packetproof::run::OutputKind::RequestBody,
            config.settings(),
            &[packet],
        )?;
    }
    let packet_bytes = fsutil::read_bytes(packet, config.settings().limits.max_file_bytes)?;
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
    let bytes = fsutil::read_bytes(captured, config.settings().limits.max_file_bytes)?;
    let captured = wire::capture::parse(&bytes, &captured.display().to_string(), api)?.through(capture.base_url);
    let mut outcome = packetproof::judge::wire_check(config, packet, &value, api, &captured)?;
    if let Some((file, keys, max_age)) = &capture.gate {
        let gate = packetproof::attest::vouch::Gate::read(file, keys, config.settings(), *max_age)?;
        gate.hold(&mut outcome, &packet_bytes);
    }
    print::outcomes(&[outcome], format)
}

/// `wire --check BODY --gate FILE` without `--packet`: the production request body
/// judged as `trace --gate` judges its call, against the suite's golden packets and
/// the templates the gate vouched for; reported as `trace` reports a call.
fn wire_production(
    config: &Invocation,
    api: Api,
    capture: Capture,
    format: Format,
    require: packetproof::trace::settings::Required,
) -> Result<Status> {
    let (Some(file), Some((gate, keys, max_age))) = (capture.file, capture.gate) else {
        return Err(packetproof::Error::Internal("wire without --packet needs --check and --gate".into()));
    };
    let packets = packetproof::trace::packets::Packets::of_suite(config, "wire --check without --packet")?;
    let gate = packetproof::attest::vouch::Gate::read(gate, &keys, config.settings(), max_age)?;
    let vouching = packetproof::trace::vouched::Vouching::new(gate, config, &packets);
    if let Some(why) = vouching.templates_unavailable() {
        print::note(&format!("calls are not matched to templates: {why}"));
    }
    let bytes = fsutil::read_bytes(file, config.settings().limits.max_file_bytes)?;
    let captured = wire::capture::parse(&bytes, &file.display().to_string(), api)?.through(capture.base_url);
    let (judged, counts) =
        packetproof::trace::request::judge_request(&captured, api, &packets, &vouching, config, require)?;
    let format = if format == Format::Json { Format::Json } else { Format::Text };
    let mut reporter = Reporter::new(format, Kind::Trace, print::color())?;
    print::report(&reporter.report(Event::TraceCall(&judged))?)?;
    print::report(&reporter.report(Event::TraceEnd { counts: &counts, skipped: packets.skipped() })?)?;
    Ok(Status::from_ok(counts.ok()))
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
