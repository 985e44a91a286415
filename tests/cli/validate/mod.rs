//! `packetproof validate`: the interop packets, their hashes, single-character
//! tampering, and one negative packet per contract rule, each its own trial, on a
//! small self-contained packet built here and (ignored when absent) on the
//! interop packets.

mod contract;

use crate::support;
use crate::support::run;
use contract::{built_packet, rehash};
use libtest_mimic::Trial;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[track_caller]
fn read_packet(path: &Path) -> Map<String, Value> {
    match serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap() {
        Value::Object(map) => map,
        _ => panic!("{} is not an object", path.display()),
    }
}

fn write_json(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
    path
}
// ---------------------------------------------------------------- validate: interop

/// The reference exporter's samples carry generator prompts in their asset
/// examples: with the policy at `warn` they validate, noted.
fn warn_args() -> Vec<PathBuf> {
    ["--asset-example-prompts", "warn"].map(PathBuf::from).to_vec()
}

fn suffix_args(dir: &Path) -> Vec<PathBuf> {
    let mut args = vec![PathBuf::from("--google-suffix-file"), dir.join("google-suffix.txt")];
    args.extend(warn_args());
    args
}

fn interop_packets_validate() {
    let dir = support::interop_dir();
    let anthropic = dir.join("runtime-packet.anthropic.json");
    let mut args = warn_args();
    args.extend(["validate", "--packet"].map(PathBuf::from));
    args.push(anthropic.clone());
    let output = run(&args);
    assert_eq!(output.code, 0, "{}", output.describe());
    assert_output_snapshot!("validate_interop_anthropic_warned", output);
    // Under the project's own policy the same generator prompts fail the packet.
    let output = run([OsStr::new("validate"), OsStr::new("--packet"), anthropic.as_os_str()]);
    assert_eq!(output.code, 1, "{}", output.describe());
    assert_output_snapshot!("validate_interop_anthropic_failed", output);

    let google = dir.join("runtime-packet.google.json");
    let mut args: Vec<PathBuf> = vec![PathBuf::from("validate")];
    args.extend(suffix_args(&dir));
    args.push(PathBuf::from("--packet"));
    args.push(google.clone());
    args.extend(["--format", "json"].map(PathBuf::from));
    let output = run(&args);
    assert_eq!(output.code, 0, "{}", output.describe());
    let report: Value = serde_json::from_str(&output.stdout).unwrap();
    assert_eq!(report["ok"], json!(true), "{report}");

    // Without the override the project's own (different) suffix is expected.
    let output = run([OsStr::new("validate"), OsStr::new("--packet"), google.as_os_str()]);
    assert_eq!(output.code, 1, "{}", output.describe());
    assert!(output.stdout.clone().contains("$.effectiveUserMessage"), "{}", output.describe());
}

/// The exactInputHash material exactly as the seed spells it, built here independently.
fn seed_material(packet: &Map<String, Value>) -> Value {
    let mut material = json!({
        "attempt": packet["attempt"],
        "provider": packet["provider"],
        "model": packet["model"],
        "maxTokens": packet["maxTokens"],
        "messages": [
            { "role": "system", "content": packet["systemPrompt"] },
            { "role": "user", "content": packet["effectiveUserMessage"] },
        ],
    });
    if let Some(schema) = packet.get("outputSchema") {
        material["outputSchema"] = schema.clone();
    }
    material
}

#[track_caller]
fn canon_hash(file: &Path) -> String {
    let output = run([OsStr::new("canon"), file.as_os_str(), OsStr::new("--hash")]);
    assert_eq!(output.code, 0, "{}", output.describe());
    output.stdout.clone().trim_end().to_owned()
}

fn canon_hash_of_the_hash_material_equals_the_stored_hashes() {
    let dir = support::interop_dir();
    let temp = tempfile::tempdir().unwrap();
    for name in ["runtime-packet.anthropic.json", "runtime-packet.google.json"] {
        let packet = read_packet(&dir.join(name));
        let material = write_json(temp.path(), "material.json", &seed_material(&packet));
        assert_eq!(canon_hash(&material), packet["exactInputHash"].as_str().unwrap(), "{name}: exactInputHash");
        let mut rest = packet.clone();
        rest.remove("checksum");
        let rest = write_json(temp.path(), "rest.json", &Value::Object(rest));
        assert_eq!(canon_hash(&rest), packet["checksum"].as_str().unwrap(), "{name}: checksum");
    }
}

