//! OTLP/gRPC: the same export requests as OTLP/HTTP's protobuf, sent as unary gRPC calls
//! over HTTP/2 without TLS (h2c, on the same port: the listener tells HTTP/2 from
//! HTTP/1.1 by its preface). The Collector's `loadbalancing` exporter and the SDK
//! exporters configured for `grpc` send this.
//!
//! Hand-written rather than tonic: a unary call is one POST whose body is one message
//! behind a five-byte prefix (a compressed flag, then the length, big-endian) and whose
//! answer ends in a `grpc-status` trailer. A second server stack would bring its own
//! body limits, admission and decoding, while the receiver's bounds (admission,
//! `--max-body`, the decompression bound) must hold for both protocols: so both go
//! through [`super::http::take`].

use super::body::{Encoding, Signal, Wire};
use super::http::{self, Refused};
use super::Shared;
use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, Full};
use std::sync::Arc;

pub(super) const TRACES: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
pub(super) const LOGS: &str = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";

const CONTENT_TYPE: &str = "application/grpc";
/// The empty `Export…ServiceResponse`, framed: uncompressed, zero bytes long.
const EMPTY_RESPONSE: [u8; 5] = [0; 5];

use super::status::{code, grpc_code};

pub(super) async fn export(
    shared: Arc<Shared>,
    signal: Signal,
    (headers, share): (HeaderMap, Option<super::connections::Share>),
    body: Body,
) -> Response {
    let is_grpc = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t == CONTENT_TYPE || t.starts_with("application/grpc+proto"));
    if !is_grpc {
        // Not a gRPC client: the HTTP answer the gRPC specification gives it.
        let why = "the Content-Type of a gRPC call is application/grpc";
        shared.refusals.refuse(&shared.metrics, &Refused::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported", why));
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, why).into_response();
    }
    let answer = match message_encoding(&headers) {
        Ok(gzip) => http::take(&shared, signal, Encoding::Protobuf, Wire::Grpc { gzip }, (&headers, share), body).await,
        Err(refused) => Err(refused),
    };
    match answer {
        Ok(()) => answered(),
        Err(refused) => {
            shared.refusals.refuse(&shared.metrics, &refused);
            status_only(grpc_code(refused.status), &refused.message)
        }
    }
}

/// Whether messages may come gzipped, by the call's `grpc-encoding`.
fn message_encoding(headers: &HeaderMap) -> Result<bool, Refused> {
    match headers.get("grpc-encoding").map(HeaderValue::to_str) {
        None => Ok(false),
        Some(Ok("identity")) => Ok(false),
        Some(Ok("gzip")) => Ok(true),
        Some(_) => Err(Refused::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported",
            "the grpc-encoding is neither gzip nor identity",
        )),
    }
}

/// The empty export response, then `grpc-status: 0`.
fn answered() -> Response {
    let trailers = async {
        let mut trailers = HeaderMap::new();
        trailers.insert("grpc-status", HeaderValue::from(code::OK));
        Some(Ok(trailers))
    };
    let body = Full::new(axum::body::Bytes::from_static(&EMPTY_RESPONSE)).with_trailers(trailers);
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], Body::new(body)).into_response()
}

/// A refusal as gRPC sends one: no message, the status in the headers (trailers-only).
fn status_only(code: u32, message: &str) -> Response {
    let mut response = ([(header::CONTENT_TYPE, CONTENT_TYPE)], Body::empty()).into_response();
    let headers = response.headers_mut();
    headers.insert("grpc-status", HeaderValue::from(code));
    if let Ok(message) = HeaderValue::from_str(&percent_encoded(message)) {
        headers.insert("grpc-message", message);
    }
    response
}

/// `grpc-message`'s encoding: every byte outside printable ASCII, and `%`, as `%XX`.
fn percent_encoded(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for byte in message.bytes() {
        match byte {
            b' '..=b'~' if byte != b'%' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_message_is_percent_encoded() {
        assert_eq!(percent_encoded("queue full: 100%\nretry é"), "queue full: 100%25%0Aretry %C3%A9");
    }
}
