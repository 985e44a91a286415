//! `packetproof serve`: `trace`'s judgement, live. An OTLP/HTTP receiver (`POST
//! /v1/traces` and `/v1/logs`, protobuf or JSON, plain or gzip), and OTLP/gRPC on the
//! same port ([`grpc`]), that the OpenTelemetry SDK exporters and the Collector send to; each GenAI call is judged by
//! the library ([`packetproof::trace`], the one rule book) as it arrives. Calls that
//! do not hold are written as JSON lines ([`findings`]), every verdict is counted on
//! `/metrics` ([`metrics`]).
//!
//! Memory is bounded whatever clients send: at most `--max-connections` connections
//! are open ([`listener`]); a body is read, and decompressed, up to `--max-body` bytes
//! (otherwise 413), each byte counted against a budget of what the admitted requests may
//! hold as it arrives (past it, 429 with `Retry-After`); a request is admitted once its
//! body is whole, only while fewer than `--queue` plus `--workers` are waiting or
//! judged (otherwise 429). A slow body holds the bytes it sent, never a place. Between requests serve keeps counters and the calls held
//! for the rest of their records ([`held`]: a span in one request, its messages as log
//! events in another), at most `--join-capacity` of them for at most `--join-window`;
//! instances scale out behind the Collector routing by trace id.
//!
//! SIGTERM, Ctrl-C or SIGHUP: the listener closes, requests already taken are judged and
//! answered, the calls still held are judged with what arrived, every finding is on disk
//! (each line is flushed as it is written), exit 0.

mod body;
mod connections;
mod findings;
mod grpc;
mod held;
mod http;
mod listener;
mod metrics;
mod refusals;
mod status;

use packetproof::trace::packets::Packets;
use packetproof::{Error, Invocation, Result, Status};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Where to listen, HOST:PORT (port 0: a free port). The bound address is printed on
    /// stderr once the receiver takes requests.
    #[arg(long, value_name = "ADDR")]
    pub listen: String,
    /// The reviewed packets: packet files, or folders searched for them (as `trace` reads them).
    #[arg(long, required = true, num_args = 1.., value_name = "PATH")]
    pub packets: Vec<PathBuf>,
    /// Append each call that does not hold (unreviewed, mismatched, not judgeable) to FILE as
    /// a JSON line: a new file or one of findings, never another kind; stdout (a pipe, a
    /// device) when not given.
    #[arg(long, value_name = "FILE")]
    pub findings: Option<PathBuf>,
    /// The largest request body taken, as sent and once decompressed; larger is refused (413,
    /// which exporters do not retry: each refusal is said on stderr). The default is the
    /// OpenTelemetry Collector's: an SDK's default batch (512 spans) of prompts of tens of KB.
    #[arg(long, value_name = "BYTES", default_value_t = 20 << 20, value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    pub max_body: u64,
    /// Requests held waiting beside those being judged (`--workers`); past that a request
    /// is refused with 429 and Retry-After, so the exporter retries later.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub queue: usize,
    /// Connections open at once; past that, a new connection sheds the one idle the longest
    /// (none is shed while it has a request in flight: then new ones wait unaccepted).
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// A connection's first request must send its headers within DURATION of connecting, and
    /// in HTTP/1.1 every request's headers within DURATION of their first byte; otherwise the
    /// connection is closed. DURATION: seconds, or a number with `ms` or `s`.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration)]
    pub header_timeout: Duration,
    /// A connection with no request in flight for DURATION after its last one is closed
    /// (HTTP/1.1 keep-alive and HTTP/2 alike, whatever else it sends).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = duration)]
    pub idle_timeout: Duration,
    /// The longest a request's body may take to arrive (DURATION: seconds, or a number with
    /// `ms` or `s`); past it the request is refused with 408, which exporters retry.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration)]
    pub body_timeout: Duration,
    /// The bytes a second a body must average after its first 5 seconds (each byte buys
    /// 1/RATE of a second more, as Apache's mod_reqtimeout counts it); slower, the request
    /// is refused with 408: a trickling body holds its connection and its bytes no longer.
    #[arg(long, value_name = "BYTES", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub body_min_rate: u64,
    /// Requests judged at once (judging is CPU work); the machine's cores when not given.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub workers: Option<u32>,
    #[command(flatten)]
    pub gate: crate::flags::GateFlags,
    /// How long a call's records are awaited when they come in separate requests (its span in the
    /// traces, its messages as log events in the logs): a call not whole in one request is held up
    /// to SECONDS for the rest, then judged with what arrived. 0: each request is judged alone.
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub join_window: u64,
    /// The most calls held for the rest of their records; when full, the oldest is judged with
    /// what it has.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub join_capacity: u64,
    #[command(flatten)]
    pub require: super::flags::RequireArg,
    #[command(flatten)]
    pub suffix: super::flags::SuffixArg,
}

