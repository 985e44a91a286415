//! OTLP/JSON exports: one `ExportTraceServiceRequest` (`{"resourceSpans": […]}`) or
//! `ExportLogsServiceRequest` (`{"resourceLogs": […]}`) as the OpenTelemetry Collector's
//! file exporter writes it, one per line, or a single (pretty-printed) document.
//!
//! The JSON is parsed strictly, once (`value::parse`: a duplicate key is refused, as in
//! every other input), then walked once: every span and log record is handed on as a
//! [`Record`], its attribute values as plain JSON ([`plain`]). An empty object is an empty
//! export (the protobuf JSON mapping omits empty lists); an object with neither list and
//! other members is no OTLP export.

use super::record::{Attributes, Event, Kind, Record};
use super::value::Json;
use super::Visit;
use std::borrow::Cow;
use std::fmt;

pub(crate) const EXPECTED: &str = "an OTLP/JSON ExportTraceServiceRequest ({\"resourceSpans\": [...]}) \
                        or ExportLogsServiceRequest ({\"resourceLogs\": [...]})";

/// Why a document is not an export: where (a JSON path) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) message: String,
}

/// A JSON path, built only when a problem is reported.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => f.write_str("$"),
            Path::Key(parent, key) => write!(f, "{parent}.{key}"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

fn wrong(path: &Path, what: &str) -> Problem {
    Problem { message: format!("{path}: expected {what}") }
}

type Members<'a> = Vec<(Cow<'a, str>, Json<'a>)>;

/// Hand on every span and log record of one parsed document, moving its strings into the
/// records (nothing of the document is copied).
pub(crate) fn records(document: Json, visit: &mut Visit) -> Result<crate::Result<()>, Problem> {
    let Json::Object(mut root) = document else {
        return Err(Problem { message: format!("expected {EXPECTED}") });
    };
    let (spans, logs) = (remove(&mut root, "resourceSpans"), remove(&mut root, "resourceLogs"));
    if spans.is_none() && logs.is_none() && !root.is_empty() {
        return Err(Problem { message: format!("expected {EXPECTED}") });
    }
    let top = Path::Root;
    let spans_at = Path::Key(&top, "resourceSpans");
    for (i, resource) in list(spans, &spans_at)?.into_iter().enumerate() {
        let at = Path::Index(&spans_at, i);
        let scopes_at = Path::Key(&at, "scopeSpans");
        let mut resource = object(resource, &at)?;
        for (j, scope_spans) in list(remove(&mut resource, "scopeSpans"), &scopes_at)?.into_iter().enumerate() {
            let at = Path::Index(&scopes_at, j);
            let mut scope_spans = object(scope_spans, &at)?;
            let scope = scope_name(&mut scope_spans, &at)?;
            let spans_at = Path::Key(&at, "spans");
            for (k, span) in list(remove(&mut scope_spans, "spans"), &spans_at)?.into_iter().enumerate() {
                let record = self::span(span, &Path::Index(&spans_at, k), &scope)?;
                if let Err(e) = visit(record) {
                    return Ok(Err(e));
                }
            }
        }
    }
    let logs_at = Path::Key(&top, "resourceLogs");
    for (i, resource) in list(logs, &logs_at)?.into_iter().enumerate() {
        let at = Path::Index(&logs_at, i);
        let scopes_at = Path::Key(&at, "scopeLogs");
        let mut resource = object(resource, &at)?;
        for (j, scope_logs) in list(remove(&mut resource, "scopeLogs"), &scopes_at)?.into_iter().enumerate() {
            let at = Path::Index(&scopes_at, j);
            let mut scope_logs = object(scope_logs, &at)?;
            let scope = scope_name(&mut scope_logs, &at)?;
            let records_at = Path::Key(&at, "logRecords");
            for (k, record) in list(remove(&mut scope_logs, "logRecords"), &records_at)?.into_iter().enumerate() {
                let record = log_record(record, &Path::Index(&records_at, k), &scope)?;
                if let Err(e) = visit(record) {
                    return Ok(Err(e));
                }
            }
        }
    }
    Ok(Ok(()))
}

/// Take the member `key` out of an object (keys are unique).
fn remove<'a>(map: &mut Members<'a>, key: &str) -> Option<Json<'a>> {
    let i = map.iter().position(|(k, _)| k == key)?;
    Some(map.swap_remove(i).1)
}

fn object<'a>(value: Json<'a>, at: &Path) -> Result<Members<'a>, Problem> {
    match value {
        Json::Object(map) => Ok(map),
        _ => Err(wrong(at, "an object")),
    }
}

/// A list member: absent or `null` is empty.
fn list<'a>(value: Option<Json<'a>>, at: &Path) -> Result<Vec<Json<'a>>, Problem> {
    match value {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(items)) => Ok(items),
        Some(_) => Err(wrong(at, "an array")),
    }
}

