//! OTLP protobuf exports: the `ExportTraceServiceRequest` and `ExportLogsServiceRequest`
//! binaries that the SDK exporters send (`application/x-protobuf` to `/v1/traces` and
//! `/v1/logs`), read in place (`wire`) into the same [`Record`]s as OTLP/JSON, their text
//! borrowed from the export's bytes.
//!
//! An export is accepted exactly when the OpenTelemetry project's generated types accept
//! it: every message they declare is read, the parts no record holds (resources, scope
//! attributes, links, status) too, so a field of the wrong wire type or a string that is
//! not UTF-8 is refused wherever it is; a field read twice is merged as protobuf merges it
//! (the last scalar wins, a message merges into the one before it, a list grows). A test
//! holds this reader to those types on random and broken exports (`tests.rs`).
//!
//! The two requests share their wire layout at the top (field 1, repeated), so the bytes
//! alone do not say which signal they are: the caller says ([`Signal`]), or the bytes
//! decide (a span and a log record differ in the wire type of field 1). Concatenated
//! messages are one message (protobuf merges repeated fields), so a file holding several
//! exports back to back reads as one.

use super::record::{hex, Attributes, Event, Kind, Record};
use super::value::Json;
use super::{Signal, Visit};
use std::borrow::Cow;
use wire::{Broken, Fields, LIMIT};

mod wire;

/// An `AnyValue` as read, its text in the export: made plain JSON only when its message is
/// whole, since a later field of the same message may replace it.
enum Any<'a> {
    Empty,
    Str(&'a str),
    Bool(bool),
    Int(i64),
    Double(f64),
    Bytes(&'a [u8]),
    Array(Vec<Any<'a>>),
    Kvlist(Vec<Pair<'a>>),
    Strindex,
}

struct Pair<'a> {
    key: &'a str,
    value: Any<'a>,
}

struct SpanRead<'a> {
    trace_id: &'a [u8],
    span_id: &'a [u8],
    parent_span_id: &'a [u8],
    name: &'a str,
    start: u64,
    end: u64,
    attributes: Vec<Pair<'a>>,
    events: Vec<(&'a str, Vec<Pair<'a>>)>,
}

struct LogRead<'a> {
    time: u64,
    observed: u64,
    trace_id: &'a [u8],
    span_id: &'a [u8],
    event_name: &'a str,
    attributes: Vec<Pair<'a>>,
    body: Any<'a>,
}

/// The records of one top-level entry (a `ResourceSpans` or `ResourceLogs`), by scope.
enum Entry<'a> {
    Spans(Vec<(&'a str, Vec<SpanRead<'a>>)>),
    Logs(Vec<(&'a str, Vec<LogRead<'a>>)>),
}

/// Hand on every span or log record of the export request in `buffer`: the request of
/// `signal`, or when nothing says (a file), of the one the bytes are (traces when they
/// are both: only an export without ids or times can be).
///
/// The request is read one top-level entry at a time, so what is held at once is one
/// entry's records, whatever the size of the export. A broken request is refused whole,
/// with where it breaks: the records of its entries before the break have been handed on,
/// and the caller (a file read, a request served) drops everything read of it. A record
/// that cannot be one (an id of the wrong length) is refused once the rest of the
/// request is read, so a request broken further on is refused as broken.
pub(crate) fn read(buffer: &[u8], signal: Option<Signal>, visit: &mut Visit) -> Result<crate::Result<()>, String> {
    let Some(chosen) = signal.or_else(|| sniffed(buffer)) else { return Err(refusal(buffer)) };
    match entries(buffer, chosen, Some(visit)) {
        Ok(outcome) => outcome,
        Err(_) if signal.is_none() => Err(refusal(buffer)),
        Err(broken) => Err(refused(chosen, &broken)),
    }
}

fn refused(signal: Signal, broken: &Broken) -> String {
    format!("not an OTLP protobuf {}: {}, at byte {}", signal.request_name(), broken.what, broken.at)
}

