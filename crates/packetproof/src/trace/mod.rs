//! `packetproof trace`: production traces held to reviewed packets.
//!
//! OpenTelemetry traces exported as OTLP/JSON are read streaming (`otlp`); the spans
//! that are GenAI inference calls are found by the semantic conventions (`genai`);
//! each call is matched to a reviewed packet by its exact system and user text
//! ([`packets`]) and judged ([`verdict`]): matched, mismatched, unreviewed or not
//! judgeable. Each judged call is handed on as it is read; the reporters
//! (`crate::reporter`) render it as text, JSON or a JUnit case.

pub(crate) mod genai;
pub(crate) mod otlp;
pub mod packets;
pub mod verdict;

use crate::{Config, Result};
use genai::Call;
use packets::Packets;
use serde::Serialize;
use std::path::PathBuf;
use verdict::Verdict;

/// One call and its verdict, with where it was read.
#[derive(Debug, Clone)]
pub struct Judged {
    pub(crate) file: String,
    pub line: usize,
    pub call: Call,
    pub verdict: Verdict,
    /// What could not be compared (the span records no model, …).
    pub notes: Vec<String>,
}

/// How many spans were read and how the calls among them were judged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub spans: u64,
    pub(crate) calls: u64,
    pub matched: u64,
    pub(crate) mismatched: u64,
    pub(crate) unreviewed: u64,
    pub not_judgeable: u64,
}

impl Counts {
    /// Whether every call holds (no unreviewed or mismatched call).
    pub fn ok(&self) -> bool {
        self.mismatched == 0 && self.unreviewed == 0
    }

    fn add(&mut self, verdict: &Verdict) {
        self.calls += 1;
        match verdict {
            Verdict::Matched { .. } => self.matched += 1,
            Verdict::Mismatched { .. } => self.mismatched += 1,
            Verdict::Unreviewed { .. } => self.unreviewed += 1,
            Verdict::NotJudgeable { .. } => self.not_judgeable += 1,
        }
    }
}

/// Judge every GenAI call in `files` against `packets`, handing each to `visit` as it
/// is read (nothing is kept but the counts).
pub fn check(
    files: &[PathBuf],
    packets: &Packets,
    config: &Config,
    visit: &mut dyn FnMut(&Judged) -> Result<()>,
) -> Result<Counts> {
    let mut counts = Counts::default();
    for file in files {
        otlp::read_spans(file, config.limits.max_file_bytes, &mut |span, at| {
            counts.spans += 1;
            let Some(call) = genai::call(&span) else { return Ok(()) };
            let (verdict, notes) = verdict::judge(&call, packets);
            counts.add(&verdict);
            visit(&Judged { file: at.file.to_owned(), line: at.line, call, verdict, notes })
        })?;
    }
    Ok(counts)
}

/// Judge every GenAI call in the bytes of one OTLP/JSON export request (an OTLP/HTTP
/// body, traces or logs), handing each to `visit`. `source` names the request in
/// errors and in each [`Judged`]. A body that is not an export request is an error
/// (`Error::Json`), and nothing of it was handed on: the body is parsed whole first.
pub fn check_request(
    body: &[u8],
    source: &str,
    packets: &Packets,
    visit: &mut dyn FnMut(&Judged) -> Result<()>,
) -> Result<Counts> {
    let mut counts = Counts::default();
    otlp::read_request(body, source, &mut |span, at| {
        counts.spans += 1;
        let Some(call) = genai::call(&span) else { return Ok(()) };
        let (verdict, notes) = verdict::judge(&call, packets);
        counts.add(&verdict);
        visit(&Judged { file: at.file.to_owned(), line: at.line, call, verdict, notes })
    })?;
    Ok(counts)
}

impl Judged {
    /// The request or file the call was read from.
    pub fn source(&self) -> &str {
        &self.file
    }
}
