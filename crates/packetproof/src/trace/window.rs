//! One call from records sent in separate export requests (`packetproof serve`): an
//! instrumentation may put a call's span in the traces export and its messages in the
//! logs export (content captured as events), and the SDK sends each on its own. A
//! request's records are joined within it ([`super::Session::gather`]); a call that is
//! whole there (its span and its messages) is judged at once, and a part that is not (a
//! span without content, content without its span) is held here by its trace and span
//! id until the rest arrives, or until the join window ends, and is then judged with
//! what it has, saying what did not arrive. So the same records give the same verdicts
//! whether `trace` reads them from files or `serve` is sent them.
//!
//! Bounded: at most `capacity` calls are held (when full, the oldest is judged to make
//! room), each at most [`MAX_HELD_BYTES`] of evidence in at most [`MAX_PARTS`] parts
//! (a heavier one is judged as it is), and what is held is what `join` keeps (digests
//! and bounded excerpts, never a record; the whole texts too when a gate's templates
//! need them).
//!
//! A call judged whole is remembered for one window (at most `capacity` of them, and at
//! most [`MAX_REMEMBERED_BYTES`] of evidence): a part sent again (an exporter's retry,
//! the same bytes) is ignored, as is a part a held call already has, counted by
//! [`Calls::ignored`]; any other part under its ids (a details event without content
//! after the span that carried it, or another call reusing its trace and span id) is
//! joined to it and the call judged again, as `trace` judges the same records read
//! together. [`super::Session::judge`] hands that call on only when its verdict is not
//! the one given before, so a call is reported once, and a call that reuses a judged
//! call's ids to hide is reported as `trace` reports it.
//!
//! The window reads no clock: each step is given its instant, so it is tested without
//! waiting, and a caller holding it behind a lock keeps each step short (judging happens
//! after, on the [`Calls`] handed back).

use super::join::{Gathered, Key};
use super::record::Kind;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

/// The most evidence one held call keeps (estimated bytes); a heavier call is judged as
/// it is rather than held.
pub const MAX_HELD_BYTES: usize = 64 << 10;
/// The most requests one held call's records may come in; past that it is judged.
pub const MAX_PARTS: usize = 64;
/// The most evidence kept of the calls judged whole in the last window (estimated
/// bytes); past it the oldest is forgotten, and a later part of it is a call of its own.
pub const MAX_REMEMBERED_BYTES: usize = 64 << 20;

/// Why a call was judged before all its records arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Expiry {
    /// The join window ended.
    Window,
    /// The window was full: the oldest call made room.
    Capacity,
    /// The call was too large to hold: judged as it arrived.
    Size,
    /// The receiver stopped.
    Stop,
}

impl Expiry {
    /// Its name on /metrics.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// A call to judge, and why now when it is not whole.
pub(crate) struct Ready {
    pub(crate) gathered: Gathered,
    pub(crate) expiry: Option<(Expiry, String)>,
    /// A call judged whole already, judged again with a later part: as it was before
    /// (boxed: rare, and a call ready to judge is moved whole on its way).
    pub(crate) before: Option<Box<Gathered>>,
}

/// Calls to judge ([`super::Session::judge`]): those one request's records make
/// ([`super::Session::gather`]), or those a [`Window`] hands back.
#[derive(Default)]
pub struct Calls {
    pub(crate) ready: Vec<Ready>,
    ignored: Ignored,
    /// The keys of the calls judged whole here, remembered by the window.
    remembered: Vec<Key>,
}

/// Parts of calls not judged: of a call judged already, or one a held call already has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ignored {
    pub judged: u64,
    pub repeated: u64,
}

/// The keys a window remembers for the calls of a [`Calls`], to forget if their
/// findings could not be kept (the request is sent again: its calls must be judged again).
#[derive(Debug, Default)]
pub struct Remembered(Vec<Key>);

impl Calls {
    pub(crate) fn of(gathered: Vec<Gathered>) -> Calls {
        Calls {
            ready: gathered.into_iter().map(|gathered| Ready { gathered, expiry: None, before: None }).collect(),
            ..Calls::default()
        }
    }

    pub fn len(&self) -> usize {
        self.ready.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ready.is_empty()
    }

    /// The parts the window did not take as calls.
    pub fn ignored(&self) -> Ignored {
        self.ignored
    }

    /// What to hand back to [`Window::forget`] when these calls' findings were not kept.
    pub fn remembered(&self) -> Remembered {
        Remembered(self.remembered.clone())
    }

