//! The readers held to references on generated exports: the strict borrowed parse to
//! `canonical::parse` (every text, its value or its error), the protobuf reader to the
//! OpenTelemetry project's generated types, prost's decoding (the same bytes accepted,
//! broken or not, and field by field the same records: the generated types are kept for
//! this test alone), and the JSON reader to the protobuf reader on an export's two
//! encodings.

use super::record::{hex, Kind, Record};
use super::{json, protobuf, value, Signal};
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, ArrayValue, KeyValue, KeyValueList};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{span, ResourceSpans, ScopeSpans, Span, Status};
use proptest::prelude::*;
use prost::Message;
use serde_json::{json, Map, Value};

/// A record as comparable JSON.
fn summary(r: &Record) -> Value {
    let attributes = |list: &[(std::borrow::Cow<str>, value::Json)]| -> Value {
        list.iter().map(|(k, v)| json!([k, v.to_value()])).collect()
    };
    let events: Vec<Value> = r.events.iter().map(|e| json!([e.name, attributes(&e.attributes)])).collect();
    json!({"trace": r.trace_id, "span": r.span_id, "parent": r.parent_span_id, "name": r.name, "scope": r.scope,
           "attributes": attributes(&r.attributes), "events": events, "body": r.body.to_value(), "start": r.start,
           "end": r.end})
}

/// The reference: an AnyValue of the generated types as plain JSON.
fn reference_plain(value: &AnyValue) -> Result<Value, String> {
    use base64::Engine as _;
    Ok(match &value.value {
        None => Value::Null,
        Some(any_value::Value::StringValue(s)) => Value::String(s.clone()),
        Some(any_value::Value::BoolValue(b)) => Value::Bool(*b),
        Some(any_value::Value::IntValue(i)) => Value::from(*i),
        Some(any_value::Value::DoubleValue(d)) => serde_json::Number::from_f64(*d).map_or(Value::Null, Value::Number),
        Some(any_value::Value::BytesValue(b)) => Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Some(any_value::Value::ArrayValue(a)) => {
            Value::Array(a.values.iter().map(reference_plain).collect::<Result<_, _>>()?)
        }
        Some(any_value::Value::KvlistValue(list)) => {
            let mut object = Map::new();
            for kv in &list.values {
                let value = kv.value.as_ref().map(reference_plain).transpose()?.unwrap_or(Value::Null);
                if object.insert(kv.key.clone(), value).is_some() {
                    return Err(format!("duplicate key {} in a kvlistValue", crate::report::excerpt(&kv.key)));
                }
            }
            Value::Object(object)
        }
        Some(any_value::Value::StringValueStrindex(_)) => {
            return Err("a string table reference (profiles only) in a trace or log".into())
        }
    })
}

/// The reference: every span of the generated types, as [`summary`] writes it.
fn reference_records(request: &ExportTraceServiceRequest) -> Result<Vec<Value>, String> {
    let attributes = |list: &[KeyValue]| -> Result<Value, String> {
        list.iter()
            .map(|kv| Ok(json!([kv.key, kv.value.as_ref().map(reference_plain).transpose()?.unwrap_or(Value::Null)])))
            .collect()
    };
    let mut out = Vec::new();
    for scope_spans in request.resource_spans.iter().flat_map(|r| &r.scope_spans) {
        let scope = scope_spans.scope.as_ref().map_or("", |s| &s.name);
        for s in &scope_spans.spans {
            let events: Vec<Value> = s
                .events
                .iter()
                .map(|e| Ok(json!([e.name, attributes(&e.attributes)?])))
                .collect::<Result<_, String>>()?;
            reference_id(&s.trace_id, 16, "trace id")?;
            reference_id(&s.span_id, 8, "span id")?;
            reference_id(&s.parent_span_id, 8, "parent span id")?;
            out.push(json!({"trace": hex(&s.trace_id), "span": hex(&s.span_id), "parent": hex(&s.parent_span_id),
                "name": s.name, "scope": scope, "attributes": attributes(&s.attributes)?, "events": events, "body": null,
                "start": s.start_time_unix_nano, "end": s.end_time_unix_nano}));
        }
    }
    Ok(out)
}

