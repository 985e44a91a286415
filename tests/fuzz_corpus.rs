//! The fuzz corpus (fuzz/corpus/<target>/, kept by `scripts/fuzz.sh`, which runs each
//! cargo-fuzz target for a bounded time on nightly) replayed on stable: every input the
//! fuzzer found interesting goes through the same reader as in fuzz/fuzz_targets/, and
//! none may panic. A crash the fuzzer finds is added here and stays a test.

use packetproof::wire::{capture, Api};
use std::path::{Path, PathBuf};

#[path = "../fuzz/shared/otlp_json.rs"]
mod otlp_json;
#[path = "../fuzz/shared/otlp_protobuf.rs"]
mod otlp_protobuf;
#[path = "../fuzz/shared/serve_request.rs"]
mod serve_request;

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no input", dir.display());
    files
}

/// Run `read` on every input of `target`'s corpus, naming the input a panic came from.
fn replay(target: &str, read: fn(&[u8])) {
    for file in corpus(target) {
        let bytes = std::fs::read(&file).unwrap();
        if std::panic::catch_unwind(|| read(&bytes)).is_err() {
            panic!("{} panicked on {}", target, file.display());
        }
    }
}

#[test]
fn canonical_json_corpus() {
    replay("canonical_json", |bytes| {
        if let Ok(value) = packetproof::canonical::parse(bytes) {
            let canonical = packetproof::canonical::to_vec(&value);
            let again = packetproof::canonical::parse(&canonical).expect("canonical bytes parse");
            assert_eq!(packetproof::canonical::to_vec(&again), canonical);
        }
    });
}

#[test]
fn otlp_json_corpus() {
    replay("otlp_json", otlp_json::run);
}

#[test]
fn otlp_protobuf_corpus() {
    replay("otlp_protobuf", otlp_protobuf::run);
}

#[test]
fn har_corpus() {
    replay("har", |bytes| {
        for api in [
            Api::from_name("anthropic").unwrap(),
            Api::from_name("openai-chat").unwrap(),
            Api::from_name("openai-responses").unwrap(),
            Api::from_name("gemini").unwrap(),
        ] {
            let _ = capture::parse(bytes, "fuzz.har", api);
        }
    });
}

#[test]
fn serve_request_corpus() {
    replay("serve_request", serve_request::run);
}

/// The replay can fail: a reader that panics on an input is named.
#[test]
fn a_panicking_reader_is_named_with_its_input() {
    let caught = std::panic::catch_unwind(|| replay("har", |_| panic!("boom")));
    let message = caught.unwrap_err();
    let text = message.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(text.contains("har panicked on") && text.contains("fuzz/corpus/har/"), "{text}");
}
