//! `packetproof trace`: the recorded traces through the binary, in text, JSON and
//! JUnit, with its exit codes (the verdicts themselves: tests/trace_recordings.rs).

use crate::support::{bin, exec, root, Output};
use libtest_mimic::Trial;
use packetproof::canonical;

pub fn trials() -> Vec<Trial> {
    crate::trials![trace_reports_every_call_and_fails_on_unreviewed_or_mismatched]
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
