//! The OTLP messages `trace` reads, as prost decodes them with their text left in the
//! export's buffer: the OpenTelemetry project's generated types copy every string and id
//! into its own allocation, and prost offers no borrowed strings, so these twins of
//! `ExportTraceServiceRequest` and `ExportLogsServiceRequest` declare the same fields
//! with the same tags and wire types but hold each string as `bytes::Bytes` (a slice of
//! the buffer). Decoding accepts exactly what the generated types accept once every
//! string is checked to be UTF-8 ([`Utf8::is_utf8`]); the parts `trace` never reads
//! (resource, scope, links, status) are the generated types themselves.

use bytes::Bytes;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{span::Link, Status};

/// Either request's top level, each entry (a `ResourceSpans` or `ResourceLogs`: both
/// are field 1, length-delimited) left as its bytes, to be decoded one at a time.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Entries {
    #[prost(bytes = "bytes", repeated, tag = "1")]
    pub(crate) entries: Vec<Bytes>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TracesRequest {
    #[prost(message, repeated, tag = "1")]
    pub(crate) resource_spans: Vec<ResourceSpans>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ResourceSpans {
    #[prost(message, optional, tag = "1")]
    pub(crate) resource: Option<Resource>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) scope_spans: Vec<ScopeSpans>,
    #[prost(bytes = "bytes", tag = "3")]
    pub(crate) schema_url: Bytes,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ScopeSpans {
    #[prost(message, optional, tag = "1")]
    pub(crate) scope: Option<InstrumentationScope>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) spans: Vec<Span>,
    #[prost(bytes = "bytes", tag = "3")]
    pub(crate) schema_url: Bytes,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Span {
    #[prost(bytes = "bytes", tag = "1")]
    pub(crate) trace_id: Bytes,
    #[prost(bytes = "bytes", tag = "2")]
    pub(crate) span_id: Bytes,
    #[prost(bytes = "bytes", tag = "3")]
    pub(crate) trace_state: Bytes,
    #[prost(bytes = "bytes", tag = "4")]
    pub(crate) parent_span_id: Bytes,
    #[prost(fixed32, tag = "16")]
    pub(crate) flags: u32,
    #[prost(bytes = "bytes", tag = "5")]
    pub(crate) name: Bytes,
    #[prost(int32, tag = "6")]
    pub(crate) kind: i32,
    #[prost(fixed64, tag = "7")]
    pub(crate) start_time_unix_nano: u64,
    #[prost(fixed64, tag = "8")]
    pub(crate) end_time_unix_nano: u64,
    #[prost(message, repeated, tag = "9")]
    pub(crate) attributes: Vec<KeyValue>,
    #[prost(uint32, tag = "10")]
    pub(crate) dropped_attributes_count: u32,
    #[prost(message, repeated, tag = "11")]
    pub(crate) events: Vec<Event>,
    #[prost(uint32, tag = "12")]
    pub(crate) dropped_events_count: u32,
    #[prost(message, repeated, tag = "13")]
    pub(crate) links: Vec<Link>,
    #[prost(uint32, tag = "14")]
    pub(crate) dropped_links_count: u32,
    #[prost(message, optional, tag = "15")]
    pub(crate) status: Option<Status>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Event {
    #[prost(fixed64, tag = "1")]
    pub(crate) time_unix_nano: u64,
    #[prost(bytes = "bytes", tag = "2")]
    pub(crate) name: Bytes,
    #[prost(message, repeated, tag = "3")]
    pub(crate) attributes: Vec<KeyValue>,
    #[prost(uint32, tag = "4")]
    pub(crate) dropped_attributes_count: u32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct KeyValue {
    #[prost(bytes = "bytes", tag = "1")]
    pub(crate) key: Bytes,
    #[prost(message, optional, tag = "2")]
    pub(crate) value: Option<AnyValue>,
    #[prost(int32, tag = "3")]
    pub(crate) key_strindex: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct AnyValue {
    #[prost(oneof = "Value", tags = "1, 2, 3, 4, 5, 6, 7, 8")]
    pub(crate) value: Option<Value>,
}

// The variants are OTLP's names for them.
#[allow(clippy::enum_variant_names)]
#[derive(Clone, PartialEq, prost::Oneof)]
pub(crate) enum Value {
    #[prost(bytes = "bytes", tag = "1")]
    StringValue(Bytes),
    #[prost(bool, tag = "2")]
    BoolValue(bool),
    #[prost(int64, tag = "3")]
    IntValue(i64),
    #[prost(double, tag = "4")]
    DoubleValue(f64),
    #[prost(message, tag = "5")]
    ArrayValue(ArrayValue),
    #[prost(message, tag = "6")]
    KvlistValue(KeyValueList),
    #[prost(bytes = "bytes", tag = "7")]
    BytesValue(Bytes),
    #[prost(int32, tag = "8")]
    StringValueStrindex(i32),
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ArrayValue {
    #[prost(message, repeated, tag = "1")]
    pub(crate) values: Vec<AnyValue>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct KeyValueList {
    #[prost(message, repeated, tag = "1")]
    pub(crate) values: Vec<KeyValue>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct LogsRequest {
    #[prost(message, repeated, tag = "1")]
    pub(crate) resource_logs: Vec<ResourceLogs>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ResourceLogs {
    #[prost(message, optional, tag = "1")]
    pub(crate) resource: Option<Resource>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) scope_logs: Vec<ScopeLogs>,
    #[prost(bytes = "bytes", tag = "3")]
    pub(crate) schema_url: Bytes,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ScopeLogs {
    #[prost(message, optional, tag = "1")]
    pub(crate) scope: Option<InstrumentationScope>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) log_records: Vec<LogRecord>,
    #[prost(bytes = "bytes", tag = "3")]
    pub(crate) schema_url: Bytes,
}

#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct LogRecord {
    #[prost(fixed64, tag = "1")]
    pub(crate) time_unix_nano: u64,
    #[prost(fixed64, tag = "11")]
    pub(crate) observed_time_unix_nano: u64,
    #[prost(int32, tag = "2")]
    pub(crate) severity_number: i32,
    #[prost(bytes = "bytes", tag = "3")]
    pub(crate) severity_text: Bytes,
    #[prost(message, optional, tag = "5")]
    pub(crate) body: Option<AnyValue>,
    #[prost(message, repeated, tag = "6")]
    pub(crate) attributes: Vec<KeyValue>,
    #[prost(uint32, tag = "7")]
    pub(crate) dropped_attributes_count: u32,
    #[prost(fixed32, tag = "8")]
    pub(crate) flags: u32,
    #[prost(bytes = "bytes", tag = "9")]
    pub(crate) trace_id: Bytes,
    #[prost(bytes = "bytes", tag = "10")]
    pub(crate) span_id: Bytes,
    #[prost(bytes = "bytes", tag = "12")]
    pub(crate) event_name: Bytes,
}

/// Whether every field that OTLP declares a string is UTF-8, as the generated types check.
pub(crate) trait Utf8 {
    fn is_utf8(&self) -> bool;
}

fn utf8(bytes: &Bytes) -> bool {
    std::str::from_utf8(bytes).is_ok()
}

fn all<T: Utf8>(items: &[T]) -> bool {
    items.iter().all(Utf8::is_utf8)
}

impl Utf8 for TracesRequest {
    fn is_utf8(&self) -> bool {
        self.resource_spans
            .iter()
            .all(|r| utf8(&r.schema_url) && r.scope_spans.iter().all(|s| utf8(&s.schema_url) && all(&s.spans)))
    }
}

impl Utf8 for LogsRequest {
    fn is_utf8(&self) -> bool {
        self.resource_logs
            .iter()
            .all(|r| utf8(&r.schema_url) && r.scope_logs.iter().all(|s| utf8(&s.schema_url) && all(&s.log_records)))
    }
}

impl Utf8 for Span {
    fn is_utf8(&self) -> bool {
        utf8(&self.trace_state)
            && utf8(&self.name)
            && all(&self.attributes)
            && self.events.iter().all(|e| utf8(&e.name) && all(&e.attributes))
    }
}

impl Utf8 for LogRecord {
    fn is_utf8(&self) -> bool {
        utf8(&self.severity_text)
            && utf8(&self.event_name)
            && all(&self.attributes)
            && self.body.as_ref().is_none_or(Utf8::is_utf8)
    }
}

impl Utf8 for KeyValue {
    fn is_utf8(&self) -> bool {
        utf8(&self.key) && self.value.as_ref().is_none_or(Utf8::is_utf8)
    }
}

impl Utf8 for AnyValue {
    fn is_utf8(&self) -> bool {
        match &self.value {
            Some(Value::StringValue(s)) => utf8(s),
            Some(Value::ArrayValue(a)) => all(&a.values),
            Some(Value::KvlistValue(l)) => all(&l.values),
            _ => true,
        }
    }
}
