//! JUnit XML, for CI systems: `trace`'s calls as test cases (unreviewed and
//! mismatched calls fail, and so do not-judgeable ones unless unjudged calls are
//! allowed, when they are skipped), a case for a trace without any call, and each rule
//! that did not run on a reviewed packet as a skipped case, with why. The document needs
//! its counts up front, so each call is kept as the few hundred bytes of its own
//! `<testcase>` element (names and messages are bounded excerpts), and the document is
//! written at the end around them.

use super::{not_offered, text, Event};
use crate::trace::verdict::Verdict;
use crate::{Format, Result};

/// The cases so far, as XML.
#[derive(Debug, Default)]
pub(super) struct Cases {
    body: String,
    tests: u64,
    failures: u64,
    skipped: u64,
}

impl Cases {
    fn case(&mut self, name: &str, outcome: Outcome) {
        self.tests += 1;
        let name = attribute(name);
        self.body.push_str(&format!("        <testcase name=\"{name}\" classname=\"trace\" time=\"0.000\">\n"));
        match outcome {
            Outcome::Passed => {}
            Outcome::Failed(message) => {
                self.failures += 1;
                let first = attribute(message.lines().next().unwrap_or(""));
                self.body
                    .push_str(&format!("            <failure message=\"{first}\">{}</failure>\n", text_node(&message)));
            }
            Outcome::Skipped(reason) => {
                self.skipped += 1;
                match reason {
                    Some(reason) => {
                        self.body.push_str(&format!("            <skipped message=\"{}\"/>\n", attribute(&reason)))
                    }
                    None => self.body.push_str("            <skipped/>\n"),
                }
            }
        }
        self.body.push_str("        </testcase>\n");
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
            let name = "packetproof trace";
            let (tests, failures, skipped) = (cases.tests, cases.failures, cases.skipped);
            Ok(format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{name}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" time=\"0.000\">\n    <testsuite name=\"{name}\" tests=\"{tests}\" disabled=\"{skipped}\" errors=\"0\" failures=\"{failures}\" time=\"0.000\">\n{}    </testsuite>\n</testsuites>\n",
                std::mem::take(&mut cases.body)
            ))
        }
        Event::Outcomes(_) | Event::Verified { .. } | Event::RuleBook | Event::Evaluated { .. } | Event::Release(_) => {
            Err(not_offered(Format::Junit, &event))
        }
    }
}

/// Text for an XML attribute: escaped, control characters (which XML 1.0 forbids) dropped.
fn attribute(text: &str) -> String {
    escape(text, true)
}

fn text_node(text: &str) -> String {
    escape(text, false)
}

fn escape(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}
