//! Every line the command line prints, in one place: the library returns data,
//! and this module decides how it reaches stdout and stderr. A report in a chosen
//! `--format` is rendered by the library's reporters (`packetproof::reporter`), and
//! this module only writes what they return.
//!
//! Nothing here panics (`print!` does when stdout fails). A closed pipe (`| head`)
//! is a normal end: the reader wanted no more, so the command ends with its own
//! status. Any other write failure (a full disk) is an error, exit 2. Text is
//! printed with control characters escaped, so a hostile file name or id cannot
//! drive the terminal (the reporters escape what they render); JSON and `canon`
//! bytes are exact (JSON escapes them itself).

use packetproof::init::{Initialized, Made};
use packetproof::report::{escape_controls, escape_name};
use packetproof::reporter::{Event, Reporter};
use packetproof::run::paths::AGENT_REQUEST;
use packetproof::{Error, Format, Outcome, Result, Status};
use std::io::{IsTerminal, Write};
use std::path::Path;

/// Text carrying ANSI styles, on stdout through `anstream` (which drops the styles
/// unless stdout is a terminal and `NO_COLOR` is unset). The caller escapes what it
/// did not write itself.
fn styled(text: &str) -> Result<()> {
    let mut stdout = anstream::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|e| Error::io("<stdout>", e)),
    }
}

/// Whether text may carry colours: stdout is a terminal and `NO_COLOR` is unset (as
/// anstream, and clap, decide it).
pub fn color() -> bool {
    !matches!(anstream::AutoStream::choice(&std::io::stdout()), anstream::ColorChoice::Never)
}

/// What a reporter returned, as it is: the reporter escaped what came from input,
/// and styled text only when [`color`] allowed it.
pub fn report(rendered: &str) -> Result<()> {
    match color() {
        true => styled(rendered),
        false => bytes(rendered.as_bytes()),
    }
}

/// A command's one event (every report but `trace`'s), in `format`.
pub fn reported(format: Format, event: Event<'_>) -> Result<()> {
    let mut reporter = Reporter::new(format, event.kind(), color())?;
    report(&reporter.report(event)?)
}

/// The outcomes in `format`; the status says whether all of them hold.
pub fn outcomes(outcomes: &[Outcome], format: Format) -> Result<Status> {
    reported(format, Event::Outcomes(outcomes))?;
    Ok(Status::from_ok(Outcome::all_ok(outcomes)))
}

/// A progress line for long runs, on stderr when it is a terminal (rewritten in place).
/// Shared by verify's workers, so it updates through `&self`.
pub struct ProgressLine {
    start: std::time::Instant,
    shown: std::sync::atomic::AtomicBool,
    terminal: bool,
}

impl Default for ProgressLine {
    fn default() -> Self {
        ProgressLine::new()
    }
}

impl ProgressLine {
    pub fn new() -> ProgressLine {
        ProgressLine {
            start: std::time::Instant::now(),
            shown: std::sync::atomic::AtomicBool::new(false),
            terminal: std::io::stderr().is_terminal(),
        }
    }

