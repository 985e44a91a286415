//! One table of refusals for both transports (the OpenTelemetry Collector's habit): each
//! HTTP status serve refuses with, and the gRPC code an OTLP/gRPC exporter reads in its
//! place, with whether the exporter retries it. OTLP/HTTP answers carry the code in their
//! `google.rpc.Status` body; OTLP/gRPC answers in the `grpc-status` trailer.

use axum::http::StatusCode;

/// gRPC status codes (grpc/doc/statuscodes.md) serve answers with.
pub(super) mod code {
    pub(in super::super) const OK: u32 = 0;
    pub(in super::super) const INVALID_ARGUMENT: u32 = 3;
    pub(in super::super) const DEADLINE_EXCEEDED: u32 = 4;
    pub(in super::super) const RESOURCE_EXHAUSTED: u32 = 8;
    pub(in super::super) const UNIMPLEMENTED: u32 = 12;
    pub(in super::super) const INTERNAL: u32 = 13;
    pub(in super::super) const UNAVAILABLE: u32 = 14;
}

/// Each refusal: its HTTP status, its gRPC code, and whether an exporter sends it again
/// (the OTLP specification's retryable codes: a full queue, a failed findings write and
/// a slow body are; a malformed, too large or unsupported one is not).
const TABLE: [(StatusCode, u32, bool); 6] = [
    (StatusCode::BAD_REQUEST, code::INVALID_ARGUMENT, false),
    (StatusCode::REQUEST_TIMEOUT, code::DEADLINE_EXCEEDED, true),
    (StatusCode::PAYLOAD_TOO_LARGE, code::RESOURCE_EXHAUSTED, false),
    (StatusCode::UNSUPPORTED_MEDIA_TYPE, code::UNIMPLEMENTED, false),
    (StatusCode::TOO_MANY_REQUESTS, code::UNAVAILABLE, true),
    (StatusCode::SERVICE_UNAVAILABLE, code::UNAVAILABLE, true),
];

/// The gRPC code of a refusal with `status` (INTERNAL for one the table lacks).
pub(super) fn grpc_code(status: StatusCode) -> u32 {
    TABLE.iter().find(|(s, ..)| *s == status).map_or(code::INTERNAL, |(_, code, _)| *code)
}

/// Whether an exporter retries a refusal with `status`: the answer then says when
/// (`Retry-After`).
pub(super) fn retried(status: StatusCode) -> bool {
    TABLE.iter().any(|(s, _, retried)| *s == status && *retried)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row, as the OTLP specification reads it on either transport: an HTTP
    /// status OTLP/HTTP exporters retry (429, 502, 503, 504; and serve's 408, a body that
    /// came too slowly) is a gRPC code OTLP/gRPC exporters retry, and the other way round.
    #[test]
    fn each_row_is_retried_alike_on_both_transports() {
        const GRPC_RETRYABLE: [u32; 6] = [1, 4, 10, 11, 14, 15];
        const HTTP_RETRYABLE: [u16; 5] = [408, 429, 502, 503, 504];
        for (status, code, retried) in TABLE {
            assert_eq!(grpc_code(status), code);
            assert_eq!(GRPC_RETRYABLE.contains(&code), retried, "{status}: gRPC code {code}");
            assert_eq!(HTTP_RETRYABLE.contains(&status.as_u16()), retried, "{status}");
            assert_eq!(super::retried(status), retried, "{status}");
        }
        assert_eq!(grpc_code(StatusCode::IM_A_TEAPOT), code::INTERNAL);
        assert!(!retried(StatusCode::IM_A_TEAPOT));
    }
}
