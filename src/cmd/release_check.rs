//! `packetproof release-check`: the packets a prompt or schema change affects, and the release policy.

use crate::flags::{formats, RELEASE};
use crate::print;
use crate::settings::Settings;
use packetproof::reporter::Event;
use packetproof::{Format, Result, Status};

#[derive(Debug, Clone, clap::Args)]
pub struct ReleaseCheckArgs {
    /// The git revision to compare with (default: the merge base with main, else origin/main).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// `text` for a terminal, `markdown` for a pull-request comment, `json` for machines,
    /// `html` for one self-contained page (side-by-side prompt diffs) to attach to a CI run.
    #[arg(long, value_parser = formats(RELEASE), default_value = RELEASE[0].name())]
    pub format: Format,
}

pub fn run(settings: &Settings, args: ReleaseCheckArgs) -> Result<Status> {
    let report = packetproof::release::check(&settings.suite("release-check")?, args.base.as_deref())?;
    print::reported(args.format, Event::Release(&report))?;
    Ok(Status::from_ok(report.ok))
}
