//! Every line the command line prints, in one place: the library returns data,
//! and this module decides how it reaches stdout and stderr.

use crate::release::{Report, ReportFormat};
use crate::run::evaluate::Evaluation;
use crate::run::paths::AGENT_REQUEST;
use crate::{canonical, Error, Format, Outcome, Result, Status};
use std::io::Write;
use std::path::Path;

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

pub fn blessed(names: &[String]) {
    for name in names {
        println!("blessed {name}");
    }
}

pub fn release(report: &Report, format: ReportFormat) {
    print!("{}", report.render(format));
}

pub fn schema_written(snapshot: &str, changed: bool) {
    let verb = if changed { "wrote" } else { "unchanged:" };
    println!("{verb} {snapshot}");
}

/// A side note of a running command (a conformance trial's "blessed X"), on stderr.
pub fn note(text: &str) {
    eprintln!("{text}");
}

pub fn initialized(dir: &Path, written: &[String]) {
    for file in written {
        println!("wrote {}", dir.join(file).display());
    }
    println!("{}: a conformance suite; run `packetproof test` there", dir.display());
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

/// Notes about what a command wrote (e.g. why a wire body is not strict), on stderr
/// so that stdout stays the exact body.
pub fn notes(notes: &[String]) {
    for note in notes {
        eprintln!("packetproof: note: {note}");
    }
}

pub fn attested(written: &Path, key_id: &str) {
    println!("{}: attested, signed by {key_id}", written.display());
}
