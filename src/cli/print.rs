//! Every line the command line prints, in one place: the library returns data,
//! and this module decides how it reaches stdout and stderr.

use crate::release::{Report, ReportFormat};
use crate::run::evaluate::Evaluation;
use crate::run::paths::AGENT_REQUEST;
use crate::verify::Verification;
use crate::{canonical, Error, Format, Outcome, Result, Status};
use anstyle::{AnsiColor, Style};
use std::io::{IsTerminal, Write};
use std::path::Path;

const FAILED: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red))).bold();
const HOLDS: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
const DIM: Style = Style::new().dimmed();

/// Text with ANSI styles, on stdout: `anstream` drops the styles unless stdout is a
/// terminal (and `NO_COLOR` is unset), so pipes and files get plain text.
fn styled(text: &str) -> Result<()> {
    let mut stdout = anstream::stdout().lock();
    stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()).map_err(|e| Error::io("<stdout>", e))
}

/// `verify`: failures with their findings (every target with `verbose`), then
/// `N checked: H hold, F failed`; JSON carries the same counts and the checks that ran.
pub fn verification(found: &Verification, format: Format, verbose: bool) -> Result<Status> {
    let (hold, failed) = found.counts();
    let status = Status::from_ok(failed == 0);
    if format == Format::Json {
        let doc = serde_json::json!({
            "ok": failed == 0,
            "checked": found.outcomes.len(),
            "hold": hold,
            "failed": failed,
            "checks": found.checks,
            "results": found.outcomes,
        });
        bytes(canonical::to_pretty(&doc).as_bytes())?;
        return Ok(status);
    }
    let mut text = String::new();
    for outcome in found.outcomes.iter().filter(|o| verbose || !o.ok()) {
        text.push_str(&outcome_text(outcome));
    }
    let summary = if failed == 0 { HOLDS } else { FAILED };
    text.push_str(&format!("{summary}{} checked: {hold} hold, {failed} failed{summary:#}\n", found.outcomes.len()));
    styled(&text)?;
    Ok(status)
}

fn outcome_text(outcome: &Outcome) -> String {
    let (style, verdict) = if outcome.ok() { (HOLDS, "ok") } else { (FAILED, "FAILED") };
    let mut text = format!("{}: {style}{verdict}{style:#} ({} finding(s))\n", outcome.target, outcome.findings.len());
    for finding in &outcome.findings {
        text.push_str(&format!("  {finding}\n"));
    }
    for note in &outcome.notes {
        text.push_str(&format!("  {DIM}note: {note}{DIM:#}\n"));
    }
    text
}

/// A progress line for long runs, on stderr when it is a terminal (rewritten in place).
pub struct ProgressLine {
    start: std::time::Instant,
    shown: bool,
    terminal: bool,
}

impl Default for ProgressLine {
    fn default() -> Self {
        ProgressLine::new()
    }
}

impl ProgressLine {
    pub fn new() -> ProgressLine {
        ProgressLine { start: std::time::Instant::now(), shown: false, terminal: std::io::stderr().is_terminal() }
    }

    /// After half a second, show `[done/total] target`; short runs print nothing.
    pub fn update(&mut self, done: usize, total: usize, target: &str) {
        if self.terminal && self.start.elapsed() > std::time::Duration::from_millis(500) {
            eprint!("\r\x1b[2K[{done}/{total}] {target}");
            self.shown = true;
        }
    }

    /// Erase the line before the report prints.
    pub fn finish(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
            self.shown = false;
        }
    }
}

/// A command's error, on stderr (the exit status is 2).
pub fn error(error: &Error) {
    eprintln!("packetproof: {error}");
}

/// Raw bytes on stdout, flushed (`canon` prints exact bytes, no newline added).
pub fn bytes(bytes: &[u8]) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(bytes).and_then(|()| stdout.flush()).map_err(|e| Error::io("<stdout>", e))
}

/// The outcomes in `format`; the status says whether all of them hold.
pub fn outcomes(outcomes: &[Outcome], format: Format) -> Status {
    print!("{}", Outcome::render(outcomes, format));
    Status::from_ok(Outcome::all_ok(outcomes))
}

/// `bless`: one line per case, new / updated / unchanged.
pub fn blessed(cases: &[(String, crate::bless::Change)]) {
    for (name, change) in cases {
        println!("{:<9} {name}", change.word());
    }
}

/// `bless --review`: the tally.
pub fn reviewed(summary: &str) -> Result<()> {
    styled(summary)
}

/// Golden folders no fixture explains, and what `--unreferenced` did with them.
pub fn unreferenced(folders: &[std::path::PathBuf], action: crate::bless::Unreferenced) {
    use crate::bless::Unreferenced;
    for folder in folders {
        match action {
            Unreferenced::Delete => println!("deleted   {} (no fixture)", folder.display()),
            Unreferenced::Reject => println!("unreferenced {}: belongs to no fixture (rejected)", folder.display()),
            Unreferenced::Warn => println!(
                "unreferenced {}: belongs to no fixture; remove it with `packetproof bless --unreferenced delete`",
                folder.display()
            ),
        }
    }
}

pub fn release(report: &Report, format: ReportFormat) -> Result<()> {
    styled(&report.render(format))
}

pub fn schema_written(snapshot: &Path, changed: bool) {
    let verb = if changed { "wrote" } else { "unchanged:" };
    println!("{verb} {}", snapshot.display());
}

pub fn prepared(out_dir: &Path, written: &[&str]) {
    if written.is_empty() {
        println!("{}: already prepared from this packet; nothing written", out_dir.display());
    } else {
        println!("{}: prepared ({}); give the agent only {AGENT_REQUEST}", out_dir.display(), written.join(", "));
    }
}

pub fn evaluation(evaluation: &Evaluation, report: &Path, format: Format) {
    match format {
        Format::Text => print!("{}", evaluation.render(&report.display().to_string())),
        Format::Json => print!("{}", canonical::to_pretty(&evaluation.document)),
    }
}

pub fn completed(written: &Path, agent_task: &str) {
    println!("{}: completed (agent task {agent_task})", written.display());
}
