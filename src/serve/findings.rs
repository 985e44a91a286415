//! Where findings go: one JSON line per call that does not hold
//! (schemas/serve-finding.schema.json), appended to `--findings FILE` or written to
//! stdout. Each line is written whole under one lock and flushed before the request
//! is answered, so a line is never interleaved with another, and a finding the
//! exporter was told was taken is on disk (or in the pipe) already.

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
    File(std::fs::File),
    Stdout,
}

impl Sink {
    /// Append to `path` under the rule every output option keeps (created when missing;
    /// otherwise a regular file of findings, never a run's file, a project file or one of
    /// `inputs`), or write to stdout: the way to send findings to a pipe or a device.
    pub(crate) fn open(path: Option<&Path>, config: &Config, inputs: &[&Path]) -> Result<Sink> {
        let out = match path {
            Some(path) => Out::File(packetproof::run::open_to_append(path, OutputKind::Findings, config, inputs)?),
            None => Out::Stdout,
        };
        Ok(Sink { out: Mutex::new(out), shown: path.map_or_else(|| "<stdout>".into(), Path::to_path_buf) })
    }

    /// Write `line` (ending in a newline) whole and flush it. A failure (a full disk,
    /// stdout closed) is an error: the request is answered 503 so the exporter retries.
    pub(crate) fn write(&self, line: &str) -> Result<()> {
        let mut out = self.out.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let written = match &mut *out {
            Out::File(file) => file.write_all(line.as_bytes()).and_then(|()| file.flush()),
            Out::Stdout => {
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(line.as_bytes()).and_then(|()| stdout.flush())
            }
        };
        written.map_err(|e| Error::io(&self.shown, e))
    }

    /// Write the finding of a judged call, if it is one: a call that does not hold.
    pub(crate) fn keep(&self, judged: &Judged) -> Result<()> {
        match judged.verdict {
            Verdict::Matched { .. } | Verdict::Conforms { .. } => Ok(()),
            _ => self.write(&packetproof::reporter::trace_line(judged)),
        }
    }

    /// Everything written reaches the disk (a file) before the process exits.
    pub(crate) fn flush(&self) -> Result<()> {
        let out = self.out.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*out {
            Out::File(file) => file.sync_data().map_err(|e| Error::io(&self.shown, e)),
            Out::Stdout => Ok(()),
        }
    }
}
