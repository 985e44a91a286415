//! JUnit XML, for CI systems: `trace`'s calls as test cases (unreviewed and
//! mismatched calls fail, and so do not-judgeable ones unless unjudged calls are
//! allowed, when they are skipped), a case for a trace without any call, and each rule
//! that did not run on a reviewed packet as a skipped case, with why. The document needs
//! its counts up front, so each call is kept as a small test case (names and messages
//! are bounded excerpts), and the document is written at the end, by `quick-junit`, as
//! `packetproof test --junit` writes its own.

use super::{not_offered, text, Event};
use crate::trace::verdict::Verdict;
use crate::{Format, Result};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// The report's name, and its one suite's.
const NAME: &str = "packetproof trace";

/// The cases so far.
#[derive(Debug)]
pub(super) struct Cases(TestSuite);

impl Default for Cases {
    fn default() -> Cases {
        Cases(TestSuite::new(NAME))
    }
}

impl Cases {
    fn case(&mut self, name: &str, outcome: Outcome) {
        let status = match outcome {
            Outcome::Passed => TestCaseStatus::success(),
            Outcome::Failed(message) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(message.lines().next().unwrap_or("")).set_description(message);
                status
            }
            Outcome::Skipped(reason) => {
                let mut status = TestCaseStatus::skipped();
                if let Some(reason) = reason {
                    status.set_message(reason);
                }
                status
            }
        };
        let mut case = TestCase::new(name, status);
        case.set_classname("trace").set_time(Duration::ZERO);
        self.0.add_test_case(case);
    }

    /// The document, `quick-junit` (nextest's writer) counting and escaping.
    fn report(&mut self) -> String {
        let mut suite = std::mem::replace(&mut self.0, TestSuite::new(NAME));
        suite.set_time(Duration::ZERO);
        let mut report = Report::new(NAME);
        report.set_time(Duration::ZERO).add_test_suite(suite);
        // Serialising into memory fails only on an I/O error, which a String cannot raise.
        report.to_string().expect("a JUnit report serialises into memory")
    }
}

enum Outcome {
    Passed,
    Failed(String),
    Skipped(Option<String>),
}

pub(super) fn render(event: Event<'_>, cases: &mut Cases) -> Result<String> {
    match event {
        Event::TraceCall(judged) => {
            let name = text::trace_call_name(judged);
            let outcome = match (&judged.verdict, judged.fails()) {
                (_, true) => Outcome::Failed(text::trace_call(judged)),
                (Verdict::NotJudgeable { .. }, false) => Outcome::Skipped(None),
                _ => Outcome::Passed,
            };
            cases.case(&name, outcome);
            Ok(String::new())
        }
        Event::TraceEnd { counts, skipped } => {
            if let Some(why) = text::unjudged(counts).filter(|_| counts.calls() == 0) {
                cases.case("no GenAI call", Outcome::Failed(why));
            }
            for rule in skipped {
                cases.case(&rule.check.to_string(), Outcome::Skipped(Some(rule.reason.clone())));
            }
            Ok(cases.report())
        }
        Event::Outcomes(_)
        | Event::Verified { .. }
        | Event::RuleBook
        | Event::Evaluated { .. }
        | Event::Release(_)
        | Event::Test(_) => Err(not_offered(Format::Junit, &event)),
    }
}
