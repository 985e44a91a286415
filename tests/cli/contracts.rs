//! Output contracts: every `--format json` document a command prints is validated
//! against its JSON Schema in `schemas/` (the files the npm package ships), on real
//! runs that hold and that fail; and the schemas refuse what breaks the contract.

use crate::support::{self, Output};
use libtest_mimic::Trial;
use serde_json::{json, Value};
use std::path::Path;

const CASE: &str = "openai-staged-alone-selected";

#[track_caller]
fn schema(name: &str) -> jsonschema::Validator {
    let path = support::root().join("schemas").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{name} is not a valid schema: {e}"))
}

/// `document` satisfies `schema`, every error listed when not.
#[track_caller]
fn assert_valid(validator: &jsonschema::Validator, document: &Value, what: &str) {
    let errors: Vec<String> =
        validator.iter_errors(document).map(|e| format!("{} at {}", e, e.instance_path)).collect();
    assert!(errors.is_empty(), "{what} breaks its schema:\n{}\n{document:#}", errors.join("\n"));
}

/// A document packetproof defines: `formatVersion` is its first key, and every key
/// is camelCase (the values under `before` and `after`, which quote a packet's own
/// JSON, excepted); its schema pins the rest.
#[track_caller]
fn assert_own_document(document: &Value, what: &str) {
    let first = document.as_object().and_then(|members| members.keys().next());
    assert_eq!(first.map(String::as_str), Some("formatVersion"), "{what}: formatVersion is not the first key");
    let mut other_style = Vec::new();
    keys_not_camel_case(document, &mut other_style);
    assert!(other_style.is_empty(), "{what}: keys not in camelCase: {other_style:?}");
}

fn keys_not_camel_case(value: &Value, found: &mut Vec<String>) {
    let camel =
        |key: &str| key.starts_with(|c: char| c.is_ascii_lowercase()) && key.chars().all(|c| c.is_ascii_alphanumeric());
    match value {
        Value::Object(members) => {
            for (key, value) in members {
                if !camel(key) {
                    found.push(key.clone());
                }
                if !matches!(key.as_str(), "before" | "after") {
                    keys_not_camel_case(value, found);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| keys_not_camel_case(item, found)),
        _ => {}
    }
}

#[track_caller]
fn json_of(out: &Output, codes: &[i32]) -> Value {
    assert!(codes.contains(&out.code), "{}", out.describe());
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.describe()))
}

/// A suite from `init`, and one golden packet broken (maxTokens changed: hashes fail).
fn suite_with_a_broken_copy(folder: &crate::support::Project) -> (String, String) {
    let suite = folder.init();
    let good = suite.join(format!("golden/{CASE}/runtime-packet.json"));
    let broken = folder.path("broken.json");
    let text = std::fs::read_to_string(&good).unwrap();
    std::fs::write(&broken, text.replacen("\"maxTokens\": ", "\"maxTokens\": 1", 1)).unwrap();
    (good.display().to_string(), broken.display().to_string())
}

fn report_outputs_match_their_schemas() {
    let folder = crate::support::Project::empty();
    let (good, broken) = suite_with_a_broken_copy(&folder);
    let outcomes = schema("outcomes.schema.json");
    for (packet, code) in [(&good, 0), (&broken, 1)] {
        let doc = json_of(&folder.run_in("suite", &["validate", "--packet", packet, "--format", "json"]), &[code]);
        assert_eq!(doc["formatVersion"], 1);
        assert_valid(&outcomes, &doc, "validate");
        assert_own_document(&doc, "validate");
    }
    let doc = json_of(&folder.run_in("suite", &["schema", "--check", "--format", "json"]), &[0]);
    assert_valid(&outcomes, &doc, "schema --check");
    assert_own_document(&doc, "schema --check");
    // wire --check: the body the packet implies holds; one with another model does not.
    let body = folder.run_in("suite", &["wire", "--packet", &good, "--api", "openai-chat"]);
    assert_eq!(body.code, 0, "{}", body.describe());
    let captured = folder.path("captured.json");
    for (text, code) in [(body.stdout.clone(), 0), (body.stdout.replacen("\"model\": \"", "\"model\": \"x", 1), 1)] {
        std::fs::write(&captured, text).unwrap();
        let captured = captured.display().to_string();
        let args = ["wire", "--packet", &good, "--api", "openai-chat", "--check", &captured, "--format", "json"];
        let doc = json_of(&folder.run_in("suite", &args), &[code]);
        assert_valid(&outcomes, &doc, "wire --check");
        assert_own_document(&doc, "wire --check");
    }
    let verify = schema("verify.schema.json");
    let doc = json_of(&folder.run_in("suite", &["verify", "golden", &broken, "--format", "json"]), &[1]);
    assert_eq!((doc["formatVersion"].clone(), doc["ok"].clone()), (json!(1), json!(false)));
    assert!(doc["results"].as_array().unwrap().iter().any(|r| !r["findings"].as_array().unwrap().is_empty()));
    assert_valid(&verify, &doc, "verify");
    assert_own_document(&doc, "verify");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        match entry.file_type().unwrap().is_dir() {
            true => copy_dir(&entry.path(), &to.join(entry.file_name())),
            false => drop(std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap()),
        }
    }
}

