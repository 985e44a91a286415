//! OTLP protobuf exports: the `ExportTraceServiceRequest` and `ExportLogsServiceRequest`
//! binaries that the SDK exporters send (`application/x-protobuf` to `/v1/traces` and
//! `/v1/logs`), decoded with the OpenTelemetry project's generated prost types
//! (`opentelemetry-proto`), and handed on as the same `Record`s as OTLP/JSON.
//!
//! The two requests share their wire layout at the top (field 1, repeated), so the bytes
//! alone do not say which signal they are: the caller says ([`Signal`]), or the bytes
//! decide ([`read`]; a span and a log record differ in the wire type of field 1).
//! Concatenated messages are one message (protobuf merges repeated fields), so a file
//! holding several exports back to back reads as one.

use super::record::{hex, Attributes, Event, Kind, Record};
use super::value::Json;
use super::Signal;
use bytes::{Buf, Bytes};
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use prost::Message;
use std::borrow::Cow;
use wire::{AnyValue, Entries, KeyValue, LogRecord, LogsRequest, Span, TracesRequest, Utf8, Value};

mod wire;

/// A decoded export.
#[derive(Debug)]
pub(crate) enum Decoded {
    Traces(TracesRequest),
    Logs(LogsRequest),
}

/// The request of `signal` in `buffer`, when it is one.
fn decoded(buffer: impl Buf, signal: Signal) -> Option<Decoded> {
    match signal {
        Signal::Traces => TracesRequest::decode(buffer).ok().filter(Utf8::is_utf8).map(Decoded::Traces),
        Signal::Logs => LogsRequest::decode(buffer).ok().filter(Utf8::is_utf8).map(Decoded::Logs),
    }
}

/// Why `bytes` are not the request of `signal`: the generated types' decoding says it.
fn refusal(bytes: &[u8], signal: Signal) -> String {
    let error = match signal {
        Signal::Traces => ExportTraceServiceRequest::decode(bytes).err(),
        Signal::Logs => ExportLogsServiceRequest::decode(bytes).err(),
    };
    let error = error.map_or_else(|| "not decoded".to_owned(), |e| e.to_string());
    format!("not an OTLP protobuf {}: {error}", signal.request_name())
}

/// Why `bytes` are not the request of `signal`, or (nothing says which) of either.
fn refusal_of(bytes: &[u8], signal: Option<Signal>) -> String {
    match signal {
        Some(signal) => refusal(bytes, signal),
        None => format!("{}; {}", refusal(bytes, Signal::Traces), refusal(bytes, Signal::Logs)),
    }
}

type Visit<'v> = dyn FnMut(Record<'_>) -> crate::Result<()> + 'v;

/// Hand on every span or log record of the export request in `buffer`: the request of
/// `signal`, or when nothing says (a file), of the one the bytes decode as (traces when
/// both decode: a span and a log record differ in the wire type of field 1, so only an
/// export without ids or times can be both).
///
/// The request is decoded one top-level entry (a `ResourceSpans` or `ResourceLogs`) at a
/// time, so the decoded messages of one entry are all that is held, whatever the size of
/// the export: the entries' bytes are read first ([`Entries`]), and each is decoded as a
/// request of its own, its field key and length put back before it ([`entry`]), at the
/// depth it has in the whole request. A request is accepted exactly when the generated
/// types accept it whole (an entry that does not decode is an error of the whole, named
/// as their decoding of the whole names it), and a broken request is refused whole: the
/// records of its entries before the break have been handed on, and the caller (a file
/// read, a request served) drops everything read of it.
pub(crate) fn read(buffer: &Bytes, signal: Option<Signal>, visit: &mut Visit) -> Result<crate::Result<()>, String> {
    let refused = || refusal_of(buffer, signal);
    let Ok(Entries { entries }) = Entries::decode(buffer.clone()) else { return Err(refused()) };
    let Some(signal) = signal.or_else(|| sniffed(&entries)) else { return Err(refused()) };
    for bytes in &entries {
        let Some(decoded) = entry(bytes, signal) else { return Err(refused()) };
        match records(&decoded, visit) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Ok(Err(e)),
            // A request that does not decode whole is refused as such, whatever its
            // first entries hold (as when it was decoded whole first).
            Err(unread) => return Err(if decoded_whole(buffer, signal) { unread } else { refused() }),
        }
    }
    Ok(Ok(()))
}