    /// After half a second, show `[done/total] target`; short runs print nothing.
    pub fn update(&self, done: usize, total: usize, target: &str) {
        if self.terminal && self.start.elapsed() > std::time::Duration::from_millis(500) {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K[{done}/{total}] {}", escape_controls(target));
            self.shown.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Erase the line before the report prints.
    pub fn finish(&self) {
        if self.shown.swap(false, std::sync::atomic::Ordering::Relaxed) {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}

/// A command's error, on stderr (the exit status is 2); a failing stderr is ignored,
/// there is nowhere left to report it.
pub fn error(error: &Error) {
    let _ = writeln!(std::io::stderr().lock(), "packetproof: {}", escape_controls(&error.to_string()));
}

/// Raw bytes on stdout, flushed (`canon` prints exact bytes, no newline added).
pub fn bytes(bytes: &[u8]) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|e| Error::io("<stdout>", e)),
    }
}

/// Text on stdout, control characters escaped.
fn text(text: &str) -> Result<()> {
    bytes(escape_controls(text).as_bytes())
}

/// `bless`: one line per case, new / updated / unchanged.
pub fn blessed(cases: &[(String, packetproof::bless::Change)]) -> Result<()> {
    cases.iter().try_for_each(|(name, change)| text(&format!("{:<9} {}\n", change.word(), escape_name(name))))
}

/// `bless`: whether the lock file changed.
pub fn pinned(changed: bool) -> Result<()> {
    match changed {
        true => text("pinned    packetproof.lock (the digests of the suite's schema and templates)\n"),
        false => Ok(()),
    }
}

/// `bless`: the copies of the templates the app keeps as code, written.
pub fn copied(names: &[String]) -> Result<()> {
    for name in names {
        text(&format!("copied    {name} (a template the app keeps as code, as [exporter] templates reports it)\n"))?;
    }
    Ok(())
}

/// `bless --review`: the tally.
pub fn reviewed(summary: &str) -> Result<()> {
    text(summary)
}

/// Golden folders no fixture explains, and what `--unreferenced` did with them.
pub fn unreferenced(folders: &[std::path::PathBuf], action: packetproof::bless::Unreferenced) -> Result<()> {
    use packetproof::bless::Unreferenced;
    for folder in folders {
        let shown = escape_name(&folder.display().to_string()).into_owned();
        text(&match action {
            Unreferenced::Delete => format!("deleted   {shown} (no fixture)\n"),
            Unreferenced::Reject => format!("unreferenced {shown}: belongs to no fixture (rejected)\n"),
            Unreferenced::Warn => format!(
                "unreferenced {shown}: belongs to no fixture; remove it with `packetproof bless --unreferenced delete`\n"
            ),
        })?;
    }
    Ok(())
}

/// `test`: what libtest cannot say beside a verdict (a trial that passed only under
/// a suite setting), one `note:` line per note after its summary; on stderr beside
/// JSON events, so that stdout stays one event a line.
pub fn trial_notes(records: &[packetproof::conformance::runner::Record], on_stdout: bool) -> Result<()> {
    let lines: String = records
        .iter()
        .flat_map(|record| record.notes.iter().map(move |note| format!("note: {}: {note}\n", record.name)))
        .collect();
    match (lines.is_empty(), on_stdout) {
        (true, _) => Ok(()),
        (false, true) => text(&format!("\n{lines}")),
        (false, false) => {
            let _ = std::io::stderr().lock().write_all(escape_controls(&lines).as_bytes());
            Ok(())
        }
    }
}

/// The conformance gate's grouped account of stale golden files, after the summary.
pub fn stale(report: &str) -> Result<()> {
    text(report)
}

pub fn schema_written(snapshot: &str, changed: bool) -> Result<()> {
    let verb = if changed { "wrote" } else { "unchanged:" };
    text(&format!("{verb} {snapshot}\n"))
}

/// A side note of a running command (a conformance trial's "blessed X"), on stderr.
pub fn note(note: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", escape_controls(note));
}

/// What `init` wrote, where: the repository's files (named from the repository's root as
/// git spells it) relative to the current folder when they are under it.
pub fn initialized(dir: &Path, done: &Initialized) -> Result<()> {
    let here = std::env::current_dir().and_then(|d| d.canonicalize()).ok();
    let shown = |path: &Path| -> String {
        let relative = here.as_deref().and_then(|here| path.strip_prefix(here).ok());
        escape_name(&relative.unwrap_or(path).display().to_string()).into_owned()
    };
    for file in &done.written {
        text(&format!("wrote {}\n", shown(file)))?;
    }
    for (kept, instead) in &done.kept {
        notes(&[format!(
            "{} exists and was left as it is; what init would have written there is in {} \
             (merge it by hand)",
            shown(kept),
            shown(instead)
        )]);
    }
    let packetproof = done.distribution.command();
    text(&match &done.made {
        Made::Demo => format!("{}: a conformance suite; run `{packetproof} test` there\n", dir.display()),
        Made::Agent { exporter } => format!(
            "{}: the suite of one agent; make {exporter} build the app's packets, then run `{packetproof} bless`, \
             review golden/ and run `{packetproof} test` there\n",
            dir.display()
        ),
        Made::Wired(suite) => format!(
            "{} is this repository's packetproof suite: no new suite written; CI and the pre-commit hooks run it \
             with the packetproof {} finds\n",
            shown(suite),
            shown(&suite.join(packetproof::init::LAUNCHER))
        ),
    })
}

pub fn prepared(out_dir: &Path, written: &[&str]) -> Result<()> {
    let shown = out_dir.display();
    text(&if written.is_empty() {
        format!("{shown}: already prepared from this packet; nothing written\n")
    } else {
        format!("{shown}: prepared ({}); give the agent only {AGENT_REQUEST}\n", written.join(", "))
    })
}

/// The receipt is on disk whatever happens to stdout; a failing report says so.
pub fn completed(written: &Path, agent_task: &str, runs_root: &Path) -> Result<()> {
    let line =
        format!("{}: completed (agent task {agent_task}, unique under {})\n", written.display(), runs_root.display());
    text(&line).map_err(|e| {
        Error::io(written, std::io::Error::other(format!("written, but printing the confirmation failed: {e}")))
    })
}

/// Notes about what a command wrote (e.g. why a wire body is not strict), on stderr
/// so that stdout stays the exact body.
pub fn notes(notes: &[String]) {
    let mut stderr = std::io::stderr().lock();
    for note in notes {
        let _ = writeln!(stderr, "packetproof: note: {}", escape_controls(note));
    }
}

/// The rules a step did not run, each with why (after the step's own line).
pub fn skipped(skipped: &[packetproof::Skipped]) -> Result<()> {
    report(&packetproof::reporter::not_applicable(skipped, color()))
}

/// [`skipped`] on stderr, for a command whose stdout is exact bytes (`export`, `wire`).
pub fn skipped_notes(skipped: &[packetproof::Skipped]) {
    notes(&skipped.iter().map(ToString::to_string).collect::<Vec<_>>());
}

/// The attestation is on disk whatever happens to stdout; a failing report says so.
pub fn attested(written: &Path, key_id: &str) -> Result<()> {
    text(&format!("{}: attested, signed by {key_id}\n", written.display())).map_err(|e| {
        Error::io(written, std::io::Error::other(format!("written, but printing the confirmation failed: {e}")))
    })
}
