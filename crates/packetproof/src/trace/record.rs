//! What `trace` reads of an OTLP export, whichever its encoding (JSON: `otlp`,
//! protobuf: `proto`): spans and log records, each with its trace and span ids (lowercase
//! hex), its name (a log record's: its event name), its instrumentation scope and its
//! attributes as plain JSON values, in the order written and with any duplicate kept
//! (a duplicate is conflicting evidence, not a value to pick).

use serde_json::Value;

/// A span or a log record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Span,
    Log,
}

/// One span or log record of an export.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Record {
    pub(crate) kind: Kind,
    pub(crate) trace_id: String,
    pub(crate) span_id: String,
    pub(crate) parent_span_id: String,
    /// A span's name; a log record's event name (`eventName`, or its older `event.name` attribute).
    pub(crate) name: String,
    /// The instrumentation scope that made it.
    pub(crate) scope: String,
    pub(crate) attributes: Vec<(String, Value)>,
    /// A span's events (a log record has none).
    pub(crate) events: Vec<Event>,
    /// A log record's body, as plain JSON (`Null` for a span).
    pub(crate) body: Value,
    /// When a span started and ended (a log record: its time, both), in Unix nanoseconds.
    pub(crate) start: u64,
    pub(crate) end: u64,
}

/// A span event.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Event {
    pub(crate) name: String,
    pub(crate) attributes: Vec<(String, Value)>,
}

impl Record {
    /// A log record's event name: its own, or the older `event.name` attribute.
    pub(crate) fn event_name(event_name: String, attributes: &[(String, Value)]) -> String {
        if !event_name.is_empty() {
            return event_name;
        }
        attributes.iter().find(|(k, _)| k == "event.name").and_then(|(_, v)| v.as_str()).unwrap_or_default().to_owned()
    }
}

/// Ids as OTLP/JSON writes them: lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// Where the records of an export were read: the file and its line (1 for a single
/// document or a protobuf file).
#[derive(Debug, Clone)]
pub(crate) struct At<'a> {
    pub(crate) file: &'a str,
    pub(crate) line: usize,
}
