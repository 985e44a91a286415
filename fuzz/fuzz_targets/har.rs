//! A captured request (a body or a HAR file) is read or refused for every API, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use packetproof::wire::{capture, Api};

fuzz_target!(|bytes: &[u8]| {
    for api in [Api::from_name("anthropic").unwrap(), Api::from_name("openai-chat").unwrap(), Api::from_name("openai-responses").unwrap(), Api::from_name("gemini").unwrap()] {
        let _ = capture::parse(bytes, "fuzz.har", api);
    }
});