#[track_caller]
fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=packetproof", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn release_check_and_evaluation_match_their_schemas() {
    let folder = crate::support::Project::empty();
    let suite = folder.init();
    git(&suite, &["init", "-q", "-b", "main"]);
    git(&suite, &["add", "-A"]);
    git(&suite, &["commit", "-q", "-m", "base"]);
    let release = schema("release-check.schema.json");
    let clean = json_of(&folder.run_in("suite", &["release-check", "--format", "json"]), &[0]);
    assert_valid(&release, &clean, "release-check (nothing changed)");
    assert_own_document(&clean, "release-check");
    let template = suite.join("references/prompts/system.md.j2");
    std::fs::write(&template, std::fs::read_to_string(&template).unwrap() + "\nOne more rule.\n").unwrap();
    let changed = json_of(&folder.run_in("suite", &["release-check", "--format", "json"]), &[1]);
    assert!(!changed["violations"].as_array().unwrap().is_empty() && !changed["groups"].as_array().unwrap().is_empty());
    assert_valid(&release, &changed, "release-check (a template changed)");
    assert_own_document(&changed, "release-check");
    // JSON is written as it is: a case named with a bidirectional override is that
    // name (text escapes it; JSON escaping it again made an invalid `\u{202e}` escape).
    let odd = "odd\u{202e}case";
    copy_dir(&suite.join(format!("fixtures/{CASE}")), &suite.join(format!("fixtures/{odd}")));
    let with_odd = json_of(&folder.run_in("suite", &["release-check", "--format", "json"]), &[1]);
    assert!(with_odd["cases"].as_array().unwrap().iter().any(|c| c["case"] == odd), "{with_odd:#}");
    assert_valid(&release, &with_odd, "release-check (a case with a bidirectional override)");
    std::fs::remove_dir_all(suite.join(format!("fixtures/{odd}"))).unwrap();
    // evaluate --format json prints the run's evaluation.json.
    let packet = suite.join(format!("golden/{CASE}/runtime-packet.json")).display().to_string();
    let prepared = folder.run_in("", &["prepare", "--packet", &packet, "--out-dir", "run"]);
    assert_eq!(prepared.code, 0, "{}", prepared.describe());
    let evaluation = schema("evaluation.schema.json");
    for (answer, code) in
        [(suite.join(format!("fixtures/{CASE}/run/raw-output.json")), 0), (folder.path("bad.json"), 1)]
    {
        std::fs::write(folder.path("bad.json"), "{\"result\": {}}").unwrap();
        std::fs::copy(&answer, folder.path("run/raw-output.json")).unwrap();
        let _ = std::fs::remove_file(folder.path("run/evaluation.json"));
        let doc = json_of(&folder.run_in("", &["evaluate", "--run-dir", "run", "--format", "json"]), &[code]);
        assert_valid(&evaluation, &doc, "evaluate");
    }
}

/// trace --format json: calls of every verdict, the counts and the skipped rules, versioned.
fn trace_output_matches_its_schema() {
    let schema = schema("trace.schema.json");
    let traces = ["google-genai.content-on-spans.jsonl", "google-genai.no-content.jsonl"]
        .map(|f| support::root().join("tests/recordings/traces").join(f).display().to_string());
    let packets = support::root().join("tests/recordings/sdk/packets").display().to_string();
    let out = support::run(["trace", &traces[0], &traces[1], "--packets", &packets, "--format", "json"]);
    let doc = json_of(&out, &[1]);
    let verdicts: std::collections::BTreeSet<&str> =
        doc["calls"].as_array().unwrap().iter().map(|c| c["verdict"].as_str().unwrap()).collect();
    assert_eq!(verdicts.len(), 4, "every verdict is validated: {verdicts:?}");
    assert!(!doc["skipped"].as_array().unwrap().is_empty(), "{doc:#}");
    assert_valid(&schema, &doc, "trace");
    assert_own_document(&doc, "trace");
    // The schema refuses what breaks the contract: counts in another key style, no version.
    let mut snake = doc.clone();
    snake["counts"]["not_judgeable"] = json!(0);
    assert!(!schema.is_valid(&snake));
    let mut unversioned = doc;
    unversioned.as_object_mut().unwrap().remove("formatVersion");
    assert!(!schema.is_valid(&unversioned));
}

