//! JSON: every document packetproof defines is built here, each with
//! `formatVersion` first ([`JSON_FORMAT_VERSION`]), camelCase keys and a JSON Schema
//! in `schemas/` (`tests/cli/contracts.rs` validates real output against it):
//! outcomes (`validate`, `schema --check`, `wire --check`), `verify`, the rule book
//! (`checks`), `trace` (streamed: each call written as it is judged) and
//! `release-check`. `evaluate` prints the run's evaluation.json as it is: the
//! reference evaluator's document, an interop format whose keys are not ours; and
//! `test` prints libtest's events, one a line (written by `libtest`).

use super::Event;
use crate::report::JSON_FORMAT_VERSION;
use crate::rules::Rule;
use crate::trace::verdict::Verdict;
use crate::trace::{Counts, Judged};
use crate::verify::Verification;
use crate::{canonical, Check, Finding, Outcome, Skipped};
use serde::Serialize;
use serde_json::json;
use std::borrow::Cow;

/// What a trace document has written so far: its calls follow its opening, each
/// after a separator, so memory stays flat in the number of spans.
#[derive(Debug, Default)]
pub(super) struct Stream {
    opened: bool,
}

pub(super) fn render(event: Event<'_>, stream: &mut Stream) -> String {
    match event {
        Event::Outcomes(outcomes) => document(&Outcomes { ok: Outcome::all_ok(outcomes), results: outcomes }),
        Event::Verified { found, .. } => verification(found),
        Event::RuleBook => {
            let rules: Vec<Rule> = Check::ALL.iter().map(|check| check.rule()).collect();
            document(&RuleBook { checks: &rules })
        }
        Event::Evaluated { evaluation, .. } => canonical::to_pretty(&evaluation.document),
        Event::TraceCall(judged) => {
            let separator = if stream.opened { ",\n  " } else { "\n  " };
            format!("{}{separator}{}", stream.open(), trace_call(judged))
        }
        Event::TraceEnd { counts, skipped } => format!("{}{}", stream.open(), trace_end(counts, skipped)),
        Event::Release(report) => document(report),
        Event::Test(event) => super::libtest::json(event),
    }
}

/// `body`'s members after `"formatVersion"`, pretty-printed.
fn document<T: Serialize>(body: &T) -> String {
    #[derive(Serialize)]
    struct Versioned<'a, T> {
        #[serde(rename = "formatVersion")]
        format_version: u32,
        #[serde(flatten)]
        body: &'a T,
    }
    let versioned = Versioned { format_version: JSON_FORMAT_VERSION, body };
    canonical::to_pretty(&serde_json::to_value(versioned).expect("a report serializes"))
}

/// `validate`, `schema --check`, `wire --check` (schemas/outcomes.schema.json).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Outcomes<'a> {
    ok: bool,
    results: &'a [Outcome],
}

/// One outcome (the `outcome` of schemas/outcomes.schema.json and verify.schema.json):
/// target, ok, findings, notes (when any), the checks that ran, the checks skipped
/// with the reason (when any). The one JSON rendering of an outcome.
impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Members<'a> {
            target: &'a str,
            ok: bool,
            findings: &'a [Finding],
            #[serde(skip_serializing_if = "<[String]>::is_empty")]
            notes: &'a [String],
            checks: &'a [Check],
            #[serde(skip_serializing_if = "<[Skipped]>::is_empty")]
            skipped: &'a [Skipped],
        }
        Members {
            target: &self.target,
            ok: self.ok(),
            findings: &self.findings,
            notes: &self.notes,
            checks: &self.ran,
            skipped: &self.skipped,
        }
        .serialize(serializer)
    }
}