/// Why `buffer` is neither request, when nothing said which it is: read as each.
fn refusal(buffer: &[u8]) -> String {
    let why = |signal: Signal| match entries(buffer, signal, None) {
        Err(broken) => refused(signal, &broken),
        Ok(_) => format!("not an OTLP protobuf {}", signal.request_name()),
    };
    format!("{}; {}", why(Signal::Traces), why(Signal::Logs))
}

/// Which request `buffer` is, when nothing says: the first entry that is one only decides;
/// traces when each is both; `None` when the top level is broken or an entry is neither.
fn sniffed(buffer: &[u8]) -> Option<Signal> {
    let mut top = Fields::new(buffer, 0);
    while let Some(key) = top.next() {
        let (number, wire) = key.ok()?;
        if number != 1 {
            top.skip(number, wire, LIMIT).ok()?;
            continue;
        }
        let entry = top.message(wire, "the request's field 1", LIMIT).ok()?;
        let as_traces = resource(entry.clone(), Signal::Traces, LIMIT - 1).is_ok();
        match (as_traces, resource(entry, Signal::Logs, LIMIT - 1).is_ok()) {
            (true, true) => continue,
            (true, false) => return Some(Signal::Traces),
            (false, true) => return Some(Signal::Logs),
            (false, false) => return None,
        }
    }
    Some(Signal::Traces)
}

/// What reading a request that is not broken comes to: `Err` when a record cannot be one.
type Outcome = Result<crate::Result<()>, String>;

/// Read every entry of the request of `signal`, handing its records to `visit` (none
/// when only checking): `Err` where the bytes break; `Ok(Err)` when `visit` stopped.
fn entries(buffer: &[u8], signal: Signal, mut visit: Option<&mut Visit>) -> Result<Outcome, Broken> {
    let field = match signal {
        Signal::Traces => "ExportTraceServiceRequest.resource_spans",
        Signal::Logs => "ExportLogsServiceRequest.resource_logs",
    };
    let mut unread = None;
    let mut top = Fields::new(buffer, 0);
    while let Some(key) = top.next() {
        let (number, wire) = key?;
        if number != 1 {
            top.skip(number, wire, LIMIT)?;
            continue;
        }
        let entry = resource(top.message(wire, field, LIMIT)?, signal, LIMIT - 1)?;
        if let (Some(visit), None) = (visit.as_deref_mut(), &unread) {
            match records(entry, visit) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Ok(Ok(Err(e))),
                Err(why) => unread = Some(why),
            }
        }
    }
    Ok(unread.map_or(Ok(Ok(())), Err))
}

/// A `ResourceSpans` or `ResourceLogs`, in a message that may nest `depth` more levels.
fn resource<'a>(mut fields: Fields<'a>, signal: Signal, depth: u32) -> Result<Entry<'a>, Broken> {
    let (mut spans, mut logs) = (Vec::new(), Vec::new());
    while let Some(key) = fields.next() {
        match key? {
            (1, wire) => validate(fields.message(wire, "the resource", depth)?, depth - 1, resource_part)?,
            (2, wire) if signal == Signal::Traces => spans.push(scoped(
                fields.message(wire, "ResourceSpans.scope_spans", depth)?,
                depth - 1,
                ("ScopeSpans.spans", span),
            )?),
            (2, wire) => logs.push(scoped(
                fields.message(wire, "ResourceLogs.scope_logs", depth)?,
                depth - 1,
                ("ScopeLogs.log_records", log),
            )?),
            (3, wire) => ignore(fields.string(wire, "schema_url"))?,
            (number, wire) => fields.skip(number, wire, depth)?,
        }
    }
    Ok(match signal {
        Signal::Traces => Entry::Spans(spans),
        Signal::Logs => Entry::Logs(logs),
    })
}

