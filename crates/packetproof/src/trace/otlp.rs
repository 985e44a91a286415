//! Reading OTLP/JSON trace exports, streaming: the OpenTelemetry Collector's file
//! exporter writes one `ExportTraceServiceRequest` per line; a single JSON document
//! (pretty-printed, as an SDK's JSON exporter or a hand export writes it) is read whole.
//! OpenTelemetry events are log records: a logs export (`ExportLogsServiceRequest`) is
//! read the same way, and each `gen_ai.client.inference.operation.details` event in it
//! is handed on as a span of that name, its attributes the event's.
//!
//! Memory stays flat in the number of spans: one line is parsed at a time, each line
//! at most `max_line` bytes (harness.toml `limits.max_file_bytes`), and spans are
//! handed to the caller and dropped. A single document is bounded by the same limit.
//! A malformed line is an error naming the file and line (exit status 2).

use crate::{fsutil, Error, Result};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExportRequest {
    resource_spans: Option<Vec<ResourceSpans>>,
    resource_logs: Option<Vec<ResourceLogs>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceLogs {
    #[serde(default)]
    scope_logs: Vec<ScopeLogs>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ScopeLogs {
    #[serde(default)]
    scope: Option<Scope>,
    #[serde(default)]
    log_records: Vec<LogRecord>,
}

/// A log record: an event when it has an event name (`eventName`, or the older
/// `event.name` attribute).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LogRecord {
    #[serde(default)]
    event_name: String,
    #[serde(default)]
    trace_id: String,
    #[serde(default)]
    span_id: String,
    #[serde(default)]
    attributes: Vec<KeyValue>,
}

/// The event whose attributes are a whole inference call (GenAI conventions v1.37+).
pub(crate) const DETAILS_EVENT: &str = "gen_ai.client.inference.operation.details";

const EXPECTED: &str = "an OTLP/JSON ExportTraceServiceRequest ({\"resourceSpans\": [...]}) \
                        or ExportLogsServiceRequest ({\"resourceLogs\": [...]})";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceSpans {
    #[serde(default)]
    scope_spans: Vec<ScopeSpans>,
}

#[derive(Debug, Deserialize)]
struct ScopeSpans {
    #[serde(default)]
    scope: Option<Scope>,
    #[serde(default)]
    spans: Vec<Span>,
}

#[derive(Debug, Default, Deserialize)]
struct Scope {
    #[serde(default)]
    name: String,
}

/// One span as OTLP/JSON carries it (the fields `trace` reads).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Span {
    #[serde(default)]
    pub(crate) trace_id: String,
    #[serde(default)]
    pub(crate) span_id: String,
    #[serde(default)]
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) attributes: Vec<KeyValue>,
    #[serde(default)]
    pub(crate) events: Vec<Event>,
    /// The instrumentation scope that made the span (filled in from its `scopeSpans`).
    #[serde(skip)]
    pub(crate) scope: String,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Event {
    #[serde(default)]
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) attributes: Vec<KeyValue>,
}

/// An attribute: its key and its OTLP `AnyValue` (`{"stringValue": …}`, …).
#[derive(Debug, Deserialize)]
pub(crate) struct KeyValue {
    pub(crate) key: String,
    #[serde(default)]
    pub(crate) value: Value,
}

/// Where a span was read: the file and its line (the document's first line for a
/// single document).
#[derive(Debug, Clone)]
pub(crate) struct At<'a> {
    pub(crate) file: &'a str,
    pub(crate) line: usize,
}

/// Read every span of `path`, handing each to `visit` with where it was read.
pub(crate) fn read_spans(path: &Path, max_line: u64, visit: &mut dyn FnMut(Span, At) -> Result<()>) -> Result<()> {
    let shown = path.display().to_string();
    let file = fsutil::open_regular(path)?;
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let read = (&mut reader).take(max_line + 1).read_until(b'\n', &mut line).map_err(|e| Error::io(path, e))?;
        if read == 0 {
            return Ok(());
        }
        number += 1;
        if line.len() as u64 > max_line {
            return Err(Error::refused(
                format!("{shown}:{number}"),
                format!("the line is longer than the limit of {max_line} bytes (harness.toml limits.max_file_bytes)"),
            ));
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<ExportRequest>(&line) {
            Ok(request) => deliver(request, At { file: &shown, line: number }, visit)
                .map_err(|e| e.unwrap_or_else(|| not_otlp(&shown, number)))?,
            // The first document does not end on its line: one pretty-printed document.
            Err(e) if number == 1 && e.is_eof() => return read_document(path, &shown, max_line, visit),
            Err(e) => return Err(json_error(&shown, number, &e)),
        }
    }
}

