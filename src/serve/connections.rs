//! What each open connection is doing, so that serve can close the ones that hold a
//! place without using it: a connection must send its first request within
//! `--header-timeout`, and one with no request in flight is closed after
//! `--idle-timeout` (counted from the end of its last request, whatever bytes it sends
//! meanwhile: an HTTP/2 preface, pings or a header line every few seconds hold it no
//! longer). When every place is taken, a new connection sheds the open one idle the
//! longest ([`Open::shed_one`]), so health checks, scrapes and exporters are served
//! while idle connections wait to be shed, not the other way round.

use hyper::body::Incoming;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// How long a connection may hold its place without a request in flight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    /// From the connection's start to its first request's headers (and, in HTTP/1.1,
    /// from a request's first byte to the end of its headers).
    pub(crate) header: Duration,
    /// From the end of a request to the start of the next.
    pub(crate) idle: Duration,
}

/// Why serve closed a connection, its label on /metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closed {
    /// No request's headers within `--header-timeout` of connecting.
    Header,
    /// No request within `--idle-timeout` of the last one.
    Idle,
    /// Every place was taken: the connection idle the longest made room.
    Shed,
}

impl Closed {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Closed::Header => "header_timeout",
            Closed::Idle => "idle_timeout",
            Closed::Shed => "shed",
        }
    }
}

/// One connection's requests: how many are in flight, when the last ended, and the
/// signal to close it.
pub(crate) struct Activity {
    epoch: Instant,
    in_flight: AtomicUsize,
    requests: AtomicU64,
    /// Milliseconds from `epoch` to the end of the last request (or the connection's start).
    quiet_since: AtomicU64,
    shed: Notify,
    /// A request began or ended: the deadline moved.
    changed: Notify,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            epoch: Instant::now(),
            in_flight: AtomicUsize::new(0),
            requests: AtomicU64::new(0),
            quiet_since: AtomicU64::new(0),
            shed: Notify::new(),
            changed: Notify::new(),
        }
    }

    fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.requests.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_one();
        InFlight(self.clone())
    }

    fn is_idle(&self) -> bool {
        self.in_flight.load(Ordering::SeqCst) == 0
    }

    fn quiet_since(&self) -> Instant {
        self.epoch + Duration::from_millis(self.quiet_since.load(Ordering::SeqCst))
    }

    /// When the connection is to be closed if nothing happens first, and why; `None`
    /// while a request is in flight.
    fn deadline(&self, timeouts: Timeouts) -> Option<(Instant, Closed)> {
        if !self.is_idle() {
            return None;
        }
        match self.requests.load(Ordering::SeqCst) {
            0 => Some((self.epoch + timeouts.header, Closed::Header)),
            _ => Some((self.quiet_since() + timeouts.idle, Closed::Idle)),
        }
    }

    /// Serve `connection` until it ends, is idle past its deadline, or is shed: then it is
    /// dropped (its socket closed). Why serve closed it, if serve did.
    pub(crate) async fn supervise(self: Arc<Self>, connection: impl Future, timeouts: Timeouts) -> Option<Closed> {
        let mut connection = std::pin::pin!(connection);
        loop {
            // While a request is in flight the connection is looked at again when it
            // ends (a request's own time is bounded elsewhere).
            let at = self.deadline(timeouts).map_or(Instant::now() + timeouts.idle, |(at, _)| at);
            tokio::select! {
                _ = &mut connection => return None,
                () = self.shed.notified() => return Some(Closed::Shed),
                () = self.changed.notified() => {}
                () = tokio::time::sleep_until(at) => {
                    match self.deadline(timeouts) {
                        Some((at, why)) if at <= Instant::now() => return Some(why),
                        _ => {}
                    }
                }
            }
        }
    }
}

/// A request in flight on its connection, until its answer is made.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let since = u64::try_from(self.0.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.0.quiet_since.store(since, Ordering::SeqCst);
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.0.changed.notify_one();
    }
}

/// The open connections' activities, to choose one to shed.
#[derive(Default)]
pub(crate) struct Open {
    next: AtomicU64,
    by_id: Mutex<HashMap<u64, Arc<Activity>>>,
}

impl Open {
    /// A new connection's activity, listed until the returned guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>) -> (Arc<Activity>, Listed) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity::new());
        self.lock().insert(id, activity.clone());
        (activity, Listed { open: self.clone(), id })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        self.by_id.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Tell the connection idle the longest to close; false when every one has a request in flight.
    pub(crate) fn shed_one(&self) -> bool {
        let open = self.lock();
        let idlest = open.values().filter(|a| a.is_idle()).min_by_key(|a| a.quiet_since());
        match idlest {
            Some(activity) => {
                activity.shed.notify_one();
                true
            }
            None => false,
        }
    }
}

/// A connection's entry in [`Open`], removed when it is dropped.
pub(crate) struct Listed {
    open: Arc<Open>,
    id: u64,
}

impl Drop for Listed {
    fn drop(&mut self) {
        self.open.lock().remove(&self.id);
    }
}

/// A connection's service, counting its requests in flight on its [`Activity`], and
/// giving each request the connection's [`Share`] of the reading budget.
#[derive(Clone)]
pub(crate) struct Tracked<S> {
    pub(crate) inner: S,
    pub(crate) activity: Arc<Activity>,
    pub(crate) share: Share,
}

/// The bytes of request bodies one connection holds (an HTTP/2 connection carries many
/// requests at once): at most half the reading budget, so no one connection can take
/// all of it.
#[derive(Clone, Default)]
pub(crate) struct Share(pub(crate) Arc<std::sync::atomic::AtomicUsize>);

impl<S> hyper::service::Service<hyper::Request<Incoming>> for Tracked<S>
where
    S: hyper::service::Service<hyper::Request<Incoming>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn call(&self, mut request: hyper::Request<Incoming>) -> Self::Future {
        request.extensions_mut().insert(self.share.clone());
        let in_flight = self.activity.begin();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answer = answer.await;
            drop(in_flight);
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUTS: Timeouts = Timeouts { header: Duration::from_secs(10), idle: Duration::from_secs(60) };

    #[test]
    fn a_connection_is_due_by_its_first_request_then_by_its_last_and_never_while_one_is_in_flight() {
        let activity = Arc::new(Activity::new());
        assert_eq!(activity.deadline(TIMEOUTS), Some((activity.epoch + TIMEOUTS.header, Closed::Header)));
        let request = activity.begin();
        assert_eq!(activity.deadline(TIMEOUTS), None);
        drop(request);
        let (at, why) = activity.deadline(TIMEOUTS).unwrap();
        assert_eq!(why, Closed::Idle);
        assert!(at >= activity.epoch + TIMEOUTS.idle);
    }

    #[test]
    fn the_idlest_connection_is_shed_and_none_with_a_request_in_flight() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let open = Arc::new(Open::default());
            let (busy, _a) = open.enter();
            let _request = busy.begin();
            assert!(!open.shed_one(), "a connection with a request in flight is shed");
            let (idle, _b) = open.enter();
            assert!(open.shed_one());
            let closed = idle.supervise(std::future::pending::<()>(), TIMEOUTS).await;
            assert_eq!(closed, Some(Closed::Shed));
        });
    }
}
