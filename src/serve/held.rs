//! The calls held between requests (`--join-window`): the library's join window
//! ([`packetproof::trace::window`]) behind one lock, each step under it a few map
//! operations (judging and writing findings happen after it is released); a task that
//! judges the calls whose window has ended, waking when the oldest one's ends; and, as
//! serve stops, every call still held.
//!
//! A call judged in a request (whole there, or made whole by a part held) has its finding
//! written before that request is answered, as every call did before the window. A call
//! judged later (its window ended, it made room, serve stopped) has its finding written
//! then: one that cannot be written is said on stderr, since no request waits for it.

use super::{metrics::Metrics, Shared};
use packetproof::trace::window::{Calls, Remembered, Window};
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The least time between two rounds of the expiry task: calls whose windows end this
/// close together are judged in one round.
const ROUND: Duration = Duration::from_millis(50);

pub(crate) struct Held {
    window: Mutex<Window>,
    span: Duration,
}

impl Held {
    /// Hold calls up to `span` (zero: none, each request is judged alone), at most `capacity`.
    pub(crate) fn new(span: Duration, capacity: usize) -> Held {
        Held { window: Mutex::new(Window::new(span, capacity)), span }
    }

    fn lock(&self) -> MutexGuard<'_, Window> {
        // A panic while the lock was held left the window whole: each step changes it
        // only once it has decided.
        self.window.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The calls of one request: those to judge now are handed back, the rest held.
    pub(crate) fn offer(&self, calls: Calls, metrics: &Metrics) -> Calls {
        let now = Instant::now();
        let mut window = self.lock();
        let calls = window.offer(calls, now);
        metrics.held(window.held());
        drop(window);
        metrics.ignored(calls.ignored());
        calls
    }

    /// The request's findings were not kept: its calls are judged again when it is sent again.
    pub(crate) fn forget(&self, remembered: &Remembered) {
        self.lock().forget(remembered);
    }

    /// The held calls whose window has ended by `now`, or all of them (`None`: stopping).
    fn take(&self, now: Option<Instant>, metrics: &Metrics) -> Calls {
        let mut window = self.lock();
        let calls = match now {
            Some(now) => window.expire(now),
            None => window.drain(),
        };
        metrics.held(window.held());
        calls
    }
}

/// Judge the held calls whose window has ended by `now` (all of them: `None`), writing
/// each finding and then counting the call, so a call counted on /metrics has its finding
/// written. How many were judged; the first finding that could not be written.
pub(super) fn judge_held(shared: &Shared, now: Option<Instant>) -> packetproof::Result<usize> {
    let calls = shared.held.take(now, &shared.metrics);
    let taken = calls.len();
    if taken == 0 {
        return Ok(0);
    }
    let mut lost = None;
    super::body::session(shared).judge(calls, &mut |judged| {
        if let Err(e) = shared.findings.keep(judged) {
            say_lost(&e);
            lost.get_or_insert(e);
        }
        shared.metrics.call(judged);
        Ok(())
    })?;
    lost.map_or(Ok(taken), Err)
}

/// A finding of a held call that could not be written, said since no request waits for it.
pub(super) fn say_lost(e: &packetproof::Error) {
    let _ = writeln!(std::io::stderr().lock(), "packetproof serve: a held call's finding was not written: {e}");
}

/// Judge held calls as their windows end, until `stopped` says serve stops (its sender
/// is dropped); a round under way is finished first.
pub(super) async fn expire_until_stopped(shared: Arc<Shared>, mut stopped: tokio::sync::watch::Receiver<()>) {
    let span = shared.held.span;
    if span.is_zero() {
        return;
    }
    loop {
        let now = Instant::now();
        // A call held from now on ends after now + span: waking then at the latest
        // misses none.
        let next = shared.held.lock().next_deadline().unwrap_or(now + span);
        let wake = next.max(now + ROUND);
        tokio::select! {
            _ = tokio::time::sleep_until(wake.into()) => {}
            _ = stopped.changed() => return,
        }
        let Ok(judging) = shared.judging.clone().acquire_owned().await else { return };
        let work = shared.clone();
        let _ = tokio::task::spawn_blocking(move || {
            let _judging = judging;
            judge_held(&work, Some(Instant::now()))
        })
        .await;
    }
}
