//! The JUnit XML report of a run (`packetproof test --junit FILE`), from the
//! records the runner returns; `quick-junit` (nextest's writer) writes it.

use super::runner::Record;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// A JUnit XML document for one suite: the trials that ran. Control characters,
/// which XML 1.0 forbids, are dropped from the text, so a report always parses.
pub fn to_xml(suite_name: &str, records: &[Record]) -> String {
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
    use crate::conformance::runner::{Completion, Trial};

    #[test]
    fn records_outcomes_and_panics_and_escapes_the_report() {
        let why = "not applicable: the packet's promptVersions are not this suite's templates";
        let trials = vec![
            Trial::test("a::packet::checksum".into(), || Ok(Completion::Completed.into())),
            Trial::test("b::packet::contract".into(), || Err("bad <x> & \"y\"\u{1}".into())),
            Trial::test("c::packet::renders-from-input".into(), move || Ok(Completion::ignored_with(why).into())),
            Trial::test("corpus::snapshot-parity".into(), || panic!("boom")),
            Trial::ignored("corpus::branch-coverage".into(), "not required yet"),
        ];
        let records: Vec<Record> = trials.into_iter().map(Trial::run).collect();
        assert!(records[3].failure.as_deref().unwrap().contains("boom"));
        let xml = to_xml("packetproof", &records);
        assert!(xml.contains("tests=\"5\" disabled=\"2\" errors=\"0\" failures=\"2\""), "{xml}");
        assert!(xml.contains("<skipped message=\"not applicable: the packet&apos;s promptVersions"), "{xml}");
        assert!(xml.contains("<testcase name=\"packet::checksum\" classname=\"a\""), "{xml}");
        assert!(xml.contains("message=\"bad &lt;x&gt; &amp; &quot;y&quot;\""), "{xml}");
        assert!(!xml.contains('\u{1}'), "{xml}");
        assert!(xml.contains("<skipped message=\"not required yet\"/>"), "{xml}");
    }
}
