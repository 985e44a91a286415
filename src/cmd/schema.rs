//! `packetproof schema --check | --write`: the output schema snapshot against its source.

use crate::flags::{formats, OUTCOMES};
use crate::print;
use crate::settings::Settings;
use packetproof::{Format, Outcome, Result, Status};

#[derive(Debug, Clone, clap::Args)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["check", "write"])))]
pub struct SchemaArgs {
    /// Fail when the vendored Builder schema or the snapshot generated from it changed.
    #[arg(long)]
    pub check: bool,
    /// Regenerate the snapshot (harness.toml `paths.schema_snapshot`) from the vendored schema.
    #[arg(long)]
    pub write: bool,
    /// `text` or `json` (for --check).
    #[arg(long, value_parser = formats(OUTCOMES), default_value = OUTCOMES[0].name())]
    pub format: Format,
}

pub fn run(settings: &Settings, args: SchemaArgs) -> Result<Status> {
    let config = settings.load()?;
    let snapshot = config.settings().snapshot_name();
    if args.write {
        print::schema_written(&snapshot, packetproof::schema::write(&config)?)?;
        return Ok(Status::Holds);
    }
    let findings = packetproof::schema::check(&config)?;
    print::outcomes(&[Outcome::new(snapshot, findings)], args.format)
}
