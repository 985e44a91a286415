//! The outcome of every trial as it ran, and the JUnit XML report built from them
//! (`packetproof test --junit FILE`). libtest-mimic prints its own pretty, terse
//! and JSON formats but has no JUnit output and hands back only counts, so each
//! trial records its own outcome here, and the XML is written by hand: a handful
//! of elements with escaped text, which no crate we depend on already does.

use libtest_mimic::{Completion, Failed};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One trial that ran.
#[derive(Debug, Clone)]
pub struct Record {
    pub name: String,
    pub time: Duration,
    /// `None`: passed; `Some(message)`: failed with that message.
    pub failure: Option<String>,
    /// `Some(reason)`: the check could not apply, so the trial was ignored as it ran.
    pub skipped: Option<String>,
}

/// The records of a run, shared by its trials.
#[derive(Debug, Clone, Default)]
pub struct Records(Arc<Mutex<Vec<Record>>>);

impl Records {
    /// Run `trial`, record its outcome (a panic is a failure, as libtest-mimic reports it) and return it.
    pub fn run(&self, name: String, trial: impl FnOnce() -> Result<Completion, Failed>) -> Result<Completion, Failed> {
        let start = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(trial)).unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "the trial panicked".to_owned());
            Err(Failed::from(format!("panicked: {message}")))
        });
        let failure = outcome.as_ref().err().map(|f| f.message().unwrap_or("failed").to_owned());
        let skipped = match &outcome {
            Ok(Completion::Ignored { reason }) => Some(reason.clone().unwrap_or_default()),
            _ => None,
        };
        let record = Record { name, time: start.elapsed(), failure, skipped };
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(record);
        outcome
    }

    /// The records so far, in trial-name order.
    pub fn snapshot(&self) -> Vec<Record> {
        let mut records = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        records.sort_by(|a, b| a.name.cmp(&b.name));
        records
    }
}

/// A JUnit XML document for one suite: the trials that ran, and `skipped` (the
/// ignored trials the filter selected).
pub fn to_xml(suite: &str, records: &[Record], skipped: &[String]) -> String {
    let failures = records.iter().filter(|r| r.failure.is_some()).count();
    let ignored = records.iter().filter(|r| r.skipped.is_some()).count();
    let total_time: f64 = records.iter().map(|r| r.time.as_secs_f64()).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{}\" time=\"{total_time:.3}\"",
        records.len() + skipped.len(),
        skipped.len() + ignored
    );
    let suite = escape(suite);
    xml.push_str(&format!("<testsuites name=\"{suite}\" {counts}>\n  <testsuite name=\"{suite}\" {counts}>\n"));
    for record in records {
        let (class, name) = split(&record.name);
        let head = format!(
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
            escape(class),
            escape(name),
            record.time.as_secs_f64()
        );
        match (&record.failure, &record.skipped) {
            (None, Some(reason)) => {
                xml.push_str(&format!("{head}>\n      <skipped message=\"{}\"/>\n    </testcase>\n", escape(reason)))
            }
            (None, None) => xml.push_str(&format!("{head}/>\n")),
            (Some(message), _) => {
                let first = message.lines().next().unwrap_or("");
                xml.push_str(&format!(
                    "{head}>\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                    escape(first),
                    escape(message)
                ));
            }
        }
    }
    for name in skipped {
        let (class, name) = split(name);
        xml.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\" time=\"0.000\">\n      <skipped/>\n    </testcase>\n",
            escape(class),
            escape(name)
        ));
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// `fixture::packet::checksum` → (`fixture`, `packet::checksum`); corpus checks keep their own prefix.
fn split(name: &str) -> (&str, &str) {
    match name.split_once("::") {
        Some((class, rest)) if rest.contains("::") => (class, rest),
        _ => ("corpus", name),
    }
}

/// Text and attribute values: the five XML entities, and no control characters
/// XML 1.0 forbids (replaced by U+FFFD so a report always parses).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_outcomes_and_panics_and_escapes_the_report() {
        let records = Records::default();
        assert!(records.run("a::packet::checksum".into(), || Ok(Completion::Completed)).is_ok());
        assert!(records.run("b::packet::contract".into(), || Err("bad <x> & \"y\"\u{1}".into())).is_err());
        let why = "the packet's promptVersions are not this suite's templates";
        assert!(records.run("c::packet::renders-from-input".into(), || Ok(Completion::ignored_with(why))).is_ok());
        let panicked = records.run("corpus::snapshot-parity".into(), || panic!("boom"));
        assert!(panicked.err().unwrap().message().unwrap().contains("boom"));
        let xml = to_xml("packetproof", &records.snapshot(), &["corpus::branch-coverage".to_owned()]);
        assert!(xml.contains("tests=\"5\" failures=\"2\" errors=\"0\" skipped=\"2\""), "{xml}");
        assert!(xml.contains(&format!("<skipped message=\"{}\"/>", escape(why))), "{xml}");
        assert!(xml.contains("<testcase classname=\"a\" name=\"packet::checksum\""), "{xml}");
        assert!(xml.contains("message=\"bad &lt;x&gt; &amp; &quot;y&quot;\u{FFFD}\""), "{xml}");
        assert!(
            xml.contains("classname=\"corpus\" name=\"corpus::branch-coverage\" time=\"0.000\">\n      <skipped/>"),
            "{xml}"
        );
    }
}
