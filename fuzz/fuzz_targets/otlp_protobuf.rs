//! An OTLP protobuf export request (traces or logs) is judged or refused, never a panic,
//! and refused as broken exactly when the generated types refuse it (fuzz/shared/).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../shared/otlp_protobuf.rs"]
mod otlp_protobuf;

fuzz_target!(|bytes: &[u8]| otlp_protobuf::run(bytes));