/// Change one character of a string (the middle letter or digit).
fn tweak(s: &mut String) {
    let chars: Vec<char> = s.chars().collect();
    let i = (chars.len() / 2..chars.len())
        .chain(0..chars.len() / 2)
        .find(|&i| chars[i].is_ascii_alphanumeric())
        .expect("a letter to change");
    let replacement = if chars[i] == 'a' { 'b' } else { 'a' };
    *s = chars.iter().enumerate().map(|(j, &c)| if j == i { replacement } else { c }).collect();
}

/// The first string with a letter or digit, depth first, inside `value`.
fn first_string(value: &mut Value) -> Option<&mut String> {
    match value {
        Value::String(s) if s.chars().any(|c| c.is_ascii_alphanumeric()) => Some(s),
        Value::Array(items) => items.iter_mut().find_map(first_string),
        Value::Object(map) => map.values_mut().find_map(first_string),
        _ => None,
    }
}

/// Findings of `validate --format json` as (check, path) pairs; an error unless the
/// exit status is 1 and the report says `"ok": false`.
fn failing(packet_file: &Path, extra: &[PathBuf]) -> Result<BTreeSet<(String, String)>, String> {
    let mut args: Vec<PathBuf> = vec![PathBuf::from("validate")];
    args.extend(extra.iter().cloned());
    args.extend(["--format", "json", "--packet"].map(PathBuf::from));
    args.push(packet_file.to_path_buf());
    let output = run(&args);
    let report: Value = serde_json::from_str(&output.stdout).map_err(|e| format!("{e}: {}", output.describe()))?;
    if output.code != 1 || report["ok"] != json!(false) {
        return Err(format!("expected status 1 and ok=false: {}", output.describe()));
    }
    let findings = report["results"][0]["findings"].as_array().ok_or("no findings array")?;
    Ok(findings
        .iter()
        .map(|f| (f["check"].as_str().unwrap_or("").to_owned(), f["path"].as_str().unwrap_or("").to_owned()))
        .collect())
}

