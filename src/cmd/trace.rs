//! `packetproof trace FILE… --packets PATH…`: production traces held to reviewed
//! packets. The library ([`packetproof::trace`]) judges each GenAI call as it is read,
//! and its reporter renders it; this module prints what the reporter returns at once,
//! so memory stays flat in the number of spans.

use crate::flags::{formats, SuffixArg, TRACE};
use crate::settings::Settings;
use crate::{print, provenance};
use packetproof::reporter::{Event, Kind, Reporter};
use packetproof::trace::{self, packets::Packets};
use packetproof::{Format, Result, Status};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct TraceArgs {
    /// OTLP trace and log exports: OTLP/JSON (the Collector's file exporter, one export
    /// per line, or a single JSON document) or OTLP protobuf (one export per file).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The reviewed packets: packet files, or folders searched for them.
    #[arg(long, required = true, num_args = 1.., value_name = "PATH")]
    pub packets: Vec<PathBuf>,
    /// `text` (one line per call and a summary), `json` or `junit` (XML).
    #[arg(long, value_parser = formats(TRACE), default_value = TRACE[0].name())]
    pub format: Format,
    #[command(flatten)]
    pub gate: crate::flags::GateFlags,
    /// Pass a trace with no GenAI call, or with calls that cannot be judged (content not
    /// captured or not readable); by default it fails.
    #[arg(long)]
    pub allow_unjudged: bool,
    #[command(flatten)]
    pub require: crate::flags::RequireArg,
    #[command(flatten)]
    pub suffix: SuffixArg,
}

/// Each call is reported as it is judged (text and JSON print it at once; JUnit keeps
/// one small record per call and prints them at the end).
pub fn run(settings: &Settings, args: TraceArgs) -> Result<Status> {
    let config = &settings.load()?;
    let packets = Packets::load(&args.packets, config)?;
    let vouching =
        provenance::vouching(args.gate.file.as_deref(), &args.gate.trusted_keys, args.gate.max_age, config, &packets)?;
    let mut reporter = Reporter::new(args.format, Kind::Trace, print::color())?;
    let options = trace::Options { allow_unjudged: args.allow_unjudged, require: args.require.required() };
    let counts = trace::check_vouched(&args.files, &packets, vouching.as_ref(), config, options, &mut |judged| {
        print::report(&reporter.report(Event::TraceCall(judged))?)
    })?;
    print::report(&reporter.report(Event::TraceEnd { counts: &counts, skipped: packets.skipped() })?)?;
    Ok(Status::from_ok(counts.ok()))
}
