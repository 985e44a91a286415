//! `packetproof test`: the conformance gate's trials, run from the binary with
//! libtest-mimic (the runner `cargo test` uses for tests/conformance.rs), so a
//! repository with no Cargo project can gate on one binary.

use super::{hiargs::Settings, print};
use libtest_mimic::{Arguments, FormatSetting, Trial};
use packetproof::conformance;
use packetproof::conformance::junit::{self, Records};
use packetproof::conformance::partition::Partition;
use packetproof::{fsutil, Format, Result};
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Colours as every other command decides them (a terminal, no NO_COLOR): the
/// relay is a pipe, which libtest-mimic would never colour on its own.
fn color() -> libtest_mimic::ColorSetting {
    match anstream::AutoStream::choice(&std::io::stdout()) {
        anstream::ColorChoice::Never => libtest_mimic::ColorSetting::Never,
        _ => libtest_mimic::ColorSetting::Always,
    }
}

/// libtest-mimic (0.8, printer.rs) writes its report with `.unwrap()` on every
/// write to stdout, so a closed or full stdout panics inside it (exit 101, which
/// reads as a failed trial), and a stdout check up front cannot see a reader
/// that leaves mid-run. So it writes to a pipe instead (its `logfile`, opened
/// through /proc/self/fd), and a thread copies the pipe to stdout as it comes:
/// a failed write stops the copying, never the trials (the rest is read and
/// dropped, so the printer never blocks), and is reported once they are done.
/// The copy is also where libtest-mimic's JSON `ignored` events get the reason it
/// leaves out: the `message` libtest gives an ignored test, from the trial's record
/// (written before the printer prints the event).
#[cfg(target_os = "linux")]
struct Relay {
    write_end: std::os::fd::OwnedFd,
    copier: std::thread::JoinHandle<Option<std::io::Error>>,
}

#[cfg(target_os = "linux")]
impl Relay {
    /// `None` when no pipe can be made: libtest-mimic then writes to stdout itself.
    fn start(reasons: Option<Records>) -> Option<Relay> {
        let (read_end, write_end) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).ok()?;
        let copier = std::thread::spawn(move || copy_to_stdout(std::fs::File::from(read_end), reasons));
        let relay = Relay { write_end, copier };
        // Without /proc the printer could not open the path (and would panic): it writes to stdout itself.
        std::path::Path::new(&relay.path()).exists().then_some(relay)
    }

    fn path(&self) -> String {
        use std::os::fd::AsRawFd;
        format!("/proc/self/fd/{}", self.write_end.as_raw_fd())
    }

    /// Close the pipe (libtest-mimic's own handle is closed when `run` returns) and
    /// wait for the copy: a closed stdout ends the command normally; any other
    /// write error is exit 2.
    fn finish(self) -> Result<()> {
        drop(self.write_end);
        match self.copier.join().ok().flatten() {
            Some(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(packetproof::Error::io("<stdout>", e)),
            _ => Ok(()),
        }
    }
}

#[cfg(target_os = "linux")]
fn copy_to_stdout(mut pipe: std::fs::File, reasons: Option<Records>) -> Option<std::io::Error> {
    use std::io::{Read, Write};
    let mut failed = None;
    let mut buffer = [0u8; 8192];
    // With `reasons` (JSON events), whole lines only: an event is rewritten whole.
    let mut pending = Vec::new();
    loop {
        let n = match pipe.read(&mut buffer) {
            Ok(0) => {
                let mut stdout = std::io::stdout().lock();
                let rest = stdout.write_all(&pending).and_then(|()| stdout.flush()).err();
                return failed.or(rest.filter(|_| !pending.is_empty()));
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return failed.or(Some(e)),
        };
        let out = match &reasons {
            None => buffer[..n].to_vec(),
            Some(records) => {
                pending.extend_from_slice(&buffer[..n]);
                let Some(end) = pending.iter().rposition(|b| *b == b'\n') else { continue };
                let lines: Vec<u8> = pending.drain(..=end).collect();
                with_reasons(&lines, records)
            }
        };
        if failed.is_none() {
            let mut stdout = std::io::stdout().lock();
            failed = stdout.write_all(&out).and_then(|()| stdout.flush()).err();
        }
    }
}

/// `lines` of libtest JSON events, each `ignored` event given its trial's reason as
/// `message` (libtest's own key for an ignored test's reason).
#[cfg(target_os = "linux")]
fn with_reasons(lines: &[u8], records: &Records) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines.split_inclusive(|b| *b == b'\n') {
        let event: Option<serde_json::Value> = serde_json::from_slice(line).ok();
        let ignored =
            event.as_ref().filter(|e| e["type"] == "test" && e["event"] == "ignored" && e.get("message").is_none());
        let reason = ignored.and_then(|e| records.skipped_reason(e["name"].as_str()?));
        match (ignored, reason) {
            (Some(event), Some(reason)) => {
                let name = serde_json::to_string(&event["name"]).unwrap_or_default();
                let message = serde_json::to_string(&reason).unwrap_or_default();
                let line = format!(
                    "{{ \"type\": \"test\", \"name\": {name}, \"event\": \"ignored\", \"message\": {message} }}\n"
                );
                out.extend_from_slice(line.as_bytes());
            }
            _ => out.extend_from_slice(line),
        }
    }
    out
}

