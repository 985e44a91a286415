//! serve's request path: a body as received (OTLP/HTTP, plain or gzip; OTLP/gRPC, framed,
//! its message compressed or not), unframed and inflated within a bound, then judged as
//! JSON or protobuf, traces or logs: judged or refused, never a panic. The first byte
//! chooses how the rest was sent (`tests/fuzz_corpus.rs` reads it the same way).
#![no_main]
use libfuzzer_sys::fuzz_target;
use packetproof::trace::received::{request, Wire};
use packetproof::trace::{judge_export, packets::Packets, Encoding, Options, Signal};

fuzz_target!(|input: &[u8]| {
    let Some((&how, body)) = input.split_first() else { return };
    let gzip = how & 2 != 0;
    let wire = if how & 1 == 0 { Wire::Http { gzip } } else { Wire::Grpc { gzip } };
    let encoding = if how & 4 == 0 { Encoding::Json } else { Encoding::Protobuf };
    let signal = if how & 8 == 0 { Signal::Traces } else { Signal::Logs };
    if let Ok(bytes) = request(body, wire, 1 << 20) {
        let _ = judge_export(&bytes, encoding, signal, &Packets::default(), Options::default());
    }
});
