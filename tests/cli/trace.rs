//! `packetproof trace`: the recorded traces through the binary, in text, JSON and
//! JUnit, with its exit codes (the verdicts themselves: tests/trace_recordings.rs).

use crate::support::{copy_tree, root, Output, Project};
#[path = "../../crates/packetproof/src/otlp/encode.rs"]
mod encode;
use libtest_mimic::Trial;
use packetproof::canonical;
use serde_json::json;

pub fn trials() -> Vec<Trial> {
    crate::trials![
        trace_reports_every_call_and_fails_on_unreviewed_or_mismatched,
        trace_quotes_hostile_input_bounded_and_escaped
    ]
}

fn trace(suite: &Project, args: &[&str]) -> Output {
    suite.run(&[&["trace"], args].concat())
}

/// This crate's suite with the templates the recorded packets were compiled from (the
/// recording script copies them): the recordings are judged as recorded, and a prompt
/// edit since fails the conformance gate, not these tests.
fn recorded_suite() -> Project {
    let suite = Project::suite(&[]);
    std::fs::remove_dir_all(suite.path(TEMPLATES)).unwrap();
    copy_tree(&root().join(RECORDED_TEMPLATES), &suite.path(TEMPLATES));
    suite
}

const TEMPLATES: &str = "references/prompts";
const RECORDED_TEMPLATES: &str = "tests/recordings/sdk/prompts";
const PACKETS: &str = "tests/recordings/sdk/packets";
const CONTENT: &str = "tests/recordings/traces/google-genai.content-on-spans.jsonl";
const NO_CONTENT: &str = "tests/recordings/traces/google-genai.no-content.jsonl";

fn trace_reports_every_call_and_fails_on_unreviewed_or_mismatched() {
    let suite = recorded_suite();
    let text = trace(&suite, &[CONTENT, "--packets", PACKETS]);
    assert_eq!(text.code, 1, "{}", text.describe());
    assert_output_snapshot!("trace_text", text);

    // Nothing passes unjudged: calls without content fail, unless allowed.
    let unjudged = trace(&suite, &[NO_CONTENT, "--packets", PACKETS, "--packets", &format!("{PACKETS}/google.json")]);
    assert_eq!(unjudged.code, 1, "{}", unjudged.describe());
    assert_output_snapshot!("trace_no_content", unjudged);
    let allowed = trace(&suite, &[NO_CONTENT, "--packets", PACKETS, "--allow-unjudged"]);
    assert_eq!(allowed.code, 0, "{}", allowed.describe());
    assert!(!allowed.stdout.contains("FAILED"), "{}", allowed.describe());

    // An empty export is 0 calls, not invalid JSON; it fails unless allowed.
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "{}\n").unwrap();
    let none = trace(&suite, &[empty.to_str().unwrap(), "--packets", PACKETS]);
    assert_eq!(none.code, 1, "{}", none.describe());
    assert!(
        none.stdout.contains("0 spans read, 0 GenAI calls") && none.stdout.contains("FAILED: 0 GenAI calls"),
        "{}",
        none.describe()
    );
    let junit = trace(&suite, &[empty.to_str().unwrap(), "--packets", PACKETS, "--format", "junit"]);
    assert_eq!(junit.code, 1, "{}", junit.describe());
    assert!(junit.stdout.contains("<testcase name=\"no GenAI call\""), "{}", junit.stdout);
    assert_eq!(trace(&suite, &[empty.to_str().unwrap(), "--packets", PACKETS, "--allow-unjudged"]).code, 0);

    // A protobuf export (what the SDK's OTLP/HTTP exporter sends) reads as its JSON twin.
    let line = std::fs::read_to_string(root().join(CONTENT)).unwrap().lines().next().unwrap().to_owned();
    let binary = dir.path().join("first.pb");
    std::fs::write(&binary, encode::encode_json(&serde_json::from_str(&line).unwrap())).unwrap();
    let from_binary = trace(&suite, &[binary.to_str().unwrap(), "--packets", PACKETS]);
    assert_eq!(from_binary.code, 0, "{}", from_binary.describe());
    assert!(from_binary.stdout.contains(": matched (packet "), "{}", from_binary.describe());

    let json = trace(&suite, &[CONTENT, NO_CONTENT, "--packets", PACKETS, "--format", "json"]);
    assert_eq!(json.code, 1, "{}", json.describe());
    let report = canonical::parse(json.stdout.as_bytes()).unwrap();
    assert_eq!(report["calls"].as_array().unwrap().len(), 10);
    assert_eq!(report["counts"]["notJudgeable"], 5);
    assert_eq!(report["formatVersion"], 1);
    assert_eq!(report["ok"], false);
    assert_eq!(report["calls"][2]["verdict"], "mismatched");
    assert_eq!(report["calls"][2]["maxTokens"], 16000);
    assert_eq!(report["calls"][2]["differences"][0], "max tokens 16000; the packet's are 32000");

    let junit = trace(&suite, &[CONTENT, NO_CONTENT, "--packets", PACKETS, "--format", "junit"]);
    assert_eq!(junit.code, 1, "{}", junit.describe());
    // Ten calls (five not judgeable: failures, as nothing passes unjudged) and the two
    // rules that did not run on a packet, skipped with why.
    assert!(junit.stdout.contains("tests=\"12\" disabled=\"2\" errors=\"0\" failures=\"8\""), "{}", junit.stdout);
    let allowed = trace(&suite, &[CONTENT, NO_CONTENT, "--packets", PACKETS, "--format", "junit", "--allow-unjudged"]);
    assert!(allowed.stdout.contains("tests=\"12\" disabled=\"7\" errors=\"0\" failures=\"3\""), "{}", allowed.stdout);
    assert!(junit.stdout.contains("<skipped message=\"needs the compile request"), "{}", junit.stdout);

    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.jsonl");
    let text = std::fs::read_to_string(root().join(CONTENT)).unwrap();
    std::fs::write(&broken, format!("{}\n{{\"resourceSpans\": 1}}\n", text.lines().next().unwrap())).unwrap();
    let malformed = trace(&suite, &[broken.to_str().unwrap(), "--packets", PACKETS]);
    assert_eq!(malformed.code, 2, "{}", malformed.describe());
    assert_output_snapshot!("trace_malformed", malformed, dir.path());

    let missing = trace(&suite, &[CONTENT]);
    assert_eq!(missing.code, 2, "{}", missing.describe());
    assert_output_snapshot!("trace_without_packets", missing);
    let no_packets = trace(&suite, &[CONTENT, "--packets", "tests/recordings/traces"]);
    assert_eq!(no_packets.code, 2, "{}", no_packets.describe());
    assert_output_snapshot!("trace_no_packet_found", no_packets);
}

