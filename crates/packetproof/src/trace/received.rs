//! An export request's body as a receiver gets it, to the export request's bytes:
//! OTLP/HTTP sends the request itself, gzipped as a whole when its Content-Encoding says
//! so; OTLP/gRPC sends one message behind gRPC's five-byte prefix (a compressed flag,
//! then the length, big-endian), gzipped when that flag is set and the call's
//! `grpc-encoding` is `gzip`. Never more than the bound is produced, so a small body
//! that inflates without end stops there. Bytes only: `serve` reads the sockets and
//! headers, and a fuzz target drives this path as `serve` does (fuzz/fuzz_targets/).

use std::borrow::Cow;
use std::io::Read;

/// How a body carries its export request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OTLP/HTTP: the body is the request, gzipped as a whole when `gzip`.
    Http { gzip: bool },
    /// OTLP/gRPC: one message behind the five-byte prefix; `gzip`: the call's
    /// `grpc-encoding` is gzip, so a message flagged compressed is gunzipped.
    Grpc { gzip: bool },
}

/// Why a body was not judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not an export request of this encoding (400).
    Malformed(String),
    /// Past the bound once decompressed (413).
    TooLarge(String),
}

/// The export request `received` carries by `wire`, at most `max` bytes once decompressed.
pub fn request(received: &[u8], wire: Wire, max: usize) -> Result<Cow<'_, [u8]>, Refusal> {
    match wire {
        Wire::Http { gzip } => decompress(received, gzip, max),
        Wire::Grpc { gzip } => {
            let (compressed, message) = unframe(received, gzip)?;
            decompress(message, compressed, max)
        }
    }
}

/// `received` as sent, gunzipped when `gzip`: never more than `max` bytes are produced.
pub fn decompress(received: &[u8], gzip: bool, max: usize) -> Result<Cow<'_, [u8]>, Refusal> {
    if !gzip {
        return Ok(Cow::Borrowed(received));
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(received)
        .take(max as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| Refusal::Malformed(format!("the gzip body cannot be decompressed: {e}")))?;
    if out.len() > max {
        return Err(Refusal::TooLarge(format!("the body decompresses to more than {max} bytes (--max-body)")));
    }
    Ok(Cow::Owned(out))
}

/// The one message of a unary gRPC call: whether it is compressed, and its bytes.
pub fn unframe(received: &[u8], gzip: bool) -> Result<(bool, &[u8]), Refusal> {
    let Some((prefix, message)) = received.split_first_chunk::<5>() else {
        return Err(Refusal::Malformed("a gRPC message starts with a five-byte prefix".into()));
    };
    let declared = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize;
    if declared != message.len() {
        return Err(Refusal::Malformed(format!(
            "the gRPC prefix declares a message of {declared} bytes, and {} follow it (one message per call)",
            message.len()
        )));
    }
    match prefix[0] {
        0 => Ok((false, message)),
        1 if gzip => Ok((true, message)),
        1 => Err(Refusal::Malformed("a compressed message, but the call's grpc-encoding is not gzip".into())),
        flag => Err(Refusal::Malformed(format!("the gRPC compressed flag is {flag}, not 0 or 1"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unary_message_is_its_prefix_and_exactly_its_bytes() {
        assert_eq!(unframe(&[0, 0, 0, 0, 2, 7, 8], false).unwrap(), (false, &[7u8, 8][..]));
        assert_eq!(unframe(&[1, 0, 0, 0, 1, 9], true).unwrap(), (true, &[9u8][..]));
        for (bytes, gzip, says) in [
            (&[0u8, 0, 0][..], false, "five-byte prefix"),
            (&[0, 0, 0, 0, 3, 1][..], false, "declares a message of 3 bytes, and 1 follow"),
            (&[0, 0, 0, 0, 0, 1][..], false, "declares a message of 0 bytes"),
            (&[0xff, 0xff, 0xff, 0xff, 0xff][..], false, "declares a message of 4294967295 bytes"),
            (&[1, 0, 0, 0, 0][..], false, "grpc-encoding is not gzip"),
            (&[2, 0, 0, 0, 0][..], true, "flag is 2"),
        ] {
            match unframe(bytes, gzip) {
                Err(Refusal::Malformed(why)) => assert!(why.contains(says), "{bytes:?}: {why}"),
                other => panic!("{bytes:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_compressed_grpc_message_inflates_within_the_bound() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&[b' '; 1000]).unwrap();
        let zipped = gz.finish().unwrap();
        let mut framed = vec![1];
        framed.extend((zipped.len() as u32).to_be_bytes());
        framed.extend(&zipped);
        assert_eq!(request(&framed, Wire::Grpc { gzip: true }, 1000).unwrap().len(), 1000);
        assert!(matches!(request(&framed, Wire::Grpc { gzip: true }, 999), Err(Refusal::TooLarge(_))));
        assert!(matches!(request(&zipped, Wire::Http { gzip: true }, 999), Err(Refusal::TooLarge(_))));
        assert!(matches!(request(b"not gzip", Wire::Http { gzip: true }, 999), Err(Refusal::Malformed(_))));
    }
}
