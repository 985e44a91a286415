//! Text, for a terminal: every event as lines. Each part that comes from input (a
//! target, a finding, a note, a reason, a span name) has its control characters
//! escaped here, so a hostile name cannot drive the terminal; colours are ANSI
//! styles, present only when the reporter was asked for them.

use super::{not_offered, Event};
use crate::report::{escape_controls, escape_name, one_line};
use crate::run::evaluate::Evaluation;
use crate::trace::verdict::Verdict;
use crate::trace::{Counts, Judged};
use crate::verify::Verification;
use crate::{Check, Format, Outcome, Result, Skipped};
use anstyle::{AnsiColor, Color, Style};
use std::path::Path;

/// The styles of a text report: colours on a terminal, none (empty strings) elsewhere.
#[derive(Debug, Clone, Copy)]
pub(super) struct Paint {
    failed: Style,
    holds: Style,
    dim: Style,
}

impl Paint {
    pub(super) fn new(color: bool) -> Paint {
        match color {
            true => Paint {
                failed: Style::new().fg_color(Some(Color::Ansi(AnsiColor::Red))).bold(),
                holds: Style::new().fg_color(Some(Color::Ansi(AnsiColor::Green))),
                dim: Style::new().dimmed(),
            },
            false => Paint { failed: Style::new(), holds: Style::new(), dim: Style::new() },
        }
    }

    /// The verdict's style: green when it holds, bold red when it failed.
    fn verdict(self, ok: bool) -> Style {
        if ok {
            self.holds
        } else {
            self.failed
        }
    }
}

pub(super) fn render(event: Event<'_>, paint: Paint) -> Result<String> {
    Ok(match event {
        Event::Outcomes(outcomes) => outcomes.iter().map(|o| outcome(o, paint)).collect(),
        Event::Verified { found, verbose } => verification(found, verbose, paint),
        Event::RuleBook => escape_controls(&rule_book()).into_owned(),
        Event::Evaluated { evaluation, report, skipped: not_run } => {
            evaluated(evaluation, report, paint) + &skipped(not_run, "  ", paint)
        }
        Event::TraceCall(judged) => escape_controls(&trace_call(judged)).into_owned(),
        Event::TraceEnd { counts, skipped: not_run } => {
            escape_controls(&trace_summary(counts)).into_owned() + &skipped_line(not_run, paint)
        }
        Event::Release(report) => escape_controls(&report.text()).into_owned(),
        Event::Test(_) => return Err(not_offered(Format::Text, &event)),
    })
}

/// An outcome: `target: ok|FAILED (n finding(s))`, then its findings, notes and the
/// checks that did not apply, indented. The one text rendering of an outcome.
fn outcome(outcome: &Outcome, paint: Paint) -> String {
    let (style, dim) = (paint.verdict(outcome.ok()), paint.dim);
    let verdict = if outcome.ok() { "ok" } else { "FAILED" };
    let target = escape_controls(&outcome.target);
    let mut text = format!("{target}: {style}{verdict}{style:#} ({} finding(s))\n", outcome.findings.len());
    for finding in &outcome.findings {
        text.push_str(&format!("  {}\n", escape_controls(&finding.to_string())));
    }
    for note in &outcome.notes {
        text.push_str(&format!("  {dim}note: {}{dim:#}\n", escape_controls(note)));
    }
    text + &skipped(&outcome.skipped, "  ", paint)
}

/// `[check] not applicable: why`, one line each.
pub(super) fn skipped(skipped: &[Skipped], indent: &str, paint: Paint) -> String {
    let dim = paint.dim;
    skipped.iter().map(|s| format!("{indent}{dim}{}{dim:#}\n", escape_controls(&s.to_string()))).collect()
}

/// The rules that did not run on the reviewed packets, one line per reason: the checks a
/// reason stops are named together (`[packet::regenerates, packet::branch-isolation] not
/// applicable: …`), so a trace's calls stay the report and every reason is still said.
pub(super) fn skipped_line(skipped: &[Skipped], paint: Paint) -> String {
    let dim = paint.dim;
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for s in skipped {
        match reasons.iter_mut().find(|(reason, _)| *reason == s.reason) {
            Some((_, checks)) if !checks.contains(&s.check.name()) => checks.push(s.check.name()),
            Some(_) => {}
            None => reasons.push((&s.reason, vec![s.check.name()])),
        }
    }
    reasons
        .iter()
        .map(|(reason, checks)| {
            let line = format!("[{}] not applicable: {reason}", checks.join(", "));
            format!("{dim}{}{dim:#}\n", escape_controls(&line))
        })
        .collect()
}

/// `verify`: the failures (every target when `verbose`), each check that could not
/// apply somewhere (once per reason), then `N checked: H hold, F failed`.
fn verification(found: &Verification, verbose: bool, paint: Paint) -> String {
    let (hold, failed) = found.counts();
    let mut text: String = found.outcomes.iter().filter(|o| verbose || !o.ok()).map(|o| outcome(o, paint)).collect();
    text.push_str(&skipped(&found.skipped, "", paint));
    let summary = paint.verdict(failed == 0);
    text.push_str(&format!("{summary}{} checked: {hold} hold, {failed} failed{summary:#}\n", found.outcomes.len()));
    text
}

