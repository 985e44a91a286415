//! `packetproof bless`: every case (or, with --review, each changed case the
//! developer accepts), then the golden folders no fixture explains.

mod review;

use crate::print;
use crate::settings::Settings;
use packetproof::bless::Unreferenced;
use packetproof::{Result, Status};

#[derive(Debug, Clone, clap::Args)]
pub struct BlessArgs {
    /// Bless only the fixtures whose name contains this text (default: every fixture).
    pub filter: Option<String>,
    /// Show each changed case's grouped diff and ask accept / reject / skip (needs a terminal).
    #[arg(long)]
    pub review: bool,
    /// What to do with golden folders that belong to no fixture.
    #[arg(long, value_enum, default_value_t, value_name = "ACTION")]
    pub unreferenced: UnreferencedArg,
}

/// `bless --unreferenced`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum UnreferencedArg {
    /// List them; bless still succeeds.
    #[default]
    Warn,
    /// List them and fail (exit 1).
    Reject,
    /// Remove their golden files, and the folders once empty.
    Delete,
}

impl From<UnreferencedArg> for Unreferenced {
    fn from(arg: UnreferencedArg) -> Self {
        match arg {
            UnreferencedArg::Warn => Unreferenced::Warn,
            UnreferencedArg::Reject => Unreferenced::Reject,
            UnreferencedArg::Delete => Unreferenced::Delete,
        }
    }
}

pub fn run(settings: &Settings, args: BlessArgs) -> Result<Status> {
    let config = settings.suite("bless")?;
    let writes = super::golden_writes()?;
    print::copied(&packetproof::bless::copy_reported_templates(&config, writes)?)?;
    let mut status = if args.review {
        review::review(&config, args.filter.as_deref(), writes)?
    } else {
        let blessed = packetproof::bless::bless(&config, args.filter.as_deref(), writes)?;
        print::blessed(&blessed.cases)?;
        print::skipped(&blessed.skipped)?;
        Status::Holds
    };
    let action = args.unreferenced.into();
    let folders = packetproof::bless::unreferenced(&config, action, writes)?;
    print::unreferenced(&folders, action)?;
    if action == Unreferenced::Reject && !folders.is_empty() {
        status = Status::Failed;
    }
    // A review that rejected a change leaves the lock as it was: what it pins was not all accepted.
    if status == Status::Holds && args.filter.is_none() {
        print::pinned(packetproof::bless::pin(&config, writes)?)?;
    }
    Ok(status)
}
