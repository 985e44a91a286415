//! OTLP exports read: the body of one export request (traces or logs, OTLP/JSON or OTLP
//! protobuf) into the spans and log records `trace` judges ([`record`]), their text
//! borrowed from the export. One strict reader per encoding, and each says why it refuses
//! what it refuses: OTLP/JSON is parsed once, strictly ([`value`]: a duplicate key, a lone
//! surrogate, a number out of a double's range is refused), then walked ([`json`]);
//! protobuf is read in place ([`protobuf`]), accepting exactly what the OpenTelemetry
//! project's generated types accept (they are kept for the test that holds it to them).
//! Both refuse an id of the wrong length; unknown fields and members are skipped.

pub(crate) mod json;
pub(crate) mod protobuf;
pub(crate) mod record;
pub(crate) mod value;

/// The protobuf twin of an OTLP/JSON export, for tests and the benchmark (which include
/// the same file): test code, not part of the library.
#[cfg(test)]
pub(crate) mod encode;

#[cfg(test)]
mod tests;

/// How an export is encoded: OTLP/JSON or OTLP protobuf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Json,
    Protobuf,
}

/// Which signal an export carries: spans (`/v1/traces`) or log records (`/v1/logs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Traces,
    Logs,
}

impl Signal {
    pub(crate) fn request_name(self) -> &'static str {
        match self {
            Signal::Traces => "ExportTraceServiceRequest",
            Signal::Logs => "ExportLogsServiceRequest",
        }
    }
}

/// What a reader hands each record to; an error stops the reading.
pub(crate) type Visit<'v> = dyn FnMut(record::Record<'_>) -> crate::Result<()> + 'v;
