//! OTLP/JSON exports encoded as protobuf, with the OpenTelemetry project's generated
//! types: the binary twins of the JSON traces the tests and the benchmark write. Test
//! code: the library's unit tests declare it under `#[cfg(test)]`, and the command
//! line's tests and benchmarks include this file by path, so the library ships no encoder.

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use prost::Message;
use serde_json::Value;

/// Encode a JSON export (`{"resourceSpans": …}` or `{"resourceLogs": …}` as the OTLP/JSON
/// tests write them) as protobuf, with the ids given as hex.
pub fn encode_json(document: &Value) -> Vec<u8> {
    use opentelemetry_proto::tonic::common::v1::{ArrayValue, KeyValueList};
    use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
    use opentelemetry_proto::tonic::trace::v1::{span, ResourceSpans, ScopeSpans, Span};

    fn unhex(s: Option<&Value>) -> Vec<u8> {
        let s = s.and_then(Value::as_str).unwrap_or_default();
        (0..s.len() / 2).filter_map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()).collect()
    }
    fn time(v: Option<&Value>) -> u64 {
        v.and_then(|v| v.as_u64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))).unwrap_or(0)
    }
    fn any(v: &Value) -> AnyValue {
        let value = match v.as_object().and_then(|m| m.iter().next()) {
            Some((k, x)) if k == "stringValue" => {
                Some(any_value::Value::StringValue(x.as_str().unwrap_or_default().into()))
            }
            Some((k, x)) if k == "boolValue" => Some(any_value::Value::BoolValue(x.as_bool().unwrap_or_default())),
            Some((k, x)) if k == "intValue" => Some(any_value::Value::IntValue(
                x.as_i64().or_else(|| x.as_str().and_then(|s| s.parse().ok())).unwrap_or_default(),
            )),
            Some((k, x)) if k == "doubleValue" => Some(any_value::Value::DoubleValue(x.as_f64().unwrap_or_default())),
            Some((k, x)) if k == "arrayValue" => Some(any_value::Value::ArrayValue(ArrayValue {
                values: x["values"].as_array().into_iter().flatten().map(any).collect(),
            })),
            Some((k, x)) if k == "kvlistValue" => Some(any_value::Value::KvlistValue(KeyValueList {
                values: x["values"].as_array().into_iter().flatten().map(kv).collect(),
            })),
            _ => None,
        };
        AnyValue { value }
    }
    fn kv(v: &Value) -> KeyValue {
        KeyValue {
            key: v["key"].as_str().unwrap_or_default().into(),
            value: Some(any(&v["value"])),
            ..Default::default()
        }
    }
    fn kvs(v: &Value) -> Vec<KeyValue> {
        v["attributes"].as_array().into_iter().flatten().map(kv).collect()
    }
    fn scope(v: &Value) -> Option<InstrumentationScope> {
        v["scope"]["name"].as_str().map(|name| InstrumentationScope { name: name.into(), ..Default::default() })
    }
    let items = |v: &Value, key: &str| v[key].as_array().cloned().unwrap_or_default();
    if document.get("resourceLogs").is_some() {
        let request = ExportLogsServiceRequest {
            resource_logs: items(document, "resourceLogs")
                .iter()
                .map(|r| ResourceLogs {
                    scope_logs: items(r, "scopeLogs")
                        .iter()
                        .map(|s| ScopeLogs {
                            scope: scope(s),
                            log_records: items(s, "logRecords")
                                .iter()
                                .map(|l| LogRecord {
                                    event_name: l["eventName"].as_str().unwrap_or_default().into(),
                                    time_unix_nano: time(l.get("timeUnixNano")),
                                    observed_time_unix_nano: time(l.get("observedTimeUnixNano")),
                                    trace_id: unhex(l.get("traceId")),
                                    span_id: unhex(l.get("spanId")),
                                    attributes: kvs(l),
                                    body: l.get("body").map(any),
                                    ..Default::default()
                                })
                                .collect(),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
        };
        return request.encode_to_vec();
    }
    let request = ExportTraceServiceRequest {
        resource_spans: items(document, "resourceSpans")
            .iter()
            .map(|r| ResourceSpans {
                scope_spans: items(r, "scopeSpans")
                    .iter()
                    .map(|s| ScopeSpans {
                        scope: scope(s),
                        spans: items(s, "spans")
                            .iter()
                            .map(|sp| Span {
                                trace_id: unhex(sp.get("traceId")),
                                span_id: unhex(sp.get("spanId")),
                                parent_span_id: unhex(sp.get("parentSpanId")),
                                name: sp["name"].as_str().unwrap_or_default().into(),
                                start_time_unix_nano: time(sp.get("startTimeUnixNano")),
                                end_time_unix_nano: time(sp.get("endTimeUnixNano")),
                                attributes: kvs(sp),
                                events: items(sp, "events")
                                    .iter()
                                    .map(|e| span::Event {
                                        name: e["name"].as_str().unwrap_or_default().into(),
                                        attributes: kvs(e),
                                        ..Default::default()
                                    })
                                    .collect(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
    };
    request.encode_to_vec()
}
