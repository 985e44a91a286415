//! `packetproof test`: the conformance gate's trials, run from the binary with
//! libtest-mimic (the runner `cargo test` uses for tests/conformance.rs), so a
//! repository with no Cargo project can gate on one binary.

use super::{print, Cli};
use crate::conformance::partition::Partition;
use crate::conformance::{self, junit};
use crate::{fsutil, Result};
use libtest_mimic::{Arguments, FormatSetting, Trial};
use std::collections::HashSet;
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
    /// Also write a self-contained HTML report to FILE: the coverage matrix and every trial's state.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Run one shard of the trials, as `cargo nextest run --partition`: `count:M/N`
    /// (round-robin in name order) or `hash:M/N` (by a fixed hash of the name); M from 1.
    #[arg(long, value_name = "STRATEGY:M/N")]
    pub partition: Option<Partition>,
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
    if let Some(file) = &args.report {
        if args.junit.as_ref().is_some_and(|junit| junit == file || fsutil::same_file(junit, file)) {
            return Err(crate::Error::Usage(format!("--report and --junit both name {}", file.display())));
        }
        crate::report_html::refuse_foreign(file, &config)?;
    }
    let config = Arc::new(config);
    let suite = conformance::trials(Arc::clone(&config), Arc::new(print::note))?;
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
    let trials = match args.partition {
        Some(partition) => shard(&arguments, suite.trials, partition),
        None => suite.trials,
    };
    let skipped: Vec<String> = trials
        .iter()
        .filter(|t| !arguments.is_filtered_out(t) && arguments.is_ignored(t))
        .map(|t| t.name().to_owned())
        .collect();
    let conclusion = libtest_mimic::run(&arguments, trials);
    print::stale(&suite.stale.report("packetproof bless"))?;
    if let Some(file) = args.junit.as_ref().filter(|_| !args.list) {
        let xml = junit::to_xml("packetproof", &suite.records.snapshot(), &skipped);
        fsutil::write_atomic(file, xml.as_bytes())?;
    }
    if let Some(file) = args.report.as_ref().filter(|_| !args.list) {
        crate::report_html::write_test_report(file, &config, &suite.records.snapshot(), &skipped)?;
    }
    Ok(conclusion.exit_code())
}

/// The trials of one shard. As in nextest, the filter applies first and the shard is
/// taken from the trials it keeps (their index in name order, for `count:`).
fn shard(arguments: &Arguments, trials: Vec<Trial>, partition: Partition) -> Vec<Trial> {
    let kept = trials.iter().filter(|t| !arguments.is_filtered_out(t)).map(Trial::name);
    let chosen: HashSet<String> = partition.select(kept).into_iter().map(str::to_owned).collect();
    let total = trials.len();
    let trials: Vec<Trial> =
        trials.into_iter().filter(|t| arguments.is_filtered_out(t) || chosen.contains(t.name())).collect();
    print::note(&format!(
        "--partition {partition}: {} trial(s) in this shard, {} in the others",
        chosen.len(),
        total - trials.len()
    ));
    trials
}
