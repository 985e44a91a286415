//! What `trace` reads of an OTLP export, whichever its encoding (JSON: `json`,
//! protobuf: `protobuf`): spans and log records, each with its trace and span ids (lowercase
//! hex), its name (a log record's: its event name), its instrumentation scope and its
//! attributes as plain JSON values, in the order written and with any duplicate kept
//! (a duplicate is conflicting evidence, not a value to pick). A record borrows its
//! text from the export it was read from: it lives while the export is read.

use super::value::Json;
use std::borrow::Cow;

/// A span or a log record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Span,
    Log,
}

/// One span or log record of an export.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Record<'a> {
    pub(crate) kind: Kind,
    pub(crate) trace_id: Cow<'a, str>,
    pub(crate) span_id: Cow<'a, str>,
    pub(crate) parent_span_id: Cow<'a, str>,
    /// A span's name; a log record's event name (`eventName`, or its older `event.name` attribute).
    pub(crate) name: Cow<'a, str>,
    /// The instrumentation scope that made it.
    pub(crate) scope: Cow<'a, str>,
    pub(crate) attributes: Attributes<'a>,
    /// A span's events (a log record has none).
    pub(crate) events: Vec<Event<'a>>,
    /// A log record's body, as plain JSON (`Null` for a span).
    pub(crate) body: Json<'a>,
    /// When a span started and ended (a log record: its time, both), in Unix nanoseconds.
    pub(crate) start: u64,
    pub(crate) end: u64,
}

/// A span event.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Event<'a> {
    pub(crate) name: Cow<'a, str>,
    pub(crate) attributes: Attributes<'a>,
}

/// Attributes in the order written, duplicates kept.
pub(crate) type Attributes<'a> = Vec<(Cow<'a, str>, Json<'a>)>;

impl Record<'_> {
    /// A log record's event name: its own, or the older `event.name` attribute.
    pub(crate) fn event_name<'a>(event_name: Cow<'a, str>, attributes: &[(Cow<'a, str>, Json<'a>)]) -> Cow<'a, str> {
        if !event_name.is_empty() {
            return event_name;
        }
        match attributes.iter().find(|(k, _)| k == "event.name").map(|(_, v)| v) {
            Some(Json::String(name)) => name.clone(),
            _ => Cow::Borrowed(""),
        }
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

/// A test's short name for an id (`a1`), as an id of `digits` hex digits (the hex of its
/// bytes, zero-padded): distinct names stay distinct ids; none stays none.
#[cfg(test)]
pub(crate) fn test_id(name: &str, digits: usize) -> String {
    if name.is_empty() {
        return String::new();
    }
    format!("{:0>digits$}", hex(name.as_bytes()))
}

/// The short name [`test_id`] made `id` from (an id it did not make, unchanged).
#[cfg(test)]
pub(crate) fn test_name(id: &str) -> String {
    if !id.starts_with("00") {
        return id.to_owned();
    }
    let bytes: Vec<u8> = (0..id.len() / 2)
        .filter_map(|i| u8::from_str_radix(&id[2 * i..2 * i + 2], 16).ok())
        .skip_while(|b| *b == 0)
        .collect();
    String::from_utf8(bytes).unwrap_or_default()
}

/// Where the records of an export were read: the file and its line (1 for a single
/// document or a protobuf file).
#[derive(Debug, Clone)]
pub(crate) struct At<'a> {
    pub(crate) file: &'a str,
    pub(crate) line: usize,
}