/// What a trace file says is quoted as bounded, escaped excerpts:
/// a private key at a wrongly typed spot is never printed, a 100 KB string is not
/// repeated whole, a span name cannot fake a line of the report, a 5 MB one is cut.
fn trace_quotes_hostile_input_bounded_and_escaped() {
    let suite = recorded_suite();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: String| {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        file.display().to_string()
    };
    let key = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIDONOTPRINTME\n-----END PRIVATE KEY-----";
    let keyed = write("key.jsonl", json!({"resourceSpans": [{"scopeSpans": key}]}).to_string() + "\n");
    let out = trace(&suite, &[&keyed, "--packets", PACKETS]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(
        !out.stderr.contains("DONOTPRINTME") && out.stderr.contains("scopeSpans: expected an array"),
        "{}",
        out.describe()
    );
    let long = write("long.jsonl", json!({"resourceSpans": [{"scopeSpans": "y".repeat(100_000)}]}).to_string() + "\n");
    let out = trace(&suite, &[&long, "--packets", PACKETS]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.len() < 2_000, "{} bytes", out.stderr.len());
    // A key in a model attribute, a long model name: quoted bounded in the verdict.
    let mut keyed: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(root().join(CONTENT)).unwrap().lines().next().unwrap()).unwrap();
    for attribute in keyed["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"].as_array_mut().unwrap() {
        if attribute["key"] == "gen_ai.request.model" {
            attribute["value"] = json!({"stringValue": key});
        }
    }
    let file = write("keyed-model.jsonl", format!("{keyed}\n"));
    for format in ["text", "json", "junit"] {
        let out = trace(&suite, &[&file, "--packets", PACKETS, "--format", format]);
        assert_eq!(out.code, 1, "{}", out.describe());
        assert!(
            !out.stdout.contains("DONOTPRINTME") && out.stdout.contains("never shown"),
            "{format}: {}",
            out.describe()
        );
    }
    // A span named to fake the summary, and one of 5 MB.
    let line = std::fs::read_to_string(root().join(CONTENT)).unwrap().lines().next().unwrap().to_owned();
    let mut forged: serde_json::Value = serde_json::from_str(&line).unwrap();
    let span = &mut forged["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    span["name"] = json!("chat\n5 spans read, 5 GenAI calls: 5 matched, 0 mismatched, 0 unreviewed, 0 not judgeable");
    let mut huge = forged.clone();
    huge["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"] = json!("z".repeat(5 << 20));
    let file = write("forged.jsonl", format!("{forged}\n{huge}\n"));
    for format in ["text", "junit"] {
        let out = trace(&suite, &[&file, "--packets", PACKETS, "--format", format]);
        assert!(!out.stdout.lines().any(|l| l.starts_with("5 spans read")), "{format}: {}", out.stdout);
        assert!(out.stdout.len() < 20_000, "{format}: a 5 MB span name printed whole ({} bytes)", out.stdout.len());
    }
}