    fn push(&mut self, gathered: Gathered, expiry: Option<(Expiry, String)>) {
        self.ready.push(Ready { gathered, expiry, before: None });
    }
}

/// A call waiting for the rest of its records.
struct Held {
    deadline: Instant,
    gathered: Gathered,
    /// The digest of each part taken, so a part sent again is not taken twice.
    parts: Vec<[u8; 32]>,
    weight: usize,
}

/// A call judged whole, remembered until `until`.
struct Settled {
    until: Instant,
    gathered: Gathered,
    parts: Vec<[u8; 32]>,
    weight: usize,
}

/// The calls held, by arrival; see the module's documentation.
pub struct Window {
    span: Duration,
    capacity: usize,
    /// By arrival number: the first is the oldest, and the first to end.
    held: BTreeMap<u64, Held>,
    by_key: HashMap<Key, u64>,
    /// The calls judged whole, by the order judged (the first ends first), and by key.
    settled: BTreeMap<u64, Settled>,
    judged: HashMap<Key, u64>,
    settled_weight: usize,
    /// The times of calls judged whole, until their window ends: a span's (start, end),
    /// or a record's without ids (its time twice, marked), which place later records.
    judged_times: VecDeque<Judged>,
    next: u64,
    /// The latest instant given: time never goes back here, so deadlines keep arrival order.
    now: Option<Instant>,
}

impl Window {
    /// Hold calls up to `span` (zero: hold nothing, every call is judged as it is read),
    /// at most `capacity` of them (at least one).
    pub fn new(span: Duration, capacity: usize) -> Window {
        Window {
            span,
            capacity: capacity.max(1),
            held: BTreeMap::new(),
            by_key: HashMap::new(),
            settled: BTreeMap::new(),
            judged: HashMap::new(),
            settled_weight: 0,
            judged_times: VecDeque::new(),
            next: 0,
            now: None,
        }
    }