/// A field's value, read for what it must be and not kept.
fn ignore<T>(read: Result<T, Broken>) -> Result<(), Broken> {
    read.map(|_| ())
}

type Item<'a, T> = fn(Fields<'a>, u32) -> Result<T, Broken>;

/// A `ScopeSpans` or `ScopeLogs`: its scope's name and its items.
fn scoped<'a, T>(mut fields: Fields<'a>, depth: u32, item: (&str, Item<'a, T>)) -> Result<(&'a str, Vec<T>), Broken> {
    let (name, item) = item;
    let (mut scope, mut items) = ("", Vec::new());
    while let Some(key) = fields.next() {
        match key? {
            (1, wire) => {
                let mut s = fields.message(wire, "InstrumentationScope", depth)?;
                while let Some(key) = s.next() {
                    match key? {
                        (1, wire) => scope = s.string(wire, "InstrumentationScope.name")?,
                        (2, wire) => ignore(s.string(wire, "InstrumentationScope.version"))?,
                        (3, wire) => {
                            ignore(pair(s.message(wire, "InstrumentationScope.attributes", depth - 1)?, depth - 2))?
                        }
                        (4, wire) => ignore(s.varint(wire, "InstrumentationScope.dropped_attributes_count"))?,
                        (number, wire) => s.skip(number, wire, depth - 1)?,
                    }
                }
            }
            (2, wire) => items.push(item(fields.message(wire, name, depth)?, depth - 1)?),
            (3, wire) => ignore(fields.string(wire, "schema_url"))?,
            (number, wire) => fields.skip(number, wire, depth)?,
        }
    }
    Ok((scope, items))
}

/// Read a message no record holds, for what it must be.
fn validate<'a>(
    fields: Fields<'a>,
    depth: u32,
    part: fn(&mut Fields<'a>, u32, u8, u32) -> Result<(), Broken>,
) -> Result<(), Broken> {
    let mut fields = fields;
    while let Some(key) = fields.next() {
        let (number, wire) = key?;
        part(&mut fields, number, wire, depth)?;
    }
    Ok(())
}

/// A field of a `Resource` (its attributes, their dropped count, its entity references).
fn resource_part(fields: &mut Fields, number: u32, wire: u8, depth: u32) -> Result<(), Broken> {
    match number {
        1 => ignore(pair(fields.message(wire, "Resource.attributes", depth)?, depth - 1))?,
        2 => ignore(fields.varint(wire, "Resource.dropped_attributes_count"))?,
        3 => validate(fields.message(wire, "Resource.entity_refs", depth)?, depth - 1, entity_ref_part)?,
        _ => fields.skip(number, wire, depth)?,
    }
    Ok(())
}

/// A field of an `EntityRef`: four strings, two of them lists.
fn entity_ref_part(fields: &mut Fields, number: u32, wire: u8, depth: u32) -> Result<(), Broken> {
    match number {
        1..=4 => ignore(fields.string(wire, "an EntityRef string"))?,
        _ => fields.skip(number, wire, depth)?,
    }
    Ok(())
}

/// A field of a span's `Link`.
fn link_part(fields: &mut Fields, number: u32, wire: u8, depth: u32) -> Result<(), Broken> {
    match number {
        1 | 2 => ignore(fields.bytes(wire, "a Link id"))?,
        3 => ignore(fields.string(wire, "Link.trace_state"))?,
        4 => ignore(pair(fields.message(wire, "Link.attributes", depth)?, depth - 1))?,
        5 => ignore(fields.varint(wire, "Link.dropped_attributes_count"))?,
        6 => ignore(fields.fixed32(wire, "Link.flags"))?,
        _ => fields.skip(number, wire, depth)?,
    }
    Ok(())
}

/// A field of a span's `Status`.
fn status_part(fields: &mut Fields, number: u32, wire: u8, depth: u32) -> Result<(), Broken> {
    match number {
        2 => ignore(fields.string(wire, "Status.message"))?,
        3 => ignore(fields.varint(wire, "Status.code"))?,
        _ => fields.skip(number, wire, depth)?,
    }
    Ok(())
}

