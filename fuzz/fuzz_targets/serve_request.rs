#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../shared/serve_request.rs"]
mod serve_request;

fuzz_target!(|input: &[u8]| serve_request::run(input));
