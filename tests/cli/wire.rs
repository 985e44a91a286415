//! `packetproof wire`: the provider request body a packet implies (stdout or
//! `--out`), and `--check` of a captured request (a bare body or a HAR file).
//! The library's side of every difference is in tests/wire_check.rs.

use crate::support::{bin, exec, root, Output};
use libtest_mimic::Trial;
use packetproof::wire::{self, Api};
use packetproof::{canonical, Config};
use serde_json::{json, Value};
use std::path::Path;

pub(crate) const ANTHROPIC: &str = "anthropic-staged-both-selected-interop-shape";
pub(crate) const OPENAI: &str = "openai-staged-alone-selected";
pub(crate) const GOOGLE: &str = "google-staged-both-selected";

pub fn trials() -> Vec<Trial> {
    crate::trials![wire_prints_writes_and_checks_the_body]
}

/// The body the packet implies, from the library (the CLI must print the same).
pub(crate) fn body(case: &str, api: Api) -> Value {
    let config = Config::load(root(), None).expect("harness.toml");
    let bytes = std::fs::read(root().join("golden").join(case).join("runtime-packet.json")).unwrap();
    wire::body(&canonical::parse(&bytes).unwrap(), api, &config, case).unwrap()
}

pub(crate) fn har(entries: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}}),
    )
    .unwrap()
}

pub(crate) fn entry(url: &str, body: &Value) -> Value {
    json!({"request": {"method": "POST", "url": url, "headers": [],
        "postData": {"mimeType": "application/json", "text": body.to_string()}}})
}

/// Run the binary from the crate root with `args`.
pub(crate) fn packetproof(args: &[&str]) -> Output {
    exec(bin().args(args))
}

pub(crate) fn golden_packet(case: &str) -> String {
    root().join("golden").join(case).join("runtime-packet.json").display().to_string()
}

pub(crate) fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn wire_prints_writes_and_checks_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let packet_file = golden_packet(OPENAI);
    let printed = packetproof(&["wire", "--packet", &packet_file, "--api", "openai-responses"]);
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    assert_eq!(canonical::parse(printed.stdout.as_bytes()).unwrap(), body(OPENAI, Api::OpenaiResponses));
    let out = dir.path().join("body.json");
    let written = packetproof(&["wire", "--packet", &packet_file, "--api", "openai-responses", "--out", path(&out)]);
    assert_eq!(written.code, 0, "{}", written.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), printed.stdout);

    let held = packetproof(&["wire", "--packet", &packet_file, "--api", "openai-responses", "--check", path(&out)]);
    assert_eq!(held.code, 0, "{}{}", held.stdout, held.stderr);

    let mut edited = body(OPENAI, Api::OpenaiResponses);
    edited["model"] = json!("gpt-4.1");
    let har_file = dir.path().join("cap.har");
    std::fs::write(&har_file, har(vec![entry("https://api.openai.com/v1/responses", &edited)])).unwrap();
    let failed = packetproof(&[
        "wire",
        "--packet",
        &packet_file,
        "--api",
        "openai-responses",
        "--check",
        path(&har_file),
        "--format",
        "json",
    ]);
    assert_eq!(failed.code, 1, "{}{}", failed.stdout, failed.stderr);
    let text =
        packetproof(&["wire", "--packet", &packet_file, "--api", "openai-responses", "--check", path(&har_file)]);
    assert_output_snapshot!("wire_check_model_differs", text, dir.path());
    let report = canonical::parse(failed.stdout.as_bytes()).unwrap();
    assert_eq!(report["results"][0]["findings"][0]["check"], "wire::request");
    assert_eq!(
        report["results"][0]["findings"][0]["path"],
        format!("{} $.log.entries[0].request.postData.text $.model", har_file.display())
    );

    let unknown = packetproof(&["wire", "--packet", &packet_file, "--api", "openai"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("expected one of anthropic, openai-chat, openai-responses, gemini"),
        "{}",
        unknown.stderr
    );

    let refused = packetproof(&["wire", "--packet", &packet_file, "--api", "anthropic"]);
    assert_eq!(refused.code, 2);
    assert!(refused.stderr.contains("the anthropic API serves provider \"anthropic\""), "{}", refused.stderr);
}