fn span<'a>(mut fields: Fields<'a>, depth: u32) -> Result<SpanRead<'a>, Broken> {
    let mut span = SpanRead {
        trace_id: &[],
        span_id: &[],
        parent_span_id: &[],
        name: "",
        start: 0,
        end: 0,
        attributes: Vec::new(),
        events: Vec::new(),
    };
    while let Some(key) = fields.next() {
        match key? {
            (1, wire) => span.trace_id = fields.bytes(wire, "Span.trace_id")?,
            (2, wire) => span.span_id = fields.bytes(wire, "Span.span_id")?,
            (3, wire) => ignore(fields.string(wire, "Span.trace_state"))?,
            (4, wire) => span.parent_span_id = fields.bytes(wire, "Span.parent_span_id")?,
            (5, wire) => span.name = fields.string(wire, "Span.name")?,
            (6 | 10 | 12 | 14, wire) => ignore(fields.varint(wire, "a Span kind or count"))?,
            (7, wire) => span.start = fields.fixed64(wire, "Span.start_time_unix_nano")?,
            (8, wire) => span.end = fields.fixed64(wire, "Span.end_time_unix_nano")?,
            (9, wire) => span.attributes.push(pair(fields.message(wire, "Span.attributes", depth)?, depth - 1)?),
            (11, wire) => span.events.push(event(fields.message(wire, "Span.events", depth)?, depth - 1)?),
            (13, wire) => validate(fields.message(wire, "Span.links", depth)?, depth - 1, link_part)?,
            (15, wire) => validate(fields.message(wire, "Span.status", depth)?, depth - 1, status_part)?,
            (16, wire) => ignore(fields.fixed32(wire, "Span.flags"))?,
            (number, wire) => fields.skip(number, wire, depth)?,
        }
    }
    Ok(span)
}

fn event<'a>(mut fields: Fields<'a>, depth: u32) -> Result<(&'a str, Vec<Pair<'a>>), Broken> {
    let (mut name, mut attributes) = ("", Vec::new());
    while let Some(key) = fields.next() {
        match key? {
            (1, wire) => ignore(fields.fixed64(wire, "Event.time_unix_nano"))?,
            (2, wire) => name = fields.string(wire, "Event.name")?,
            (3, wire) => attributes.push(pair(fields.message(wire, "Event.attributes", depth)?, depth - 1)?),
            (4, wire) => ignore(fields.varint(wire, "Event.dropped_attributes_count"))?,
            (number, wire) => fields.skip(number, wire, depth)?,
        }
    }
    Ok((name, attributes))
}

fn log<'a>(mut fields: Fields<'a>, depth: u32) -> Result<LogRead<'a>, Broken> {
    let mut log = LogRead {
        time: 0,
        observed: 0,
        trace_id: &[],
        span_id: &[],
        event_name: "",
        attributes: Vec::new(),
        body: Any::Empty,
    };
    while let Some(key) = fields.next() {
        match key? {
            (1, wire) => log.time = fields.fixed64(wire, "LogRecord.time_unix_nano")?,
            (11, wire) => log.observed = fields.fixed64(wire, "LogRecord.observed_time_unix_nano")?,
            (2 | 7, wire) => ignore(fields.varint(wire, "a LogRecord severity or count"))?,
            (3, wire) => ignore(fields.string(wire, "LogRecord.severity_text"))?,
            (5, wire) => any(fields.message(wire, "LogRecord.body", depth)?, depth - 1, &mut log.body)?,
            (6, wire) => log.attributes.push(pair(fields.message(wire, "LogRecord.attributes", depth)?, depth - 1)?),
            (8, wire) => ignore(fields.fixed32(wire, "LogRecord.flags"))?,
            (9, wire) => log.trace_id = fields.bytes(wire, "LogRecord.trace_id")?,
            (10, wire) => log.span_id = fields.bytes(wire, "LogRecord.span_id")?,
            (12, wire) => log.event_name = fields.string(wire, "LogRecord.event_name")?,
            (number, wire) => fields.skip(number, wire, depth)?,
        }
    }
    Ok(log)
}