/// What every request shares: the packets, the bounds, the calls held, the findings and the counters.
pub(crate) struct Shared {
    pub(crate) packets: Packets,
    /// The gate every verdict is held to (`--gate`), and the settings its template check reads.
    pub(crate) vouching: Option<packetproof::trace::vouched::Vouching>,
    pub(crate) config: Invocation,
    /// What a call must record (`--require`).
    pub(crate) options: packetproof::trace::Options,
    pub(crate) max_body: usize,
    /// How fast a body must arrive (`--body-timeout`, `--body-min-rate`).
    pub(crate) pace: http::Pace,
    /// Requests admitted (their body whole, waiting or judged): `--queue` plus one per worker.
    pub(crate) admitted: Arc<tokio::sync::Semaphore>,
    /// The bytes of bodies being read or held, in bytes: as many as the admitted
    /// requests may hold (`--queue` plus `--workers`, times `--max-body`). A body takes
    /// its bytes as they arrive, so a slow one holds what it sent, not a place.
    pub(crate) reading: Arc<tokio::sync::Semaphore>,
    /// The reading budget's size, in bytes (one connection may hold half of it).
    pub(crate) reading_budget: usize,
    /// Requests being judged at once: one per core (judging is CPU work).
    pub(crate) judging: Arc<tokio::sync::Semaphore>,
    /// Calls not whole in their request, held for the rest of their records.
    pub(crate) held: held::Held,
    pub(crate) findings: findings::Sink,
    pub(crate) metrics: metrics::Metrics,
    pub(crate) refusals: refusals::Refusals,
}

/// Load the packets, bind, serve until SIGTERM or Ctrl-C. Exit 0 after a clean stop;
/// 2 when the packets cannot be read, the findings file cannot be opened, or the
/// address cannot be bound.
pub fn run(settings: &super::settings::Settings, args: &ServeArgs) -> Result<Status> {
    let config = &settings.load()?;
    let packets = Packets::load(&args.packets, config)?;
    // On stderr: stdout may be the findings' JSON lines.
    for line in packetproof::reporter::not_applicable_line(packets.skipped(), false).lines() {
        super::print::note(line);
    }
    let vouching = super::provenance::vouching(
        args.gate.file.as_deref(),
        &args.gate.trusted_keys,
        args.gate.max_age,
        config,
        &packets,
    )?;
    let inputs: Vec<&std::path::Path> =
        args.packets.iter().chain(&args.gate.file).chain(&args.gate.trusted_keys).map(PathBuf::as_path).collect();
    let findings = findings::Sink::open(args.findings.as_deref(), config.settings(), &inputs)?;
    let models = packets.models().into_iter().map(str::to_owned).collect();
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    let workers = args.workers.map_or(cores, |n| n as usize);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .worker_threads(cores)
        .max_blocking_threads(workers)
        .build()
        .map_err(|e| Error::Internal(format!("the async runtime did not start: {e}")))?;
    let reading_budget = ((args.queue + workers) * args.max_body as usize).min(tokio::sync::Semaphore::MAX_PERMITS);
    let shared = Arc::new(Shared {
        packets,
        vouching,
        config: config.clone(),
        options: packetproof::trace::Options { allow_unjudged: false, require: args.require.required() },
        max_body: args.max_body as usize,
        pace: http::Pace { timeout: args.body_timeout, min_rate: args.body_min_rate },
        admitted: Arc::new(tokio::sync::Semaphore::new(args.queue + workers)),
        reading: Arc::new(tokio::sync::Semaphore::new(reading_budget)),
        reading_budget,
        judging: Arc::new(tokio::sync::Semaphore::new(workers)),
        held: held::Held::new(Duration::from_secs(args.join_window), args.join_capacity as usize),
        findings,
        metrics: metrics::Metrics::new(models),
        refusals: refusals::Refusals::default(),
    });
    let timeouts = connections::Timeouts { header: args.header_timeout, idle: args.idle_timeout };
    runtime.block_on(serve(&args.listen, args.max_connections as usize, timeouts, shared.clone()))?;
    // Every request is answered: the calls still held are judged with what arrived.
    let judged = held::judge_held(&shared, None);
    shared.findings.flush()?;
    let judged = judged?;
    if judged > 0 {
        let _ = writeln!(
            std::io::stderr().lock(),
            "packetproof serve: {judged} calls held for the rest of their records were judged with what arrived"
        );
    }
    let served = shared.metrics.summary();
    let _ = writeln!(std::io::stderr().lock(), "packetproof serve: stopped after {served}");
    Ok(Status::Holds)
}

