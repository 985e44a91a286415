//! `packetproof complete`: completion.json for a run whose evaluation passed.

use crate::flags::SuffixArg;
use crate::print;
use crate::settings::Settings;
use packetproof::run::CompleteRequest;
use packetproof::{Result, Status};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct CompleteArgs {
    #[command(flatten)]
    pub suffix: SuffixArg,
    /// The evaluated run directory.
    #[arg(long, value_name = "DIR")]
    pub run_dir: PathBuf,
    /// The scenario this run exercised.
    #[arg(long, value_name = "S")]
    pub scenario: String,
    /// The run's id within the scenario.
    #[arg(long, value_name = "R")]
    pub run_id: String,
    /// The fresh agent's task id; must not appear in any other completion under the runs root.
    #[arg(long, value_name = "T")]
    pub agent_task: String,
    /// An evaluator note (at least one, none blank).
    #[arg(long = "note", value_name = "TEXT", required = true)]
    pub notes: Vec<String>,
    /// Where agent task ids must be unique; default: the run directory's parent.
    #[arg(long, value_name = "DIR")]
    pub runs_root: Option<PathBuf>,
}

impl From<CompleteArgs> for CompleteRequest {
    fn from(args: CompleteArgs) -> Self {
        CompleteRequest {
            run_dir: args.run_dir,
            scenario: args.scenario,
            run_id: args.run_id,
            agent_task: args.agent_task,
            notes: args.notes,
            runs_root: args.runs_root,
        }
    }
}

pub fn run(settings: &Settings, args: CompleteArgs) -> Result<Status> {
    let agent_task = args.agent_task.clone();
    let judged = packetproof::judge::complete(&settings.load()?, &args.into())?;
    let (written, runs_root) = &judged.value;
    print::completed(written, &agent_task, runs_root)?;
    print::skipped(&judged.skipped)?;
    Ok(Status::Holds)
}