/// `verify` (schemas/verify.schema.json): the counts, the checks that ran, each
/// check skipped somewhere with the reason, every result.
fn verification(found: &Verification) -> String {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Verified<'a> {
        ok: bool,
        checked: usize,
        hold: usize,
        failed: usize,
        checks: &'a [Check],
        skipped: &'a [Skipped],
        results: &'a [Outcome],
    }
    let (hold, failed) = found.counts();
    document(&Verified {
        ok: failed == 0,
        checked: found.outcomes.len(),
        hold,
        failed,
        checks: &found.checks,
        skipped: &found.skipped,
        results: &found.outcomes,
    })
}

/// `checks` (schemas/checks.schema.json).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RuleBook<'a> {
    checks: &'a [Rule],
}

impl Stream {
    /// The opening of the trace document, the first time only.
    fn open(&mut self) -> String {
        match std::mem::replace(&mut self.opened, true) {
            true => String::new(),
            false => format!("{{\"formatVersion\": {JSON_FORMAT_VERSION}, \"calls\": ["),
        }
    }
}

/// One traced call (schemas/trace.schema.json): where it was read, what the span
/// says, the verdict, on one line. Serialized straight from the judged call (a tree of
/// values built first was a quarter of `serve`'s CPU time under a flood); the members
/// and their order are those of the tree it replaced (`reporter::tests`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallLine<'a> {
    /// Only on a line of its own (`serve`'s findings), first.
    #[serde(skip_serializing_if = "Option::is_none")]
    format_version: Option<u32>,
    file: &'a str,
    line: usize,
    span: Cow<'a, str>,
    scope: Cow<'a, str>,
    trace_id: Cow<'a, str>,
    span_id: Cow<'a, str>,
    model: Option<Cow<'a, str>>,
    max_tokens: Option<u64>,
    #[serde(flatten)]
    verdict: &'a Verdict,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    notes: &'a [String],
}

impl<'a> CallLine<'a> {
    fn of(judged: &'a Judged, format_version: Option<u32>) -> CallLine<'a> {
        let call = &judged.call;
        CallLine {
            format_version,
            file: &judged.file,
            line: judged.line,
            span: bounded_text(&call.span),
            scope: bounded_text(&call.scope),
            trace_id: bounded_text(&call.trace_id),
            span_id: bounded_text(&call.span_id),
            model: call.model.as_deref().map(bounded_text),
            max_tokens: call.max_tokens,
            verdict: &judged.verdict,
            notes: &judged.notes,
        }
    }

    fn text(&self) -> String {
        // Strings, numbers and lists of them: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_else(|e| json!({"error": e.to_string()}).to_string())
    }
}

pub(super) fn trace_call(judged: &Judged) -> String {
    CallLine::of(judged, None).text()
}

/// One call as a line of its own, `formatVersion` first
/// (schemas/serve-finding.schema.json): what `serve` writes for each call that does
/// not hold, the same members as a call of `trace --format json`.
pub(super) fn trace_line(judged: &Judged) -> String {
    let mut text = CallLine::of(judged, Some(JSON_FORMAT_VERSION)).text();
    text.push('\n');
    text
}

/// A string from the trace in JSON: JSON escapes it, but a 5 MB span name is still
/// not repeated whole (nor key material shown).
pub(super) fn bounded_text(text: &str) -> Cow<'_, str> {
    match crate::report::looks_like_a_key(text) || text.chars().nth(crate::report::MAX_EXCERPT_CHARS).is_some() {
        true => Cow::Owned(crate::report::one_line(text)),
        false => Cow::Borrowed(text),
    }
}

/// The rest of the trace document: the counts, the rules that did not run on a
/// reviewed packet (with why), and the verdict.
fn trace_end(counts: &Counts, skipped: &[Skipped]) -> String {
    let show = |value: serde_json::Result<String>| value.unwrap_or_else(|_| "null".into());
    format!(
        "\n], \"counts\": {}, \"skipped\": {}, \"ok\": {}}}\n",
        show(serde_json::to_string(counts)),
        show(serde_json::to_string(skipped)),
        counts.ok()
    )
}
