//! OTLP/JSON exports: one `ExportTraceServiceRequest` (`{"resourceSpans": […]}`) or
//! `ExportLogsServiceRequest` (`{"resourceLogs": […]}`) as the OpenTelemetry Collector's
//! file exporter writes it, one per line, or a single (pretty-printed) document.
//!
//! The JSON is parsed strictly (`canonical::parse`: a duplicate key is refused, as in every
//! other input), then walked once: every span and log record is handed on as a
//! [`Record`], its attribute values as plain JSON ([`plain`]). An empty object is an empty
//! export (the protobuf JSON mapping omits empty lists); an object with neither list and
//! other members is no OTLP export.

use super::record::{Event, Kind, Record};
use serde_json::{Map, Value};
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

type Visit<'v> = dyn FnMut(Record) -> crate::Result<()> + 'v;

/// Hand on every span and log record of one parsed document, moving its strings into the
/// records (nothing of the document is copied).
pub(crate) fn records(document: Value, visit: &mut Visit) -> Result<crate::Result<()>, Problem> {
    let Value::Object(mut root) = document else {
        return Err(Problem { message: format!("expected {EXPECTED}") });
    };
    let (spans, logs) = (root.remove("resourceSpans"), root.remove("resourceLogs"));
    if spans.is_none() && logs.is_none() && !root.is_empty() {
        return Err(Problem { message: format!("expected {EXPECTED}") });
    }
    let top = Path::Root;
    let spans_at = Path::Key(&top, "resourceSpans");
    for (i, resource) in list(spans, &spans_at)?.into_iter().enumerate() {
        let at = Path::Index(&spans_at, i);
        let scopes_at = Path::Key(&at, "scopeSpans");
        for (j, scope_spans) in list(object(resource, &at)?.remove("scopeSpans"), &scopes_at)?.into_iter().enumerate() {
            let at = Path::Index(&scopes_at, j);
            let mut scope_spans = object(scope_spans, &at)?;
            let scope = scope_name(&mut scope_spans, &at)?;
            let spans_at = Path::Key(&at, "spans");
            for (k, span) in list(scope_spans.remove("spans"), &spans_at)?.into_iter().enumerate() {
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
        for (j, scope_logs) in list(object(resource, &at)?.remove("scopeLogs"), &scopes_at)?.into_iter().enumerate() {
            let at = Path::Index(&scopes_at, j);
            let mut scope_logs = object(scope_logs, &at)?;
            let scope = scope_name(&mut scope_logs, &at)?;
            let records_at = Path::Key(&at, "logRecords");
            for (k, record) in list(scope_logs.remove("logRecords"), &records_at)?.into_iter().enumerate() {
                let record = log_record(record, &Path::Index(&records_at, k), &scope)?;
                if let Err(e) = visit(record) {
                    return Ok(Err(e));
                }
            }
        }
    }
    Ok(Ok(()))
}

fn object(value: Value, at: &Path) -> Result<Map<String, Value>, Problem> {
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(wrong(at, "an object")),
    }
}

/// A list member: absent or `null` is empty.
fn list(value: Option<Value>, at: &Path) -> Result<Vec<Value>, Problem> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(wrong(at, "an array")),
    }
}

fn text(map: &mut Map<String, Value>, key: &str, at: &Path) -> Result<String, Problem> {
    match map.get_mut(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(std::mem::take(s)),
        Some(_) => Err(wrong(&Path::Key(at, key), "a string")),
    }
}

fn scope_name(map: &mut Map<String, Value>, at: &Path) -> Result<String, Problem> {
    match map.get_mut("scope") {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::Object(scope)) => text(scope, "name", &Path::Key(at, "scope")),
        Some(_) => Err(wrong(&Path::Key(at, "scope"), "an object")),
    }
}

/// Ids in OTLP/JSON are hex; lowercase them so a protobuf export's ids join with them.
fn id(map: &mut Map<String, Value>, key: &str, at: &Path) -> Result<String, Problem> {
    let mut id = text(map, key, at)?;
    id.make_ascii_lowercase();
    Ok(id)
}