async fn serve(
    listen: &str,
    max_connections: usize,
    timeouts: connections::Timeouts,
    shared: Arc<Shared>,
) -> Result<()> {
    // Installed before the "listening" line: a SIGTERM sent as soon as it is read
    // stops serve cleanly instead of killing it.
    let stop = stop_signal().map_err(|e| Error::Internal(format!("the stop signals could not be installed: {e}")))?;
    let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| Error::io(listen, e))?;
    let bound = listener.local_addr().map_err(|e| Error::io(listen, e))?;
    // Tests and supervisors wait for this line: requests are taken from here on.
    let _ = writeln!(std::io::stderr().lock(), "packetproof serve: listening on http://{bound}");
    // Held calls are judged as their windows end, until every request taken is answered.
    let (stop_expiring, stopped) = tokio::sync::watch::channel(());
    let expiring = tokio::spawn(held::expire_until_stopped(shared.clone(), stopped));
    let errors = shared.clone();
    let bounded = listener::Bounded::new(listener, max_connections, Box::new(move || errors.metrics.error("accept")));
    let counted = shared.clone();
    let closed = move |why: connections::Closed| counted.metrics.closed(why);
    listener::serve(bounded, http::router(shared), timeouts, closed, stop).await;
    drop(stop_expiring);
    let _ = expiring.await;
    Ok(())
}

/// SIGTERM (what a supervisor sends), Ctrl-C or SIGHUP (a closed terminal; the npm
/// shim forwards it), listened for from the call on: each drains, so held calls whose
/// requests were answered are judged and written.
#[cfg(unix)]
fn stop_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let (mut term, mut interrupt) = (signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?);
    let mut hangup = signal(SignalKind::hangup())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = interrupt.recv() => {}
            _ = hangup.recv() => {}
        }
        say_stopping();
    })
}

#[cfg(not(unix))]
fn stop_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
        say_stopping();
    })
}

fn say_stopping() {
    let _ = writeln!(
        std::io::stderr().lock(),
        "packetproof serve: stopping: finishing the requests taken, then judging the calls held"
    );
}

/// A duration as the timeout flags take it: seconds (`10`), or a number with `s` or `ms`.
fn duration(text: &str) -> std::result::Result<Duration, String> {
    let (number, unit) = match text.strip_suffix("ms") {
        Some(number) => (number, 1),
        None => (text.strip_suffix('s').unwrap_or(text), 1000),
    };
    let expected = || format!("{text:?} is not a duration: seconds (10), or a number with ms or s (250ms, 10s)");
    let number: u64 = number.trim().parse().map_err(|_| expected())?;
    match number.checked_mul(unit) {
        Some(0) => Err(format!("{text:?}: a timeout of zero closes every connection at once")),
        Some(millis) if millis <= 24 * 3600 * 1000 => Ok(Duration::from_millis(millis)),
        _ => Err(format!("{text:?}: at most a day")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_are_seconds_or_milliseconds() {
        use std::time::Duration;
        assert_eq!(super::duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(super::duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(super::duration("250ms"), Ok(Duration::from_millis(250)));
        for bad in ["", "ms", "-1", "1.5s", "0", "0ms", "99999999999999s", "2h"] {
            assert!(super::duration(bad).is_err(), "{bad}");
        }
    }
}
