//! A captured request (a body or a HAR file) is read or refused for every API, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use packetproof::wire::{capture, Api};

fuzz_target!(|bytes: &[u8]| {
    for api in [Api::Anthropic, Api::OpenaiChat, Api::OpenaiResponses, Api::Gemini] {
        let _ = capture::parse(bytes, "fuzz.har", api);
    }
});