fn text<'a>(map: &mut Members<'a>, key: &str, at: &Path) -> Result<Cow<'a, str>, Problem> {
    match remove(map, key) {
        None | Some(Json::Null) => Ok(Cow::Borrowed("")),
        Some(Json::String(s)) => Ok(s),
        Some(_) => Err(wrong(&Path::Key(at, key), "a string")),
    }
}

fn scope_name<'a>(map: &mut Members<'a>, at: &Path) -> Result<Cow<'a, str>, Problem> {
    match remove(map, "scope") {
        None | Some(Json::Null) => Ok(Cow::Borrowed("")),
        Some(Json::Object(mut scope)) => text(&mut scope, "name", &Path::Key(at, "scope")),
        Some(_) => Err(wrong(&Path::Key(at, "scope"), "an object")),
    }
}

/// Ids in OTLP/JSON are the hex of their bytes (a trace id 16, a span id 8) or absent;
/// anything else is refused, as the OTLP specification has a receiver refuse it.
/// Lowercased so a protobuf export's ids join with them.
fn id<'a>(map: &mut Members<'a>, key: &str, at: &Path) -> Result<Cow<'a, str>, Problem> {
    let mut id = text(map, key, at)?;
    let digits = if key == "traceId" { 32 } else { 16 };
    if !id.is_empty() && (id.len() != digits || !id.bytes().all(|b| b.is_ascii_hexdigit())) {
        let message = format!(
            "{}: {} is no id: expected {digits} hex digits ({} bytes), or none",
            Path::Key(at, key),
            crate::report::excerpt(&id),
            digits / 2
        );
        return Err(Problem { message });
    }
    if id.bytes().any(|b| b.is_ascii_uppercase()) {
        id.to_mut().make_ascii_lowercase();
    }
    Ok(id)
}

fn span<'a, 's>(value: Json<'a>, at: &Path, scope: &'s str) -> Result<Record<'s>, Problem>
where
    'a: 's,
{
    let mut map = object(value, at)?;
    let events_at = Path::Key(at, "events");
    let mut events = Vec::new();
    for (i, event) in list(remove(&mut map, "events"), &events_at)?.into_iter().enumerate() {
        let at = Path::Index(&events_at, i);
        let mut event = object(event, &at)?;
        events.push(Event { name: text(&mut event, "name", &at)?, attributes: attributes(&mut event, &at)? });
    }
    Ok(Record {
        kind: Kind::Span,
        trace_id: id(&mut map, "traceId", at)?,
        span_id: id(&mut map, "spanId", at)?,
        parent_span_id: id(&mut map, "parentSpanId", at)?,
        name: text(&mut map, "name", at)?,
        scope: Cow::Borrowed(scope),
        attributes: attributes(&mut map, at)?,
        events,
        body: Json::Null,
        start: nanos(&map, "startTimeUnixNano"),
        end: nanos(&map, "endTimeUnixNano"),
    })
}

/// A time in Unix nanoseconds (a string in OTLP/JSON, a number from some writers); 0 if none.
fn nanos(map: &Members, key: &str) -> u64 {
    match map.iter().find(|(k, _)| k == key).map(|(_, v)| v) {
        Some(Json::String(s)) => s.parse().unwrap_or(0),
        Some(Json::Number(n)) => n.as_u64().unwrap_or(0),
        _ => 0,
    }
}

fn log_record<'a, 's>(value: Json<'a>, at: &Path, scope: &'s str) -> Result<Record<'s>, Problem>
where
    'a: 's,
{
    let mut map = object(value, at)?;
    let attributes = attributes(&mut map, at)?;
    let body = match remove(&mut map, "body") {
        None | Some(Json::Null) => Json::Null,
        Some(body) => plain(body).map_err(|m| Problem { message: format!("{}: {m}", Path::Key(at, "body")) })?,
    };
    let time = match nanos(&map, "timeUnixNano") {
        0 => nanos(&map, "observedTimeUnixNano"),
        time => time,
    };
    Ok(Record {
        kind: Kind::Log,
        trace_id: id(&mut map, "traceId", at)?,
        span_id: id(&mut map, "spanId", at)?,
        parent_span_id: Cow::Borrowed(""),
        name: Record::event_name(text(&mut map, "eventName", at)?, &attributes),
        scope: Cow::Borrowed(scope),
        attributes,
        events: Vec::new(),
        body,
        // A record without its time has the time it was observed.
        start: time,
        end: time,
    })
}

/// `attributes: [{key, value: AnyValue}]`, in order, duplicates kept.
fn attributes<'a>(map: &mut Members<'a>, at: &Path) -> Result<Attributes<'a>, Problem> {
    let list_at = Path::Key(at, "attributes");
    let items = list(remove(map, "attributes"), &list_at)?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let at = Path::Index(&list_at, i);
        let mut pair = object(item, &at)?;
        let key = match remove(&mut pair, "key") {
            Some(Json::String(key)) => key,
            _ => return Err(wrong(&Path::Key(&at, "key"), "a string")),
        };
        let value = match remove(&mut pair, "value") {
            None | Some(Json::Null) => Json::Null,
            Some(value) => {
                plain(value).map_err(|m| Problem { message: format!("{}: {m}", Path::Key(&at, "value")) })?
            }
        };
        out.push((key, value));
    }
    Ok(out)
}

