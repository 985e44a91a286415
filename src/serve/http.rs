//! The routes, and each answer as OTLP/HTTP specifies it: 200 with an empty export
//! response (an empty protobuf message, or `{}`) in the request's encoding; a refused
//! request gets a `google.rpc.Status` body in that encoding, 400 (malformed, not
//! retried by exporters), 413 (too large), 415 (an encoding not offered), 408 (a body
//! that did not arrive in time) or 429 / 503 with `Retry-After` (retried later).

use super::body::{self, Encoding, Refusal, Signal, Wire};
use super::connections::Share;
use super::findings;
use super::grpc;
use super::metrics;
use super::Shared;
use axum::body::Body;
use axum::extract::{Extension, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use packetproof::trace::window::Expiry;
use packetproof::trace::Counts;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How fast a body must arrive (`--body-timeout`, `--body-min-rate`): a client
/// trickling bytes holds its connection and the bytes it sent, and must not hold them for
/// ever, nor at a crawl.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pace {
    /// The longest a body may take, whatever its rate.
    pub(crate) timeout: Duration,
    /// Bytes a second a body must average once [`GRACE`] has passed.
    pub(crate) min_rate: u64,
}

/// The first seconds of a body, in which no rate is asked (an exporter's first bytes
/// may wait on its own batching): as Apache's mod_reqtimeout, each byte after that buys
/// `1 / min_rate` seconds more.
const GRACE: Duration = Duration::from_secs(5);

impl Pace {
    /// When the next bytes of a body that began at `start` and sent `received` are due.
    fn due(self, start: tokio::time::Instant, received: usize) -> tokio::time::Instant {
        let earned = Duration::from_secs_f64(received as f64 / self.min_rate.max(1) as f64);
        (start + GRACE.max(earned)).min(start + self.timeout)
    }
}
/// What a refused exporter is told to wait before it retries (seconds).
const RETRY_AFTER: &str = "1";

pub(super) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route(
            body::path(Signal::Traces),
            post(|State(shared), share: Option<Extension<Share>>, headers, body| {
                export(shared, Signal::Traces, (headers, share.map(|s| s.0)), body)
            }),
        )
        .route(
            body::path(Signal::Logs),
            post(|State(shared), share: Option<Extension<Share>>, headers, body| {
                export(shared, Signal::Logs, (headers, share.map(|s| s.0)), body)
            }),
        )
        .route(
            grpc::TRACES,
            post(|State(shared), share: Option<Extension<Share>>, headers, body| {
                grpc::export(shared, Signal::Traces, (headers, share.map(|s| s.0)), body)
            }),
        )
        .route(
            grpc::LOGS,
            post(|State(shared), share: Option<Extension<Share>>, headers, body| {
                grpc::export(shared, Signal::Logs, (headers, share.map(|s| s.0)), body)
            }),
        )
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok\n" }))
        .with_state(shared)
}

async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    let content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    ([(header::CONTENT_TYPE, content_type)], shared.metrics.encode()).into_response()
}

/// A request refused: its status, the kind counted on `/metrics`, and why.
pub(super) struct Refused {
    pub(super) status: StatusCode,
    pub(super) kind: &'static str,
    pub(super) message: String,
}

impl Refused {
    pub(super) fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Refused {
        Refused { status, kind, message: message.into() }
    }
}

impl From<Refusal> for Refused {
    fn from(refusal: Refusal) -> Refused {
        match refusal {
            Refusal::Malformed(why) => Refused::new(StatusCode::BAD_REQUEST, "malformed", why),
            Refusal::TooLarge(why) => Refused::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", why),
        }
    }
}

async fn export(
    shared: Arc<Shared>,
    signal: Signal,
    (headers, share): (HeaderMap, Option<Share>),
    body: Body,
) -> Response {
    let text = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    // A request of no encoding we read is answered in JSON, the readable one.
    let encoding = text(header::CONTENT_TYPE).and_then(body::encoding_of);
    let answer = match encoding {
        None => Err(Refused::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported",
            "the Content-Type is neither application/x-protobuf nor application/json",
        )),
        Some(encoding) => match content_encoding(&headers) {
            Ok(gzip) => take(&shared, signal, encoding, Wire::Http { gzip }, (&headers, share), body).await,
            Err(refused) => Err(refused),
        },
    };
    let encoding = encoding.unwrap_or(Encoding::Json);
    match answer {
        Ok(()) => {
            let empty = match encoding {
                Encoding::Protobuf => Vec::new(),
                Encoding::Json => b"{}".to_vec(),
            };
            ([(header::CONTENT_TYPE, body::content_type(encoding))], empty).into_response()
        }
        Err(refused) => {
            shared.refusals.refuse(&shared.metrics, &refused);
            refusal(encoding, refused)
        }
    }
}

