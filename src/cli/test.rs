//! `packetproof test`: the conformance gate's trials, run from the binary with
//! libtest-mimic (the runner `cargo test` uses for tests/conformance.rs), so a
//! repository with no Cargo project can gate on one binary.

use super::{print, Cli};
use crate::conformance::{self, junit};
use crate::{fsutil, Result};
use libtest_mimic::{Arguments, FormatSetting};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Clone, clap::Args)]
pub struct TestArgs {
    #[command(flatten)]
    pub suffix: super::args::SuffixArg,
    /// Run only the trials whose name contains FILTER (`<fixture>::<check>`).
    pub filter: Option<String>,
    /// List the trials instead of running them.
    #[arg(long)]
    pub list: bool,
    /// FILTER must be a trial's whole name.
    #[arg(long)]
    pub exact: bool,
    /// libtest's formats: one line per trial, one character per trial, or JSON events.
    #[arg(long, value_enum, default_value_t)]
    pub format: TestFormat,
    /// Also write a JUnit XML report of the trials to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TestFormat {
    #[default]
    Pretty,
    Terse,
    Json,
}

/// Run the trials; 0 when all passed, 101 when one failed (as `cargo test`).
pub fn main(cli: &Cli, args: &TestArgs) -> Result<ExitCode> {
    let config = super::load_config(cli.config.as_deref(), super::suffix_of(cli), cli.asset_example_prompts)?;
    config.require_suite("test")?;
    if let Some(file) = args.junit.as_ref().filter(|_| !args.list) {
        crate::run::refuse_foreign_output(file, crate::run::OutputKind::Junit, &config, &[])?;
    }
    let suite = conformance::trials(Arc::new(config), Arc::new(print::note))?;
    let arguments = Arguments {
        filter: args.filter.clone(),
        list: args.list,
        exact: args.exact,
        format: Some(match args.format {
            TestFormat::Pretty => FormatSetting::Pretty,
            TestFormat::Terse => FormatSetting::Terse,
            TestFormat::Json => FormatSetting::Json,
        }),
        ..Arguments::default()
    };
    let skipped: Vec<String> = suite
        .trials
        .iter()
        .filter(|t| !arguments.is_filtered_out(t) && arguments.is_ignored(t))
        .map(|t| t.name().to_owned())
        .collect();
    let conclusion = libtest_mimic::run(&arguments, suite.trials);
    print::stale(&suite.stale.report("PACKETPROOF_BLESS=1 packetproof test"))?;
    if let Some(file) = args.junit.as_ref().filter(|_| !args.list) {
        let xml = junit::to_xml("packetproof", &suite.records.snapshot(), &skipped);
        fsutil::write_atomic(file, xml.as_bytes())?;
    }
    Ok(conclusion.exit_code())
}