/// An OTLP `AnyValue` as plain JSON: strings, numbers (`intValue` is a string in
/// OTLP/JSON; one that is no integer stays a string, so a typed field sees it is wrong),
/// booleans, arrays and key-value lists; bytes stay base64 text; `{}` is `null`.
pub(crate) fn plain(value: Json) -> Result<Json, String> {
    let Json::Object(map) = value else { return Err("expected an OTLP AnyValue (an object)".into()) };
    if map.len() > 1 {
        return Err("an OTLP AnyValue holds one value".into());
    }
    let Some((kind, inner)) = map.into_iter().next() else { return Ok(Json::Null) };
    Ok(match kind.as_ref() {
        "stringValue" | "boolValue" | "doubleValue" | "bytesValue" => inner,
        "intValue" => match inner {
            Json::String(s) => match s.parse::<i64>() {
                Ok(n) => Json::Number(n.into()),
                Err(_) => Json::String(s),
            },
            other => other,
        },
        "arrayValue" => match inner {
            Json::Object(mut array) => match remove(&mut array, "values") {
                Some(Json::Array(values)) => Json::Array(values.into_iter().map(plain).collect::<Result<_, _>>()?),
                _ => Json::Array(Vec::new()),
            },
            _ => Json::Array(Vec::new()),
        },
        "kvlistValue" => {
            let values = match inner {
                Json::Object(mut list) => match remove(&mut list, "values") {
                    Some(Json::Array(values)) => values,
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            };
            let mut object: Members = Vec::with_capacity(values.len());
            for pair in values {
                let Json::Object(mut pair) = pair else { return Err("a kvlistValue entry is not an object".into()) };
                let Some(Json::String(key)) = remove(&mut pair, "key") else {
                    return Err("a kvlistValue entry without a string key".into());
                };
                let value = remove(&mut pair, "value").map(plain).transpose()?.unwrap_or(Json::Null);
                if object.iter().any(|(k, _)| *k == key) {
                    return Err(format!("duplicate key {} in a kvlistValue", crate::report::excerpt(&key)));
                }
                object.push((key, value));
            }
            Json::Object(object)
        }
        other => return Err(format!("an unknown AnyValue kind {}", crate::report::excerpt(other))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn names(document: Value) -> Result<Vec<(String, Kind)>, Problem> {
        let mut out = Vec::new();
        let text = document.to_string();
        records(crate::otlp::value::parse(text.as_bytes()).unwrap(), &mut |r| {
            out.push((r.name.into_owned(), r.kind));
            Ok(())
        })?
        .unwrap();
        Ok(out)
    }

    #[test]
    fn spans_and_log_records_are_read_and_an_empty_object_is_an_empty_export() {
        let spans = json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "s"}, "spans": [{"name": "a"}, {"name": "b"}]}]}]});
        assert_eq!(names(spans).unwrap(), vec![("a".into(), Kind::Span), ("b".into(), Kind::Span)]);
        let logs = json!({"resourceLogs": [{"scopeLogs": [{"logRecords": [
            {"eventName": "e"}, {"attributes": [{"key": "event.name", "value": {"stringValue": "old"}}]}]}]}]});
        assert_eq!(names(logs).unwrap(), vec![("e".into(), Kind::Log), ("old".into(), Kind::Log)]);
        assert_eq!(names(json!({})).unwrap(), vec![]);
        assert!(names(json!({"spans": []})).unwrap_err().message.contains("expected an OTLP/JSON"));
        let err = names(json!({"resourceSpans": [{"scopeSpans": 7}]})).unwrap_err();
        assert_eq!(err.message, "$.resourceSpans[0].scopeSpans: expected an array");
    }

    fn plain(value: Value) -> Result<Value, String> {
        let text = value.to_string();
        super::plain(crate::otlp::value::parse(text.as_bytes()).unwrap()).map(|j| j.to_value())
    }

    #[test]
    fn any_values_become_plain_json() {
        assert_eq!(plain(json!({"intValue": "64000"})), Ok(json!(64000)));
        assert_eq!(plain(json!({"intValue": "6.4e4"})), Ok(json!("6.4e4")));
        assert_eq!(
            plain(json!({"arrayValue": {"values": [{"stringValue": "a"}, {"boolValue": true}]}})),
            Ok(json!(["a", true]))
        );
        assert_eq!(
            plain(json!({"kvlistValue": {"values": [{"key": "k", "value": {"doubleValue": 0.5}}]}})),
            Ok(json!({"k": 0.5}))
        );
        assert_eq!(plain(json!({})), Ok(Value::Null));
        let twice = json!({"kvlistValue": {"values": [{"key": "k", "value": {}}, {"key": "k", "value": {}}]}});
        assert!(plain(twice).unwrap_err().contains("duplicate key \"k\""));
    }
}