    /// How many calls are held.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// When the oldest held call's window ends.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.held.first_key_value().map(|(_, held)| held.deadline)
    }

    fn clock(&mut self, now: Instant) -> Instant {
        let now = self.now.map_or(now, |last| last.max(now));
        self.now = Some(now);
        now
    }

    /// Take the calls one request's records make, at `now`: those whole, or made whole
    /// by a held part, are handed back to judge (and so are calls pushed out to make
    /// room); the rest are held.
    pub fn offer(&mut self, calls: Calls, now: Instant) -> Calls {
        if self.span.is_zero() {
            return calls;
        }
        let now = self.clock(now);
        self.forget_judged_before(now);
        let mut out = Calls::default();
        for Ready { mut gathered, expiry, .. } in calls.ready {
            if expiry.is_some() {
                out.push(gathered, expiry);
                continue;
            }
            if gathered.keys.is_empty() {
                self.place_by_time(gathered, now, &mut out);
                continue;
            }
            if let Some(&id) = gathered.keys.iter().find_map(|k| self.judged.get(k)) {
                self.judge_again(id, gathered, &mut out);
                continue;
            }
            if self.span_of_judged(&gathered) {
                out.ignored.judged += 1;
                continue;
            }
            self.take_held_within(&mut gathered);
            let mut ids: Vec<u64> = gathered.keys.iter().filter_map(|k| self.by_key.get(k).copied()).collect();
            ids.sort_unstable();
            ids.dedup();
            let Some((&first, rest)) = ids.split_first() else {
                self.take_new(gathered, now, &mut out);
                continue;
            };
            let digest = digest(&gathered);
            let mut held = self.held.remove(&first).expect("a key names a held call");
            if held.parts.contains(&digest) {
                out.ignored.repeated += 1;
                self.held.insert(first, held);
                continue;
            }
            // Its records may join two calls held apart (a nested span's, its parent's).
            for id in rest {
                if let Some(other) = self.held.remove(id) {
                    held.weight += other.weight;
                    held.parts.extend(other.parts);
                    held.gathered.absorb_later(other.gathered);
                }
            }
            held.weight += weight(&gathered);
            held.parts.push(digest);
            held.gathered.absorb_later(gathered);
            self.settle(first, held, now, &mut out);
        }
        out
    }

    /// A call none of whose keys is held: judged when whole, else held.
    fn take_new(&mut self, gathered: Gathered, now: Instant, out: &mut Calls) {
        if gathered.is_whole() {
            let parts = vec![digest(&gathered)];
            self.judge_whole(gathered, parts, now, out);
            return;
        }
        self.hold_new(gathered, now, out);
    }

    /// A part no held call has, held as a call of its own until its window ends.
    fn hold_new(&mut self, gathered: Gathered, now: Instant, out: &mut Calls) {
        let held =
            Held { deadline: now + self.span, weight: weight(&gathered), parts: vec![digest(&gathered)], gathered };
        let id = self.next;
        self.next += 1;
        self.settle(id, held, now, out);
    }

    /// A whole call is handed back, and remembered for a window.
    fn judge_whole(&mut self, gathered: Gathered, parts: Vec<[u8; 32]>, now: Instant, out: &mut Calls) {
        if gathered.time.0 > 0 {
            let without_ids = gathered.keys.is_empty();
            let time = if without_ids { (gathered.time.0, gathered.time.0) } else { gathered.time };
            self.judged_times.push_back(Judged { time, without_ids, until: now + self.span });
            while self.judged_times.len() > self.capacity {
                self.judged_times.pop_front();
            }
        }
        let id = self.next;
        self.next += 1;
        for key in &gathered.keys {
            self.judged.insert(*key, id);
            out.remembered.push(*key);
        }
        let weight = weight(&gathered);
        let settled = Settled { until: now + self.span, parts, weight, gathered: gathered.clone() };
        self.settled.insert(id, settled);
        self.settled_weight += weight;
        while self.settled.len() > self.capacity || self.settled_weight > MAX_REMEMBERED_BYTES {
            self.forget_oldest_judged();
        }
        out.push(gathered, None);
    }

    /// A later part of a call judged whole: ignored when it was taken already (sent
    /// again), else joined to the call, which is handed back to judge again.
    fn judge_again(&mut self, id: u64, part: Gathered, out: &mut Calls) {
        let settled = self.settled.get_mut(&id).expect("a judged key names a remembered call");
        let digest = digest(&part);
        if settled.parts.contains(&digest) {
            out.ignored.judged += 1;
            return;
        }
        let before = settled.gathered.clone();
        let added = weight(&part);
        settled.parts.push(digest);
        settled.weight += added;
        settled.gathered.absorb_later(part);
        let gathered = settled.gathered.clone();
        self.settled_weight += added;
        for key in &gathered.keys {
            self.judged.entry(*key).or_insert(id);
            out.remembered.push(*key);
        }
        out.ready.push(Ready { gathered, expiry: None, before: Some(Box::new(before)) });
        while self.settled_weight > MAX_REMEMBERED_BYTES {
            self.forget_oldest_judged();
        }
    }

    /// A call whole or too heavy is handed back; any other is held (making room first).
    fn settle(&mut self, id: u64, held: Held, now: Instant, out: &mut Calls) {
        if held.gathered.is_whole() {
            self.unkey(&held.gathered);
            self.judge_whole(held.gathered, held.parts, now, out);
            return;
        }
        if held.weight > MAX_HELD_BYTES || held.parts.len() > MAX_PARTS {
            self.unkey(&held.gathered);
            let why = format!(
                "judged as it arrived: a call held for the rest of its records keeps at most {} KiB of them, from at \
                 most {MAX_PARTS} requests, and this one has more; {}",
                MAX_HELD_BYTES >> 10,
                missing(&held.gathered)
            );
            out.push(held.gathered, Some((Expiry::Size, why)));
            return;
        }
        while self.held.len() >= self.capacity {
            let Some((_, oldest)) = self.held.pop_first() else { break };
            self.unkey(&oldest.gathered);
            let why = format!(
                "judged before the join window ended, to make room (at most {} calls are held): {}",
                self.capacity,
                missing(&oldest.gathered)
            );
            out.push(oldest.gathered, Some((Expiry::Capacity, why)));
        }
        for key in &held.gathered.keys {
            self.by_key.insert(*key, id);
        }
        self.held.insert(id, held);
    }

    fn unkey(&mut self, gathered: &Gathered) {
        for key in &gathered.keys {
            self.by_key.remove(key);
        }
    }

    /// Hand back every held call whose window has ended by `now`.
    pub fn expire(&mut self, now: Instant) -> Calls {
        let now = self.clock(now);
        self.forget_judged_before(now);
        let mut out = Calls::default();
        while let Some(entry) = self.held.first_entry() {
            if entry.get().deadline > now {
                break;
            }
            let held = entry.remove();
            self.unkey(&held.gathered);
            let why =
                format!("judged when the join window ({}) ended: {}", seconds(self.span), missing(&held.gathered));
            out.push(held.gathered, Some((Expiry::Window, why)));
        }
        out
    }

    /// Hand back every held call (the receiver stops).
    pub fn drain(&mut self) -> Calls {
        let mut out = Calls::default();
        while let Some((_, held)) = self.held.pop_first() {
            self.unkey(&held.gathered);
            let why =
                format!("judged as the receiver stopped, before the join window ended: {}", missing(&held.gathered));
            out.push(held.gathered, Some((Expiry::Stop, why)));
        }
        out
    }

    /// Forget that these calls were judged: their findings were not kept, and their
    /// records, sent again, are to be judged again.
    pub fn forget(&mut self, remembered: &Remembered) {
        for key in &remembered.0 {
            if let Some(id) = self.judged.get(key).copied() {
                self.forget_judged(id);
            }
        }
    }

    fn forget_judged_before(&mut self, now: Instant) {
        while self.judged_times.front().is_some_and(|j| j.until <= now) {
            self.judged_times.pop_front();
        }
        while self.settled.first_key_value().is_some_and(|(_, settled)| settled.until <= now) {
            self.forget_oldest_judged();
        }
    }

    fn forget_oldest_judged(&mut self) {
        if let Some(&id) = self.settled.keys().next() {
            self.forget_judged(id);
        }
    }

    fn forget_judged(&mut self, id: u64) {
        if let Some(settled) = self.settled.remove(&id) {
            self.settled_weight -= settled.weight;
            for key in &settled.gathered.keys {
                // A key judged again later belongs to a later call.
                if self.judged.get(key) == Some(&id) {
                    self.judged.remove(key);
                }
            }
        }
    }
}