/// The reference, for log records: each as [`summary`] writes a record.
fn reference_log_records(request: &ExportLogsServiceRequest) -> Result<Vec<Value>, String> {
    let attributes = |list: &[KeyValue]| -> Result<Vec<(String, Value)>, String> {
        list.iter()
            .map(|kv| Ok((kv.key.clone(), kv.value.as_ref().map(reference_plain).transpose()?.unwrap_or(Value::Null))))
            .collect()
    };
    let mut out = Vec::new();
    for scope_logs in request.resource_logs.iter().flat_map(|r| &r.scope_logs) {
        let scope = scope_logs.scope.as_ref().map_or("", |s| &s.name);
        for log in &scope_logs.log_records {
            let attributes = attributes(&log.attributes)?;
            let name = match (&*log.event_name, attributes.iter().find(|(k, _)| k == "event.name")) {
                ("", Some((_, Value::String(name)))) => name.clone(),
                (name, _) => name.to_owned(),
            };
            let time = if log.time_unix_nano > 0 { log.time_unix_nano } else { log.observed_time_unix_nano };
            reference_id(&log.trace_id, 16, "trace id")?;
            reference_id(&log.span_id, 8, "span id")?;
            let body = log.body.as_ref().map(reference_plain).transpose()?.unwrap_or(Value::Null);
            let attributes: Vec<Value> = attributes.into_iter().map(|(k, v)| json!([k, v])).collect();
            out.push(json!({"trace": hex(&log.trace_id), "span": hex(&log.span_id), "parent": "", "name": name,
                "scope": scope, "attributes": attributes, "events": [], "body": body, "start": time, "end": time}));
        }
    }
    Ok(out)
}

/// An id as OTLP has a receiver take it: `len` bytes, or none.
fn reference_id(bytes: &[u8], len: usize, what: &str) -> Result<(), String> {
    match bytes.len() {
        0 => Ok(()),
        n if n == len => Ok(()),
        n => Err(format!("a {what} of {n} bytes: expected {len}, or none")),
    }
}

/// Ids of `len` bytes mostly, else none or of a wrong length.
fn ids(len: usize) -> impl Strategy<Value = Vec<u8>> + Clone {
    prop_oneof![
        4 => prop::collection::vec(any::<u8>(), len..=len),
        1 => Just(Vec::new()),
        1 => prop::collection::vec(any::<u8>(), 1..3),
    ]
}

/// What the generated types make of `bytes`: the request of `signal`, or when nothing says,
/// by the rule the reader had when it decoded whole (both decode: logs only when they have
/// records and the spans none), with its records; `None` when refused.
fn reference(bytes: &[u8], signal: Option<Signal>) -> Option<Result<(Kind, Vec<Value>), String>> {
    let traces = ExportTraceServiceRequest::decode(bytes).ok();
    let logs = ExportLogsServiceRequest::decode(bytes).ok();
    let as_logs = match (signal, &traces, &logs) {
        (Some(Signal::Traces), ..) => false,
        (Some(Signal::Logs), ..) => true,
        (None, Some(t), Some(l)) => {
            let has_logs = l.resource_logs.iter().flat_map(|r| &r.scope_logs).any(|s| !s.log_records.is_empty());
            has_logs && t.resource_spans.iter().flat_map(|r| &r.scope_spans).all(|s| s.spans.is_empty())
        }
        (None, t, _) => t.is_none(),
    };
    match as_logs {
        false => traces.map(|t| reference_records(&t).map(|r| (Kind::Span, r))),
        true => logs.map(|l| reference_log_records(&l).map(|r| (Kind::Log, r))),
    }
}