/// A `KeyValue`: its value merges with one given before it.
fn pair<'a>(mut fields: Fields<'a>, depth: u32) -> Result<Pair<'a>, Broken> {
    let mut pair = Pair { key: "", value: Any::Empty };
    while let Some(key) = fields.next() {
        match key? {
            (1, wire) => pair.key = fields.string(wire, "KeyValue.key")?,
            (2, wire) => any(fields.message(wire, "KeyValue.value", depth)?, depth - 1, &mut pair.value)?,
            (3, wire) => ignore(fields.varint(wire, "KeyValue.key_strindex"))?,
            (number, wire) => fields.skip(number, wire, depth)?,
        }
    }
    Ok(pair)
}

/// An `AnyValue` merged into `value`: a later kind replaces an earlier one; a list or
/// key-value list given again grows the one before it.
fn any<'a>(mut fields: Fields<'a>, depth: u32, value: &mut Any<'a>) -> Result<(), Broken> {
    while let Some(key) = fields.next() {
        match key? {
            (1, wire) => *value = Any::Str(fields.string(wire, "AnyValue.string_value")?),
            (2, wire) => *value = Any::Bool(fields.varint(wire, "AnyValue.bool_value")? != 0),
            (3, wire) => *value = Any::Int(fields.varint(wire, "AnyValue.int_value")? as i64),
            (4, wire) => *value = Any::Double(f64::from_bits(fields.fixed64(wire, "AnyValue.double_value")?)),
            (5, wire) => {
                let mut list = fields.message(wire, "AnyValue.array_value", depth)?;
                let mut values = match std::mem::replace(value, Any::Empty) {
                    Any::Array(values) => values,
                    _ => Vec::new(),
                };
                while let Some(key) = list.next() {
                    match key? {
                        (1, wire) => {
                            let mut item = Any::Empty;
                            any(list.message(wire, "ArrayValue.values", depth - 1)?, depth - 2, &mut item)?;
                            values.push(item);
                        }
                        (number, wire) => list.skip(number, wire, depth - 1)?,
                    }
                }
                *value = Any::Array(values);
            }
            (6, wire) => {
                let mut list = fields.message(wire, "AnyValue.kvlist_value", depth)?;
                let mut pairs = match std::mem::replace(value, Any::Empty) {
                    Any::Kvlist(pairs) => pairs,
                    _ => Vec::new(),
                };
                while let Some(key) = list.next() {
                    match key? {
                        (1, wire) => {
                            pairs.push(pair(list.message(wire, "KeyValueList.values", depth - 1)?, depth - 2)?)
                        }
                        (number, wire) => list.skip(number, wire, depth - 1)?,
                    }
                }
                *value = Any::Kvlist(pairs);
            }
            (7, wire) => *value = Any::Bytes(fields.bytes(wire, "AnyValue.bytes_value")?),
            (8, wire) => {
                fields.varint(wire, "AnyValue.string_value_strindex")?;
                *value = Any::Strindex;
            }
            (number, wire) => fields.skip(number, wire, depth)?,
        }
    }
    Ok(())
}

/// Hand on every record of an entry; `Err` when one cannot be a record.
fn records(entry: Entry, visit: &mut Visit) -> Result<crate::Result<()>, String> {
    match entry {
        Entry::Spans(scopes) => {
            for (scope, spans) in scopes {
                for span in spans {
                    if let Err(e) = visit(span_record(span, scope)?) {
                        return Ok(Err(e));
                    }
                }
            }
        }
        Entry::Logs(scopes) => {
            for (scope, logs) in scopes {
                for log in logs {
                    if let Err(e) = visit(log_record(log, scope)?) {
                        return Ok(Err(e));
                    }
                }
            }
        }
    }
    Ok(Ok(()))
}

