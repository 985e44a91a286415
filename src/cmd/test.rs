//! `packetproof test`: the conformance gate's trials, run from the binary by the
//! library's runner (`conformance::runner`) and printed by its reporters in
//! libtest's formats, so a repository with no Cargo project can gate on one binary.
//! One code path on every platform: a closed stdout ends the printing, never the
//! trials, and the command ends with their verdict.

use crate::{print, settings::Settings};
use packetproof::conformance::partition::Partition;
use packetproof::conformance::runner::{self, RunEvent, Selection};
use packetproof::conformance::{self, junit};
use packetproof::reporter::{Event, Kind, Reporter};
use packetproof::{fsutil, Format, Result};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Clone, clap::Args)]
pub struct TestArgs {
    #[command(flatten)]
    pub suffix: crate::flags::SuffixArg,
    /// Run only the trials whose name contains FILTER (`<fixture>::<check>`).
    pub filter: Option<String>,
    /// List the trials instead of running them.
    #[arg(long)]
    pub list: bool,
    /// FILTER must be a trial's whole name.
    #[arg(long)]
    pub exact: bool,
    /// libtest's formats: one line per trial, one character per trial, or JSON events.
    #[arg(long, value_parser = crate::flags::formats(FORMATS), default_value = FORMATS[0].name())]
    pub format: Format,
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
    /// After a green run of the whole gate, sign a gate statement with this Ed25519 private
    /// key (PKCS#8 PEM, owner-only): the golden packets that passed, the files they depend on.
    #[arg(long, value_name = "KEY.pem", requires = "attestation")]
    pub attest: Option<PathBuf>,
    /// Where --attest writes the gate statement (a DSSE envelope; never overwritten).
    #[arg(long, value_name = "FILE", requires = "attest")]
    pub attestation: Option<PathBuf>,
    /// Sign even when the git checkout has uncommitted changes (refused otherwise: the
    /// statement names the commit); the statement then says `treeClean: false`.
    #[arg(long, requires = "attest")]
    pub allow_dirty: bool,
}

/// `test --format`: libtest's formats, the default first.
pub const FORMATS: &[Format] = Kind::Test.formats();

/// Run the trials; 0 when all passed, 101 when one failed (as `cargo test`).
pub fn main(settings: &Settings, args: &TestArgs) -> Result<ExitCode> {
    let config = settings.suite("test")?;
    refuse_outputs(args, &config)?;
    let writes = super::golden_writes()?;
    let signer = signer(args, writes)?;
    if let (Some(file), Some(key)) = (&args.attestation, &args.attest) {
        let kind = packetproof::run::OutputKind::GateStatement;
        packetproof::run::refuse_foreign_output(file, kind, config.settings(), &[key.as_path()])?;
        // Refused here, by name, never at production time.
        packetproof::trace::vouched::templates_followed(&config)?;
    }
    let config = Arc::new(config);
    let suite = conformance::trials(Arc::clone(&config), Arc::new(print::note), writes)?;
    let total = suite.trials.len();
    let selected = select(args, suite.trials);
    let mut shown = Shown::new(args.format)?;
    if args.list {
        shown.event(RunEvent::Listed(&selected.names()));
        shown.finish()?;
        return Ok(ExitCode::SUCCESS);
    }
    // What the statement will name, as it is before any trial runs (compared before signing).
    let before = signer.as_ref().map(|_| packetproof::conformance::gate::inputs(&config));
    let summary = runner::run(selected, |event| shown.event(event));
    shown.finish()?;
    print::trial_notes(&summary.records, args.format != Format::Json)?;
    let packetproof = packetproof::distribution::Distribution::of_suite(config.settings());
    print::stale(&suite.stale.report(&format!("{} bless", packetproof.command())))?;
    if let Some(file) = &args.junit {
        fsutil::write_atomic(file, junit::to_xml("packetproof", &summary.records).as_bytes())?;
    }
    if let Some(file) = &args.report {
        packetproof::report_html::write_test_report(file, &config, &summary.records)?;
    }
    if let Some((key, out)) = signer {
        sign(&config, args, &summary, total, before, &key, &out)?;
    }
    // cargo test's status for a failed trial.
    Ok(if summary.failed > 0 { ExitCode::from(101) } else { ExitCode::SUCCESS })
}