/// What [`protobuf::read`] makes of `bytes`, as [`reference`] says it.
fn new_read(bytes: Vec<u8>, signal: Option<Signal>) -> Option<Result<(Kind, Vec<Value>), String>> {
    let (mut kind, mut out) = (None, Vec::new());
    let read = protobuf::read(&bytes, signal, &mut |r| {
        kind.get_or_insert(r.kind);
        assert_eq!(Some(r.kind), kind, "one export, one kind of record");
        out.push(summary(&r));
        Ok(())
    });
    match read {
        Ok(visited) => {
            visited.unwrap();
            Some(Ok((kind.unwrap_or(Kind::Span), out)))
        }
        Err(e) if e.starts_with("not an OTLP protobuf") => None,
        Err(e) => Some(Err(e)),
    }
}

/// Records of an empty export read as spans, whichever request it is.
fn kind_of_nothing(read: Option<Result<(Kind, Vec<Value>), String>>) -> Option<Result<(Kind, Vec<Value>), String>> {
    read.map(|r| r.map(|(kind, records)| (if records.is_empty() { Kind::Span } else { kind }, records)))
}

fn any_value() -> impl Strategy<Value = AnyValue> {
    let leaf = prop_oneof![
        "[ab\u{e9}\"]{0,3}".prop_map(any_value::Value::StringValue),
        any::<bool>().prop_map(any_value::Value::BoolValue),
        any::<i64>().prop_map(any_value::Value::IntValue),
        prop_oneof![Just(0.5), Just(f64::NAN), Just(-3.0)].prop_map(any_value::Value::DoubleValue),
        prop::collection::vec(any::<u8>(), 0..3).prop_map(any_value::Value::BytesValue),
        Just(any_value::Value::StringValueStrindex(1)),
    ];
    let leaf = prop::option::weighted(0.9, leaf).prop_map(|value| AnyValue { value });
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3)
                .prop_map(|values| any_value::Value::ArrayValue(ArrayValue { values })),
            prop::collection::vec(("[ab]", inner), 0..3).prop_map(|pairs| {
                let values = pairs.into_iter().map(|(key, v)| KeyValue { key, value: Some(v), key_strindex: 0 });
                any_value::Value::KvlistValue(KeyValueList { values: values.collect() })
            }),
        ]
        .prop_map(|value| AnyValue { value: Some(value) })
    })
}

fn attributes() -> impl Strategy<Value = Vec<KeyValue>> {
    prop::collection::vec(("[kx]{1,2}", prop::option::of(any_value())), 0..4)
        .prop_map(|pairs| pairs.into_iter().map(|(key, value)| KeyValue { key, value, key_strindex: 0 }).collect())
}

fn export() -> impl Strategy<Value = ExportTraceServiceRequest> {
    let event = ("[ab]{0,2}", attributes()).prop_map(|(name, attributes)| span::Event {
        name,
        attributes,
        ..Default::default()
    });
    let span = (ids(16), ids(8), "[ab ]{0,3}", attributes(), prop::collection::vec(event, 0..2), any::<u64>())
        .prop_map(|(trace_id, span_id, name, attributes, events, start)| Span {
            trace_id,
            span_id,
            name,
            attributes,
            events,
            start_time_unix_nano: start,
            ..Default::default()
        });
    let resource = (prop::collection::vec(span, 0..4), "[s]{0,2}").prop_map(|(spans, scope)| ResourceSpans {
        scope_spans: vec![ScopeSpans {
            scope: Some(InstrumentationScope { name: scope, ..Default::default() }),
            spans,
            ..Default::default()
        }],
        ..Default::default()
    });
    prop::collection::vec(resource, 1..4).prop_map(|resource_spans| ExportTraceServiceRequest { resource_spans })
}

