//! Every line the command line prints, in one place: the library returns data,
//! and this module decides how it reaches stdout and stderr.
//!
//! Nothing here panics (`print!` does when stdout fails). A closed pipe (`| head`)
//! is a normal end: the reader wanted no more, so the command ends with its own
//! status. Any other write failure (a full disk) is an error, exit 2. Text is
//! printed with control characters escaped, so a hostile file name or id cannot
//! drive the terminal; JSON and `canon` bytes are exact (JSON escapes them itself).

use crate::release::{Report, ReportFormat};
use crate::report::escape_controls;
use crate::run::evaluate::Evaluation;
use crate::run::paths::AGENT_REQUEST;
use crate::{canonical, Error, Format, Outcome, Result, Status};
use std::io::Write;
use std::path::Path;

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

/// The outcomes in `format`; the status says whether all of them hold.
pub fn outcomes(outcomes: &[Outcome], format: Format) -> Result<Status> {
    let rendered = Outcome::render(outcomes, format);
    match format {
        Format::Text => text(&rendered)?,
        Format::Json => bytes(rendered.as_bytes())?,
    }
    Ok(Status::from_ok(Outcome::all_ok(outcomes)))
}

pub fn blessed(names: &[String]) -> Result<()> {
    names.iter().try_for_each(|name| text(&format!("blessed {name}\n")))
}

pub fn release(report: &Report, format: ReportFormat) -> Result<()> {
    text(&report.render(format))
}

pub fn schema_written(snapshot: &str, changed: bool) -> Result<()> {
    let verb = if changed { "wrote" } else { "unchanged:" };
    text(&format!("{verb} {snapshot}\n"))
}

/// A side note of a running command (a conformance trial's "blessed X"), on stderr.
pub fn note(note: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", escape_controls(note));
}

pub fn initialized(dir: &Path, written: &[String]) -> Result<()> {
    for file in written {
        text(&format!("wrote {}\n", dir.join(file).display()))?;
    }
    text(&format!("{}: a conformance suite; run `packetproof test` there\n", dir.display()))
}

pub fn prepared(out_dir: &Path, written: &[&str]) -> Result<()> {
    let shown = out_dir.display();
    text(&if written.is_empty() {
        format!("{shown}: already prepared from this packet; nothing written\n")
    } else {
        format!("{shown}: prepared ({}); give the agent only {AGENT_REQUEST}\n", written.join(", "))
    })
}

pub fn evaluation(evaluation: &Evaluation, report: &Path, format: Format) -> Result<()> {
    match format {
        Format::Text => text(&evaluation.render(&report.display().to_string())),
        Format::Json => bytes(canonical::to_pretty(&evaluation.document).as_bytes()),
    }
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

/// The attestation is on disk whatever happens to stdout; a failing report says so.
pub fn attested(written: &Path, key_id: &str) -> Result<()> {
    text(&format!("{}: attested, signed by {key_id}\n", written.display())).map_err(|e| {
        Error::io(written, std::io::Error::other(format!("written, but printing the confirmation failed: {e}")))
    })
}
