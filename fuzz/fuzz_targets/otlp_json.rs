//! An OTLP/JSON export request (traces or logs) is judged or refused, never a panic, and
//! refused as JSON exactly when `canonical::parse` refuses it (fuzz/shared/).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../shared/otlp_json.rs"]
mod otlp_json;

fuzz_target!(|bytes: &[u8]| otlp_json::run(bytes));