/// Read every span of one export request's bytes (an OTLP/HTTP body, JSON), handing
/// each to `visit`; `source` names the request in errors and where each span was read.
pub(crate) fn read_request(bytes: &[u8], source: &str, visit: &mut dyn FnMut(Span, At) -> Result<()>) -> Result<()> {
    let request = serde_json::from_slice::<ExportRequest>(bytes).map_err(|e| json_error(source, 0, &e))?;
    deliver(request, At { file: source, line: 1 }, visit).map_err(|e| e.unwrap_or_else(|| not_otlp(source, 1)))
}

fn read_document(
    path: &Path,
    shown: &str,
    max_bytes: u64,
    visit: &mut dyn FnMut(Span, At) -> Result<()>,
) -> Result<()> {
    let bytes = fsutil::read_bytes(path, max_bytes)?;
    let request = serde_json::from_slice::<ExportRequest>(&bytes).map_err(|e| json_error(shown, 0, &e))?;
    deliver(request, At { file: shown, line: 1 }, visit).map_err(|e| e.unwrap_or_else(|| not_otlp(shown, 1)))
}

/// Hand on every span (and every inference-details event). `Err(None)`: the document
/// is neither export.
fn deliver(
    request: ExportRequest,
    at: At,
    visit: &mut dyn FnMut(Span, At) -> Result<()>,
) -> std::result::Result<(), Option<Error>> {
    if request.resource_spans.is_none() && request.resource_logs.is_none() {
        return Err(None);
    }
    for resource in request.resource_spans.into_iter().flatten() {
        for scope_spans in resource.scope_spans {
            let scope = scope_spans.scope.unwrap_or_default().name;
            for mut span in scope_spans.spans {
                span.scope.clone_from(&scope);
                visit(span, at.clone()).map_err(Some)?;
            }
        }
    }
    for resource in request.resource_logs.into_iter().flatten() {
        for scope_logs in resource.scope_logs {
            let scope = scope_logs.scope.unwrap_or_default().name;
            for record in scope_logs.log_records.into_iter().filter(is_details_event) {
                let span = Span {
                    trace_id: record.trace_id,
                    span_id: record.span_id,
                    name: DETAILS_EVENT.to_owned(),
                    attributes: record.attributes,
                    events: Vec::new(),
                    scope: scope.clone(),
                };
                visit(span, at.clone()).map_err(Some)?;
            }
        }
    }
    Ok(())
}

fn is_details_event(record: &LogRecord) -> bool {
    record.event_name == DETAILS_EVENT
        || record.attributes.iter().any(|kv| kv.key == "event.name" && plain(&kv.value) == DETAILS_EVENT)
}

fn not_otlp(file: &str, line: usize) -> Error {
    Error::Json { file: file.to_owned(), line, column: 1, message: format!("expected {EXPECTED}") }
}

/// A parse error at `line` of the file (a line of its own: serde's line is 1), or at
/// serde's line and column in a single document (`line` 0).
fn json_error(file: &str, line: usize, e: &serde_json::Error) -> Error {
    let what = if e.classify() == serde_json::error::Category::Data {
        format!("expected {EXPECTED}: {}", without_values(&e.to_string()))
    } else {
        e.to_string()
    };
    let (line, column) = if line == 0 { (e.line(), e.column()) } else { (line, e.column()) };
    Error::Json { file: file.to_owned(), line, column, message: what }
}

/// serde's message with the string it quotes (`invalid type: string "…", expected …`)
/// shown as a bounded excerpt: a value at a wrongly typed spot may be anything, a
/// private key or 100 KB, and serde quotes it whole and raw.
fn without_values(message: &str) -> String {
    for prefix in ["invalid type: string \"", "invalid value: string \""] {
        let Some(rest) = message.strip_prefix(prefix) else { continue };
        if let Some(end) = rest.rfind("\", expected") {
            let kind = &prefix[..prefix.len() - "string \"".len()];
            return format!("{kind}string {}{}", crate::report::excerpt(&rest[..end]), &rest[end + 1..]);
        }
    }
    crate::report::one_line(message)
}

