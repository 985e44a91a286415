//! `packetproof trace`: production traces held to reviewed packets.
//!
//! An export (the body of one OTLP request: traces or logs, JSON or protobuf) is read
//! into spans and log records by `crate::otlp`; the GenAI calls among them
//! are found by the semantic conventions (`genai`); each call is matched to a reviewed
//! packet by its exact system and user text ([`packets`]) and judged ([`verdict`]):
//! matched, mismatched, unreviewed or not judgeable.
//!
//! [`judge_export`] judges the bytes of one export request (what an OTLP/HTTP receiver
//! is sent); [`Session`] reads many (the lines of files, several files) and judges at
//! the end; [`check`] is the file reader of `packetproof trace FILE…`. A receiver judging
//! each request as it comes holds the calls not whole in one request in a
//! [`window::Window`] until the rest of their records arrive.

pub(crate) mod conventions;
pub(crate) mod genai;
pub(crate) mod join;
pub mod packets;
pub mod received;
pub mod request;
pub mod settings;
pub mod verdict;
pub mod vouched;
pub mod window;

pub(crate) use crate::otlp::{record, value};
pub use crate::otlp::{Encoding, Signal};
pub use conventions::table::{Family, Library, FAMILIES};

use crate::otlp::{json, protobuf};
use crate::Invocation;
use crate::{fsutil, Error, Result};
use genai::Call;
use packets::Packets;
use record::{At, Kind, Record};
use serde::Serialize;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use verdict::Verdict;

/// The event whose attributes are a whole inference call (GenAI conventions v1.37+).
pub(crate) const DETAILS_EVENT: &str = "gen_ai.client.inference.operation.details";

/// What the caller allows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// A trace with no GenAI call, or with calls that cannot be judged, passes
    /// (`--allow-unjudged`); by default it fails.
    pub allow_unjudged: bool,
    /// Call fields a call's telemetry must record (`--require FIELD`).
    pub require: settings::Required,
}

/// One call and its verdict, with where it was read.
#[derive(Debug, Clone)]
pub struct Judged {
    pub(crate) file: String,
    pub line: usize,
    pub call: Call,
    pub verdict: Verdict,
    /// What could not be compared (the span records no model, …).
    pub notes: Vec<String>,
    /// Whether the call fails the trace (unreviewed, mismatched, or not judgeable
    /// where unjudged calls are not allowed).
    pub(crate) fails: bool,
    /// Why it was judged before all its records arrived (a join window's call).
    pub(crate) expired: Option<window::Expiry>,
}

impl Judged {
    pub fn fails(&self) -> bool {
        self.fails
    }

    /// Why the call was judged before all its records arrived, when it was: held in a
    /// [`window::Window`], it was not whole when the window ended, made room or stopped.
    pub fn expired(&self) -> Option<window::Expiry> {
        self.expired
    }
}

/// How many spans and log records were read and how the calls among them were judged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub spans: u64,
    pub log_records: u64,
    pub(crate) calls: u64,
    pub matched: u64,
    pub(crate) mismatched: u64,
    pub(crate) unreviewed: u64,
    pub not_judgeable: u64,
    /// Held to a gate (`None` otherwise): matched calls whose packet it did not vouch for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) unvouched: Option<u64>,
    /// Held to a gate (`None` otherwise): calls no packet has that render its vouched templates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) conforms: Option<u64>,
    #[serde(skip)]
    pub(crate) options: Options,
}

impl Counts {
    /// Whether the trace holds: no call unreviewed or mismatched, and (unless allowed)
    /// at least one call, every one of them judged.
    pub fn ok(&self) -> bool {
        let judged = self.options.allow_unjudged || (self.calls > 0 && self.not_judgeable == 0);
        self.mismatched == 0 && self.unreviewed == 0 && self.unvouched.unwrap_or(0) == 0 && judged
    }

    /// Whether the calls were held to a gate.
    pub(crate) fn held_to_gate(&self) -> bool {
        self.unvouched.is_some()
    }

    /// How many calls there are.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// Whether calls that cannot be judged (or none at all) pass.
    pub fn unjudged_allowed(&self) -> bool {
        self.options.allow_unjudged
    }

