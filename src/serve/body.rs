//! A request body, from the bytes received to the judged calls: decompressed (and
//! unframed) within the bound by the library's [`packetproof::trace::received`], decoded
//! by its content type, judged by the library. [`judge`] is the one
//! place that knows how an export request's bytes become calls (`trace::Session`, and
//! the join window for calls whose records are not all in it).

use super::Shared;
use packetproof::trace::{Counts, Judged, Session};

pub(crate) use packetproof::trace::received::{Refusal, Wire};
pub(crate) use packetproof::trace::{Encoding, Signal};

/// The path of the export a signal is sent to.
pub(crate) fn path(signal: Signal) -> &'static str {
    match signal {
        Signal::Traces => "/v1/traces",
        Signal::Logs => "/v1/logs",
    }
}

/// The signal's label on /metrics.
pub(crate) fn name(signal: Signal) -> &'static str {
    match signal {
        Signal::Traces => "traces",
        Signal::Logs => "logs",
    }
}

/// The OTLP/HTTP encoding a `Content-Type` names (parameters such as `charset` aside).
pub(crate) fn encoding_of(content_type: &str) -> Option<Encoding> {
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    match essence.to_ascii_lowercase().as_str() {
        "application/x-protobuf" => Some(Encoding::Protobuf),
        "application/json" => Some(Encoding::Json),
        _ => None,
    }
}

pub(crate) fn content_type(encoding: Encoding) -> &'static str {
    match encoding {
        Encoding::Protobuf => "application/x-protobuf",
        Encoding::Json => "application/json",
    }
}

/// A session of the reviewed packets, held to the gate when serve is given one.
pub(crate) fn session(shared: &Shared) -> Session<'_> {
    let session = Session::new(&shared.packets, shared.options);
    match &shared.vouching {
        Some(vouching) => session.held_to(vouching, &shared.config),
        None => session,
    }
}

/// Judge the GenAI calls of one export request's bytes, handing each to `visit`: the
/// library's reading of an export (traces or logs, JSON or protobuf) and its verdicts,
/// the same as `trace`'s. A call not whole in the request is held for the rest of its
/// records (`--join-window`), and a held call the request makes whole is judged here.
/// A body that is not an export request of its encoding is refused before any call is
/// handed on. After the last call, `finish` (the request's findings written together).
/// An error of `visit` or `finish` is returned as it is (the inner result), and then the
/// calls judged whole here are judged again when the request is sent again.
pub(crate) fn judge(
    shared: &Shared,
    signal: Signal,
    encoding: Encoding,
    bytes: &[u8],
    visit: &mut dyn FnMut(&Judged) -> packetproof::Result<()>,
    finish: &mut dyn FnMut() -> packetproof::Result<()>,
) -> Result<packetproof::Result<Counts>, Refusal> {
    let mut session = session(shared);
    // The library's message names the request, and the line and column in JSON.
    session.read(bytes, encoding, Some(signal), path(signal), 1).map_err(|e| Refusal::Malformed(e.to_string()))?;
    let calls = shared.held.offer(session.gather(), &shared.metrics);
    let remembered = calls.remembered();
    // Every call is judged even when a finding cannot be written: the calls handed back
    // are the window's no more, and a call that made room is in no request sent again.
    let mut failed = None;
    let judged = session.judge(calls, &mut |judged| {
        if let Err(e) = visit(judged) {
            failed.get_or_insert(e);
        }
        Ok(())
    });
    let judged = match failed {
        Some(e) => Err(e),
        None => judged.and_then(|counts| finish().map(|()| counts)),
    };
    if judged.is_err() {
        shared.held.forget(&remembered);
    }
    Ok(judged)
}
