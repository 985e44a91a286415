//! `packetproof evaluate`: a run's raw output judged, evaluation.json written.

use crate::flags::{formats, SuffixArg, EVALUATION};
use crate::print;
use crate::settings::Settings;
use packetproof::reporter::Event;
use packetproof::run::EvaluateRequest;
use packetproof::{Format, Result, Status};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct EvaluateArgs {
    #[command(flatten)]
    pub suffix: SuffixArg,
    /// The run directory (as written by `prepare`).
    #[arg(long, value_name = "DIR")]
    pub run_dir: PathBuf,
    /// The runtime packet; default: rebuilt from agent-request.json + eval-context.json.
    #[arg(long, value_name = "FILE")]
    pub packet: Option<PathBuf>,
    /// The agent's raw output; default: the manifest's rawOutput (raw-output.json).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Where to write the evaluation; default: the manifest's evaluation (evaluation.json).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// `json` prints the evaluation document itself.
    #[arg(long, value_parser = formats(EVALUATION), default_value = EVALUATION[0].name())]
    pub format: Format,
    /// A schema snapshot to pin: the schema the answer is judged against (a Google run's
    /// held-back snapshot, else the packet's outputSchema) must be this one.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
}

impl From<EvaluateArgs> for EvaluateRequest {
    fn from(args: EvaluateArgs) -> Self {
        EvaluateRequest {
            run_dir: args.run_dir,
            packet: args.packet,
            output: args.output,
            report: args.report,
            schema: args.schema,
        }
    }
}

pub fn run(settings: &Settings, args: EvaluateArgs) -> Result<Status> {
    let config = settings.load()?;
    let format = args.format;
    let judged = packetproof::judge::evaluate(&config, &args.into())?;
    let (evaluation, report) = &judged.value;
    print::reported(format, Event::Evaluated { evaluation, report, skipped: &judged.skipped })?;
    Ok(Status::from_ok(evaluation.ok))
}
