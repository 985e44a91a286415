//! Strict JSON parsing never panics, and what it accepts prints canonically and parses
//! back to the same value.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(value) = packetproof::canonical::parse(bytes) {
        let canonical = packetproof::canonical::to_vec(&value);
        let again = packetproof::canonical::parse(&canonical).expect("canonical bytes parse");
        assert_eq!(packetproof::canonical::to_vec(&again), canonical, "canonical form is a fixed point");
    }
});
