//! The `otlp_json` target's check, read once for the fuzzer (fuzz/fuzz_targets/) and for
//! its corpus replayed on stable (tests/fuzz_corpus.rs): an OTLP/JSON export request, as
//! either signal, is judged or refused, never a panic, and the one strict parse that reads
//! it refuses exactly what `canonical::parse` refuses, in its words and at its place.

use packetproof::trace::{judge_export, packets::Packets, Encoding, Options, Signal};
use packetproof::Error;

pub fn run(bytes: &[u8]) {
    let strict = packetproof::canonical::parse(bytes);
    for signal in [Signal::Traces, Signal::Logs] {
        let read = judge_export(bytes, Encoding::Json, signal, &Packets::default(), Options::default());
        match (&strict, read) {
            (Err(e), Err(Error::Json { line, column, message, .. })) => {
                assert_eq!((line, column, message.as_str()), (e.line, e.column, e.message.as_str()))
            }
            (Err(e), other) => panic!("canonical::parse refuses ({e}), the export reader: {:?}", other.err()),
            // Strict JSON: judged, or refused for its shape, never as JSON that does not parse.
            (Ok(_), Err(Error::Json { column, message, .. })) => assert_eq!(column, 1, "{message}"),
            (Ok(_), _) => {}
        }
    }
}