fn span(value: Value, at: &Path, scope: &str) -> Result<Record, Problem> {
    let mut map = object(value, at)?;
    let events_at = Path::Key(at, "events");
    let mut events = Vec::new();
    for (i, event) in list(map.remove("events"), &events_at)?.into_iter().enumerate() {
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
        scope: scope.to_owned(),
        attributes: attributes(&mut map, at)?,
        events,
        body: Value::Null,
        start: nanos(&map, "startTimeUnixNano"),
        end: nanos(&map, "endTimeUnixNano"),
    })
}

/// A time in Unix nanoseconds (a string in OTLP/JSON, a number from some writers); 0 if none.
fn nanos(map: &Map<String, Value>, key: &str) -> u64 {
    match map.get(key) {
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        Some(value) => value.as_u64().unwrap_or(0),
        None => 0,
    }
}

fn log_record(value: Value, at: &Path, scope: &str) -> Result<Record, Problem> {
    let mut map = object(value, at)?;
    let attributes = attributes(&mut map, at)?;
    let body = match map.remove("body") {
        None | Some(Value::Null) => Value::Null,
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
        parent_span_id: String::new(),
        name: Record::event_name(text(&mut map, "eventName", at)?, &attributes),
        scope: scope.to_owned(),
        attributes,
        events: Vec::new(),
        body,
        // A record without its time has the time it was observed.
        start: time,
        end: time,
    })
}

/// `attributes: [{key, value: AnyValue}]`, in order, duplicates kept.
fn attributes(map: &mut Map<String, Value>, at: &Path) -> Result<Vec<(String, Value)>, Problem> {
    let list_at = Path::Key(at, "attributes");
    let items = list(map.remove("attributes"), &list_at)?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let at = Path::Index(&list_at, i);
        let mut pair = object(item, &at)?;
        let key = match pair.get_mut("key") {
            Some(Value::String(key)) => std::mem::take(key),
            _ => return Err(wrong(&Path::Key(&at, "key"), "a string")),
        };
        let value = match pair.remove("value") {
            None | Some(Value::Null) => Value::Null,
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
pub(crate) fn plain(value: Value) -> Result<Value, String> {
    let Value::Object(map) = value else { return Err("expected an OTLP AnyValue (an object)".into()) };
    if map.len() > 1 {
        return Err("an OTLP AnyValue holds one value".into());
    }
    let Some((kind, inner)) = map.into_iter().next() else { return Ok(Value::Null) };
    Ok(match kind.as_str() {
        "stringValue" | "boolValue" | "doubleValue" | "bytesValue" => inner,
        "intValue" => match inner {
            Value::String(s) => s.parse::<i64>().map(Value::from).unwrap_or(Value::String(s)),
            other => other,
        },
        "arrayValue" => match inner {
            Value::Object(mut array) => match array.remove("values") {
                Some(Value::Array(values)) => Value::Array(values.into_iter().map(plain).collect::<Result<_, _>>()?),
                _ => Value::Array(Vec::new()),
            },
            _ => Value::Array(Vec::new()),
        },
        "kvlistValue" => {
            let mut object = Map::new();
            let values = match inner {
                Value::Object(mut list) => match list.remove("values") {
                    Some(Value::Array(values)) => values,
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            };
            for pair in values {
                let Value::Object(mut pair) = pair else { return Err("a kvlistValue entry is not an object".into()) };
                let Some(Value::String(key)) = pair.remove("key") else {
                    return Err("a kvlistValue entry without a string key".into());
                };
                let value = pair.remove("value").map(plain).transpose()?.unwrap_or(Value::Null);
                if object.contains_key(&key) {
                    return Err(format!("duplicate key {} in a kvlistValue", crate::report::excerpt(&key)));
                }
                object.insert(key, value);
            }
            Value::Object(object)
        }
        other => return Err(format!("an unknown AnyValue kind {}", crate::report::excerpt(other))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(document: Value) -> Result<Vec<(String, Kind)>, Problem> {
        let mut out = Vec::new();
        records(document, &mut |r| {
            out.push((r.name, r.kind));
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
