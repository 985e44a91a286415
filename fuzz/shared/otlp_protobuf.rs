//! The `otlp_protobuf` target's check, read once for the fuzzer (fuzz/fuzz_targets/) and
//! for its corpus replayed on stable (tests/fuzz_corpus.rs): an OTLP protobuf export
//! request, as either signal, is judged or refused, never a panic, and refused as broken
//! exactly when the OpenTelemetry project's generated types refuse to decode it (the
//! reference `packetproof`'s own protobuf reader is held to; a request they decode may
//! still be refused for what it says, an id of the wrong length).

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use packetproof::trace::{judge_export, packets::Packets, Encoding, Options, Signal};
use prost::Message;

pub fn run(bytes: &[u8]) {
    for signal in [Signal::Traces, Signal::Logs] {
        let read = judge_export(bytes, Encoding::Protobuf, signal, &Packets::default(), Options::default());
        let refusal = read.err().map(|e| e.to_string());
        let broken = refusal.as_deref().is_some_and(|e| e.contains("not an OTLP protobuf"));
        let decoded = match signal {
            Signal::Traces => ExportTraceServiceRequest::decode(bytes).is_ok(),
            Signal::Logs => ExportLogsServiceRequest::decode(bytes).is_ok(),
        };
        assert_eq!(broken, !decoded, "{signal:?}: refused {refusal:?}, decoded by the generated types: {decoded}");
    }
}
