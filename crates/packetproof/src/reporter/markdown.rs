//! Markdown, for a pull-request comment: the release report (written by
//! `release::render`, which says the same things as its text form).

use super::{not_offered, Event};
use crate::report::escape_controls;
use crate::{Format, Result};

pub(super) fn render(event: Event<'_>) -> Result<String> {
    match event {
        Event::Release(report) => Ok(escape_controls(&report.markdown()).into_owned()),
        Event::Outcomes(_)
        | Event::Verified { .. }
        | Event::RuleBook
        | Event::Evaluated { .. }
        | Event::TraceCall(_)
        | Event::TraceEnd { .. }
        | Event::Test(_) => Err(not_offered(Format::Markdown, &event)),
    }
}
