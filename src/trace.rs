//! `packetproof trace FILE… --packets PATH…`: production traces held to reviewed
//! packets. The library ([`packetproof::trace`]) judges each GenAI call as it is read; this
//! module prints it at once (text, or JSON as a stream of calls), so memory stays flat
//! in the number of spans. JUnit needs its counts up front: it keeps one small record
//! per call.

use super::print;
use packetproof::conformance::junit;
use packetproof::trace::{self, packets::Packets, report, Judged};
use packetproof::{Config, Result, Status};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct TraceArgs {
    /// OTLP/JSON trace files: the Collector's file exporter (one ExportTraceServiceRequest
    /// per line) or a single JSON document.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The reviewed packets: packet files, or folders searched for them.
    #[arg(long, required = true, num_args = 1.., value_name = "PATH")]
    pub packets: Vec<PathBuf>,
    /// `text` (one line per call and a summary), `json` or `junit` (XML).
    #[arg(long, value_enum, default_value_t)]
    pub format: TraceFormat,
    #[command(flatten)]
    pub suffix: super::args::SuffixArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TraceFormat {
    #[default]
    Text,
    Json,
    Junit,
}

pub fn run(config: &Config, args: &TraceArgs) -> Result<Status> {
    let packets = Packets::load(&args.packets, config)?;
    let counts = match args.format {
        TraceFormat::Text => {
            let counts = trace::check(&args.files, &packets, config, &mut |j| print::text_bytes(&report::text(j)))?;
            print::text_bytes(&report::summary(&counts))?;
            print::text_bytes(&report::skipped_text(packets.skipped()))?;
            counts
        }
        TraceFormat::Json => {
            let mut first = true;
            print::bytes(report::json_start().as_bytes())?;
            let counts = trace::check(&args.files, &packets, config, &mut |j| {
                let sep = if std::mem::take(&mut first) { "\n  " } else { ",\n  " };
                print::bytes(format!("{sep}{}", report::json(j)).as_bytes())
            })?;
            print::bytes(report::json_end(&counts, packets.skipped()).as_bytes())?;
            counts
        }
        TraceFormat::Junit => {
            let (mut records, mut skipped) = (Vec::new(), Vec::new());
            let counts = trace::check(&args.files, &packets, config, &mut |j: &Judged| {
                let (name, failure) = report::junit_case(j);
                match j.verdict {
                    trace::verdict::Verdict::NotJudgeable { .. } => skipped.push(name),
                    _ => records.push(junit::Record {
                        name,
                        time: std::time::Duration::ZERO,
                        failure,
                        skipped: None,
                        notes: Vec::new(),
                    }),
                }
                Ok(())
            })?;
            // A rule that did not run on a reviewed packet is a skipped case, with why.
            for rule in packets.skipped() {
                let (name, reason) = (rule.check.to_string(), Some(rule.reason.clone()));
                records.push(junit::Record {
                    name,
                    time: std::time::Duration::ZERO,
                    failure: None,
                    skipped: reason,
                    notes: Vec::new(),
                });
            }
            print::bytes(junit::to_xml("packetproof trace", &records, &skipped).as_bytes())?;
            counts
        }
    };
    Ok(Status::from_ok(counts.ok()))
}
