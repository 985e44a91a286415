//! OTLP protobuf exports: the `ExportTraceServiceRequest` and `ExportLogsServiceRequest`
//! binaries that the SDK exporters send (`application/x-protobuf` to `/v1/traces` and
//! `/v1/logs`), decoded with the OpenTelemetry project's generated prost types
//! (`opentelemetry-proto`), and handed on as the same `Record`s as OTLP/JSON.
//!
//! The two requests share their wire layout at the top (field 1, repeated), so the bytes
//! alone do not say which signal they are: the caller says ([`Signal`]), or
//! `sniff` tries both (a span and a log record differ in the wire type of field 1).
//! Concatenated messages are one message (protobuf merges repeated fields), so a file
//! holding several exports back to back reads as one.

use super::record::{hex, Event, Kind, Record};
use super::Signal;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use prost::Message;
use serde_json::{Map, Value};

/// A decoded export.
#[derive(Debug)]
pub(crate) enum Decoded {
    Traces(ExportTraceServiceRequest),
    Logs(ExportLogsServiceRequest),
}

/// Decode `bytes` as the request of `signal`; the error is prost's, as one line.
pub(crate) fn decode(bytes: &[u8], signal: Signal) -> Result<Decoded, String> {
    let what = |e: prost::DecodeError| format!("not an OTLP protobuf {}: {e}", signal.request_name());
    match signal {
        Signal::Traces => ExportTraceServiceRequest::decode(bytes).map(Decoded::Traces).map_err(what),
        Signal::Logs => ExportLogsServiceRequest::decode(bytes).map(Decoded::Logs).map_err(what),
    }
}

/// Which request `bytes` are, when nothing says: the one they decode as (with records,
/// when both decode).
pub(crate) fn sniff(bytes: &[u8]) -> Result<Decoded, String> {
    let traces = decode(bytes, Signal::Traces);
    let logs = decode(bytes, Signal::Logs);
    match (traces, logs) {
        (Ok(Decoded::Traces(t)), Ok(Decoded::Logs(l))) => {
            let has_logs = l.resource_logs.iter().flat_map(|r| &r.scope_logs).any(|s| !s.log_records.is_empty());
            Ok(if has_logs && t.resource_spans.iter().flat_map(|r| &r.scope_spans).all(|s| s.spans.is_empty()) {
                Decoded::Logs(l)
            } else {
                Decoded::Traces(t)
            })
        }
        (Ok(decoded), _) | (_, Ok(decoded)) => Ok(decoded),
        (Err(traces), Err(logs)) => Err(format!("{traces}; {logs}")),
    }
}

type Visit<'v> = dyn FnMut(Record) -> crate::Result<()> + 'v;

/// Hand on every span and log record of a decoded export.
pub(crate) fn records(decoded: Decoded, visit: &mut Visit) -> Result<crate::Result<()>, String> {
    match decoded {
        Decoded::Traces(request) => {
            for resource in request.resource_spans {
                for scope_spans in resource.scope_spans {
                    let scope = scope_name(scope_spans.scope.as_ref());
                    for span in scope_spans.spans {
                        let events = span
                            .events
                            .into_iter()
                            .map(|e| Ok(Event { name: e.name, attributes: attributes(e.attributes)? }))
                            .collect::<Result<_, String>>()?;
                        let record = Record {
                            kind: Kind::Span,
                            trace_id: hex(&span.trace_id),
                            span_id: hex(&span.span_id),
                            parent_span_id: hex(&span.parent_span_id),
                            name: span.name,
                            scope: scope.clone(),
                            attributes: attributes(span.attributes)?,
                            events,
                            body: Value::Null,
                            start: span.start_time_unix_nano,
                            end: span.end_time_unix_nano,
                        };
                        if let Err(e) = visit(record) {
                            return Ok(Err(e));
                        }
                    }
                }
            }
        }
        Decoded::Logs(request) => {
            for resource in request.resource_logs {
                for scope_logs in resource.scope_logs {
                    let scope = scope_name(scope_logs.scope.as_ref());
                    for log in scope_logs.log_records {
                        let attributes = attributes(log.attributes)?;
                        let record = Record {
                            kind: Kind::Log,
                            trace_id: hex(&log.trace_id),
                            span_id: hex(&log.span_id),
                            parent_span_id: String::new(),
                            name: Record::event_name(log.event_name, &attributes),
                            scope: scope.clone(),
                            attributes,
                            events: Vec::new(),
                            body: log.body.map(plain).transpose()?.unwrap_or(Value::Null),
                            // A record without its time has the time it was observed.
                            start: if log.time_unix_nano > 0 {
                                log.time_unix_nano
                            } else {
                                log.observed_time_unix_nano
                            },
                            end: if log.time_unix_nano > 0 { log.time_unix_nano } else { log.observed_time_unix_nano },
                        };
                        if let Err(e) = visit(record) {
                            return Ok(Err(e));
                        }
                    }
                }
            }
        }
    }
    Ok(Ok(()))
}