/// Whether the body is gzipped, by its Content-Encoding.
fn content_encoding(headers: &HeaderMap) -> Result<bool, Refused> {
    match headers.get(header::CONTENT_ENCODING).map(HeaderValue::to_str) {
        None => Ok(false),
        Some(Ok(coding)) if coding.eq_ignore_ascii_case("identity") => Ok(false),
        Some(Ok(coding)) if coding.eq_ignore_ascii_case("gzip") => Ok(true),
        Some(_) => Err(Refused::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported",
            "the Content-Encoding is neither gzip nor identity",
        )),
    }
}

/// Admit, read within the bound, judge on a worker, write the findings: the one path
/// of every export request, whichever protocol carried it.
pub(super) async fn take(
    shared: &Arc<Shared>,
    signal: Signal,
    encoding: Encoding,
    wire: Wire,
    (headers, share): (&HeaderMap, Option<Share>),
    body: Body,
) -> Result<(), Refused> {
    let started = Instant::now();
    let max = shared.max_body;
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > max as u64) {
        return Err(too_large(max));
    }
    // Read first, admit after: a body that trickles in holds the bytes it sent, never
    // one of the places honest exporters' batches need.
    let (received, _bytes) = read(shared, body, max, share.unwrap_or_default()).await?;
    let Ok(admitted) = shared.admitted.clone().try_acquire_owned() else {
        return Err(Refused::new(StatusCode::TOO_MANY_REQUESTS, "queue_full", "the work queue is full: retry later"));
    };
    let _in_flight = InFlight::new(shared);
    let judging = shared.judging.clone().acquire_owned().await.map_err(|_| stopping())?;
    let work = shared.clone();
    let judged = tokio::task::spawn_blocking(move || {
        let _judging = judging;
        judge(&work, signal, encoding, wire, &received).map(|counts| (counts, received.len()))
    })
    .await
    .map_err(|_| Refused::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "judging the request failed"))?;
    drop(admitted);
    let (counts, received) = judged?;
    shared.metrics.request(signal, &counts, received, started.elapsed().as_secs_f64());
    Ok(())
}

fn too_large(max: usize) -> Refused {
    Refused::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        format!("the body is larger than {max} bytes (--max-body)"),
    )
}