    fn add(&mut self, verdict: &Verdict) {
        self.calls += 1;
        match verdict {
            Verdict::Matched { .. } => self.matched += 1,
            Verdict::Mismatched { .. } => self.mismatched += 1,
            Verdict::Unreviewed { .. } => self.unreviewed += 1,
            Verdict::NotJudgeable { .. } => self.not_judgeable += 1,
            Verdict::Unvouched { .. } => *self.unvouched.get_or_insert(0) += 1,
            Verdict::Conforms { .. } => *self.conforms.get_or_insert(0) += 1,
        }
    }
}

/// Reads exports and judges their calls at [`Session::finish`]: the records of one call
/// may come in different exports (a span in the traces, its events in the logs).
pub struct Session<'p> {
    packets: &'p Packets,
    counts: Counts,
    join: join::Join,
    /// The gate each verdict is held to, with the settings its template check reads.
    gate: Option<(&'p vouched::Vouching, &'p Invocation)>,
}

impl<'p> Session<'p> {
    pub fn new(packets: &'p Packets, options: Options) -> Session<'p> {
        Session { packets, counts: Counts { options, ..Counts::default() }, join: join::Join::default(), gate: None }
    }

    /// Hold every verdict to the gate of `vouching` (`trace --gate`).
    pub fn held_to(mut self, vouching: &'p vouched::Vouching, config: &'p Invocation) -> Session<'p> {
        (self.counts.unvouched, self.counts.conforms) = (Some(0), Some(0));
        self.gate = Some((vouching, config));
        self
    }

    /// Read one export request. `signal` may be `None` for protobuf when nothing says
    /// (a file): the bytes decide. `origin` and `line` name where it was read, in reports.
    /// An export refused part way leaves the session holding what it read before the
    /// refusal: drop the session then (as `trace` and `serve` do).
    pub fn read(
        &mut self,
        bytes: &[u8],
        encoding: Encoding,
        signal: Option<Signal>,
        origin: &str,
        line: usize,
    ) -> Result<()> {
        let at = At { file: origin, line };
        genai::keep_whole_texts(self.gate.is_some());
        match encoding {
            Encoding::Json => {
                let document = value::parse(bytes).map_err(|e| Error::Json {
                    file: origin.to_owned(),
                    line: line + e.line - 1,
                    column: e.column,
                    message: e.message,
                })?;
                let problem =
                    |p: json::Problem| Error::Json { file: origin.to_owned(), line, column: 1, message: p.message };
                json::records(document, &mut |record| self.add(record, &at)).map_err(problem)?
            }
            Encoding::Protobuf => {
                let problem = |message: String| Error::refused(origin.to_owned(), message);
                protobuf::read(bytes, signal, &mut |record| self.add(record, &at)).map_err(problem)?
            }
        }
    }

    fn add(&mut self, record: Record, at: &At) -> Result<()> {
        match record.kind {
            Kind::Span => self.counts.spans += 1,
            Kind::Log => self.counts.log_records += 1,
        }
        self.join.add(record, at);
        Ok(())
    }

    /// Judge every call read, each once, handing each to `visit`; the counts.
    pub fn finish(mut self, visit: &mut dyn FnMut(&Judged) -> Result<()>) -> Result<Counts> {
        let gathered = std::mem::take(&mut self.join).finish();
        self.judge_each(gathered.map(|gathered| window::Ready { gathered, expiry: None, before: None }), visit)
    }

    /// The calls read so far, their records joined, not judged yet (the session reads on
    /// afresh): for a [`window::Window`] to hold those not whole, or for [`Session::judge`].
    pub fn gather(&mut self) -> window::Calls {
        window::Calls::of(std::mem::take(&mut self.join).finish().collect())
    }

    /// Judge `calls` (gathered here, or handed back by a window), each once, handing each
    /// to `visit`; the counts of what this session read and judged.
    pub fn judge(self, calls: window::Calls, visit: &mut dyn FnMut(&Judged) -> Result<()>) -> Result<Counts> {
        self.judge_each(calls.ready.into_iter(), visit)
    }

