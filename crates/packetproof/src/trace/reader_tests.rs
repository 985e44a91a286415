//! The readers that borrow their text, held to the ones they replaced on generated
//! exports: the strict borrowed parse to `canonical::parse` (every text, its value or
//! its error), the protobuf reader (prost twins holding `Bytes`) to the OpenTelemetry
//! project's generated types (the same bytes accepted, broken or not, and the same
//! records), and the JSON reader to the protobuf reader on an export's two encodings.

use super::proto;
use super::record::{hex, Record};
use super::{otlp, value, Signal};
use bytes::Bytes;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, ArrayValue, KeyValue, KeyValueList};
use opentelemetry_proto::tonic::trace::v1::{span, ResourceSpans, ScopeSpans, Span};
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
           "attributes": attributes(&r.attributes), "events": events, "start": r.start, "end": r.end})
}

/// The reader this replaced: an AnyValue of the generated types as plain JSON.
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

/// The reader this replaced: every span of the generated types, as [`summary`] writes it.
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
            out.push(json!({"trace": hex(&s.trace_id), "span": hex(&s.span_id), "parent": hex(&s.parent_span_id),
                "name": s.name, "scope": scope, "attributes": attributes(&s.attributes)?, "events": events,
                "start": s.start_time_unix_nano, "end": s.end_time_unix_nano}));
        }
    }
    Ok(out)
}

fn new_records(decoded: &proto::Decoded) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    proto::records(decoded, &mut |r| {
        out.push(summary(&r));
        Ok(())
    })?
    .unwrap();
    Ok(out)
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
    let id = prop::collection::vec(any::<u8>(), 0..3);
    let event = ("[ab]{0,2}", attributes()).prop_map(|(name, attributes)| span::Event {
        name,
        attributes,
        ..Default::default()
    });
    let span = (id.clone(), id, "[ab ]{0,3}", attributes(), prop::collection::vec(event, 0..2), any::<u64>()).prop_map(
        |(trace_id, span_id, name, attributes, events, start)| Span {
            trace_id,
            span_id,
            name,
            attributes,
            events,
            start_time_unix_nano: start,
            ..Default::default()
        },
    );
    (prop::collection::vec(span, 0..4), "[s]{0,2}").prop_map(|(spans, scope)| ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope { name: scope, ..Default::default() }),
                spans,
                ..Default::default()
            }],
            ..Default::default()
        }],
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

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

    /// Valid or broken (a byte changed, the end cut), the bytes are accepted as the
    /// generated types accept them, and read into the same records.
    #[test]
    fn the_protobuf_reader_reads_as_the_generated_types(
        request in export(), change in prop::option::of((any::<prop::sample::Index>(), any::<u8>())), cut in any::<prop::sample::Index>(), cutting in any::<bool>()
    ) {
        let mut bytes = request.encode_to_vec();
        if let (Some((at, byte)), false) = (change, bytes.is_empty()) {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        if cutting && !bytes.is_empty() {
            bytes.truncate(cut.index(bytes.len()));
        }
        let old = ExportTraceServiceRequest::decode(bytes.as_slice());
        let new = proto::decode(&Bytes::from(bytes), Signal::Traces);
        prop_assert_eq!(old.is_ok(), new.is_ok(), "{:?} {:?}", old, new);
        if let (Ok(old), Ok(new)) = (old, new) {
            prop_assert_eq!(new_records(&new), reference_records(&old));
        }
    }

    /// An export reads the same from OTLP/JSON and from protobuf.
    #[test]
    fn the_json_reader_reads_as_the_protobuf_reader(request in export()) {
        let document = serde_json::to_value(json_of(&request)).unwrap();
        let text = document.to_string();
        let mut from_json = Vec::new();
        let read = otlp::records(value::parse(text.as_bytes()).unwrap(), &mut |r| {
            from_json.push(summary(&r));
            Ok(())
        });
        let from_protobuf = new_records(&proto::decode(&Bytes::from(request.encode_to_vec()), Signal::Traces).unwrap());
        match (read, from_protobuf) {
            (Ok(_), Ok(records)) => prop_assert_eq!(from_json, records),
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
    let spans: Vec<Value> = request.resource_spans.iter().flat_map(|r| &r.scope_spans).flat_map(|s| &s.spans).map(|s| {
        let events: Vec<Value> = s.events.iter().map(|e| json!({"name": e.name, "attributes": pairs(&e.attributes)})).collect();
        json!({"traceId": hex(&s.trace_id), "spanId": hex(&s.span_id), "name": s.name,
               "startTimeUnixNano": s.start_time_unix_nano.to_string(), "attributes": pairs(&s.attributes), "events": events})
    }).collect();
    let scope = request
        .resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .next()
        .and_then(|s| s.scope.as_ref())
        .map_or("", |s| &s.name);
    json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": scope}, "spans": spans}]}]})
}
