//! `packetproof wire`: the provider request body a packet implies (stdout or
//! `--out`), and `--check` of a captured request (a bare body or a HAR file).
//! The library's side of every difference is in tests/wire_check.rs.

use crate::support::{bin, compiled_packet, exec, packet_file, root, Output};
use libtest_mimic::Trial;
use packetproof::canonical;
use packetproof::wire::{self, Api};
use serde_json::{json, Value};
use std::path::Path;

pub(crate) const ANTHROPIC: &str = "anthropic-staged-both-selected-interop-shape";
pub(crate) const OPENAI: &str = "openai-staged-alone-selected";
pub(crate) const GOOGLE: &str = "google-staged-both-selected";

pub fn trials() -> Vec<Trial> {
    crate::trials![
        wire_prints_writes_and_checks_the_body,
        a_model_past_its_output_limit_is_refused_by_export_validate_and_wire
    ]
}

/// The body the case's packet implies, from the library (the CLI must print the same).
pub(crate) fn body(case: &str, api: Api) -> Value {
    wire::body(&compiled_packet(case), api, case).unwrap()
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

pub(crate) fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn wire_prints_writes_and_checks_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let packet_file = packet_file(dir.path(), OPENAI).display().to_string();
    let printed = packetproof(&["wire", "--packet", &packet_file, "--api", "openai-responses"]);
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    assert_eq!(
        canonical::parse(printed.stdout.as_bytes()).unwrap(),
        body(OPENAI, Api::from_name("openai-responses").unwrap())
    );
    let out = dir.path().join("body.json");
    let written = packetproof(&["wire", "--packet", &packet_file, "--api", "openai-responses", "--out", path(&out)]);
    assert_eq!(written.code, 0, "{}", written.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), printed.stdout);

    let held = packetproof(&["wire", "--packet", &packet_file, "--api", "openai-responses", "--check", path(&out)]);
    assert_eq!(held.code, 0, "{}{}", held.stdout, held.stderr);

    let mut edited = body(OPENAI, Api::from_name("openai-responses").unwrap());
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

    // A capture through a local server or proxy: refused as going elsewhere, held with --base-url.
    let local = dir.path().join("local.har");
    let sent = body(OPENAI, Api::from_name("openai-responses").unwrap());
    std::fs::write(&local, har(vec![entry("http://127.0.0.1:8080/v1/responses", &sent)])).unwrap();
    let check = |extra: &[&str]| {
        let mut args = vec!["wire", "--packet", &packet_file, "--api", "openai-responses", "--check", path(&local)];
        args.extend_from_slice(extra);
        packetproof(&args)
    };
    let elsewhere = check(&[]);
    assert_eq!(elsewhere.code, 1, "{}", elsewhere.stdout);
    assert!(elsewhere.stdout.contains("endpoint: the request went to http://127.0.0.1:8080/v1/responses; expected https://api.openai.com/v1/responses"), "{}", elsewhere.stdout);
    let through = check(&["--base-url", "http://127.0.0.1:8080/"]);
    assert_eq!(through.code, 0, "{}{}", through.stdout, through.stderr);
    let bad = check(&["--base-url", "127.0.0.1:8080"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("expected an http:// or https:// URL"), "{}", bad.stderr);
    let without_check =
        packetproof(&["wire", "--packet", &packet_file, "--api", "openai-responses", "--base-url", "http://x"]);
    assert_eq!(without_check.code, 2, "{}", without_check.stderr);

    // A provider's name suggests its APIs; anything else lists them all; an API of
    // another provider is refused.
    let mut transcript = String::new();
    for api in ["openai", "google", "palm", "anthropic"] {
        let out = packetproof(&["wire", "--packet", &packet_file, "--api", api]);
        assert_eq!(out.code, 2, "{api}: {}", out.describe());
        transcript.push_str(&format!("=== --api {api}\n{}\n", out.describe()));
    }
    assert_output_snapshot!(text: "wire_refuses_apis", transcript, dir.path());
}

fn a_model_past_its_output_limit_is_refused_by_export_validate_and_wire() {
    let dir = tempfile::tempdir().unwrap();
    let request_file = root().join("fixtures").join(ANTHROPIC).join("request.json");
    let mut request = canonical::parse(&std::fs::read(&request_file).unwrap()).unwrap();
    request["model"] = json!("claude-opus-4-1");
    request["maxTokens"] = json!(64000);
    let request_file = dir.path().join("request.json");
    std::fs::write(&request_file, serde_json::to_vec(&request).unwrap()).unwrap();
    let exported = packetproof(&["export", "--request", path(&request_file)]);
    assert_eq!(exported.code, 1, "{}", exported.describe());
    assert_output_snapshot!("export_past_the_output_limit", exported, dir.path());

    let mut packet = compiled_packet(ANTHROPIC);
    packet["maxTokens"] = json!(10_000_000);
    packetproof::digest::seal(packet.as_object_mut().unwrap());
    let packet_file = dir.path().join("packet.json");
    std::fs::write(&packet_file, serde_json::to_vec(&packet).unwrap()).unwrap();
    let validated = packetproof(&["validate", "--packet", path(&packet_file)]);
    assert_eq!(validated.code, 1, "{}", validated.describe());
    assert_output_snapshot!("validate_past_the_output_limit", validated, dir.path());
    let wired = packetproof(&["wire", "--packet", path(&packet_file), "--api", "anthropic"]);
    // A packet that fails a rule is exit 1 in wire as in validate (2 is "could not run").
    assert_eq!(wired.code, 1, "{}", wired.describe());
    assert_output_snapshot!("wire_past_the_output_limit", wired, dir.path());
}