    fn judge_each(
        self,
        calls: impl Iterator<Item = window::Ready>,
        visit: &mut dyn FnMut(&Judged) -> Result<()>,
    ) -> Result<Counts> {
        let Session { packets, mut counts, gate, .. } = self;
        let require = counts.options.require;
        let verdict_of = |call: &mut Call, evidence: &join::Evidence| {
            let (verdict, mut notes) = verdict::judge(call, evidence, packets, require);
            let verdict = match gate {
                Some((vouching, config)) => {
                    vouched::verdict(verdict, evidence, packets, vouching, config, require, &mut notes)
                }
                None => verdict,
            };
            (verdict, notes)
        };
        for window::Ready { gathered, expiry, before } in calls {
            let mut call = gathered.call;
            let (verdict, mut notes) = verdict_of(&mut call, &gathered.evidence);
            if let Some(before) = before {
                // A call judged already, with a later record under its ids: reported
                // again only when that record changes its verdict.
                let join::Gathered { call: mut before_call, evidence, .. } = *before;
                let (was, _) = verdict_of(&mut before_call, &evidence);
                if was == verdict {
                    continue;
                }
                notes.push(format!(
                    "judged again: a record under its trace and span id arrived after the call was judged {}",
                    was.name()
                ));
            }
            counts.add(&verdict);
            let fails =
                verdict.fails() || (!counts.options.allow_unjudged && matches!(verdict, Verdict::NotJudgeable { .. }));
            let expired = expiry.map(|(expiry, note)| {
                notes.push(note);
                expiry
            });
            visit(&Judged { file: gathered.file, line: gathered.line, call, verdict, notes, fails, expired })?;
        }
        Ok(counts)
    }
}

/// The calls of one export request (its bytes, encoding and signal), judged against
/// `packets`: what an OTLP/HTTP receiver does with each request body.
pub fn judge_export(
    bytes: &[u8],
    encoding: Encoding,
    signal: Signal,
    packets: &Packets,
    options: Options,
) -> Result<(Vec<Judged>, Counts)> {
    let mut session = Session::new(packets, options);
    session.read(bytes, encoding, Some(signal), "the export request", 1)?;
    let mut calls = Vec::new();
    let counts = session.finish(&mut |judged| {
        calls.push(judged.clone());
        Ok(())
    })?;
    Ok((calls, counts))
}

/// Judge every GenAI call in `files` against `packets`, handing each to `visit`.
/// A file is OTLP/JSON (one export per line, or one document) or OTLP protobuf (one
/// export; `.pb`/`.binpb`/`.protobuf`, or bytes that are not JSON).
pub fn check(
    files: &[PathBuf],
    packets: &Packets,
    config: &Invocation,
    options: Options,
    visit: &mut dyn FnMut(&Judged) -> Result<()>,
) -> Result<Counts> {
    check_vouched(files, packets, None, config, options, visit)
}

/// [`check`], each verdict then held to the gate of `vouching` when there is one.
pub fn check_vouched(
    files: &[PathBuf],
    packets: &Packets,
    vouching: Option<&vouched::Vouching>,
    config: &Invocation,
    options: Options,
    visit: &mut dyn FnMut(&Judged) -> Result<()>,
) -> Result<Counts> {
    let mut session = Session::new(packets, options);
    if let Some(vouching) = vouching {
        session = session.held_to(vouching, config);
    }
    for file in files {
        read_file(&mut session, file, config.settings().limits.max_file_bytes)?;
    }
    session.finish(visit)
}

/// Whether a file is protobuf: by its extension, else by its first bytes (OTLP/JSON is
/// UTF-8 text whose first non-blank character is `{`).
fn is_protobuf(path: &Path, head: &[u8]) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    match ext.as_str() {
        "pb" | "binpb" | "protobuf" => return true,
        "json" | "jsonl" | "ndjson" => return false,
        _ => {}
    }
    let text = match std::str::from_utf8(head) {
        Ok(text) => text,
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
        Err(_) => return true,
    };
    !matches!(text.trim_start().chars().next(), Some('{') | None)
}

