//! `packetproof export`: compile a request into a runtime packet.

use crate::flags::SuffixArg;
use crate::print;
use crate::settings::Settings;
use packetproof::judge::Judged;
use packetproof::{fsutil, run, Result, Status};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    /// The compile input (a fixture's request.json).
    #[arg(long, value_name = "FILE")]
    pub request: PathBuf,
    /// Write the packet here (atomically, only when it compiles) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub suffix: SuffixArg,
}

/// Compile first, write after: nothing is written on refusal.
pub fn run(settings: &Settings, args: ExportArgs) -> Result<Status> {
    let config = settings.load()?;
    if let Some(out) = &args.out {
        run::refuse_foreign_output(out, run::OutputKind::Packet, config.settings(), &[&args.request])?;
    }
    let Judged { value: text, skipped } = packetproof::judge::export(&config, &args.request)?;
    print::skipped_notes(&skipped);
    match args.out {
        Some(path) => fsutil::write_atomic(&path, text.as_bytes())?,
        None => print::bytes(text.as_bytes())?,
    }
    Ok(Status::Holds)
}
