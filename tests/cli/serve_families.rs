//! Every family of the convention table (`trace::FAMILIES`) recorded under
//! tests/recordings/traces/families/, sent to `serve` as its exporter would send it, over
//! OTLP/HTTP (each OTLP/JSON export a request) and OTLP/gRPC (the protobuf export), spans
//! then log records: the same verdicts as `trace` gives the same files (exact matched,
//! drift unreviewed, content off not judgeable naming the family's switch), one call each.

use super::grpc::{call, framed, LOGS, TRACES};
use super::Server;
use crate::support::root;
use libtest_mimic::Trial;
use std::path::PathBuf;

pub fn trials() -> Vec<Trial> {
    crate::trials![
        serve_judges_every_family_recorded_as_trace_does_over_http,
        serve_judges_every_family_recorded_as_trace_does_over_grpc
    ]
}

/// (stem, mode, the verdict `trace` gives it, what a not-judgeable one's reason says: the
/// switch, or what the family never records).
fn recordings() -> Vec<(String, &'static str, &'static str, &'static str)> {
    let dir = root().join("tests/recordings/traces");
    let mut out = Vec::new();
    for family in packetproof::trace::FAMILIES {
        for stem in family.recordings.iter().filter(|s| s.starts_with("families/")) {
            for (mode, verdict) in [("exact", "matched"), ("drift", "unreviewed"), ("no-content", "not-judgeable")] {
                // A family that never records part of the input has no call judged whole.
                let switch = family.switch.split(' ').next().unwrap();
                let (verdict, says) = match family.declared.unrecorded {
                    Some(unrecorded) if mode != "no-content" => ("not-judgeable", unrecorded),
                    _ => (verdict, switch),
                };
                if dir.join(format!("{stem}.{mode}.jsonl")).exists() {
                    out.push((stem.to_string(), mode, verdict, says));
                }
            }
        }
    }
    assert!(out.len() >= 15, "{out:?}");
    out
}

fn file(stem: &str, mode: &str, tail: &str) -> Option<PathBuf> {
    let path = root().join(format!("tests/recordings/traces/{stem}.{mode}.{tail}"));
    path.exists().then_some(path)
}

fn judge_each(protocol: &str, send: impl Fn(&Server, &str, &str)) {
    let server = Server::start(&["--join-window", "1"]);
    let mut expected = std::collections::BTreeMap::new();
    for (stem, mode, verdict, says) in recordings() {
        send(&server, &stem, mode);
        *expected.entry(verdict.to_owned()).or_insert(0.0) += 1.0;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while server.verdicts() != expected {
            assert!(std::time::Instant::now() < deadline, "{protocol} {stem} {mode}: {:?}", server.verdicts());
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if verdict == "not-judgeable" {
            let findings = server.findings();
            let reason = findings.last().unwrap()["reason"].as_str().unwrap_or_default().to_owned();
            assert!(reason.contains(says), "{protocol} {stem} {mode}: {:#}", findings.last().unwrap());
        }
    }
}

/// The exports of a file (one per line, one record each: the recording's exporter
/// exported each as it ended) as one, as the SDK's batch processor sends them.
fn one_export(text: &str) -> String {
    let mut merged = serde_json::Map::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let export: serde_json::Value = serde_json::from_str(line).unwrap();
        for (key, list) in export.as_object().unwrap() {
            let slot = merged.entry(key.clone()).or_insert_with(|| serde_json::Value::Array(Vec::new()));
            slot.as_array_mut().unwrap().extend(list.as_array().unwrap().iter().cloned());
        }
    }
    serde_json::Value::Object(merged).to_string()
}

fn serve_judges_every_family_recorded_as_trace_does_over_http() {
    judge_each("http", |server, stem, mode| {
        for (tail, path) in [("jsonl", "/v1/traces"), ("logs.jsonl", "/v1/logs")] {
            if let Some(file) = file(stem, mode, tail) {
                server.post_json(path, &[&one_export(&std::fs::read_to_string(file).unwrap())]);
            }
        }
    });
}

fn serve_judges_every_family_recorded_as_trace_does_over_grpc() {
    judge_each("grpc", |server, stem, mode| {
        for (tail, path) in [("pb", TRACES), ("logs.pb", LOGS)] {
            if let Some(file) = file(stem, mode, tail) {
                let answered = call(server.addr, path, &[], framed(false, &std::fs::read(file).unwrap()));
                assert_eq!(answered.grpc_status().as_deref(), Some("0"), "{stem} {mode} {tail}");
            }
        }
    });
}