/// What a call judged before it was whole lacks, for its note.
fn missing(gathered: &Gathered) -> String {
    let span = gathered.kind == Some(Kind::Span);
    let content = !gathered.evidence.content.is_empty();
    match (span, content) {
        (true, _) => "no record with its messages (log events in a logs export) arrived for its span".into(),
        (false, true) => "its span did not arrive; judged on its events".into(),
        (false, false) => "neither its span nor its messages arrived".into(),
    }
}

fn seconds(span: Duration) -> String {
    match span.subsec_nanos() {
        0 => format!("{} s", span.as_secs()),
        _ => format!("{} s", span.as_secs_f64()),
    }
}

/// A part's digest: its record and evidence as `Debug` writes them (digests and
/// excerpts), which is the same for the same records in one process.
fn digest(gathered: &Gathered) -> [u8; 32] {
    struct Hashing(Sha256);
    impl std::fmt::Write for Hashing {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.update(s.as_bytes());
            Ok(())
        }
    }
    let mut hashing = Hashing(Sha256::new());
    let _ = std::fmt::write(
        &mut hashing,
        format_args!("{:?}{:?}{}{:?}", gathered.kind, gathered.call, gathered.file, gathered.evidence),
    );
    hashing.0.finalize().into()
}

/// What a part of a call keeps, estimated in bytes: its names, values and messages.
fn weight(gathered: &Gathered) -> usize {
    let evidence = &gathered.evidence;
    let said = |said: &[super::conventions::Said]| -> usize {
        said.iter().map(|s| s.source.len() + value_weight(&s.value) + 32).sum()
    };
    // A text recorded cut short is kept whole (what was recorded of it): its size counts.
    let message =
        |m: &super::genai::Message| m.role.len() + m.text.weight() + m.cut.as_ref().map_or(0, |c| c.len()) + 16;
    let content: usize = evidence
        .content
        .iter()
        .map(|(source, messages)| {
            source.len() + messages.as_ref().map_or(64, |ms| ms.iter().map(message).sum::<usize>()) + 32
        })
        .sum();
    let system: usize =
        evidence.system_only.iter().map(|(source, m)| source.len() + m.as_ref().map_or(64, message) + 32).sum();
    let call = &gathered.call;
    256 + gathered.file.len()
        + call.span.len()
        + call.scope.len()
        + call.trace_id.len()
        + call.span_id.len()
        + 16 * gathered.keys.len()
        + said(&evidence.model)
        + said(&evidence.max_tokens)
        + content
        + system
        + evidence.conflicts.iter().map(String::len).sum::<usize>()
}

fn value_weight(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    match value {
        Value::String(s) => s.len() + 8,
        Value::Array(items) => items.iter().map(value_weight).sum::<usize>() + 8,
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + value_weight(v)).sum::<usize>() + 8,
        _ => 8,
    }
}

// The window is held behind a lock and shared between threads.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Window>();
    send::<Calls>();
};

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;

#[path = "window_by_time.rs"]
mod by_time;
use by_time::Judged;
