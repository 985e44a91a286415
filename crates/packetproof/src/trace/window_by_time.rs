//! The join window's records without trace or span ids (emitted outside their span),
//! placed by their time as `trace` places them.

use super::{digest, weight, Calls, Window};
use crate::trace::conventions::Unread;
use crate::trace::join::Gathered;
use crate::trace::record::Kind;
use std::time::Instant;

impl Window {
    /// A part without ids (records emitted outside their span), placed by its time as
    /// `trace` places it: into the held call span whose time holds it (the first, its
    /// content not comparable, when two do); a part of a call judged already when a judged
    /// call's time holds it; a call of its own, judged at once, when whole by itself (an
    /// inference-details event); else held until its span arrives or the window ends.
    pub(super) fn place_by_time(&mut self, gathered: Gathered, now: Instant, out: &mut Calls) {
        let at = gathered.time.0;
        if at == 0 {
            out.push(gathered, None);
            return;
        }
        let hosts: Vec<u64> = self
            .held
            .iter()
            .filter(|(_, h)| h.gathered.kind == Some(Kind::Span) && holds(h.gathered.time, at))
            .map(|(id, _)| *id)
            .collect();
        if let Some((&first, rest)) = hosts.split_first() {
            let mut held = self.held.remove(&first).expect("a held call");
            if !rest.is_empty() {
                let why = format!(
                    "a record without trace or span id ({}) falls within the time of {} calls: which one it belongs \
                     to cannot be told",
                    gathered.call.span,
                    hosts.len()
                );
                held.gathered.evidence.content.push(("records without ids".into(), Err(Unread::Unparsed(why))));
            }
            held.weight += weight(&gathered);
            held.parts.push(digest(&gathered));
            held.gathered.absorb_later(gathered);
            self.settle(first, held, now, out);
            return;
        }
        if self.judged_times.iter().any(|j| holds(j.time, at)) {
            out.ignored.judged += 1;
            return;
        }
        if gathered.kind == Some(Kind::Log) && !gathered.evidence.content.is_empty() {
            let parts = vec![digest(&gathered)];
            self.judge_whole(gathered, parts, now, out);
            return;
        }
        self.hold_new(gathered, now, out);
    }

    /// Whether a call span's time holds a call without ids judged already (its details
    /// event came first): the span is a part of that call.
    pub(super) fn span_of_judged(&self, gathered: &Gathered) -> bool {
        gathered.kind == Some(Kind::Span)
            && self.judged_times.iter().any(|j| j.without_ids && holds(gathered.time, j.time.0))
    }

    /// The held parts without ids whose time a call span's holds, taken into it.
    pub(super) fn take_held_within(&mut self, gathered: &mut Gathered) {
        if gathered.kind != Some(Kind::Span) || gathered.time.1 == 0 {
            return;
        }
        let within: Vec<u64> = self
            .held
            .iter()
            .filter(|(_, h)| h.gathered.keys.is_empty() && holds(gathered.time, h.gathered.time.0))
            .map(|(id, _)| *id)
            .collect();
        for id in within {
            if let Some(part) = self.held.remove(&id) {
                gathered.absorb_later(part.gathered);
            }
        }
    }
}

/// The time of a call judged whole (see [`Window::judged_times`]).
pub(super) struct Judged {
    pub(super) time: (u64, u64),
    pub(super) without_ids: bool,
    pub(super) until: Instant,
}

/// Whether the time `(start, end)` holds the instant `at` (all in Unix nanoseconds).
fn holds((start, end): (u64, u64), at: u64) -> bool {
    end > 0 && start <= at && at <= end
}