fn scope_name(scope: Option<&InstrumentationScope>) -> String {
    scope.map(|s| s.name.clone()).unwrap_or_default()
}

fn attributes(pairs: Vec<KeyValue>) -> Result<Vec<(String, Value)>, String> {
    pairs.into_iter().map(|kv| Ok((kv.key, kv.value.map(plain).transpose()?.unwrap_or(Value::Null)))).collect()
}

/// An `AnyValue` as plain JSON, as OTLP/JSON's reads (bytes as base64 text).
fn plain(value: AnyValue) -> Result<Value, String> {
    use base64::Engine as _;
    Ok(match value.value {
        None => Value::Null,
        Some(any_value::Value::StringValue(s)) => Value::String(s),
        Some(any_value::Value::BoolValue(b)) => Value::Bool(b),
        Some(any_value::Value::IntValue(i)) => Value::from(i),
        Some(any_value::Value::DoubleValue(d)) => serde_json::Number::from_f64(d).map_or(Value::Null, Value::Number),
        Some(any_value::Value::BytesValue(b)) => Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Some(any_value::Value::ArrayValue(a)) => {
            Value::Array(a.values.into_iter().map(plain).collect::<Result<_, _>>()?)
        }
        Some(any_value::Value::KvlistValue(list)) => {
            let mut object = Map::new();
            for kv in list.values {
                let value = kv.value.map(plain).transpose()?.unwrap_or(Value::Null);
                if object.contains_key(&kv.key) {
                    return Err(format!("duplicate key {} in a kvlistValue", crate::report::excerpt(&kv.key)));
                }
                object.insert(kv.key, value);
            }
            Value::Object(object)
        }
        Some(any_value::Value::StringValueStrindex(_)) => {
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

    fn read(decoded: Decoded) -> Vec<Record> {
        let mut out = Vec::new();
        records(decoded, &mut |r| {
            out.push(r);
            Ok(())
        })
        .unwrap()
        .unwrap();
        out
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
            crate::trace::otlp::records(spans.clone(), &mut |r| {
                out.push(r);
                Ok(())
            })
            .unwrap()
            .unwrap();
            out
        };
        let bytes = encode_json(&spans);
        assert_eq!(read(decode(&bytes, Signal::Traces).unwrap()), from_json);
        assert_eq!(read(sniff(&bytes).unwrap()), from_json);
        let logs = json!({"resourceLogs": [{"scopeLogs": [{"scope": {"name": "s"}, "logRecords": [{
            "eventName": "gen_ai.user.message", "spanId": "b7ad6b7169203331",
            "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "U"}}]}}}]}]}]});
        let records = read(sniff(&encode_json(&logs)).unwrap());
        assert_eq!(records.len(), 1);
        assert_eq!((records[0].kind, records[0].body.clone()), (Kind::Log, json!({"content": "U"})));
        assert!(read(sniff(b"").unwrap()).is_empty());
        assert!(decode(b"\x0a\xff", Signal::Traces).unwrap_err().starts_with("not an OTLP protobuf"));
    }
}
