//! JUnit XML, for CI systems: `trace`'s calls as test cases (unreviewed and
//! mismatched calls fail, not-judgeable ones are skipped) and each rule that did
//! not run on a reviewed packet as a skipped case, with why. The document needs
//! its counts up front, so the calls are kept (one small record each) and written
//! at the end, by the writer `test --junit` uses (`conformance::junit`).

use super::{not_offered, text, Event};
use crate::conformance::junit::{self, Record};
use crate::trace::verdict::Verdict;
use crate::{Format, Result};
use std::time::Duration;

/// The cases so far.
#[derive(Debug, Default)]
pub(super) struct Cases {
    records: Vec<Record>,
    skipped: Vec<String>,
}

pub(super) fn render(event: Event<'_>, cases: &mut Cases) -> Result<String> {
    match event {
        Event::TraceCall(judged) => {
            let name = text::trace_call_name(judged);
            match judged.verdict {
                Verdict::NotJudgeable { .. } => cases.skipped.push(name),
                Verdict::Matched { .. }
                | Verdict::Mismatched { .. }
                | Verdict::Unreviewed { .. }
                | Verdict::Unvouched { .. }
                | Verdict::Conforms { .. } => {
                    let failure = judged.verdict.fails().then(|| text::trace_call(judged));
                    cases.records.push(Record {
                        name,
                        time: Duration::ZERO,
                        failure,
                        skipped: None,
                        notes: Vec::new(),
                    });
                }
            }
            Ok(String::new())
        }
        Event::TraceEnd { skipped, .. } => {
            let mut records = std::mem::take(&mut cases.records);
            for rule in skipped {
                let (name, reason) = (rule.check.to_string(), Some(rule.reason.clone()));
                records.push(Record { name, time: Duration::ZERO, failure: None, skipped: reason, notes: Vec::new() });
            }
            Ok(junit::to_xml("packetproof trace", &records, &cases.skipped))
        }
        Event::Outcomes(_) | Event::Verified { .. } | Event::RuleBook | Event::Evaluated { .. } | Event::Release(_) => {
            Err(not_offered(Format::Junit, &event))
        }
    }
}