/// The body, read within `max` bytes and at its [`Pace`], each frame's bytes taken
/// from the reading budget, and counted on the connection's `share`, as it arrives
/// (held until the request is answered).
async fn read(
    shared: &Shared,
    mut body: Body,
    max: usize,
    share: Share,
) -> Result<(axum::body::Bytes, BodyBytes), Refused> {
    use http_body_util::BodyExt;
    let start = tokio::time::Instant::now();
    let pace = shared.pace;
    let mut out = Vec::new();
    let mut held = BodyBytes { permit: None, gauge: shared.metrics.body_bytes.clone(), share };
    let share_limit = shared.reading_budget / 2;
    loop {
        let due = pace.due(start, out.len());
        let frame = match tokio::time::timeout_at(due, body.frame()).await {
            Err(_) if due >= start + pace.timeout => {
                let message = format!("the body did not arrive within --body-timeout ({} s)", pace.timeout.as_secs());
                return Err(Refused::new(StatusCode::REQUEST_TIMEOUT, "read_timeout", message));
            }
            Err(_) => {
                let message =
                    format!("the body arrived slower than --body-min-rate ({} bytes a second)", pace.min_rate);
                return Err(Refused::new(StatusCode::REQUEST_TIMEOUT, "read_slow", message));
            }
            Ok(None) => return Ok((out.into(), held)),
            Ok(Some(Err(_))) => {
                return Err(Refused::new(StatusCode::BAD_REQUEST, "read", "the body could not be read"))
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else { continue };
        if out.len() + data.len() > max {
            return Err(too_large(max));
        }
        held.take(&shared.reading, data.len(), share_limit)?;
        out.extend_from_slice(&data);
    }
}

/// The reading budget a body holds, shown on `/metrics`, given back however it ends.
struct BodyBytes {
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
    gauge: prometheus_client::metrics::gauge::Gauge,
    /// The connection's share, which these bytes count against too.
    share: Share,
}

impl BodyBytes {
    /// `bytes` more: counted on the connection's share first (one atomic add, so two of
    /// its requests cannot both pass a check the other's bytes would fail), then taken
    /// from the reading budget; either past its bound refuses, and counts nothing.
    fn take(&mut self, reading: &Arc<tokio::sync::Semaphore>, bytes: usize, share_limit: usize) -> Result<(), Refused> {
        use std::sync::atomic::Ordering::Relaxed;
        let full = |message: &str| Refused::new(StatusCode::TOO_MANY_REQUESTS, "queue_full", message);
        if self.share.0.fetch_add(bytes, Relaxed) + bytes > share_limit {
            self.share.0.fetch_sub(bytes, Relaxed);
            return Err(full(
                "this connection holds its share of the bodies the receiver may hold (half): retry later",
            ));
        }
        let taken = u32::try_from(bytes).ok().and_then(|n| reading.clone().try_acquire_many_owned(n).ok());
        let Some(taken) = taken else {
            self.share.0.fetch_sub(bytes, Relaxed);
            return Err(full("the receiver holds as many bytes of bodies as it may: retry later"));
        };
        self.gauge.inc_by(bytes as i64);
        match &mut self.permit {
            Some(permit) => permit.merge(taken),
            None => self.permit = Some(taken),
        }
        Ok(())
    }
}

impl Drop for BodyBytes {
    fn drop(&mut self) {
        if let Some(permit) = &self.permit {
            self.gauge.dec_by(permit.num_permits() as i64);
            self.share.0.fetch_sub(permit.num_permits(), std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// The in-flight gauge, up while a request is admitted, down however it ends.
struct InFlight(Arc<Shared>);

impl InFlight {
    fn new(shared: &Arc<Shared>) -> InFlight {
        shared.metrics.in_flight.inc();
        InFlight(shared.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.metrics.in_flight.dec();
    }
}

fn stopping() -> Refused {
    Refused::new(StatusCode::SERVICE_UNAVAILABLE, "stopping", "the receiver is stopping: retry later")
}

/// Decompress, decode and judge one body; count each call and write each finding.
fn judge(shared: &Shared, signal: Signal, encoding: Encoding, wire: Wire, received: &[u8]) -> Result<Counts, Refused> {
    let bytes = packetproof::trace::received::request(received, wire, shared.max_body)?;
    // The request's findings, written together once every call is judged.
    let lines = std::cell::RefCell::new(String::new());
    let mut tally = metrics::Tally::default();
    let mut visit = |judged: &packetproof::trace::Judged| {
        tally.add(&shared.metrics, judged);
        match judged.expired() {
            // A held call judged to make room, or whose window ended, is in no request
            // the exporter sends again: a 503 would not bring its finding back.
            Some(Expiry::Capacity | Expiry::Window | Expiry::Stop) => {
                if let Err(e) = shared.findings.keep(judged) {
                    super::held::say_lost(&e);
                }
            }
            _ => lines.borrow_mut().push_str(&findings::line(judged).unwrap_or_default()),
        }
        Ok(())
    };
    let mut finish = || shared.findings.write(&lines.borrow());
    let judged = body::judge(shared, signal, encoding, &bytes, &mut visit, &mut finish);
    // Every call judged is counted, its finding written or not (as the request is answered).
    shared.metrics.count(tally);
    let judged = judged?;
    // The only error left is a finding that could not be written: the exporter retries.
    judged.map_err(|e| {
        Refused::new(StatusCode::SERVICE_UNAVAILABLE, "findings_write", format!("a finding could not be written: {e}"))
    })
}

/// The `google.rpc.Status` an OTLP/HTTP error response carries.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

fn refusal(encoding: Encoding, refused: Refused) -> Response {
    let code = i32::try_from(super::status::grpc_code(refused.status)).unwrap_or(13);
    let status = RpcStatus { code, message: refused.message };
    let bytes = match encoding {
        Encoding::Protobuf => prost::Message::encode_to_vec(&status),
        Encoding::Json => serde_json::json!({"code": status.code, "message": status.message}).to_string().into_bytes(),
    };
    let mut response = (refused.status, [(header::CONTENT_TYPE, body::content_type(encoding))], bytes).into_response();
    if super::status::retried(refused.status) {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER));
    }
    response
}

#[cfg(test)]
mod tests;
