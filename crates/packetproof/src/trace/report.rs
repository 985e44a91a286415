//! A judged call as a text line, a JSON object or a JUnit case; the counts as a summary.

use super::verdict::Verdict;
use super::{Counts, Judged};
use crate::report::{escape_name, one_line, JSON_FORMAT_VERSION};
use crate::Skipped;
use serde_json::{json, Value};

/// The start of the JSON document; the calls follow as they are judged, each from
/// [`json`] (so memory stays flat in the number of spans), then [`json_end`].
pub fn json_start() -> String {
    format!("{{\"formatVersion\": {JSON_FORMAT_VERSION}, \"calls\": [")
}

/// The rest of the JSON document: the counts, the rules that did not run on a
/// reviewed packet (with why), and the verdict.
pub fn json_end(counts: &Counts, skipped: &[Skipped]) -> String {
    let show = |value: serde_json::Result<String>| value.unwrap_or_else(|_| "null".into());
    format!(
        "\n], \"counts\": {}, \"skipped\": {}, \"ok\": {}}}\n",
        show(serde_json::to_string(counts)),
        show(serde_json::to_string(skipped)),
        counts.ok()
    )
}

/// The rules that did not run on a reviewed packet, one line each, after the summary.
pub fn skipped_text(skipped: &[Skipped]) -> String {
    skipped.iter().map(|s| format!("{s}\n")).collect()
}

/// `file:line span-name [span id]: verdict — detail`, then its notes.
pub fn text(judged: &Judged) -> String {
    let call = &judged.call;
    let detail = match &judged.verdict {
        Verdict::Matched { packet } => format!("packet {}", one_line(packet)),
        Verdict::Mismatched { packet, differences } => {
            let differences: Vec<String> = differences.iter().map(|d| one_line(d)).collect();
            format!("packet {}: {}", one_line(packet), differences.join("; "))
        }
        // A reason is ours, but may quote the trace: one line, bounded per quote.
        Verdict::Unreviewed { reason } | Verdict::NotJudgeable { reason } => escape_name(reason).into_owned(),
    };
    let mut out = format!(
        "{}:{} {} [span {}]: {} ({detail})\n",
        one_line(&judged.file),
        judged.line,
        one_line(&call.span),
        one_line(&call.span_id),
        judged.verdict.name()
    );
    for note in &judged.notes {
        out.push_str(&format!("  note: {}\n", escape_name(note)));
    }
    out
}

/// The summary line of the text output.
pub fn summary(counts: &Counts) -> String {
    format!(
        "{} spans read, {} GenAI calls: {} matched, {} mismatched, {} unreviewed, {} not judgeable\n",
        counts.spans, counts.calls, counts.matched, counts.mismatched, counts.unreviewed, counts.not_judgeable
    )
}

/// One call as a JSON object: where it was read, what the span says, the verdict.
pub fn json(judged: &Judged) -> Value {
    let call = &judged.call;
    let mut value = json!({
        "file": judged.file,
        "line": judged.line,
        "span": bounded_text(&call.span),
        "scope": bounded_text(&call.scope),
        "traceId": bounded_text(&call.trace_id),
        "spanId": bounded_text(&call.span_id),
        "model": call.model,
        "maxTokens": call.max_tokens,
    });
    if let (Value::Object(map), Ok(Value::Object(verdict))) = (&mut value, serde_json::to_value(&judged.verdict)) {
        map.extend(verdict);
        if !judged.notes.is_empty() {
            map.insert("notes".into(), json!(judged.notes));
        }
    }
    value
}

/// The JUnit case name of a call and its failure message (unreviewed, mismatched), or
/// `None` for a failure when it holds; not-judgeable calls are reported as skipped.
pub fn junit_case(judged: &Judged) -> (String, Option<String>) {
    let call = &judged.call;
    let name = format!(
        "{}:{} {} [span {}]",
        one_line(&judged.file),
        judged.line,
        one_line(&call.span),
        one_line(&call.span_id)
    );
    let failure = judged.verdict.fails().then(|| text(judged));
    (name, failure)
}

/// A string from the trace in JSON: JSON escapes it, but a 5 MB span name is still
/// not repeated whole (nor key material shown).
fn bounded_text(text: &str) -> String {
    match crate::report::looks_like_a_key(text) || text.chars().nth(crate::report::MAX_EXCERPT_CHARS).is_some() {
        true => one_line(text),
        false => text.to_owned(),
    }
}