fn read_file(session: &mut Session, path: &Path, max_line: u64) -> Result<()> {
    let shown = path.display().to_string();
    let file = fsutil::open_regular(path)?;
    let length = file.metadata().map_or(0, |meta| meta.len());
    let mut reader = BufReader::new(file);
    let head = reader.fill_buf().map_err(|e| Error::io(path, e))?.to_vec();
    if is_protobuf(path, &head) {
        let bytes = fsutil::read_rest(Vec::new(), length, reader, &shown, max_line)?;
        return session.read(&bytes, Encoding::Protobuf, None, &shown, 1);
    }
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let read = (&mut reader).take(max_line + 1).read_until(b'\n', &mut line).map_err(|e| Error::io(path, e))?;
        if read == 0 {
            return Ok(());
        }
        number += 1;
        if line.len() as u64 > max_line {
            return Err(Error::refused(
                format!("{shown}:{number}"),
                format!("the line is longer than the limit of {max_line} bytes (harness.toml limits.max_file_bytes)"),
            ));
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let trimmed = line.strip_suffix(b"\n").unwrap_or(&line);
        let trimmed = trimmed.strip_suffix(b"\r").unwrap_or(trimmed);
        match session.read(trimmed, Encoding::Json, None, &shown, number) {
            // The first document does not end on its line: one pretty-printed document.
            Err(Error::Json { message, .. }) if number == 1 && message.starts_with("EOF while parsing") => {
                let bytes = fsutil::read_rest(std::mem::take(&mut line), length, reader, &shown, max_line)?;
                return session.read(&bytes, Encoding::Json, None, &shown, 1);
            }
            other => other?,
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod file_tests {
    use super::*;
    use serde_json::{json, Value};

    fn spans_of(text: &[u8], name: &str) -> Result<Counts> {
        spans_within(text, name, 1 << 20)
    }

    fn spans_within(text: &[u8], name: &str, max_line: u64) -> Result<Counts> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let packets = Packets::default();
        let mut session = Session::new(&packets, Options::default());
        read_file(&mut session, &path, max_line)?;
        session.finish(&mut |_| Ok(()))
    }

    fn request(names: &[&str]) -> String {
        let spans: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
        json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "s"}, "spans": spans}]}]}).to_string()
    }

    #[test]
    fn lines_a_single_pretty_document_and_protobuf_are_read() {
        let text = format!("{}\n\n{}\n", request(&["a", "b"]), request(&["c"]));
        assert_eq!(spans_of(text.as_bytes(), "t.jsonl").unwrap().spans, 3);
        let pretty = serde_json::to_string_pretty(&serde_json::from_str::<Value>(&request(&["d"])).unwrap()).unwrap();
        assert_eq!(spans_of(pretty.as_bytes(), "t.json").unwrap().spans, 1);
        let binary = crate::otlp::encode::encode_json(&serde_json::from_str(&request(&["a", "b"])).unwrap());
        assert_eq!(spans_of(&binary, "t.bin").unwrap().spans, 2);
        assert_eq!(spans_of(&binary, "t.pb").unwrap().spans, 2);
        assert_eq!(spans_of(b"{}\n", "t.jsonl").unwrap().spans, 0);
        assert_eq!(spans_of(b"", "t.pb").unwrap().spans, 0);
    }

    #[test]
    fn a_malformed_line_names_its_line() {
        let text = format!("{}\n{{\"resourceSpans\": [}}\n", request(&["a"]));
        let err = spans_of(text.as_bytes(), "t.jsonl").unwrap_err().to_string();
        assert!(err.contains("t.jsonl:2:"), "{err}");
        let err = spans_of(format!("{}\n{{\"spans\": []}}\n", request(&["a"])).as_bytes(), "t.jsonl").unwrap_err();
        let err = err.to_string();
        assert!(err.contains(":2:") && err.contains("expected an OTLP/JSON ExportTraceServiceRequest"), "{err}");
        let err = spans_of(b"{\"resourceSpans\": [], \"a\": 1, \"a\": 2}\n", "t.jsonl").unwrap_err().to_string();
        assert!(err.contains("duplicate object key \"a\""), "{err}");
        let err = spans_of(b"\x0a\x05\xff\xff", "t.pb").unwrap_err().to_string();
        assert!(err.contains("not an OTLP protobuf"), "{err}");
    }

    #[test]
    fn a_line_past_the_bound_and_a_broken_pretty_document_name_their_line() {
        let line = request(&["a"]);
        let err = spans_within(format!("{line}\n{line}{}\n", " ".repeat(200)).as_bytes(), "t.jsonl", 150)
            .unwrap_err()
            .to_string();
        assert!(err.contains("t.jsonl:2: refused: the line is longer than the limit of 150 bytes"), "{err}");
        let err = spans_of(b"{\n  \"resourceSpans\": [\n    {\"scopeSpans\": 7}\n  ]\n}\n", "t.jsonl")
            .unwrap_err()
            .to_string();
        assert!(err.contains("$.resourceSpans[0].scopeSpans: expected an array"), "{err}");
    }
}
