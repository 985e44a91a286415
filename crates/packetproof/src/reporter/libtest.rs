//! libtest's formats, for `test`: pretty (a `test NAME ... ok` line per trial),
//! terse (a character per trial), each ending with the failures and the
//! `test result:` line, and JSON events (`json` renders them with this module's
//! [`json`]). The lines are the ones libtest-mimic prints, so tools that read
//! `cargo test`'s output read the gate's; an ignored trial says why in every
//! format (JSON: libtest's `message`).
//!
//! With many workers a pretty line is written when its trial ends, whole (libtest
//! does the same), so lines never interleave. Names, reasons and messages have
//! their control characters escaped; JSON escapes them itself.

use crate::conformance::runner::{Record, RunEvent, Summary};
use crate::report::{escape_controls, escape_name};
use crate::Format;
use anstyle::{AnsiColor, Color, Style};
use serde_json::json;

/// The pretty or terse printer: the widest name (pretty lines align their verdicts)
/// and the failures, listed after the last trial.
#[derive(Debug)]
pub(super) struct Printer {
    terse: bool,
    color: bool,
    name_width: usize,
    failures: Vec<(String, String)>,
}

impl Printer {
    pub(super) fn new(terse: bool, color: bool) -> Printer {
        Printer { terse, color, name_width: 0, failures: Vec::new() }
    }

    /// Pretty or terse.
    pub(super) fn format(&self) -> Format {
        match self.terse {
            true => Format::Terse,
            false => Format::Pretty,
        }
    }

    pub(super) fn render(&mut self, event: RunEvent<'_>) -> String {
        match event {
            RunEvent::Listed(names) => listed(names),
            RunEvent::Started(names) => {
                self.name_width = names.iter().map(|n| escape_name(n).chars().count()).max().unwrap_or(0);
                let s = if names.len() == 1 { "" } else { "s" };
                format!("\nrunning {} test{s}\n", names.len())
            }
            RunEvent::TrialStarted(_) => String::new(),
            RunEvent::TrialFinished(record) => self.finished(record),
            RunEvent::Finished(summary) => self.failures() + &self.summary(summary),
        }
    }

    fn finished(&mut self, record: &Record) -> String {
        let name = escape_name(&record.name).into_owned();
        if let Some(message) = &record.failure {
            self.failures.push((name.clone(), escape_controls(message).into_owned()));
        }
        let style = self.style(record);
        match self.terse {
            true => format!("{style}{}{style:#}", terse_char(record)),
            false => format!("test {name:<width$} ... {style}{}{style:#}\n", verdict(record), width = self.name_width),
        }
    }

    /// libtest's account of the failures: each message under its trial's name, then the names.
    fn failures(&self) -> String {
        if self.failures.is_empty() {
            return String::new();
        }
        let mut out = String::from("\nfailures:\n\n");
        for (name, message) in &self.failures {
            out.push_str(&format!("---- {name} ----\n{message}\n\n"));
        }
        out.push_str("\nfailures:\n");
        self.failures.iter().for_each(|(name, _)| out.push_str(&format!("    {name}\n")));
        out
    }

    fn summary(&self, summary: &Summary) -> String {
        let (style, verdict) = match summary.failed {
            0 => (self.paint(AnsiColor::Green), "ok"),
            _ => (self.paint(AnsiColor::Red), "FAILED"),
        };
        format!(
            "\ntest result: {style}{verdict}{style:#}. {} passed; {} failed; {} ignored; 0 measured; \
             {} filtered out; finished in {:.2}s\n\n",
            summary.passed,
            summary.failed,
            summary.ignored,
            summary.filtered_out,
            summary.time.as_secs_f64()
        )
    }

    /// libtest's colours: green passed, red failed, yellow ignored.
    fn style(&self, record: &Record) -> Style {
        self.paint(match (&record.failure, &record.skipped) {
            (Some(_), _) => AnsiColor::Red,
            (None, Some(_)) => AnsiColor::Yellow,
            (None, None) => AnsiColor::Green,
        })
    }

    fn paint(&self, color: AnsiColor) -> Style {
        match self.color {
            true => Style::new().fg_color(Some(Color::Ansi(color))),
            false => Style::new(),
        }
    }
}

/// `ok`, `FAILED`, or `ignored (why)`.
fn verdict(record: &Record) -> String {
    match (&record.failure, &record.skipped) {
        (Some(_), _) => "FAILED".to_owned(),
        (None, Some(reason)) => format!("ignored ({})", escape_name(reason)),
        (None, None) => "ok".to_owned(),
    }
}

fn terse_char(record: &Record) -> char {
    match (&record.failure, &record.skipped) {
        (Some(_), _) => 'F',
        (None, Some(_)) => 'i',
        (None, None) => '.',
    }
}

/// `--list`: `name: test` lines, in every format (as libtest-mimic prints them).
fn listed(names: &[String]) -> String {
    names.iter().map(|name| format!("{}: test\n", escape_name(name))).collect()
}

/// One event as libtest's JSON line (`--list` is plain lines, as in libtest-mimic).
pub(super) fn json(event: RunEvent<'_>) -> String {
    let line = match event {
        RunEvent::Listed(names) => return listed(names),
        RunEvent::Started(names) => json!({ "type": "suite", "event": "started", "test_count": names.len() }),
        RunEvent::TrialStarted(name) => json!({ "type": "test", "event": "started", "name": name }),
        RunEvent::TrialFinished(record) => trial_json(record),
        RunEvent::Finished(summary) => json!({
            "type": "suite",
            "event": if summary.failed == 0 { "ok" } else { "failed" },
            "passed": summary.passed,
            "failed": summary.failed,
            "ignored": summary.ignored,
            "measured": 0,
            "filtered_out": summary.filtered_out,
            "exec_time": summary.time.as_secs_f64(),
        }),
    };
    libtest_line(&line)
}

/// A finished trial: `ok`, `failed` with libtest's `stdout`, or `ignored` with the reason as `message`.
fn trial_json(record: &Record) -> serde_json::Value {
    let name = record.name.as_str();
    match (&record.failure, &record.skipped) {
        (Some(message), _) => {
            json!({ "type": "test", "name": name, "event": "failed", "stdout": format!("Error: \"{message}\"\n") })
        }
        (None, Some(reason)) => json!({ "type": "test", "name": name, "event": "ignored", "message": reason }),
        (None, None) => json!({ "type": "test", "name": name, "event": "ok" }),
    }
}

/// An object on one line spaced as libtest spaces it: `{ "type": "test", "name": … }`.
fn libtest_line(value: &serde_json::Value) -> String {
    let members: Vec<String> = value
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, value)| format!("{}: {value}", serde_json::Value::from(key.as_str())))
        .collect();
    format!("{{ {} }}\n", members.join(", "))
}

#[cfg(test)]
mod tests;
