//! `packetproof verify`: every check on packets and run directories.

use crate::flags::{age, formats, SuffixArg, VERIFICATION};
use crate::settings::Settings;
use crate::{print, provenance};
use packetproof::reporter::Event;
use packetproof::{Error, Format, Result, Status};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub suffix: SuffixArg,
    /// Packets, run directories, or directories to search for both.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// `text`: failures and their findings, then `N checked: H hold, F failed`; `json`: every
    /// result, the counts and the checks that ran.
    #[arg(long, value_parser = formats(VERIFICATION), default_value = VERIFICATION[0].name())]
    pub format: Format,
    /// List every file checked, not only the failures (text format).
    #[arg(short, long)]
    pub verbose: bool,
    /// An Ed25519 public key (SPKI PEM) whose signature a run's attestation.json must
    /// carry; repeatable (any one of them suffices).
    #[arg(long = "trusted-key", value_name = "PUB.pem")]
    pub trusted_keys: Vec<PathBuf>,
    /// A gate statement (`packetproof test --attest`): every packet found counts only when it
    /// vouches for the packet's bytes (`gate::vouched`); signed by a --trusted-key.
    #[arg(long, value_name = "FILE", requires = "trusted_keys")]
    pub gate: Option<PathBuf>,
    /// With --gate: the oldest gate statement taken, by the time it was signed (`30d`, `12h`,
    /// `90m`, `3600s`, or seconds); an older one vouches for nothing.
    #[arg(long, value_name = "AGE", requires = "gate", value_parser = age)]
    pub gate_max_age: Option<std::time::Duration>,
    /// Run the suite's `[exporter]` to check that golden packets regenerate (without it,
    /// verify runs no command harness.toml names and says which checks it left out).
    #[arg(long)]
    pub run_exporter: bool,
}

pub fn run(settings: &Settings, args: VerifyArgs) -> Result<Status> {
    let keys = provenance::trusted_keys(&args.trusted_keys)?;
    let config = settings.load()?;
    let progress = print::ProgressLine::new();
    let digests = match args.gate {
        Some(_) => packetproof::verify::Digests::Take,
        None => packetproof::verify::Digests::Skip,
    };
    let found =
        packetproof::verify::verify_with_progress(&config, &args.paths, &keys, digests, &|done, total, target| {
            progress.update(done, total, target)
        });
    progress.finish();
    let mut found = found?;
    if let Some(file) = &args.gate {
        let gate = packetproof::attest::vouch::Gate::read(file, &keys, config.settings(), args.gate_max_age)?;
        packetproof::verify::hold_to_gate(&mut found, &gate)?;
    }
    print::reported(args.format, Event::Verified { found: &found, verbose: args.verbose })?;
    let status = Status::from_ok(found.counts().1 == 0);
    // An unreadable file is exit 2 here as in validate: the report above says which.
    let unreadable = packetproof::verify::unreadable(&found.outcomes);
    if !unreadable.is_empty() {
        return Err(Error::refused(unreadable.join(", "), "could not be read (see the report above)"));
    }
    // The suite's exporter failing is exit 2 (could not run), as in bless.
    if let Some(failure) = packetproof::check::exporter_failure(&found.outcomes, &config) {
        return Err(failure);
    }
    Ok(status)
}