/// `--junit` and `--report`: refused before any trial runs when they name an input of
/// the gate, a file that is not such a report, or each other.
fn refuse_outputs(args: &TestArgs, config: &packetproof::Invocation) -> Result<()> {
    if let Some(file) = args.junit.as_ref().filter(|_| !args.list) {
        packetproof::run::refuse_foreign_output(file, packetproof::run::OutputKind::Junit, config.settings(), &[])?;
    }
    if let Some(file) = &args.report {
        if args.junit.as_ref().is_some_and(|junit| junit == file || fsutil::same_file(junit, file)) {
            return Err(packetproof::Error::Usage(format!("--report and --junit both name {}", file.display())));
        }
        packetproof::report_html::refuse_foreign(file, config)?;
    }
    Ok(())
}

/// The trials FILTER, `--exact` and `--partition` select (a shard says its size on stderr).
fn select(args: &TestArgs, trials: Vec<runner::Trial>) -> runner::Selected {
    let selection = Selection { filter: args.filter.clone(), exact: args.exact, partition: args.partition };
    let total = trials.len();
    let selected = selection.select(trials);
    if let Some(partition) = args.partition {
        print::note(&format!(
            "--partition {partition}: {} trial(s) in this shard, {} in the others",
            total - selected.filtered_out - selected.in_other_shards,
            selected.in_other_shards
        ));
    }
    selected
}

/// `--attest`: the gate statement of a green run, signed; a failed run signs nothing.
fn sign(
    config: &packetproof::Invocation,
    args: &TestArgs,
    summary: &runner::Summary,
    total: usize,
    before: Option<Result<packetproof::conformance::gate::Inputs>>,
    key: &ed25519_dalek::SigningKey,
    out: &std::path::Path,
) -> Result<()> {
    if summary.failed > 0 {
        print::note(&format!(
            "no gate statement written to {}: {} trial(s) failed; a failing gate signs nothing",
            out.display(),
            summary.failed
        ));
        return Ok(());
    }
    let before = before.unwrap_or_else(|| Err(packetproof::Error::Internal("no inputs read".into())))?;
    let signed =
        packetproof::conformance::gate::sign(config, &before, &summary.records, total, key, out, args.allow_dirty)?;
    print::note(&format!(
        "gate statement {}: {} golden packet(s) vouched for, signed by {}",
        signed.file.display(),
        signed.subjects,
        signed.key_id
    ));
    Ok(())
}

/// The run's events as the reporter renders them, on stdout as they come. A closed
/// stdout is a normal end (`print`); any other failed write stops the printing,
/// never the run, and is the command's error once the trials are done.
struct Shown {
    reporter: Reporter,
    failed: Option<packetproof::Error>,
}

impl Shown {
    fn new(format: Format) -> Result<Shown> {
        Ok(Shown { reporter: Reporter::new(format, Kind::Test, print::color())?, failed: None })
    }

    fn event(&mut self, event: RunEvent<'_>) {
        if self.failed.is_none() {
            self.failed = self.reporter.report(Event::Test(event)).and_then(|text| print::report(&text)).err();
        }
    }

    fn finish(self) -> Result<()> {
        self.failed.map_or(Ok(()), Err)
    }
}

/// `--attest KEY --attestation FILE`: the key (read, and its permissions checked, before
/// any trial runs) and a statement file that does not exist yet. Only the whole gate is
/// signed: a filter, `--exact`, `--list` or `--partition` runs part of it (a shard's
/// green says nothing of the trials it left to other machines), so each is refused; so is
/// `PACKETPROOF_BLESS=1`, under which trials rewrite the golden files they judge.
fn signer(
    args: &TestArgs,
    writes: packetproof::bless::GoldenWrites,
) -> Result<Option<(ed25519_dalek::SigningKey, PathBuf)>> {
    let (Some(key), Some(out)) = (&args.attest, &args.attestation) else { return Ok(None) };
    if writes == packetproof::bless::GoldenWrites::FromTests {
        return Err(packetproof::Error::Usage(
            "--attest signs golden files the gate checked, and PACKETPROOF_BLESS=1 lets its trials rewrite them; \
             bless first, review, then sign"
                .into(),
        ));
    }
    let partial = [
        (args.filter.is_some(), "a FILTER"),
        (args.exact, "--exact"),
        (args.list, "--list"),
        (args.partition.is_some(), "--partition"),
    ];
    if let Some((_, what)) = partial.iter().find(|(given, _)| *given) {
        return Err(packetproof::Error::Usage(format!(
            "--attest signs the whole gate, and {what} runs part of it (or none); run every trial to sign it"
        )));
    }
    packetproof::conformance::gate::refuse_existing(out)?;
    Ok(Some((packetproof::attest::keys::signing_key(key)?, out.clone())))
}
