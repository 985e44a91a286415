//! The app's evaluator again, in Rust: the same verdicts as `app/evaluate_reply.py`
//! (the rules are written there), so the suite's tests run where Python is absent.
//! `cargo test` builds it; the tests name it in harness.toml `[evaluator]` in place of
//! the Python one.

use serde_json::{json, Value};

const PROMISES: [&str; 5] = ["refund you", "we will refund", "guarantee", "i promise", "will be available by"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [packet_file, output_file] = args.as_slice() else {
        eprintln!("usage: rust_evaluator PACKET.json OUTPUT");
        std::process::exit(2);
    };
    let read = |file: &str| std::fs::read(file).unwrap_or_else(|e| fail(&format!("{file}: {e}")));
    let packet: Value = serde_json::from_slice(&read(packet_file)).unwrap_or_else(|e| fail(&e.to_string()));
    let failures = judge(&packet, &read(output_file));
    let verdict = json!({"ok": failures.is_empty(), "failures": failures});
    println!("{}", serde_json::to_string_pretty(&verdict).expect("a verdict serializes"));
    std::process::exit(i32::from(!failures.is_empty()));
}

fn fail(message: &str) -> ! {
    eprintln!("rust_evaluator: {message}");
    std::process::exit(2);
}

fn judge(packet: &Value, answer: &[u8]) -> Vec<Value> {
    let failure = |stage: &str, message: String| json!({"stage": stage, "message": message});
    let Ok(text) = std::str::from_utf8(answer) else {
        return vec![failure("reply", "the reply is not UTF-8 text".into())];
    };
    if text.trim().is_empty() {
        return vec![failure("reply", "the reply is empty".into())];
    }
    let mut failures = Vec::new();
    let name = packet["renderInput"]["customerName"].as_str().unwrap_or_else(|| fail("no renderInput.customerName"));
    let first_name = name.split_whitespace().next().unwrap_or_default();
    if !text.contains(first_name) {
        failures.push(failure("greeting", format!("the reply does not address {first_name} by name")));
    }
    let unix = text.replace("\r\n", "\n");
    let paragraphs = unix.split("\n\n").filter(|block| !block.trim().is_empty()).count();
    if paragraphs > 3 {
        failures.push(failure("length", format!("{paragraphs} paragraphs; at most 3")));
    }
    let lower = text.to_lowercase();
    for phrase in PROMISES.iter().filter(|phrase| lower.contains(*phrase)) {
        failures.push(failure("promises", format!("the reply promises what support cannot: '{phrase}'")));
    }
    failures
}
