//! The `serve_request` target's input, read once for the fuzzer (fuzz/fuzz_targets/)
//! and for its corpus replayed on stable (tests/fuzz_corpus.rs), so the replay takes
//! every input exactly as the fuzzer did: the first byte chooses the wire (HTTP or
//! gRPC), gzip, the encoding and the signal; the rest is the request body.

use packetproof::trace::received::{request, Wire};
use packetproof::trace::{judge_export, packets::Packets, Encoding, Options, Signal};

pub fn run(input: &[u8]) {
    let Some((&how, body)) = input.split_first() else { return };
    let gzip = how & 2 != 0;
    let wire = if how & 1 == 0 { Wire::Http { gzip } } else { Wire::Grpc { gzip } };
    let encoding = if how & 4 == 0 { Encoding::Json } else { Encoding::Protobuf };
    let signal = if how & 8 == 0 { Signal::Traces } else { Signal::Logs };
    if let Ok(bytes) = request(body, wire, 1 << 20) {
        let _ = judge_export(&bytes, encoding, signal, &Packets::default(), Options::default());
    }
}
