//! An OTLP protobuf export request (traces or logs) is judged or refused, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use packetproof::trace::{judge_export, packets::Packets, Encoding, Options, Signal};

fuzz_target!(|bytes: &[u8]| {
    let packets = Packets::default();
    for signal in [Signal::Traces, Signal::Logs] {
        let _ = judge_export(bytes, Encoding::Protobuf, signal, &packets, Options::default());
    }
});
