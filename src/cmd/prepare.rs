//! `packetproof prepare`: a run directory for a fresh agent from a valid packet.

use crate::flags::SuffixArg;
use crate::print;
use crate::settings::Settings;
use packetproof::judge::Judged;
use packetproof::{Result, Status};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct PrepareArgs {
    /// The runtime packet the run is prepared from (it must hold).
    #[arg(long, value_name = "FILE")]
    pub packet: PathBuf,
    /// The run directory to write (created; an existing one must hold the same preparation).
    #[arg(long, value_name = "DIR")]
    pub out_dir: PathBuf,
    /// The runtime schema snapshot to pin (for packets made elsewhere); a non-Google
    /// packet's outputSchema must equal it. Default: the suite's, else the built-in one.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    #[command(flatten)]
    pub suffix: SuffixArg,
}

/// Refused exactly when `verify` of this file would fail (a golden packet of the suite
/// is also recompiled), judged on the bytes prepare then reads.
pub fn run(settings: &Settings, args: PrepareArgs) -> Result<Status> {
    let config = settings.load_with(args.schema.as_deref())?;
    let Judged { value: written, skipped } = packetproof::judge::prepare(&config, &args.packet, &args.out_dir)?;
    print::prepared(&args.out_dir, &written)?;
    print::skipped(&skipped)?;
    Ok(Status::Holds)
}