fn test_events_match_their_schema() {
    let folder = crate::support::Project::empty();
    let (good, _) = suite_with_a_broken_copy(&folder);
    let events = schema("test-event.schema.json");
    let mut seen = Vec::new();
    for (args, code) in [(&["test", "--format", "json"][..], 0), (&["test", "--format", "json", CASE][..], 101)] {
        if code == 101 {
            std::fs::write(&good, std::fs::read_to_string(folder.path("broken.json")).unwrap()).unwrap();
        }
        let out = folder.run_in("suite", args);
        assert_eq!(out.code, code, "{}", out.describe());
        for line in out.stdout.lines().filter(|l| l.starts_with('{')) {
            let event: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_valid(&events, &event, "a test event");
            seen.push(format!("{}:{}", event["type"].as_str().unwrap(), event["event"].as_str().unwrap()));
            // No trial is ignored without its reason (libtest's `message`).
            if event["type"] == "test" && event["event"] == "ignored" {
                assert!(event["message"].as_str().is_some_and(|m| !m.is_empty()), "{line}");
            }
        }
    }
    for kind in ["suite:started", "test:started", "test:ok", "test:ignored", "test:failed", "suite:ok", "suite:failed"]
    {
        assert!(seen.iter().any(|s| s == kind), "no {kind} event was validated");
    }
}

/// `checks` lists the whole rule book, each check once, in the library's order, and
/// the document keeps its schema; a check missing from it, or an unknown need, fails.
fn the_rule_book_lists_every_check() {
    let out = support::run(["checks", "--format", "json"]);
    let doc = json_of(&out, &[0]);
    let checks = schema("checks.schema.json");
    assert_valid(&checks, &doc, "checks");
    assert_own_document(&doc, "checks");
    let listed: Vec<&str> = doc["checks"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    let declared: Vec<&str> = packetproof::Check::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(listed, declared);
    let text = support::run(["checks"]);
    assert_eq!(text.code, 0, "{}", text.describe());
    let blocks: Vec<&str> = text.stdout.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(blocks, declared, "one block per check in the text listing");
    let mut broken = doc.clone();
    broken["checks"][0]["needs"] = json!(["a-network"]);
    assert!(!checks.is_valid(&broken), "an unknown need passed the schema");
    broken = doc.clone();
    broken["checks"][0].as_object_mut().unwrap().remove("proves");
    assert!(!checks.is_valid(&broken), "a check without what it proves passed the schema");
}

/// The schemas catch what they claim: a missing or other formatVersion, an unknown key,
/// a finding without its check, an event libtest does not print.
fn the_schemas_refuse_broken_documents() {
    let outcome = json!({"target": "p.json", "ok": false, "findings": [{"check": "packet::checksum", "path": "$.checksum", "message": "m"}], "checks": ["packet::checksum"], "skipped": [{"check": "packet::regenerates", "reason": "no request"}]});
    let outcomes = schema("outcomes.schema.json");
    assert!(outcomes.is_valid(&json!({"formatVersion": 1, "ok": false, "results": [outcome.clone()]})));
    for broken in [
        json!({"ok": false, "results": [outcome.clone()]}),
        json!({"formatVersion": 2, "ok": false, "results": [outcome.clone()]}),
        json!({"formatVersion": 1, "ok": false, "results": [outcome.clone()], "extra": 1}),
        json!({"formatVersion": 1, "ok": false, "results": [{"target": "p", "ok": false, "findings": [{"path": "$", "message": "m"}], "checks": []}]}),
        json!({"formatVersion": 1, "ok": true, "results": [{"target": "p", "ok": true, "findings": []}]}),
        json!({"formatVersion": 1, "ok": true, "results": [{"target": "p", "ok": true, "findings": [], "checks": [], "skipped": [{"check": "packet::regenerates"}]}]}),
    ] {
        assert!(!outcomes.is_valid(&broken), "accepted {broken}");
    }
    let events = schema("test-event.schema.json");
    assert!(events.is_valid(&json!({"type": "test", "name": "a::b", "event": "ok"})));
    assert!(!events.is_valid(&json!({"type": "test", "name": "a::b", "event": "timeout"})));
    assert!(
        !events.is_valid(&json!({"type": "test", "name": "a::b", "event": "failed"})),
        "a failure carries its stdout"
    );
    // One outcome, one definition: the two schemas that embed it agree.
    let defs = |name: &str| {
        let text = std::fs::read_to_string(support::root().join("schemas").join(name)).unwrap();
        serde_json::from_str::<Value>(&text).unwrap()["$defs"].clone()
    };
    assert_eq!(defs("outcomes.schema.json"), defs("verify.schema.json"));
}

pub fn trials() -> Vec<Trial> {
    trials![
        report_outputs_match_their_schemas,
        release_check_and_evaluation_match_their_schemas,
        trace_output_matches_its_schema,
        test_events_match_their_schema,
        the_rule_book_lists_every_check,
        the_schemas_refuse_broken_documents,
    ]
}