/// The rule book: every check, what it reads, what it needs before it can apply,
/// what it proves, and (for a check no fixture can exercise) the test that proves it
/// can fail.
fn rule_book() -> String {
    let mut out = String::new();
    for rule in Check::ALL.iter().map(|check| check.rule()) {
        let needs: Vec<String> = rule.needs.iter().map(ToString::to_string).collect();
        let needs = if needs.is_empty() { "nothing".to_owned() } else { needs.join(", ") };
        out.push_str(&format!("{}\n  reads: {}\n  needs: {needs}\n  proves: {}\n", rule.name, rule.reads, rule.proves));
        if let Some(test) = rule.tested_by {
            out.push_str(&format!("  tested by: {test}\n"));
        }
        if let crate::rules::Skip::Never(why) = rule.skip {
            out.push_str(&format!("  never skipped: {why}\n"));
        }
        if !rule.not_due_at.is_empty() {
            out.push_str(&format!("  not yet due at: {}\n", crate::rules::stages(rule.not_due_at)));
        }
    }
    out
}

/// `evaluate`: a verdict line for the evaluation written to `report`, then one line per failure.
fn evaluated(evaluation: &Evaluation, report: &Path, paint: Paint) -> String {
    let style = paint.verdict(evaluation.ok);
    let verdict = if evaluation.ok { "ok" } else { "FAILED" };
    let report = escape_controls(&report.display().to_string()).into_owned();
    let mut text = format!("{report}: {style}{verdict}{style:#} ({} failure(s))\n", evaluation.failures.len());
    for failure in &evaluation.failures {
        text.push_str(&format!("  [{}] {}\n", failure.stage, escape_controls(&failure.message)));
    }
    for note in &evaluation.notes {
        text.push_str(&format!("  note: {}\n", escape_controls(note)));
    }
    text
}

/// A traced call: `file:line span-name [span id]: verdict (detail)`, then its notes.
/// What the trace file says is quoted one line each, bounded (`report::one_line`), so
/// a span name cannot fake a verdict or summary line.
pub(super) fn trace_call(judged: &Judged) -> String {
    let detail = match &judged.verdict {
        Verdict::Matched { packet } => format!("packet {}", one_line(packet)),
        Verdict::Mismatched { packet, differences } => {
            let differences: Vec<String> = differences.iter().map(|d| escape_name(d).into_owned()).collect();
            match packet {
                Some(packet) => format!("packet {}: {}", one_line(packet), differences.join("; ")),
                None => differences.join("; "),
            }
        }
        // A reason is ours, but may quote the trace: one line, bounded per quote.
        Verdict::Unreviewed { reason } | Verdict::NotJudgeable { reason } => escape_name(reason).into_owned(),
        Verdict::Unvouched { packet, reason } => format!("packet {}: {}", one_line(packet), escape_name(reason)),
        // Slots by name and length only: their values are production data.
        Verdict::Conforms { templates, slots } => {
            let templates: Vec<String> = templates
                .iter()
                .map(|t| format!("{} {}", one_line(&t.name), t.version.get(..19).unwrap_or(&t.version)))
                .collect();
            let slots: Vec<String> =
                slots.iter().map(|s| format!("{} ({} chars)", one_line(&s.name), s.length)).collect();
            format!("template {}; slots: {}", templates.join(" + "), slots.join(", "))
        }
    };
    let mut out = format!("{}: {} ({detail})\n", trace_call_name(judged), judged.verdict.name());
    for note in &judged.notes {
        out.push_str(&format!("  note: {}\n", escape_name(note)));
    }
    out
}

/// Where a traced call was read and which span it is: `file:line span-name [span id]`.
pub(super) fn trace_call_name(judged: &Judged) -> String {
    let call = &judged.call;
    format!("{}:{} {} [span {}]", one_line(&judged.file), judged.line, one_line(&call.span), one_line(&call.span_id))
}

/// The summary line of a trace, and why it fails when nothing fails but unjudged calls.
fn trace_summary(counts: &Counts) -> String {
    let gate = match counts.held_to_gate() {
        true => format!(
            ", {} conform to a vouched template, {} unvouched",
            counts.conforms.unwrap_or(0),
            counts.unvouched.unwrap_or(0)
        ),
        false => String::new(),
    };
    let logs = match counts.log_records {
        0 => String::new(),
        n => format!(" and {n} log records"),
    };
    let mut out = format!(
        "{} spans{logs} read, {} GenAI calls: {} matched, {} mismatched, {} unreviewed, {} not judgeable{gate}\n",
        counts.spans, counts.calls, counts.matched, counts.mismatched, counts.unreviewed, counts.not_judgeable
    );
    if let Some(why) = unjudged(counts) {
        out.push_str(&format!("FAILED: {why}\n"));
    }
    out
}

/// Why a trace fails for what it could not judge (`None`: it does not, or it may).
pub(super) fn unjudged(counts: &Counts) -> Option<String> {
    if counts.unjudged_allowed() {
        return None;
    }
    if counts.calls() == 0 {
        return Some(
            "0 GenAI calls: nothing to hold to the packets. packetproof reads the OpenTelemetry GenAI conventions \
             (Python and Node instrumentations, LiteLLM, Logfire), OpenLLMetry, OpenInference, Langfuse, the Vercel AI SDK \
             and the other families of docs/production.md, in traces and logs exports; give the export of the instrumented \
             client. An instrumentation that patched nothing exports no GenAI span: a version it does not support, an import \
             that failed, an SDK whose telemetry is not registered (docs/production.md, \"What a fresh install meets\") \
             (--allow-unjudged passes a trace without calls)"
                .to_owned(),
        );
    }
    (counts.not_judgeable > 0).then(|| {
        format!(
            "{} of {} GenAI calls not judgeable: nothing passes unjudged (each call says why; --allow-unjudged passes them)",
            counts.not_judgeable,
            counts.calls()
        )
    })
}
