//! Where findings go: one JSON line per call that does not hold
//! (schemas/serve-finding.schema.json), appended to `--findings FILE` or written to
//! stdout. A request's lines are written together, whole, under one lock, and flushed
//! before the request is answered (one write a request, not one a finding), so a line
//! is never interleaved with another, and a finding the exporter was told was taken is
//! on disk (or in the pipe) already. A line that cannot
//! be written whole (a full disk) is cut back from the file, or ended with a newline
//! before the next line where it cannot be (stdout), so every finding stays a line of
//! its own; its request is answered 503.

use packetproof::run::OutputKind;
use packetproof::trace::verdict::Verdict;
use packetproof::trace::Judged;
use packetproof::{Config, Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub(crate) struct Sink {
    out: Mutex<Out>,
    shown: PathBuf,
}

enum Out {
    /// The file, and whether its last line may be cut short (a write failed, and
    /// cutting the file back to where the line began failed too).
    File(std::fs::File, bool),
    /// Whether the last line written may be cut short (stdout cannot be cut back).
    Stdout(bool),
}

impl Sink {
    /// Append to `path` under the rule every output option keeps (created when missing;
    /// otherwise a regular file of findings, never a run's file, a project file or one of
    /// `inputs`), or write to stdout: the way to send findings to a pipe or a device.
    pub(crate) fn open(path: Option<&Path>, config: &Config, inputs: &[&Path]) -> Result<Sink> {
        let out = match path {
            Some(path) => {
                Out::File(packetproof::run::open_to_append(path, OutputKind::Findings, config, inputs)?, false)
            }
            None => Out::Stdout(false),
        };
        Ok(Sink { out: Mutex::new(out), shown: path.map_or_else(|| "<stdout>".into(), Path::to_path_buf) })
    }

    /// Write `lines` (each ending in a newline) whole and flush them. A failure (a full
    /// disk, stdout closed) is an error: the request is answered 503 so the exporter
    /// retries. Lines stay whole: lines that could not be written whole are cut back from
    /// the file, or, where they cannot be, ended before the next lines are written.
    pub(crate) fn write(&self, lines: &str) -> Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let mut out = self.out.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let written = match &mut *out {
            Out::File(file, cut) => write_to_file(file, cut, lines.as_bytes()),
            Out::Stdout(cut) => {
                let mut stdout = std::io::stdout().lock();
                let written = end_cut_line(&mut stdout, cut).and_then(|()| whole(&mut stdout, lines.as_bytes()));
                *cut |= written.is_err();
                written
            }
        };
        written.map_err(|e| Error::io(&self.shown, e))
    }

    /// Write the finding of a judged call, if it is one: a call that does not hold.
    pub(crate) fn keep(&self, judged: &Judged) -> Result<()> {
        self.write(&line(judged).unwrap_or_default())
    }

    /// Everything written reaches the disk (a file) before the process exits.
    pub(crate) fn flush(&self) -> Result<()> {
        let out = self.out.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*out {
            Out::File(file, _) => file.sync_data().map_err(|e| Error::io(&self.shown, e)),
            Out::Stdout(_) => Ok(()),
        }
    }
}

/// The finding line of a judged call (ending in a newline), if it is one: a call that does not hold.
pub(crate) fn line(judged: &Judged) -> Option<String> {
    match judged.verdict {
        Verdict::Matched { .. } | Verdict::Conforms { .. } => None,
        _ => Some(packetproof::reporter::trace_line(judged)),
    }
}

fn whole(out: &mut impl Write, line: &[u8]) -> std::io::Result<()> {
    out.write_all(line).and_then(|()| out.flush())
}

/// A newline first when the last line may be cut short, so the next is a line of its own.
fn end_cut_line(out: &mut impl Write, cut: &mut bool) -> std::io::Result<()> {
    if *cut {
        whole(out, b"\n")?;
        *cut = false;
    }
    Ok(())
}

/// Append `lines` to `file` whole, or leave the file as it was: a failed write is cut
/// back to the length the file had (the file is appended to by this process alone).
fn write_to_file(file: &mut std::fs::File, cut: &mut bool, lines: &[u8]) -> std::io::Result<()> {
    end_cut_line(file, cut)?;
    let before = file.metadata()?.len();
    let written = whole(file, lines);
    if written.is_err() {
        *cut = file.set_len(before).is_err();
    }
    written
}