/// Whether the whole of `buffer` decodes as the request of `signal` (only asked on the
/// way to an error: it holds the whole decoded request at once).
fn decoded_whole(buffer: &Bytes, signal: Signal) -> bool {
    decoded(buffer.clone(), signal).is_some()
}

/// One top-level entry as a request of its own: field 1's key and the entry's length,
/// then its bytes (not copied).
fn entry(bytes: &Bytes, signal: Signal) -> Option<Decoded> {
    let mut head = [0u8; 11];
    head[0] = 0x0a;
    let mut rest = &mut head[1..];
    prost::encode_length_delimiter(bytes.len(), &mut rest).ok()?;
    let used = 11 - rest.len();
    decoded((&head[..used]).chain(bytes.clone()), signal)
}

/// Which request the entries are, when nothing says: the first entry that decodes as
/// one only; traces when each decodes as both (as the whole then does); `None` when an
/// entry decodes as neither (nor does the whole).
fn sniffed(entries: &[Bytes]) -> Option<Signal> {
    for bytes in entries {
        match (entry(bytes, Signal::Traces).is_some(), entry(bytes, Signal::Logs).is_some()) {
            (true, true) => continue,
            (true, false) => return Some(Signal::Traces),
            (false, true) => return Some(Signal::Logs),
            (false, false) => return None,
        }
    }
    Some(Signal::Traces)
}

/// Hand on every span and log record of a decoded export.
fn records(decoded: &Decoded, visit: &mut Visit) -> Result<crate::Result<()>, String> {
    match decoded {
        Decoded::Traces(request) => {
            for resource in &request.resource_spans {
                for scope_spans in &resource.scope_spans {
                    let scope = scope_name(scope_spans.scope.as_ref());
                    for span in &scope_spans.spans {
                        if let Err(e) = visit(self::span(span, scope)?) {
                            return Ok(Err(e));
                        }
                    }
                }
            }
        }
        Decoded::Logs(request) => {
            for resource in &request.resource_logs {
                for scope_logs in &resource.scope_logs {
                    let scope = scope_name(scope_logs.scope.as_ref());
                    for log in &scope_logs.log_records {
                        if let Err(e) = visit(log_record(log, scope)?) {
                            return Ok(Err(e));
                        }
                    }
                }
            }
        }
    }
    Ok(Ok(()))
}

/// A string field's text (checked to be UTF-8 when decoded).
fn text(bytes: &Bytes) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// An id of `bytes` bytes (16 a trace id, 8 a span id) or none; anything else is
/// refused, as the OTLP specification has a receiver refuse it.
fn id(value: &Bytes, bytes: usize, what: &str) -> Result<String, String> {
    match value.len() {
        0 => Ok(String::new()),
        n if n == bytes => Ok(hex(value)),
        n => Err(format!("a {what} of {n} bytes: expected {bytes}, or none")),
    }
}

fn span<'a>(span: &'a Span, scope: &'a str) -> Result<Record<'a>, String> {
    let events = span
        .events
        .iter()
        .map(|e| Ok(Event { name: Cow::Borrowed(text(&e.name)), attributes: attributes(&e.attributes)? }))
        .collect::<Result<_, String>>()?;
    Ok(Record {
        kind: Kind::Span,
        trace_id: Cow::Owned(id(&span.trace_id, 16, "trace id")?),
        span_id: Cow::Owned(id(&span.span_id, 8, "span id")?),
        parent_span_id: Cow::Owned(id(&span.parent_span_id, 8, "parent span id")?),
        name: Cow::Borrowed(text(&span.name)),
        scope: Cow::Borrowed(scope),
        attributes: attributes(&span.attributes)?,
        events,
        body: Json::Null,
        start: span.start_time_unix_nano,
        end: span.end_time_unix_nano,
    })
}

fn log_record<'a>(log: &'a LogRecord, scope: &'a str) -> Result<Record<'a>, String> {
    let attributes = attributes(&log.attributes)?;
    // A record without its time has the time it was observed.
    let time = if log.time_unix_nano > 0 { log.time_unix_nano } else { log.observed_time_unix_nano };
    Ok(Record {
        kind: Kind::Log,
        trace_id: Cow::Owned(id(&log.trace_id, 16, "trace id")?),
        span_id: Cow::Owned(id(&log.span_id, 8, "span id")?),
        parent_span_id: Cow::Borrowed(""),
        name: Record::event_name(Cow::Borrowed(text(&log.event_name)), &attributes),
        scope: Cow::Borrowed(scope),
        attributes,
        events: Vec::new(),
        body: log.body.as_ref().map(plain).transpose()?.unwrap_or(Json::Null),
        start: time,
        end: time,
    })
}

