//! A request body, from the bytes received to the judged calls: decompressed within
//! the bound, decoded by its content type, judged by the library. [`judge`] is the one
//! place that knows how an export request's bytes become calls.

use packetproof::trace::packets::Packets;
use packetproof::trace::{self, Counts, Judged};
use std::io::Read;

/// Which OTLP export a path takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Signal {
    Traces,
    Logs,
}

impl Signal {
    pub(crate) fn path(self) -> &'static str {
        match self {
            Signal::Traces => "/v1/traces",
            Signal::Logs => "/v1/logs",
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Signal::Traces => "traces",
            Signal::Logs => "logs",
        }
    }
}

/// The OTLP/HTTP encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    Protobuf,
    Json,
}

impl Encoding {
    /// The encoding a `Content-Type` names (parameters such as `charset` aside).
    pub(crate) fn of(content_type: &str) -> Option<Encoding> {
        let essence = content_type.split(';').next().unwrap_or_default().trim();
        match essence.to_ascii_lowercase().as_str() {
            "application/x-protobuf" => Some(Encoding::Protobuf),
            "application/json" => Some(Encoding::Json),
            _ => None,
        }
    }

    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Encoding::Protobuf => "application/x-protobuf",
            Encoding::Json => "application/json",
        }
    }
}

/// Why a body was not judged.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// Not an export request of this encoding (400).
    Malformed(String),
    /// Past `--max-body` once decompressed (413).
    TooLarge(String),
    /// An encoding this receiver does not decode (415).
    Unsupported(String),
}

/// `received` as sent, gunzipped when `gzip`: never more than `max` bytes are
/// produced, so a small body that inflates without end stops at the bound.
pub(crate) fn decompress(received: &[u8], gzip: bool, max: usize) -> Result<std::borrow::Cow<'_, [u8]>, Refusal> {
    if !gzip {
        return Ok(std::borrow::Cow::Borrowed(received));
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(received)
        .take(max as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| Refusal::Malformed(format!("the gzip body cannot be decompressed: {e}")))?;
    if out.len() > max {
        return Err(Refusal::TooLarge(format!("the body decompresses to more than {max} bytes (--max-body)")));
    }
    Ok(std::borrow::Cow::Owned(out))
}

/// Judge every GenAI call in one export request's bytes, handing each to `visit`.
pub(crate) fn judge(
    signal: Signal,
    encoding: Encoding,
    bytes: &[u8],
    packets: &Packets,
    visit: &mut dyn FnMut(&Judged) -> packetproof::Result<()>,
) -> Result<packetproof::Result<Counts>, Refusal> {
    match encoding {
        Encoding::Json => match trace::check_request(bytes, signal.path(), packets, visit) {
            // The library's message names the request, line and column.
            Err(e @ (packetproof::Error::Json { .. } | packetproof::Error::Shape { .. })) => {
                Err(Refusal::Malformed(e.to_string()))
            }
            other => Ok(other),
        },
        Encoding::Protobuf => {
            Err(Refusal::Unsupported("protobuf bodies are not decoded yet: send application/json".into()))
        }
    }
}
