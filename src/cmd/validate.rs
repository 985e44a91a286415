//! `packetproof validate`: `verify` of one packet, the same rules, the same verdict.

use crate::flags::{formats, SuffixArg, OUTCOMES};
use crate::print;
use crate::settings::Settings;
use packetproof::judge::Step;
use packetproof::{fsutil, Format, Result, Status};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct ValidateArgs {
    /// The runtime packet (runtime-packet.json) to check.
    #[arg(long, value_name = "FILE")]
    pub packet: PathBuf,
    /// `text`: one line per finding; `json`: the outcome as a document.
    #[arg(long, value_parser = formats(OUTCOMES), default_value = OUTCOMES[0].name())]
    pub format: Format,
    #[command(flatten)]
    pub suffix: SuffixArg,
}

pub fn run(settings: &Settings, args: ValidateArgs) -> Result<Status> {
    let config = settings.load()?;
    let path = &args.packet;
    let value = fsutil::read_json(path, config.settings().limits.max_file_bytes)?;
    packetproof::provider::expect_packet(&value, &path.display().to_string())?;
    print::outcomes(&[packetproof::judge::packet_file(path, &value, &config, Step::Validate)], args.format)
}