/// An id of `bytes` bytes (16 a trace id, 8 a span id) or none; anything else is
/// refused, as the OTLP specification has a receiver refuse it.
fn id(value: &[u8], bytes: usize, what: &str) -> Result<String, String> {
    match value.len() {
        0 => Ok(String::new()),
        n if n == bytes => Ok(hex(value)),
        n => Err(format!("a {what} of {n} bytes: expected {bytes}, or none")),
    }
}

fn span_record<'a>(span: SpanRead<'a>, scope: &'a str) -> Result<Record<'a>, String> {
    let events = span
        .events
        .into_iter()
        .map(|(name, pairs)| Ok(Event { name: Cow::Borrowed(name), attributes: attributes(pairs)? }))
        .collect::<Result<_, String>>()?;
    Ok(Record {
        kind: Kind::Span,
        trace_id: Cow::Owned(id(span.trace_id, 16, "trace id")?),
        span_id: Cow::Owned(id(span.span_id, 8, "span id")?),
        parent_span_id: Cow::Owned(id(span.parent_span_id, 8, "parent span id")?),
        name: Cow::Borrowed(span.name),
        scope: Cow::Borrowed(scope),
        attributes: attributes(span.attributes)?,
        events,
        body: Json::Null,
        start: span.start,
        end: span.end,
    })
}

fn log_record<'a>(log: LogRead<'a>, scope: &'a str) -> Result<Record<'a>, String> {
    let attributes = attributes(log.attributes)?;
    // A record without its time has the time it was observed.
    let time = if log.time > 0 { log.time } else { log.observed };
    Ok(Record {
        kind: Kind::Log,
        trace_id: Cow::Owned(id(log.trace_id, 16, "trace id")?),
        span_id: Cow::Owned(id(log.span_id, 8, "span id")?),
        parent_span_id: Cow::Borrowed(""),
        name: Record::event_name(Cow::Borrowed(log.event_name), &attributes),
        scope: Cow::Borrowed(scope),
        attributes,
        events: Vec::new(),
        body: plain(log.body)?,
        start: time,
        end: time,
    })
}

fn attributes(pairs: Vec<Pair>) -> Result<Attributes, String> {
    pairs.into_iter().map(|p| Ok((Cow::Borrowed(p.key), plain(p.value)?))).collect()
}

/// An `AnyValue` as plain JSON, as OTLP/JSON's reads (bytes as base64 text).
fn plain(value: Any) -> Result<Json, String> {
    use base64::Engine as _;
    Ok(match value {
        Any::Empty => Json::Null,
        Any::Str(s) => Json::String(Cow::Borrowed(s)),
        Any::Bool(b) => Json::Bool(b),
        Any::Int(i) => Json::Number(i.into()),
        Any::Double(d) => serde_json::Number::from_f64(d).map_or(Json::Null, Json::Number),
        Any::Bytes(b) => Json::String(Cow::Owned(base64::engine::general_purpose::STANDARD.encode(b))),
        Any::Array(values) => Json::Array(values.into_iter().map(plain).collect::<Result<_, _>>()?),
        Any::Kvlist(pairs) => {
            let mut object: Vec<(Cow<str>, Json)> = Vec::with_capacity(pairs.len());
            for Pair { key, value } in pairs {
                let value = plain(value)?;
                if object.iter().any(|(k, _)| k.as_ref() == key) {
                    return Err(format!("duplicate key {} in a kvlistValue", crate::report::excerpt(key)));
                }
                object.push((Cow::Borrowed(key), value));
            }
            Json::Object(object)
        }
        Any::Strindex => return Err("a string table reference (profiles only) in a trace or log".into()),
    })
}