fn log_export() -> impl Strategy<Value = ExportLogsServiceRequest> {
    let log = (ids(16), ids(8), "[ab.]{0,3}", attributes(), prop::option::of(any_value()), any::<u64>(), any::<u64>())
        .prop_map(|(trace_id, span_id, event_name, attributes, body, time, observed)| LogRecord {
            trace_id,
            span_id,
            event_name,
            attributes,
            body,
            time_unix_nano: time % 3,
            observed_time_unix_nano: observed,
            ..Default::default()
        });
    let resource = prop::collection::vec(log, 0..4).prop_map(|log_records| ResourceLogs {
        scope_logs: vec![ScopeLogs { log_records, ..Default::default() }],
        ..Default::default()
    });
    prop::collection::vec(resource, 1..4).prop_map(|resource_logs| ExportLogsServiceRequest { resource_logs })
}

/// A length-delimited field of `number` holding `payload`, as prost writes one.
fn field(number: u32, payload: &[u8]) -> Vec<u8> {
    use prost::encoding::{encode_key, encode_varint, WireType};
    let mut out = Vec::new();
    encode_key(number, WireType::LengthDelimited, &mut out);
    encode_varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

/// Messages given in chunks, each chunk a message of its own: protobuf merges them into one
/// (the last scalar wins, a message field merges, a list grows).
fn chunks<T: Message>(parts: &[T]) -> Vec<u8> {
    parts.iter().flat_map(Message::encode_to_vec).collect()
}

/// The parts of a request no record holds, with strings that may not be UTF-8 (as bytes
/// in an unknown field of the same number would be): a resource, a scope with attributes.
fn resource() -> impl Strategy<Value = Resource> {
    attributes().prop_map(|attributes| Resource { attributes, dropped_attributes_count: 1, ..Default::default() })
}

fn scope() -> impl Strategy<Value = InstrumentationScope> {
    ("[s]{0,2}", "[v]{0,1}", attributes()).prop_map(|(name, version, attributes)| InstrumentationScope {
        name,
        version,
        attributes,
        ..Default::default()
    })
}

/// A traces export whose spans, scopes and resources come in chunks (each span possibly
/// split in two, merged when read), with links, status and resources.
fn merged_traces() -> impl Strategy<Value = Vec<u8>> {
    let link = (ids(16), "[t]{0,1}", attributes()).prop_map(|(trace_id, trace_state, attributes)| span::Link {
        trace_id,
        trace_state,
        attributes,
        ..Default::default()
    });
    let part = (ids(16), ids(8), ids(8), "[ab ]{0,2}", attributes(), prop::collection::vec(link, 0..2), "[m]{0,1}")
        .prop_map(|(trace_id, span_id, parent_span_id, name, attributes, links, message)| Span {
            trace_id,
            span_id,
            parent_span_id,
            name,
            attributes,
            links,
            status: Some(Status { message, code: 1 }),
            end_time_unix_nano: 7,
            ..Default::default()
        });
    let span = prop::collection::vec(part, 1..3).prop_map(|parts| field(2, &chunks(&parts)));
    let scope_spans =
        (prop::collection::vec(scope(), 0..3), prop::collection::vec(span, 0..3)).prop_map(|(scopes, spans)| {
            [scopes.iter().flat_map(|s| field(1, &s.encode_to_vec())).collect(), spans.concat()].concat()
        });
    let resource_spans =
        (prop::option::of(resource()), prop::collection::vec(scope_spans, 0..3)).prop_map(|(r, scopes)| {
            let resource = r.map(|r| field(1, &r.encode_to_vec())).unwrap_or_default();
            [resource, scopes.iter().flat_map(|s| field(2, s)).collect()].concat()
        });
    prop::collection::vec(resource_spans, 1..3).prop_map(|all| all.iter().flat_map(|r| field(1, r)).collect())
}

/// A logs export whose records come in chunks: a body given twice merges (a list grows,
/// another kind replaces it).
fn merged_logs() -> impl Strategy<Value = Vec<u8>> {
    let part = (ids(8), "[ab.]{0,2}", attributes(), prop::option::of(any_value()), any::<u64>()).prop_map(
        |(span_id, event_name, attributes, body, observed)| LogRecord {
            span_id,
            event_name,
            attributes,
            body,
            observed_time_unix_nano: observed % 3,
            severity_text: "INFO".into(),
            ..Default::default()
        },
    );
    let log = prop::collection::vec(part, 1..3).prop_map(|parts| field(2, &chunks(&parts)));
    let scope_logs = (prop::option::of(scope()), prop::collection::vec(log, 0..3)).prop_map(|(scope, logs)| {
        [scope.map(|s| field(1, &s.encode_to_vec())).unwrap_or_default(), logs.concat()].concat()
    });
    let resource_logs = prop::collection::vec(scope_logs, 0..3)
        .prop_map(|scopes| scopes.iter().flat_map(|s| field(2, s)).collect::<Vec<u8>>());
    prop::collection::vec(resource_logs, 1..3).prop_map(|all| all.iter().flat_map(|r| field(1, r)).collect())
}

/// `bytes` with one byte changed or its end cut, or as it is.
fn broken(mut bytes: Vec<u8>, change: Option<(prop::sample::Index, u8)>, cut: Option<prop::sample::Index>) -> Vec<u8> {
    if let (Some((at, byte)), false) = (change, bytes.is_empty()) {
        let i = at.index(bytes.len());
        bytes[i] = byte;
    }
    if let (Some(cut), false) = (cut, bytes.is_empty()) {
        bytes.truncate(cut.index(bytes.len()));
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Exports in chunks, with the parts no record holds, valid or broken, read as the
    /// generated types read them: the same bytes accepted, the same records field by field.
    #[test]
    fn merged_exports_read_as_the_generated_types_read_them(
        bytes in prop_oneof![merged_traces(), merged_logs()],
        change in prop::option::of((any::<prop::sample::Index>(), any::<u8>())),
        cut in prop::option::weighted(0.3, any::<prop::sample::Index>()),
        signal in prop_oneof![Just(None), Just(Some(Signal::Traces)), Just(Some(Signal::Logs))],
    ) {
        let bytes = broken(bytes, change, cut);
        let old = kind_of_nothing(reference(&bytes, signal));
        prop_assert_eq!(kind_of_nothing(new_read(bytes, signal)), old);
    }

    #[test]
    fn the_strict_borrowed_parse_is_canonical_parse(
        parts in prop::collection::vec(prop_oneof![
            Just("{"), Just("}"), Just("["), Just("]"), Just(","), Just(":"), Just("\"a\""), Just("\"b\\n\""),
            Just("\"\\ud800\""), Just("1"), Just("-0.5"), Just("1e400"), Just("null"), Just(" "), Just("\"\\u00e9\""),
        ], 0..14)
    ) {
        let text = parts.concat();
        prop_assert_eq!(value::parse(text.as_bytes()).map(|j| j.to_value()), crate::canonical::parse(text.as_bytes()));
    }

    /// Valid or broken (a byte changed, the end cut), a traces or logs export is read as
    /// the generated types read it whole: the same bytes accepted, the same request when
    /// nothing says which, the same records.
    #[test]
    fn the_protobuf_reader_reads_as_the_generated_types(
        bytes in prop_oneof![export().prop_map(|e| e.encode_to_vec()), log_export().prop_map(|e| e.encode_to_vec())],
        change in prop::option::of((any::<prop::sample::Index>(), any::<u8>())),
        cut in any::<prop::sample::Index>(), cutting in any::<bool>(),
        signal in prop_oneof![Just(None), Just(Some(Signal::Traces)), Just(Some(Signal::Logs))],
    ) {
        let mut bytes = bytes;
        if let (Some((at, byte)), false) = (change, bytes.is_empty()) {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        if cutting && !bytes.is_empty() {
            bytes.truncate(cut.index(bytes.len()));
        }
        let old = kind_of_nothing(reference(&bytes, signal));
        prop_assert_eq!(kind_of_nothing(new_read(bytes, signal)), old);
    }

    /// An export reads the same from OTLP/JSON and from protobuf.
    #[test]
    fn the_json_reader_reads_as_the_protobuf_reader(request in export()) {
        let document = serde_json::to_value(json_of(&request)).unwrap();
        let text = document.to_string();
        let mut from_json = Vec::new();
        let read = json::records(value::parse(text.as_bytes()).unwrap(), &mut |r| {
            from_json.push(summary(&r));
            Ok(())
        });
        let from_protobuf = new_read(request.encode_to_vec(), Some(Signal::Traces)).unwrap();
        match (read, from_protobuf) {
            (Ok(_), Ok((_, records))) => prop_assert_eq!(from_json, records),
            // A string table reference is an unknown kind in JSON: both refuse, each in its words.
            (Err(_), Err(_)) => {}
            (read, other) => prop_assert!(false, "{:?} / {:?}", read.map(|_| ()), other),
        }
    }
}

/// An export as OTLP/JSON writes it (ids as hex, 64-bit integers as strings, bytes as base64).
fn json_of(request: &ExportTraceServiceRequest) -> Value {
    fn any(v: &AnyValue) -> Value {
        use base64::Engine as _;
        match &v.value {
            None => json!({}),
            Some(any_value::Value::StringValue(s)) => json!({"stringValue": s}),
            Some(any_value::Value::BoolValue(b)) => json!({"boolValue": b}),
            Some(any_value::Value::IntValue(i)) => json!({"intValue": i.to_string()}),
            Some(any_value::Value::DoubleValue(d)) => json!({"doubleValue": d}),
            Some(any_value::Value::BytesValue(b)) => {
                json!({"bytesValue": base64::engine::general_purpose::STANDARD.encode(b)})
            }
            Some(any_value::Value::ArrayValue(a)) => {
                json!({"arrayValue": {"values": a.values.iter().map(any).collect::<Vec<_>>()}})
            }
            Some(any_value::Value::KvlistValue(l)) => json!({"kvlistValue": {"values": pairs(&l.values)}}),
            Some(any_value::Value::StringValueStrindex(i)) => json!({"stringValueStrindex": i}),
        }
    }
    fn pairs(list: &[KeyValue]) -> Vec<Value> {
        list.iter().map(|kv| json!({"key": kv.key, "value": kv.value.as_ref().map_or(Value::Null, any)})).collect()
    }
    let span = |s: &Span| {
        let events: Vec<Value> =
            s.events.iter().map(|e| json!({"name": e.name, "attributes": pairs(&e.attributes)})).collect();
        json!({"traceId": hex(&s.trace_id), "spanId": hex(&s.span_id), "name": s.name,
               "startTimeUnixNano": s.start_time_unix_nano.to_string(), "attributes": pairs(&s.attributes), "events": events})
    };
    let scope_spans = |s: &ScopeSpans| {
        let scope = s.scope.as_ref().map_or("", |s| &s.name);
        json!({"scope": {"name": scope}, "spans": s.spans.iter().map(span).collect::<Vec<_>>()})
    };
    let resources: Vec<Value> = request
        .resource_spans
        .iter()
        .map(|r| json!({"scopeSpans": r.scope_spans.iter().map(scope_spans).collect::<Vec<_>>()}))
        .collect();
    json!({"resourceSpans": resources})
}

/// A value nested as deep as the generated types allow is read, one level deeper is
/// refused: each entry of the export is decoded at the depth it has in the whole.
#[test]
fn the_protobuf_reader_refuses_the_depth_the_generated_types_refuse() {
    let nested = |depth: usize| {
        let mut value = AnyValue { value: Some(any_value::Value::BoolValue(true)) };
        for _ in 0..depth {
            value = AnyValue { value: Some(any_value::Value::ArrayValue(ArrayValue { values: vec![value] })) };
        }
        let span = Span {
            attributes: vec![KeyValue { key: "k".into(), value: Some(value), key_strindex: 0 }],
            ..Default::default()
        };
        let resource = ResourceSpans {
            scope_spans: vec![ScopeSpans { spans: vec![span], ..Default::default() }],
            ..Default::default()
        };
        ExportTraceServiceRequest { resource_spans: vec![ResourceSpans::default(), resource] }.encode_to_vec()
    };
    let outcomes: Vec<bool> = (40..52)
        .map(|depth| {
            let bytes = nested(depth);
            let old = ExportTraceServiceRequest::decode(bytes.as_slice()).is_ok();
            assert_eq!(new_read(bytes, Some(Signal::Traces)).is_some(), old, "depth {depth}");
            old
        })
        .collect();
    assert!(outcomes.contains(&true) && outcomes.contains(&false), "the limit lies within: {outcomes:?}");
}

/// Each record as `Debug` writes it (a borrowed and an owned string write the same).
fn records_of(bytes: &[u8], signal: Option<Signal>) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    protobuf::read(bytes, signal, &mut |r| {
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
        json::records(value::parse(text.as_bytes()).unwrap(), &mut |r| {
            out.push(format!("{r:?}"));
            Ok(())
        })
        .unwrap()
        .unwrap();
        out
    };
    let bytes = super::encode::encode_json(&spans);
    assert_eq!(records_of(&bytes, Some(Signal::Traces)).unwrap(), from_json);
    assert_eq!(records_of(&bytes, None).unwrap(), from_json);
    let logs = json!({"resourceLogs": [{"scopeLogs": [{"scope": {"name": "s"}, "logRecords": [{
        "eventName": "gen_ai.user.message", "spanId": "b7ad6b7169203331",
        "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "U"}}]}}}]}]}]});
    let mut records = Vec::new();
    protobuf::read(&super::encode::encode_json(&logs), None, &mut |r| {
        records.push((r.kind, r.body.to_value()));
        Ok(())
    })
    .unwrap()
    .unwrap();
    assert_eq!(records, vec![(Kind::Log, json!({"content": "U"}))]);
    assert!(records_of(&[], None).unwrap().is_empty());
}

/// The reader says why it refuses, and where, in its own words.
#[test]
fn a_broken_export_is_refused_with_what_breaks_and_where() {
    let refusal = |bytes: &[u8], signal| records_of(bytes, signal).unwrap_err();
    assert_eq!(
        refusal(b"\x0a\xff", Some(Signal::Traces)),
        "not an OTLP protobuf ExportTraceServiceRequest: a varint cut short by the end of its message, at byte 1"
    );
    // A span named with a byte that is not UTF-8: the request, its entry, its scope, the span.
    let span = field(5, b"\xff");
    let bytes = field(1, &field(2, &field(2, &span)));
    assert_eq!(
        refusal(&bytes, Some(Signal::Traces)),
        "not an OTLP protobuf ExportTraceServiceRequest: Span.name is not UTF-8 (a protobuf string must be), at byte 8"
    );
    let both = refusal(&bytes, None);
    assert!(both.starts_with("not an OTLP protobuf ExportTraceServiceRequest: Span.name"), "{both}");
    assert!(both.contains("; not an OTLP protobuf ExportLogsServiceRequest: "), "{both}");
    // A trace id given as a varint.
    let bytes = field(1, &field(2, &field(2, &[0x08, 0x01])));
    assert_eq!(
        refusal(&bytes, Some(Signal::Traces)),
        "not an OTLP protobuf ExportTraceServiceRequest: Span.trace_id as a varint: it is a length-delimited value, at byte 6"
    );
    // An id of the wrong length is no wire error: said as such.
    let bytes = field(1, &field(2, &field(2, &field(1, b"abc"))));
    assert_eq!(refusal(&bytes, Some(Signal::Traces)), "a trace id of 3 bytes: expected 16, or none");
}
