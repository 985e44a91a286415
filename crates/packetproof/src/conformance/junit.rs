//! The outcome of every trial as it ran, and the JUnit XML report built from them
//! (`packetproof test --junit FILE`). libtest-mimic prints its own pretty, terse
//! and JSON formats but has no JUnit output and hands back only counts, so each
//! trial records its own outcome here, and `quick-junit` (nextest's writer) turns
//! them into the report.

use libtest_mimic::{Completion, Failed};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
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
    /// What the report says beside a trial's verdict: a check that passed only under a
    /// suite setting (`Passed::notes`).
    pub notes: Vec<String>,
}

/// A trial that ran to its end: libtest's completion, and the notes every report
/// shows beside its verdict (libtest's formats have no place for them).
pub(crate) struct Passed {
    pub(crate) completion: Completion,
    pub(crate) notes: Vec<String>,
}

impl From<Completion> for Passed {
    fn from(completion: Completion) -> Passed {
        Passed { completion, notes: Vec::new() }
    }
}

/// The records of a run, shared by its trials.
#[derive(Debug, Clone, Default)]
pub struct Records(Arc<Mutex<Vec<Record>>>);

impl Records {
    /// Run `trial`, record its outcome (a panic is a failure, as libtest-mimic reports it) and return it.
    pub(crate) fn run(
        &self,
        name: String,
        trial: impl FnOnce() -> Result<Passed, Failed>,
    ) -> Result<Completion, Failed> {
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
            Ok(Passed { completion: Completion::Ignored { reason }, .. }) => Some(reason.clone().unwrap_or_default()),
            _ => None,
        };
        let (outcome, notes) = match outcome {
            Ok(Passed { completion, notes }) => (Ok(completion), notes),
            Err(failed) => (Err(failed), Vec::new()),
        };
        let record = Record { name, time: start.elapsed(), failure, skipped, notes };
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(record);
        outcome
    }

    /// The records so far, in trial-name order.
    /// Why the trial named `name` was ignored as it ran, once it has.
    pub fn skipped_reason(&self, name: &str) -> Option<String> {
        let records = self.0.lock().unwrap_or_else(|e| e.into_inner());
        records.iter().find(|r| r.name == name).and_then(|r| r.skipped.clone())
    }

    pub fn snapshot(&self) -> Vec<Record> {
        let mut records = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        records.sort_by(|a, b| a.name.cmp(&b.name));
        records
    }
}

/// A JUnit XML document for one suite: the trials that ran, and `skipped` (the
/// ignored trials the filter selected). Control characters, which XML 1.0 forbids,
/// are dropped from the text, so a report always parses.
pub fn to_xml(suite_name: &str, records: &[Record], skipped: &[String]) -> String {
    let mut suite = TestSuite::new(suite_name);
    for record in records {
        let status = match (&record.failure, &record.skipped) {
            (None, None) => TestCaseStatus::success(),
            (None, Some(reason)) => {
                let mut status = TestCaseStatus::skipped();
                status.set_message(reason.as_str());
                status
            }
            (Some(message), _) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(message.lines().next().unwrap_or("")).set_description(message.as_str());
                status
            }
        };
        let mut case = test_case(&record.name, status, record.time);
        if !record.notes.is_empty() {
            case.set_system_out(record.notes.join("\n"));
        }
        suite.add_test_case(case);
    }
    for name in skipped {
        suite.add_test_case(test_case(name, TestCaseStatus::skipped(), Duration::ZERO));
    }
    let total: Duration = records.iter().map(|r| r.time).sum();
    suite.set_time(total);
    let mut report = Report::new(suite_name);
    report.set_time(total).add_test_suite(suite);
    // Serialising into memory fails only on an I/O error, which a String cannot raise.
    report.to_string().expect("a JUnit report serialises into memory")
}

fn test_case(trial: &str, status: TestCaseStatus, time: Duration) -> TestCase {
    let (class, name) = split(trial);
    let mut case = TestCase::new(name, status);
    case.set_classname(class).set_time(time);
    case
}

/// `fixture::packet::checksum` → (`fixture`, `packet::checksum`); corpus checks keep their own prefix.
fn split(name: &str) -> (&str, &str) {
    match name.split_once("::") {
        Some((class, rest)) if rest.contains("::") => (class, rest),
        _ => ("corpus", name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_outcomes_and_panics_and_escapes_the_report() {
        let records = Records::default();
        assert!(records.run("a::packet::checksum".into(), || Ok(Completion::Completed.into())).is_ok());
        assert!(records.run("b::packet::contract".into(), || Err("bad <x> & \"y\"\u{1}".into())).is_err());
        let why = "not applicable: the packet's promptVersions are not this suite's templates";
        assert!(records
            .run("c::packet::renders-from-input".into(), || Ok(Completion::ignored_with(why).into()))
            .is_ok());
        let panicked = records.run("corpus::snapshot-parity".into(), || panic!("boom"));
        assert!(panicked.err().unwrap().message().unwrap().contains("boom"));
        let xml = to_xml("packetproof", &records.snapshot(), &["corpus::branch-coverage".to_owned()]);
        assert!(xml.contains("tests=\"5\" disabled=\"2\" errors=\"0\" failures=\"2\""), "{xml}");
        assert!(xml.contains("<skipped message=\"not applicable: the packet&apos;s promptVersions"), "{xml}");
        assert!(xml.contains("<testcase name=\"packet::checksum\" classname=\"a\""), "{xml}");
        assert!(xml.contains("message=\"bad &lt;x&gt; &amp; &quot;y&quot;\""), "{xml}");
        assert!(!xml.contains('\u{1}'), "{xml}");
        assert!(
            xml.contains(
                "<testcase name=\"corpus::branch-coverage\" classname=\"corpus\" time=\"0.000\">\n            <skipped/>"
            ),
            "{xml}"
        );
    }
}
