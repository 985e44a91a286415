//! `packetproof trace`: the recorded traces through the binary, in text, JSON and
//! JUnit, with its exit codes (the verdicts themselves: tests/trace_recordings.rs).

use crate::support::{bin, exec, root, Output};
use libtest_mimic::Trial;
use packetproof::canonical;
use serde_json::json;

pub fn trials() -> Vec<Trial> {
    crate::trials![
        trace_reports_every_call_and_fails_on_unreviewed_or_mismatched,
        trace_quotes_hostile_input_bounded_and_escaped
    ]
}

fn trace(args: &[&str]) -> Output {
    exec(bin().arg("trace").args(args))
}

const PACKETS: &str = "tests/recordings/sdk/packets";
const CONTENT: &str = "tests/recordings/traces/google-genai.content-on-spans.jsonl";
const NO_CONTENT: &str = "tests/recordings/traces/google-genai.no-content.jsonl";

fn trace_reports_every_call_and_fails_on_unreviewed_or_mismatched() {
    let text = trace(&[CONTENT, "--packets", PACKETS]);
    assert_eq!(text.code, 1, "{}", text.describe());
    assert_output_snapshot!("trace_text", text);

    let held = trace(&[NO_CONTENT, "--packets", PACKETS, "--packets", &format!("{PACKETS}/google.json")]);
    assert_eq!(held.code, 0, "{}", held.describe());
    assert_output_snapshot!("trace_no_content", held);

    let json = trace(&[CONTENT, NO_CONTENT, "--packets", PACKETS, "--format", "json"]);
    assert_eq!(json.code, 1, "{}", json.describe());
    let report = canonical::parse(json.stdout.as_bytes()).unwrap();
    assert_eq!(report["calls"].as_array().unwrap().len(), 10);
    assert_eq!(report["counts"]["notJudgeable"], 5);
    assert_eq!(report["formatVersion"], 1);
    assert_eq!(report["ok"], false);
    assert_eq!(report["calls"][2]["verdict"], "mismatched");
    assert_eq!(report["calls"][2]["maxTokens"], 16000);
    assert_eq!(report["calls"][2]["differences"][0], "max tokens 16000; the packet's are 32000");

    let junit = trace(&[CONTENT, NO_CONTENT, "--packets", PACKETS, "--format", "junit"]);
    assert_eq!(junit.code, 1, "{}", junit.describe());
    // Ten calls (five not judgeable, skipped) and the two rules that did not run on a packet, skipped with why.
    assert!(junit.stdout.contains("tests=\"12\" disabled=\"7\" errors=\"0\" failures=\"3\""), "{}", junit.stdout);
    assert!(junit.stdout.contains("<skipped message=\"needs the compile request"), "{}", junit.stdout);

    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.jsonl");
    let text = std::fs::read_to_string(root().join(CONTENT)).unwrap();
    std::fs::write(&broken, format!("{}\n{{\"resourceSpans\": 1}}\n", text.lines().next().unwrap())).unwrap();
    let malformed = trace(&[broken.to_str().unwrap(), "--packets", PACKETS]);
    assert_eq!(malformed.code, 2, "{}", malformed.describe());
    assert_output_snapshot!("trace_malformed", malformed, dir.path());

    let missing = trace(&[CONTENT]);
    assert_eq!(missing.code, 2, "{}", missing.describe());
    assert_output_snapshot!("trace_without_packets", missing);
    let no_packets = trace(&[CONTENT, "--packets", "tests/recordings/traces"]);
    assert_eq!(no_packets.code, 2, "{}", no_packets.describe());
    assert_output_snapshot!("trace_no_packet_found", no_packets);
}

/// What a trace file says is quoted as bounded, escaped excerpts:
/// a private key at a wrongly typed spot is never printed, a 100 KB string is not
/// repeated whole, a span name cannot fake a line of the report, a 5 MB one is cut.
fn trace_quotes_hostile_input_bounded_and_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: String| {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        file.display().to_string()
    };
    let key = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIDONOTPRINTME\n-----END PRIVATE KEY-----";
    let keyed = write("key.jsonl", json!({"resourceSpans": [{"scopeSpans": key}]}).to_string() + "\n");
    let out = trace(&[&keyed, "--packets", PACKETS]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(!out.stderr.contains("DONOTPRINTME") && out.stderr.contains("never shown"), "{}", out.describe());
    let long = write("long.jsonl", json!({"resourceSpans": [{"scopeSpans": "y".repeat(100_000)}]}).to_string() + "\n");
    let out = trace(&[&long, "--packets", PACKETS]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.len() < 2_000 && out.stderr.contains("more characters"), "{} bytes", out.stderr.len());
    // A span named to fake the summary, and one of 5 MB.
    let line = std::fs::read_to_string(root().join(CONTENT)).unwrap().lines().next().unwrap().to_owned();
    let mut forged: serde_json::Value = serde_json::from_str(&line).unwrap();
    let span = &mut forged["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    span["name"] = json!("chat\n5 spans read, 5 GenAI calls: 5 matched, 0 mismatched, 0 unreviewed, 0 not judgeable");
    let mut huge = forged.clone();
    huge["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"] = json!("z".repeat(5 << 20));
    let file = write("forged.jsonl", format!("{forged}\n{huge}\n"));
    for format in ["text", "junit"] {
        let out = trace(&[&file, "--packets", PACKETS, "--format", format]);
        assert!(!out.stdout.lines().any(|l| l.starts_with("5 spans read")), "{format}: {}", out.stdout);
        assert!(out.stdout.len() < 20_000, "{format}: a 5 MB span name printed whole ({} bytes)", out.stdout.len());
    }
}