/// An OTLP `AnyValue` as plain JSON: strings, numbers (`intValue` is a string in
/// OTLP/JSON), booleans, arrays and key-value lists; bytes stay base64 text.
pub(crate) fn plain(value: &Value) -> Value {
    let Some(map) = value.as_object() else { return Value::Null };
    let Some((kind, inner)) = map.iter().next() else { return Value::Null };
    match kind.as_str() {
        "stringValue" | "boolValue" | "doubleValue" | "bytesValue" => inner.clone(),
        "intValue" => match inner {
            Value::String(s) => s.parse::<i64>().map(Value::from).unwrap_or(Value::Null),
            other => other.clone(),
        },
        "arrayValue" => {
            Value::Array(inner.get("values").and_then(Value::as_array).into_iter().flatten().map(plain).collect())
        }
        "kvlistValue" => {
            let mut object = Map::new();
            for pair in inner.get("values").and_then(Value::as_array).into_iter().flatten() {
                if let Some(key) = pair.get("key").and_then(Value::as_str) {
                    object.insert(key.to_owned(), pair.get("value").map(plain).unwrap_or(Value::Null));
                }
            }
            Value::Object(object)
        }
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spans_of(text: &str) -> Result<Vec<(String, usize)>> {
        spans_within(text, 1 << 20)
    }

    fn spans_within(text: &str, max_line: u64) -> Result<Vec<(String, usize)>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, text).unwrap();
        let mut out = Vec::new();
        read_spans(&path, max_line, &mut |span, at| {
            out.push((span.name, at.line));
            Ok(())
        })?;
        Ok(out)
    }

    fn request(names: &[&str]) -> String {
        let spans: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
        json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "s"}, "spans": spans}]}]}).to_string()
    }

    #[test]
    fn lines_and_a_single_pretty_document_are_read() {
        let text = format!("{}\n\n{}\n", request(&["a", "b"]), request(&["c"]));
        assert_eq!(spans_of(&text).unwrap(), vec![("a".into(), 1), ("b".into(), 1), ("c".into(), 3)]);
        let pretty = serde_json::to_string_pretty(&serde_json::from_str::<Value>(&request(&["d"])).unwrap()).unwrap();
        assert_eq!(spans_of(&pretty).unwrap(), vec![("d".into(), 1)]);
    }

    #[test]
    fn a_malformed_line_names_its_line() {
        let text = format!("{}\n{{\"resourceSpans\": [}}\n", request(&["a"]));
        let err = spans_of(&text).unwrap_err().to_string();
        assert!(err.contains("t.jsonl:2:"), "{err}");
        let err = spans_of(&format!("{}\n{{\"spans\": []}}\n", request(&["a"]))).unwrap_err().to_string();
        assert!(err.contains(":2:") && err.contains("expected an OTLP/JSON ExportTraceServiceRequest"), "{err}");
    }

    #[test]
    fn a_line_past_the_bound_and_a_broken_pretty_document_name_their_line() {
        let line = request(&["a"]);
        let err = spans_within(&format!("{line}\n{line}{}\n", " ".repeat(200)), 150).unwrap_err().to_string();
        assert!(err.contains("t.jsonl:2: refused: the line is longer than the limit of 150 bytes"), "{err}");
        let err = spans_of("{\n  \"resourceSpans\": [\n    {\"scopeSpans\": 7}\n  ]\n}\n").unwrap_err().to_string();
        assert!(err.contains("t.jsonl:3:"), "{err}");
    }

    #[test]
    fn inference_details_events_of_a_logs_export_are_read_as_spans() {
        let record = |name: &str| json!({"eventName": name, "spanId": "ab", "attributes": [{"key": "k", "value": {"intValue": "1"}}]});
        let legacy = json!({"attributes": [{"key": "event.name", "value": {"stringValue": DETAILS_EVENT}}]});
        let logs = json!({"resourceLogs": [{"scopeLogs": [{"scope": {"name": "s"},
            "logRecords": [record(DETAILS_EVENT), record("gen_ai.choice"), legacy]}]}]});
        let spans = spans_of(&format!("{logs}\n")).unwrap();
        assert_eq!(spans, vec![(DETAILS_EVENT.to_owned(), 1), (DETAILS_EVENT.to_owned(), 1)]);
    }

    #[test]
    fn any_values_become_plain_json() {
        assert_eq!(plain(&json!({"intValue": "64000"})), json!(64000));
        assert_eq!(
            plain(&json!({"arrayValue": {"values": [{"stringValue": "a"}, {"boolValue": true}]}})),
            json!(["a", true])
        );
        assert_eq!(
            plain(&json!({"kvlistValue": {"values": [{"key": "k", "value": {"doubleValue": 0.5}}]}})),
            json!({"k": 0.5})
        );
        assert_eq!(plain(&json!({})), Value::Null);
    }
}