fn scope_name(scope: Option<&InstrumentationScope>) -> &str {
    scope.map_or("", |s| &s.name)
}

fn attributes(pairs: &[KeyValue]) -> Result<Attributes<'_>, String> {
    pairs
        .iter()
        .map(|kv| Ok((Cow::Borrowed(text(&kv.key)), kv.value.as_ref().map(plain).transpose()?.unwrap_or(Json::Null))))
        .collect()
}

/// An `AnyValue` as plain JSON, as OTLP/JSON's reads (bytes as base64 text).
fn plain(value: &AnyValue) -> Result<Json<'_>, String> {
    use base64::Engine as _;
    Ok(match &value.value {
        None => Json::Null,
        Some(Value::StringValue(s)) => Json::String(Cow::Borrowed(text(s))),
        Some(Value::BoolValue(b)) => Json::Bool(*b),
        Some(Value::IntValue(i)) => Json::Number((*i).into()),
        Some(Value::DoubleValue(d)) => serde_json::Number::from_f64(*d).map_or(Json::Null, Json::Number),
        Some(Value::BytesValue(b)) => Json::String(Cow::Owned(base64::engine::general_purpose::STANDARD.encode(b))),
        Some(Value::ArrayValue(a)) => Json::Array(a.values.iter().map(plain).collect::<Result<_, _>>()?),
        Some(Value::KvlistValue(list)) => {
            let mut object: Vec<(Cow<str>, Json)> = Vec::with_capacity(list.values.len());
            for kv in &list.values {
                let value = kv.value.as_ref().map(plain).transpose()?.unwrap_or(Json::Null);
                let key = text(&kv.key);
                if object.iter().any(|(k, _)| k == key) {
                    return Err(format!("duplicate key {} in a kvlistValue", crate::report::excerpt(key)));
                }
                object.push((Cow::Borrowed(key), value));
            }
            Json::Object(object)
        }
        Some(Value::StringValueStrindex(_)) => {
            return Err("a string table reference (profiles only) in a trace or log".into())
        }
    })
}

/// The protobuf twin of an OTLP/JSON export, for tests and the benchmark (which include
/// the same file): test code, not part of the library.
#[cfg(test)]
pub(crate) mod encode;
#[cfg(test)]
pub(crate) use encode::encode_json;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each record as `Debug` writes it (a borrowed and an owned string write the same).
    fn records_of(bytes: &Bytes, signal: Option<Signal>) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        super::read(bytes, signal, &mut |r| {
            out.push(format!("{r:?}"));
            Ok(())
        })?
        .unwrap();
        Ok(out)
    }

    #[test]
    fn a_protobuf_export_reads_as_its_json_twin() {
        let spans = json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "s"}, "spans": [{
            "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "chat m",
            "attributes": [{"key": "gen_ai.request.max_tokens", "value": {"intValue": "64"}},
                           {"key": "l", "value": {"arrayValue": {"values": [{"stringValue": "a"}]}}}],
            "events": [{"name": "e", "attributes": [{"key": "k", "value": {"boolValue": true}}]}]}]}]}]});
        let from_json = {
            let mut out = Vec::new();
            let text = spans.to_string();
            crate::trace::otlp::records(crate::trace::value::parse(text.as_bytes()).unwrap(), &mut |r| {
                out.push(format!("{r:?}"));
                Ok(())
            })
            .unwrap()
            .unwrap();
            out
        };
        let bytes = Bytes::from(encode_json(&spans));
        assert_eq!(records_of(&bytes, Some(Signal::Traces)).unwrap(), from_json);
        assert_eq!(records_of(&bytes, None).unwrap(), from_json);
        let logs = json!({"resourceLogs": [{"scopeLogs": [{"scope": {"name": "s"}, "logRecords": [{
            "eventName": "gen_ai.user.message", "spanId": "b7ad6b7169203331",
            "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "U"}}]}}}]}]}]});
        let mut records = Vec::new();
        super::read(&encode_json(&logs).into(), None, &mut |r| {
            records.push((r.kind, r.body.to_value()));
            Ok(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(records, vec![(Kind::Log, json!({"content": "U"}))]);
        assert!(records_of(&Bytes::new(), None).unwrap().is_empty());
        let broken = Bytes::from_static(b"\x0a\xff");
        assert!(records_of(&broken, Some(Signal::Traces)).unwrap_err().starts_with("not an OTLP protobuf"));
    }
}