/// Elsewhere libtest-mimic writes to stdout itself.
#[cfg(not(target_os = "linux"))]
struct Relay;

#[cfg(not(target_os = "linux"))]
impl Relay {
    fn start(_reasons: Option<Records>) -> Option<Relay> {
        None
    }
    fn path(&self) -> String {
        String::new()
    }
    fn finish(self) -> Result<()> {
        Ok(())
    }
}

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
    #[arg(long, value_parser = super::args::formats(FORMATS), default_value = FORMATS[0].name())]
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

/// `test --format`: libtest's formats, which libtest-mimic prints (packetproof's
/// reporters render none of them), the default first.
pub const FORMATS: &[Format] = &[Format::Pretty, Format::Terse, Format::Json];

/// libtest-mimic's setting for a format of [`FORMATS`].
fn libtest_format(format: Format) -> Result<FormatSetting> {
    match format {
        Format::Pretty => Ok(FormatSetting::Pretty),
        Format::Terse => Ok(FormatSetting::Terse),
        Format::Json => Ok(FormatSetting::Json),
        Format::Text | Format::Junit | Format::Markdown | Format::Html => {
            Err(packetproof::Error::Internal(format!("test offers no --format {format} (clap refuses it)")))
        }
    }
}

/// Run the trials; 0 when all passed, 101 when one failed (as `cargo test`).
pub fn main(settings: &Settings, args: &TestArgs) -> Result<ExitCode> {
    let config = settings.suite("test")?;
    if let Some(file) = args.junit.as_ref().filter(|_| !args.list) {
        packetproof::run::refuse_foreign_output(file, packetproof::run::OutputKind::Junit, &config, &[])?;
    }
    if let Some(file) = &args.report {
        if args.junit.as_ref().is_some_and(|junit| junit == file || fsutil::same_file(junit, file)) {
            return Err(packetproof::Error::Usage(format!("--report and --junit both name {}", file.display())));
        }
        packetproof::report_html::refuse_foreign(file, &config)?;
    }
    let writes = super::cmd::golden_writes()?;
    let signer = signer(args, writes)?;
    if let (Some(file), Some(key)) = (&args.attestation, &args.attest) {
        let kind = packetproof::run::OutputKind::GateStatement;
        packetproof::run::refuse_foreign_output(file, kind, &config, &[key.as_path()])?;
        // Refused here, by name, never at production time.
        packetproof::trace::vouched::templates_followed(&config)?;
    }
    let config = Arc::new(config);
    let suite = conformance::trials(Arc::clone(&config), Arc::new(print::note), writes)?;
    let arguments = Arguments {
        filter: args.filter.clone(),
        list: args.list,
        exact: args.exact,
        format: Some(libtest_format(args.format)?),
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
    let reasons = (args.format == Format::Json).then(|| suite.records.clone());
    let relay = Relay::start(reasons);
    let arguments = Arguments { logfile: relay.as_ref().map(Relay::path), color: Some(color()), ..arguments };
    let total = trials.len();
    // What the statement will name, as it is before any trial runs (compared before signing).
    let before = signer.as_ref().map(|_| packetproof::conformance::gate::inputs(&config));
    let conclusion = libtest_mimic::run(&arguments, trials);
    if let Some(relay) = relay {
        relay.finish()?;
    }
    let records = suite.records.snapshot();
    print::trial_notes(&records, args.format != Format::Json)?;
    let packetproof = packetproof::distribution::Distribution::of_suite(&config);
    print::stale(&suite.stale.report(&format!("{} bless", packetproof.command())))?;
    if let Some(file) = args.junit.as_ref().filter(|_| !args.list) {
        let xml = junit::to_xml("packetproof", &records, &skipped);
        fsutil::write_atomic(file, xml.as_bytes())?;
    }
    if let Some(file) = args.report.as_ref().filter(|_| !args.list) {
        packetproof::report_html::write_test_report(file, &config, &records, &skipped)?;
    }
    if let Some((key, out)) = signer {
        if conclusion.has_failed() {
            print::note(&format!(
                "no gate statement written to {}: {} trial(s) failed; a failing gate signs nothing",
                out.display(),
                conclusion.num_failed
            ));
        } else {
            let before = before.unwrap_or_else(|| Err(packetproof::Error::Internal("no inputs read".into())))?;
            let signed =
                packetproof::conformance::gate::sign(&config, &before, &records, total, &key, &out, args.allow_dirty)?;
            print::note(&format!(
                "gate statement {}: {} golden packet(s) vouched for, signed by {}",
                signed.file.display(),
                signed.subjects,
                signed.key_id
            ));
        }
    }
    Ok(conclusion.exit_code())
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
