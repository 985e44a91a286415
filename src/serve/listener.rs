//! The listener, with a bound on open connections (and each connection served with
//! bounded HTTP/2 windows and streams, and closed when it holds its place unused,
//! [`serve`]): each connection holds one of `--max-connections` places until it closes.
//! Each open connection costs its buffers whether or not it sends a request, so without
//! this bound a client opening connections without end would grow memory without end;
//! when every place is taken, the connection idle the longest is shed for the new one
//! ([`super::connections`]), and only when every connection has a request in flight do
//! new ones wait in the kernel's backlog, unaccepted.

use super::connections::{Activity, Listed, Open, Timeouts, Tracked};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a new connection waits for a place before an idle connection is looked for again.
const SHED_AGAIN: Duration = Duration::from_millis(100);

pub(crate) struct Bounded {
    listener: TcpListener,
    places: Arc<Semaphore>,
    open: Arc<Open>,
    on_error: Box<dyn Fn() + Send>,
}

impl Bounded {
    /// `on_error` counts each accept that failed.
    pub(crate) fn new(listener: TcpListener, max_connections: usize, on_error: Box<dyn Fn() + Send>) -> Bounded {
        Bounded { listener, places: Arc::new(Semaphore::new(max_connections)), open: Arc::default(), on_error }
    }

    /// A place for a new connection: a free one, or one an idle connection gives up.
    async fn place(&self) -> OwnedSemaphorePermit {
        if let Ok(place) = self.places.clone().try_acquire_owned() {
            return place;
        }
        loop {
            // When every connection has a request in flight none is shed: look again
            // shortly, as their requests end.
            self.open.shed_one();
            let place = tokio::time::timeout(SHED_AGAIN, self.places.clone().acquire_owned()).await;
            // The semaphore is never closed, so acquiring cannot fail.
            if let Ok(place) = place {
                return place.expect("the connection places stay open");
            }
        }
    }

    /// The next connection, once it has a place: it is accepted first, then given a
    /// place, since one waiting in the backlog is what makes an idle one worth shedding.
    async fn accept(&mut self) -> Accepted {
        let mut pause = FIRST_PAUSE;
        loop {
            match self.listener.accept().await {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    let place = self.place().await;
                    let (activity, listed) = self.open.enter();
                    return Accepted { stream, activity, listed, place };
                }
                // Out of file descriptors, or a connection reset before it was
                // accepted: counted, and waited out a little longer each time it
                // recurs instead of spinning on the error.
                Err(_) => {
                    (self.on_error)();
                    tokio::time::sleep(pause).await;
                    pause = next_pause(pause);
                }
            }
        }
    }
}

/// The first wait after a failed accept, and the longest.
const FIRST_PAUSE: Duration = Duration::from_millis(5);
const LONGEST_PAUSE: Duration = Duration::from_secs(1);

/// The wait after `pause` when the error recurs: twice as long, up to [`LONGEST_PAUSE`].
fn next_pause(pause: Duration) -> Duration {
    (pause * 2).min(LONGEST_PAUSE)
}

/// An accepted connection, its activity and its place. The place moves into the
/// connection's task and is given back when the task ends.
struct Accepted {
    stream: TcpStream,
    activity: Arc<Activity>,
    listed: Listed,
    place: OwnedSemaphorePermit,
}

/// What one HTTP/2 connection may send before serve reads it (its flow-control windows),
/// and how many requests it may have open at once: a request not yet admitted is held
/// in these buffers, so they bound what such requests hold (hyper's defaults are 1 MiB
/// and 200). 64 KiB is HTTP/2's own initial window.
const H2_WINDOW: u32 = 64 * 1024;
const H2_STREAMS: u32 = 32;
/// Streams a client may open and reset before serve answers them (rapid reset), and
/// streams serve may reset for a client's errors, before the connection is closed.
const H2_RESETS: usize = 32;
/// The most header bytes one request may send, in HTTP/2 (its HEADERS and CONTINUATION
/// frames together) and in HTTP/1.1 (hyper's read buffer, which holds the headers).
const MAX_HEADER_BYTES: u32 = 64 * 1024;

/// Serve `app` on every connection `listener` accepts (HTTP/1.1, and HTTP/2 without TLS,
/// told apart by the preface) until `stop` ends; then stop accepting (the listening
/// socket is closed), let every connection finish the requests it has taken, and return.
/// As axum's `serve` does, with the bounds above, which it does not let be set, and the
/// connections that hold a place unused closed ([`super::connections`]); `closed` is
/// told why serve closed each one it closed.
pub(crate) async fn serve(
    mut listener: Bounded,
    app: axum::Router,
    timeouts: Timeouts,
    closed: impl Fn(super::connections::Closed) + Clone + Send + 'static,
    stop: impl std::future::Future<Output = ()>,
) {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(timeouts.header)
        .max_buf_size(MAX_HEADER_BYTES as usize);
    builder
        .http2()
        .timer(TokioTimer::new())
        .initial_connection_window_size(H2_WINDOW)
        .initial_stream_window_size(H2_WINDOW)
        .max_concurrent_streams(H2_STREAMS)
        .max_pending_accept_reset_streams(H2_RESETS)
        .max_local_error_reset_streams(H2_RESETS)
        .max_header_list_size(MAX_HEADER_BYTES);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Accepted { stream, activity, listed, place } = accepted;
                let share = super::connections::Share::default();
                let service =
                    Tracked { inner: TowerToHyperService::new(app.clone()), activity: activity.clone(), share };
                let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service).into_owned();
                let connection = graceful.watch(connection);
                let closed = closed.clone();
                tokio::spawn(async move {
                    // A client that goes away mid-request is no error of serve's.
                    if let Some(why) = activity.supervise(connection, timeouts).await {
                        closed(why);
                    }
                    // Moved here, so the place is taken until the connection ends.
                    drop((listed, place));
                });
            }
            () = &mut stop => break,
        }
    }
    drop(listener);
    graceful.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::task::Context;

    /// A failed accept is waited out longer each time it recurs, never more than a second.
    #[test]
    fn accept_errors_back_off_to_a_second() {
        let pauses: Vec<Duration> =
            std::iter::successors(Some(FIRST_PAUSE), |p| Some(next_pause(*p))).take(10).collect();
        assert_eq!(&pauses[..3], [Duration::from_millis(5), Duration::from_millis(10), Duration::from_millis(20)]);
        assert!(pauses.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(pauses[9], LONGEST_PAUSE);
    }

    #[test]
    fn a_connection_past_the_bound_waits_until_one_closes() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let mut bounded = Bounded::new(listener, 1, Box::new(|| {}));
            let _a = TcpStream::connect(addr).await.unwrap();
            let first = bounded.accept().await;
            let _b = TcpStream::connect(addr).await.unwrap();
            let mut second = std::pin::pin!(bounded.accept());
            let mut cx = Context::from_waker(std::task::Waker::noop());
            assert!(second.as_mut().poll(&mut cx).is_pending(), "a second connection is accepted past the bound");
            drop(first);
            let _ = second.await;
        });
    }
}
