//! HTML, one self-contained page to keep as a CI artifact: the release report
//! (the page and its one escaping function are `report_html`'s).

use super::{not_offered, Event};
use crate::{Format, Result};

pub(super) fn render(event: Event<'_>) -> Result<String> {
    match event {
        Event::Release(report) => crate::report_html::release_report(report),
        Event::Outcomes(_)
        | Event::Verified { .. }
        | Event::RuleBook
        | Event::Evaluated { .. }
        | Event::TraceCall(_)
        | Event::TraceEnd { .. }
        | Event::Test(_) => Err(not_offered(Format::Html, &event)),
    }
}