fn changing_one_character_of_a_hashed_field_breaks_the_named_hash() {
    let dir = support::interop_dir();
    let temp = tempfile::tempdir().unwrap();
    type Edit = fn(&mut Map<String, Value>);
    // (field, edit for non-string fields, covered by exactInputHash); strings get `tweak`.
    let edits: [(&str, Edit, bool); 7] = [
        ("systemPrompt", |_| {}, true),
        ("effectiveUserMessage", |_| {}, true),
        ("model", |_| {}, true),
        ("maxTokens", |p| p["maxTokens"] = json!(p["maxTokens"].as_u64().unwrap() + 1), true),
        ("outputSchema", |p| tweak(first_string(&mut p["outputSchema"]["schema"]).unwrap()), true),
        ("renderInput", |p| tweak(first_string(&mut p["renderInput"]).unwrap()), false),
        ("userMessage", |_| {}, false),
    ];
    let mut failures = Vec::new();
    for (name, extra) in
        [("runtime-packet.anthropic.json", warn_args()), ("runtime-packet.google.json", suffix_args(&dir))]
    {
        let original = read_packet(&dir.join(name));
        for (field, edit, in_exact_input) in edits {
            if !original.contains_key(field) {
                continue; // Google packets carry no outputSchema.
            }
            let mut packet = original.clone();
            match packet.get_mut(field) {
                Some(Value::String(s)) => tweak(s),
                _ => edit(&mut packet),
            }
            assert_ne!(packet[field], original[field], "{field} unchanged");
            let file = write_json(temp.path(), "tampered.json", &Value::Object(packet));
            let found = match failing(&file, &extra) {
                Ok(found) => found,
                Err(e) => {
                    failures.push(format!("{name}: {field}: {e}"));
                    continue;
                }
            };
            let names = |key: &str| {
                found.contains(&(
                    format!("packet::{}", if key == "checksum" { "checksum" } else { "exact-input-hash" }),
                    format!("$.{key}"),
                ))
            };
            if !names("checksum") || names("exactInputHash") != in_exact_input {
                failures.push(format!(
                    "{name}: {field}: exactInputHash expected {in_exact_input}, checksum expected; found {found:?}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn validate_text_report_names_the_failing_path() {
    let temp = tempfile::tempdir().unwrap();
    let mut packet = built_packet(false);
    packet["resolvedBranch"]["neighbours"] = json!("left-only");
    rehash(&mut packet);
    let file = write_json(temp.path(), "packet.json", &Value::Object(packet));
    validate_both_formats(&file, 1, "failed", temp.path());
}

/// `validate` of `file` as text and as JSON: exit `code`, and each whole output
/// against its snapshot (`validate_text_<name>`, `validate_json_<name>`).
#[track_caller]
fn validate_both_formats(file: &Path, code: i32, name: &str, project: &Path) {
    for format in ["text", "json"] {
        let output = run([
            OsStr::new("validate"),
            OsStr::new("--format"),
            OsStr::new(format),
            OsStr::new("--packet"),
            file.as_os_str(),
        ]);
        assert_eq!(output.code, code, "{}", output.describe());
        assert_output_snapshot!(format!("validate_{format}_{name}"), output, project);
    }
}

/// The whole report of a packet that holds, as text and as JSON.
fn validate_reports_a_packet_that_holds() {
    let temp = tempfile::tempdir().unwrap();
    let file = write_json(temp.path(), "packet.json", &Value::Object(built_packet(false)));
    validate_both_formats(&file, 0, "ok", temp.path());
}

fn validate_refuses_unreadable_packets_with_status_2() {
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("packet.json");
    std::fs::write(&file, b"{\"packetVersion\":1,\"packetVersion\":1}").unwrap();
    let output = run([OsStr::new("validate"), OsStr::new("--packet"), file.as_os_str()]);
    assert_eq!(output.code, 2, "{}", output.describe());
    assert_output_snapshot!("validate_duplicate_key", output, temp.path());
    let output = run([OsStr::new("validate"), OsStr::new("--packet"), temp.path().join("absent.json").as_os_str()]);
    assert_eq!(output.code, 2, "{}", output.describe());
    assert_output_snapshot!("validate_missing_file", output, temp.path());
}
/// An agent-request.json is named for what it is, not listed as a broken packet.
fn validate_says_an_agent_request_is_not_a_packet() {
    let temp = tempfile::tempdir().unwrap();
    let request = packetproof::provider::agent_request(&built_packet(false));
    let file = write_json(temp.path(), "agent-request.json", &request);
    let output = run([OsStr::new("validate"), OsStr::new("--packet"), file.as_os_str()]);
    assert_eq!(output.code, 2, "{}", output.describe());
    assert_output_snapshot!("validate_an_agent_request", output, temp.path());
}

/// A compile input given to validate is named as one, not listed as 23 contract findings.
fn validate_says_a_compile_input_is_not_a_packet() {
    let request = support::root().join("fixtures/google-staged-both-selected/request.json");
    let output = run([OsStr::new("validate"), OsStr::new("--packet"), request.as_os_str()]);
    assert_eq!(output.code, 2, "{}", output.describe());
    assert_output_snapshot!("validate_a_compile_input", output);
}

/// A Google packet with another exporter's suffix fails, and the finding names the option.
fn a_google_suffix_mismatch_hints_at_the_option() {
    let temp = tempfile::tempdir().unwrap();
    let mut packet = built_packet(true);
    let user = packet["userMessage"].as_str().unwrap().to_owned();
    packet["effectiveUserMessage"] = json!(format!("{user}\nAnswer with JSON only."));
    rehash(&mut packet);
    let file = write_json(temp.path(), "packet.json", &Value::Object(packet));
    let output = run([OsStr::new("validate"), OsStr::new("--packet"), file.as_os_str()]);
    assert_eq!(output.code, 1, "{}", output.describe());
    assert_output_snapshot!("validate_google_suffix_mismatch", output, temp.path());
}

pub fn trials() -> Vec<Trial> {
    let mut trials = trials![
        validate_text_report_names_the_failing_path,
        validate_reports_a_packet_that_holds,
        validate_refuses_unreadable_packets_with_status_2,
        validate_says_an_agent_request_is_not_a_packet,
        validate_says_a_compile_input_is_not_a_packet,
        a_google_suffix_mismatch_hints_at_the_option,
    ];
    trials.extend(interop_trials![
        interop_packets_validate,
        canon_hash_of_the_hash_material_equals_the_stored_hashes,
        changing_one_character_of_a_hashed_field_breaks_the_named_hash,
    ]);
    trials.extend(contract::contract_trials());
    trials
}
