//! CLI tests of the foundation: `canon` (refusals and happy paths) and `validate`
//! (the interop packets, their hashes, single-character tampering, and one negative
//! packet per contract rule). Every test runs the real binary from the crate root.
//!
//! Tests that need `../shared/interop` print `SKIPPED` when it is absent; the contract
//! negatives also run on a small self-contained packet built here, so they never skip.

use packetproof::{digest, Config};
use serde_json::{json, Map, Number, Value};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const INTEROP: &str = "../shared/interop";

fn packetproof<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(env!("CARGO_BIN_EXE_packetproof"));
    command.current_dir(ROOT).env_remove("PACKETPROOF_ROOT").args(args);
    command
}

fn run<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> Output {
    packetproof(args).stdin(Stdio::null()).output().expect("run packetproof")
}

fn run_with_stdin<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I, input: &[u8]) -> Output {
    let mut child = packetproof(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn packetproof");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn describe(output: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr)
    )
}

/// The interop folder, or `None` after printing that the caller skips.
fn interop(what: &str) -> Option<PathBuf> {
    let dir = Path::new(ROOT).join(INTEROP);
    if dir.join("runtime-packet.anthropic.json").is_file() {
        Some(dir)
    } else {
        println!("SKIPPED: {what}: {INTEROP} is absent");
        None
    }
}

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

// ---------------------------------------------------------------- canon: refusals

/// One malformed input per class: (class, file bytes, expected `line:column`, message fragment).
/// Positions are 1-based and point at the last character read of the offending token.
const MALFORMED: &[(&str, &[u8], &str, &str)] = &[
    ("duplicate key", br#"{"a":1,"a":2}"#, "1:10", "duplicate object key"),
    ("duplicate key, nested", b"{\"o\":{\n\"k\":1,\"k\":2}}", "2:9", "duplicate object key"),
    ("duplicate key via escape", br#"{"a":1,"\u0061":2}"#, "1:15", "duplicate object key"),
    ("lone leading surrogate escape", br#"["\ud800"]"#, "1:9", "lone surrogate"),
    ("lone trailing surrogate escape", br#""\udc00""#, "1:7", "lone surrogate"),
    ("raw surrogate bytes", b"\"\xed\xa0\x80\"", "1:2", "invalid UTF-8"),
    ("invalid UTF-8", b"{\"a\":\n\"\xff\"}", "2:2", "invalid UTF-8"),
    ("byte-order mark", b"\xef\xbb\xbf[]", "1:1", "byte-order mark"),
    ("number overflow", b"[1e400]", "1:6", "out of range"),
    ("negative number overflow", b"-1e400", "1:6", "out of range"),
    ("NaN", b"[NaN]", "1:2", "expected a JSON value"),
    ("Infinity", b"Infinity", "1:1", "expected a JSON value"),
    ("trailing data", b"[1] 2", "1:5", "trailing data"),
    ("trailing comma", b"{\"a\":[1,2,]}", "1:11", "trailing comma"),
    ("comment", b"// note\n{}", "1:1", "expected a JSON value"),
    ("single quotes", b"{'a':1}", "1:2", "key must be a string"),
    ("leading zero", b"[007]", "1:3", "invalid number"),
    ("empty file", b"", "1:1", "EOF while parsing a value"),
    ("whitespace only", b"\n\n", "3:1", "EOF while parsing a value"),
    ("truncated JSON", b"{\"a\":[1,{\"b\":", "1:13", "EOF while parsing"),
    ("unterminated string", b"[\"abc]", "1:6", "EOF while parsing a string"),
    ("bad escape", br#""a\qb""#, "1:4", "invalid escape"),
    ("raw control character in string", b"\"a\x01b\"", "1:3", "control character"),
    ("missing colon", br#"{"a" 1}"#, "1:6", "expected `:`"),
    ("unquoted key", b"{a:1}", "1:2", "key must be a string"),
];

#[test]
fn canon_refuses_each_malformed_class_with_status_2_and_a_position() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, (class, bytes, position, fragment)) in MALFORMED.iter().enumerate() {
        let file = dir.path().join(format!("case{i:02}.json"));
        std::fs::write(&file, bytes).unwrap();
        let output = run([OsStr::new("canon"), file.as_os_str()]);
        let stderr = text(&output.stderr);
        let located = format!("{}:{position}:", file.display());
        if output.status.code() != Some(2)
            || !output.stdout.is_empty()
            || !stderr.contains(&located)
            || !stderr.contains(fragment)
        {
            failures.push(format!(
                "{class}: expected status 2, empty stdout, stderr with {located:?} and {fragment:?}\n{}",
                describe(&output)
            ));
        }
    }
    assert!(MALFORMED.len() >= 20);
    assert!(failures.is_empty(), "{} of {} classes wrong:\n{}", failures.len(), MALFORMED.len(), failures.join("\n\n"));
}

#[test]
fn canon_refuses_too_deep_nesting_by_max_depth() {
    let dir = tempfile::tempdir().unwrap();
    let levels = packetproof::canonical::MAX_DEPTH + 1;
    let file = dir.path().join("deep.json");
    std::fs::write(&file, format!("{}{}", "[".repeat(levels), "]".repeat(levels))).unwrap();
    let output = run([OsStr::new("canon"), file.as_os_str()]);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert!(output.stdout.is_empty());
    assert!(text(&output.stderr).contains(&format!("{}:1:{levels}: ", file.display())), "{}", describe(&output));
}

#[test]
fn canon_refuses_missing_file_and_directory_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-packet.json");
    for (class, path) in [("missing file", missing.as_path()), ("directory", dir.path())] {
        let output = run([OsStr::new("canon"), path.as_os_str()]);
        assert_eq!(output.status.code(), Some(2), "{class}: {}", describe(&output));
        assert!(output.stdout.is_empty(), "{class}: {}", describe(&output));
        let stderr = text(&output.stderr);
        assert!(stderr.contains(&path.display().to_string()), "{class}: stderr does not name the file: {stderr}");
    }
    let output = run([OsStr::new("canon"), missing.as_os_str()]);
    assert!(text(&output.stderr).to_lowercase().contains("no such file"), "{}", describe(&output));
    let output = run([OsStr::new("canon"), dir.path().as_os_str()]);
    assert!(text(&output.stderr).contains("directory"), "{}", describe(&output));
}

#[test]
fn canon_refuses_malformed_stdin_naming_stdin() {
    let output = run_with_stdin(["canon", "-"], b"{\"a\":1,\n \"a\":2}");
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert!(output.stdout.is_empty());
    assert!(text(&output.stderr).contains("<stdin>:2:4:"), "{}", describe(&output));
}

#[test]
fn canon_usage_errors_exit_2() {
    let output = run(["canon", "--no-such-flag"]);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert!(output.stdout.is_empty());
}

// ---------------------------------------------------------------- canon: happy paths

const INPUT: &[u8] = b"{ \"b\": [1.0, \"\\u00e9\"],\n  \"a\": -0 }\n";
const CANONICAL: &[u8] = b"{\"a\":0,\"b\":[1,\"\xc3\xa9\"]}";
/// `printf '{"a":0,"b":[1,"\xc3\xa9"]}' | sha256sum`
const CANONICAL_SHA256: &str = "sha256:6a059a0fd139a758c00b61f78527f4ba4ea50e3d13d72527b7ff1d5f3795086d";

#[test]
fn canon_prints_canonical_bytes_without_newline() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.json");
    std::fs::write(&file, INPUT).unwrap();
    let output = run([OsStr::new("canon"), file.as_os_str()]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(text(&output.stdout), text(CANONICAL));
    assert!(output.stderr.is_empty(), "{}", describe(&output));
}

#[test]
fn canon_hash_prints_sha256_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.json");
    std::fs::write(&file, INPUT).unwrap();
    let output = run([OsStr::new("canon"), file.as_os_str(), OsStr::new("--hash")]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let stdout = text(&output.stdout);
    assert_eq!(stdout, format!("{CANONICAL_SHA256}\n"));
    let hex = stdout.trim_end().strip_prefix("sha256:").unwrap();
    assert!(hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
}

#[test]
fn canon_reads_stdin_with_dash_or_no_file() {
    for args in [vec!["canon", "-"], vec!["canon"]] {
        let output = run_with_stdin(&args, INPUT);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", describe(&output));
        assert_eq!(text(&output.stdout), text(CANONICAL), "{args:?}");
    }
    let output = run_with_stdin(["canon", "-", "--hash"], INPUT);
    assert_eq!(text(&output.stdout), format!("{CANONICAL_SHA256}\n"));
}

// ---------------------------------------------------------------- validate: interop

fn suffix_args(dir: &Path) -> Vec<PathBuf> {
    vec![PathBuf::from("--google-suffix-file"), dir.join("google-suffix.txt")]
}

#[test]
fn interop_packets_validate() {
    let Some(dir) = interop("interop packets validate") else { return };
    let anthropic = dir.join("runtime-packet.anthropic.json");
    let output = run([OsStr::new("validate"), OsStr::new("--packet"), anthropic.as_os_str()]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(text(&output.stdout).contains("ok (0 finding(s))"), "{}", describe(&output));

    let google = dir.join("runtime-packet.google.json");
    let mut args: Vec<PathBuf> = suffix_args(&dir);
    args.extend(["validate", "--packet"].map(PathBuf::from));
    args.push(google.clone());
    args.extend(["--format", "json"].map(PathBuf::from));
    let output = run(&args);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["ok"], json!(true), "{report}");

    // Without the override the project's own (different) suffix is expected.
    let output = run([OsStr::new("validate"), OsStr::new("--packet"), google.as_os_str()]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert!(text(&output.stdout).contains("$.effectiveUserMessage"), "{}", describe(&output));
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

fn canon_hash(file: &Path) -> String {
    let output = run([OsStr::new("canon"), file.as_os_str(), OsStr::new("--hash")]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    text(&output.stdout).trim_end().to_owned()
}

#[test]
fn canon_hash_of_the_hash_material_equals_the_stored_hashes() {
    let Some(dir) = interop("hash material of the interop packets") else { return };
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
    let mut args: Vec<PathBuf> = extra.to_vec();
    args.extend(["validate", "--format", "json", "--packet"].map(PathBuf::from));
    args.push(packet_file.to_path_buf());
    let output = run(&args);
    let report: Value = serde_json::from_slice(&output.stdout).map_err(|e| format!("{e}: {}", describe(&output)))?;
    if output.status.code() != Some(1) || report["ok"] != json!(false) {
        return Err(format!("expected status 1 and ok=false: {}", describe(&output)));
    }
    let findings = report["results"][0]["findings"].as_array().ok_or("no findings array")?;
    Ok(findings
        .iter()
        .map(|f| (f["check"].as_str().unwrap_or("").to_owned(), f["path"].as_str().unwrap_or("").to_owned()))
        .collect())
}

#[test]
fn changing_one_character_of_a_hashed_field_breaks_the_named_hash() {
    let Some(dir) = interop("single-character tampering of the interop packets") else { return };
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
    for (name, extra) in [("runtime-packet.anthropic.json", vec![]), ("runtime-packet.google.json", suffix_args(&dir))]
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

// ---------------------------------------------------------------- validate: contract negatives

fn config() -> Config {
    Config::load(Path::new(ROOT), None).expect("harness.toml loads")
}

fn rehash(packet: &mut Map<String, Value>) {
    digest::seal(packet);
}

/// A small valid packet of our own, so the contract negatives run without interop.
fn built_packet(google: bool) -> Map<String, Value> {
    let user = "Adapt the saved testimonial block to slot 3 of the onboarding flow.\nKeep the tone calm.";
    let effective = if google { format!("{user}{}", config().google_suffix) } else { user.to_owned() };
    let mut packet = json!({
        "packetVersion": 1,
        "agentId": "updateBlockFromLibrary",
        "taskType": "block-update",
        "promptMode": "library-adapt",
        "attempt": 1,
        "provider": if google { "google" } else { "anthropic" },
        "model": if google { "gemini-2.5-pro" } else { "claude-sonnet-4-5" },
        "maxTokens": 64000,
        "promptPaths": ["system/library-adapt.md", "partials/evidence-selected.md"],
        "promptVersions": { "system/library-adapt.md": "v4", "partials/evidence-selected.md": "v2" },
        "systemPrompt": "You adapt one saved block to a new place in a screen plan. Answer with one block.",
        "userMessage": user,
        "effectiveUserMessage": effective,
        "renderInput": {
            "target": { "slot": 3, "screen": "welcome", "theme": { "accent": "teal" } },
            "evidence": { "mode": "selected-only", "items": [ { "id": "ev-1", "accessible": true, "text": "People like short steps." } ] },
            "operatorInstruction": "Keep the tone calm."
        },
        "resolvedBranch": {
            "agentId": "updateBlockFromLibrary",
            "insertionMode": "staged",
            "sourceScope": "project",
            "evidenceMode": "selected-only",
            "neighbours": "both",
            "hasVariableConflicts": false,
            "hasAssetIntents": true,
            "hasTargetTheme": true,
            "operatorInstructionPresent": true
        }
    });
    if !google {
        packet["outputSchema"] = json!({
            "name": "submit_block",
            "schema": { "type": "object", "required": ["block"], "properties": { "block": { "type": "object" } } }
        });
    }
    let Value::Object(mut packet) = packet else { unreachable!() };
    rehash(&mut packet);
    packet
}

#[derive(Clone, Copy, PartialEq)]
enum Applies {
    All,
    Google,
    NotGoogle,
}

/// How a case finishes the packet after its edit.
#[derive(Clone, Copy)]
enum Finish {
    /// Recompute both hashes, so only the rule under test fails.
    Rehash,
    /// The edit already set the hashes as it wants them.
    AsIs,
    /// Recompute, then write this literal JSON number text in place of the double it
    /// parses to (as the edit inserted it).
    RehashThenWrite(&'static str),
}

/// A contract case: edit the packet and return the JSON paths that must be the only findings.
struct Case {
    name: &'static str,
    applies: Applies,
    finish: Finish,
    edit: fn(&mut Map<String, Value>) -> Vec<String>,
}

fn path(key: &str) -> String {
    format!("$.{key}")
}

fn version_path(prompt_path: &str) -> String {
    format!("$.promptVersions[{}]", Value::from(prompt_path))
}

fn all_version_paths(p: &Map<String, Value>) -> Vec<String> {
    p["promptVersions"].as_object().unwrap().keys().map(|k| version_path(k)).collect()
}

fn first_prompt_path(p: &Map<String, Value>) -> String {
    p["promptPaths"][0].as_str().unwrap().to_owned()
}

macro_rules! branch_cases {
    ($($field:literal => $bad:expr),* $(,)?) => {
        [$(
            Case { name: concat!("resolvedBranch.", $field, " invalid"), applies: Applies::All, finish: Finish::Rehash, edit: |p| {
                p["resolvedBranch"][$field] = json!($bad);
                vec![format!("$.resolvedBranch.{}", $field)]
            } },
            Case { name: concat!("resolvedBranch.", $field, " missing"), applies: Applies::All, finish: Finish::Rehash, edit: |p| {
                p["resolvedBranch"].as_object_mut().unwrap().remove($field);
                vec![format!("$.resolvedBranch.{}", $field)]
            } },
        )*]
    };
}

fn cases() -> Vec<Case> {
    let mut cases = vec![
        Case {
            name: "packetVersion 2",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["packetVersion"] = json!(2);
                vec![path("packetVersion")]
            },
        },
        Case {
            name: "packetVersion as a string",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["packetVersion"] = json!("1");
                vec![path("packetVersion")]
            },
        },
        Case {
            name: "attempt 2",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["attempt"] = json!(2);
                vec![path("attempt")]
            },
        },
        Case {
            name: "agentId of another agent",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["agentId"] = json!("updateBlock");
                vec![path("agentId"), "$.resolvedBranch.agentId".into()]
            },
        },
        Case {
            name: "taskType",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["taskType"] = json!("block-create");
                vec![path("taskType")]
            },
        },
        Case {
            name: "promptMode",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["promptMode"] = json!("fresh-compose");
                vec![path("promptMode")]
            },
        },
        Case {
            name: "provider unknown",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                p["provider"] = json!("acme");
                vec![path("provider")]
            },
        },
        Case {
            name: "provider missing",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                p.remove("provider");
                vec![path("provider")]
            },
        },
        Case {
            name: "model blank",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["model"] = json!(" \t ");
                vec![path("model")]
            },
        },
        Case {
            name: "model a number",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["model"] = json!(42);
                vec![path("model")]
            },
        },
        Case {
            name: "systemPrompt empty",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["systemPrompt"] = json!("");
                vec![path("systemPrompt")]
            },
        },
        Case {
            name: "effectiveUserMessage missing",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p.remove("effectiveUserMessage");
                vec![path("effectiveUserMessage")]
            },
        },
        Case {
            name: "maxTokens 0",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["maxTokens"] = json!(0);
                vec![path("maxTokens")]
            },
        },
        Case {
            name: "maxTokens negative",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["maxTokens"] = json!(-64000);
                vec![path("maxTokens")]
            },
        },
        Case {
            name: "maxTokens fractional",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["maxTokens"] = json!(6400.5);
                vec![path("maxTokens")]
            },
        },
        Case {
            name: "maxTokens a string",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["maxTokens"] = json!("64000");
                vec![path("maxTokens")]
            },
        },
        Case {
            name: "renderInput an array",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["renderInput"] = json!([]);
                vec![path("renderInput")]
            },
        },
        Case {
            name: "resolvedBranch a string",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["resolvedBranch"] = json!("staged");
                vec![path("resolvedBranch")]
            },
        },
        Case {
            name: "promptPaths empty",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["promptPaths"] = json!([]);
                let mut paths = all_version_paths(p);
                paths.push(path("promptPaths"));
                paths
            },
        },
        Case {
            name: "promptPaths duplicate",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                let first = first_prompt_path(p);
                let paths = p["promptPaths"].as_array_mut().unwrap();
                paths.push(json!(first));
                vec![format!("$.promptPaths[{}]", paths.len() - 1)]
            },
        },
        Case {
            name: "promptPaths blank entry",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["promptPaths"].as_array_mut().unwrap().push(json!(" "));
                let n = p["promptPaths"].as_array().unwrap().len();
                vec![format!("$.promptPaths[{}]", n - 1)]
            },
        },
        Case {
            name: "promptVersions missing a path",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                let first = first_prompt_path(p);
                p["promptVersions"].as_object_mut().unwrap().remove(&first);
                vec![version_path(&first)]
            },
        },
        Case {
            name: "promptVersions names an extra path",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["promptVersions"]["extra/unused.md"] = json!("v1");
                vec![version_path("extra/unused.md")]
            },
        },
        Case {
            name: "promptVersions blank version",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                let first = first_prompt_path(p);
                p["promptVersions"][first.as_str()] = json!("");
                vec![version_path(&first)]
            },
        },
        Case {
            name: "promptVersions an array",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["promptVersions"] = json!([]);
                vec![path("promptVersions")]
            },
        },
        Case {
            name: "resolvedBranch.agentId mismatch",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["resolvedBranch"]["agentId"] = json!("updateBlock");
                vec!["$.resolvedBranch.agentId".into()]
            },
        },
        Case {
            name: "resolvedBranch.agentId missing",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["resolvedBranch"].as_object_mut().unwrap().remove("agentId");
                vec!["$.resolvedBranch.agentId".into()]
            },
        },
        Case {
            name: "Google packet with outputSchema",
            applies: Applies::Google,
            finish: Finish::Rehash,
            edit: |p| {
                p.insert("outputSchema".into(), json!({ "name": "submit_block", "schema": { "type": "object" } }));
                vec![path("outputSchema")]
            },
        },
        Case {
            name: "Google packet with outputSchema null",
            applies: Applies::Google,
            finish: Finish::Rehash,
            edit: |p| {
                p.insert("outputSchema".into(), Value::Null);
                vec![path("outputSchema")]
            },
        },
        Case {
            name: "Google packet with the wrong suffix",
            applies: Applies::Google,
            finish: Finish::Rehash,
            edit: |p| {
                let user = p["userMessage"].as_str().unwrap().to_owned();
                p["effectiveUserMessage"] = json!(format!("{user}\n\nAnswer in JSON."));
                vec![path("effectiveUserMessage")]
            },
        },
        Case {
            name: "Google packet without the suffix",
            applies: Applies::Google,
            finish: Finish::Rehash,
            edit: |p| {
                p["effectiveUserMessage"] = p["userMessage"].clone();
                vec![path("effectiveUserMessage")]
            },
        },
        Case {
            name: "non-Google packet without outputSchema",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                p.remove("outputSchema");
                vec![path("outputSchema")]
            },
        },
        Case {
            name: "non-Google packet with outputSchema null",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                p["outputSchema"] = Value::Null;
                vec![path("outputSchema")]
            },
        },
        Case {
            name: "non-Google outputSchema without a name",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                p["outputSchema"].as_object_mut().unwrap().remove("name");
                vec!["$.outputSchema.name".into()]
            },
        },
        Case {
            name: "non-Google outputSchema.schema not an object",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                p["outputSchema"]["schema"] = json!(true);
                vec!["$.outputSchema.schema".into()]
            },
        },
        Case {
            name: "non-Google effectiveUserMessage differs from userMessage",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                let user = p["userMessage"].as_str().unwrap().to_owned();
                p["effectiveUserMessage"] = json!(format!("{user} Also be brief."));
                vec![path("effectiveUserMessage")]
            },
        },
        Case {
            name: "unknown top-level field",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p.insert("debugNotes".into(), json!("kept for later"));
                vec![path("debugNotes")]
            },
        },
        Case {
            name: "forbidden key deep in renderInput",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["renderInput"]["layout"] = json!({ "layers": [ { "kind": "image" }, { "aiAssets": [] } ] });
                vec!["$.renderInput.layout.layers[1].aiAssets".into()]
            },
        },
        Case {
            name: "forbidden storage URI in a renderInput string",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["renderInput"]["layout"] = json!({ "hero": "gs://media-bucket/hero-original" });
                vec!["$.renderInput.layout.hero".into()]
            },
        },
        Case {
            name: "forbidden media URL in systemPrompt",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                let prompt = p["systemPrompt"].as_str().unwrap().to_owned();
                p["systemPrompt"] = json!(format!("{prompt}\nReuse https://cdn.example.com/img/hero-final.png as is."));
                vec![path("systemPrompt")]
            },
        },
        Case {
            name: "evidence items under no-evidence",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["resolvedBranch"]["evidenceMode"] = json!("no-evidence");
                vec!["$.renderInput.evidence.items".into()]
            },
        },
        Case {
            name: "inaccessible evidence item",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["renderInput"]["evidence"]["items"][0]["accessible"] = json!(false);
                vec!["$.renderInput.evidence.items[0]".into()]
            },
        },
        Case {
            name: "inexact integer just past 2^53",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["renderInput"]["count"] = json!(9007199254740993u64);
                vec!["$.renderInput.count".into()]
            },
        },
        Case {
            name: "inexact integer past the u64 range",
            applies: Applies::All,
            finish: Finish::RehashThenWrite("123456789012345678901234567890"),
            edit: |p| {
                p["renderInput"]["count"] = Value::Number(Number::from_f64(123456789012345678901234567890.0).unwrap());
                vec!["$.renderInput.count".into()]
            },
        },
        Case {
            name: "exactInputHash in uppercase",
            applies: Applies::All,
            finish: Finish::AsIs,
            edit: |p| {
                rehash(p);
                p["exactInputHash"] =
                    json!(p["exactInputHash"].as_str().unwrap().to_uppercase().replace("SHA256:", "sha256:"));
                let checksum = digest::packet_checksum(p);
                p["checksum"] = json!(checksum);
                vec![path("exactInputHash")]
            },
        },
        Case {
            name: "checksum with a short hex",
            applies: Applies::All,
            finish: Finish::AsIs,
            edit: |p| {
                rehash(p);
                p["checksum"] = json!("sha256:16be3248");
                vec![path("checksum")]
            },
        },
        Case {
            name: "exactInputHash missing",
            applies: Applies::All,
            finish: Finish::AsIs,
            edit: |p| {
                p.remove("exactInputHash");
                let checksum = digest::packet_checksum(p);
                p["checksum"] = json!(checksum);
                vec![path("exactInputHash")]
            },
        },
    ];
    cases.extend(branch_cases! {
        "insertionMode" => "deferred",
        "sourceScope" => "global",
        "evidenceMode" => "all-evidence",
        "neighbours" => "left-only",
        "hasVariableConflicts" => "false",
        "hasAssetIntents" => 1,
        "hasTargetTheme" => Value::Null,
        "operatorInstructionPresent" => "yes",
    });
    cases
}

/// Run every applicable case against one valid base packet; returns the failures.
fn run_cases(label: &str, base: &Map<String, Value>, extra: &[PathBuf]) -> Vec<String> {
    let temp = tempfile::tempdir().unwrap();
    let base_file = write_json(temp.path(), "base.json", &Value::Object(base.clone()));
    let mut args: Vec<PathBuf> = extra.to_vec();
    args.extend(["validate", "--packet"].map(PathBuf::from));
    args.push(base_file);
    let output = run(&args);
    assert_eq!(output.status.code(), Some(0), "{label}: the base packet must validate\n{}", describe(&output));

    let google = base["provider"] == json!("google");
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in cases() {
        if case.applies == Applies::Google && !google || case.applies == Applies::NotGoogle && google {
            continue;
        }
        ran += 1;
        let mut packet = base.clone();
        let expected: BTreeSet<String> = (case.edit)(&mut packet).into_iter().collect();
        let mut bytes = match case.finish {
            Finish::AsIs => serde_json::to_vec_pretty(&packet).unwrap(),
            Finish::Rehash | Finish::RehashThenWrite(_) => {
                rehash(&mut packet);
                serde_json::to_vec_pretty(&packet).unwrap()
            }
        };
        if let Finish::RehashThenWrite(literal) = case.finish {
            let double = Number::from_f64(literal.parse().unwrap()).unwrap();
            let written = serde_json::to_string(&double).unwrap();
            let packet_text = text(&bytes);
            assert!(packet_text.contains(&written), "{}: {written} not found in the packet text", case.name);
            bytes = packet_text.replace(&written, literal).into_bytes();
        }
        let file = temp.path().join("case.json");
        std::fs::write(&file, bytes).unwrap();
        let found = match failing(&file, extra) {
            Ok(found) => found,
            Err(e) => {
                failures.push(format!("{label}: {}: {e}", case.name));
                continue;
            }
        };
        let paths: BTreeSet<String> = found.iter().map(|(_, p)| p.clone()).collect();
        if paths != expected {
            failures.push(format!("{label}: {}: expected findings at {expected:?}, found {found:?}", case.name));
        }
    }
    println!("{label}: {ran} contract cases");
    failures
}

#[test]
fn each_contract_rule_fails_alone_on_a_built_packet() {
    let mut failures = run_cases("built anthropic packet", &built_packet(false), &[]);
    failures.extend(run_cases("built google packet", &built_packet(true), &[]));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn each_contract_rule_fails_alone_on_the_interop_packets() {
    let Some(dir) = interop("contract negatives on the interop packets") else { return };
    let mut failures =
        run_cases("interop anthropic packet", &read_packet(&dir.join("runtime-packet.anthropic.json")), &[]);
    failures.extend(run_cases(
        "interop google packet",
        &read_packet(&dir.join("runtime-packet.google.json")),
        &suffix_args(&dir),
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn validate_text_report_names_the_failing_path() {
    let temp = tempfile::tempdir().unwrap();
    let mut packet = built_packet(false);
    packet["resolvedBranch"]["neighbours"] = json!("left-only");
    rehash(&mut packet);
    let file = write_json(temp.path(), "packet.json", &Value::Object(packet));
    let output = run([OsStr::new("validate"), OsStr::new("--packet"), file.as_os_str()]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("FAILED") && stdout.contains("$.resolvedBranch.neighbours"), "{}", describe(&output));
}

#[test]
fn validate_refuses_unreadable_packets_with_status_2() {
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("packet.json");
    std::fs::write(&file, b"{\"packetVersion\":1,\"packetVersion\":1}").unwrap();
    let output = run([OsStr::new("validate"), OsStr::new("--packet"), file.as_os_str()]);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert!(output.stdout.is_empty());
    assert!(text(&output.stderr).contains(&format!("{}:1:", file.display())), "{}", describe(&output));
    let output = run([OsStr::new("validate"), OsStr::new("--packet"), temp.path().join("absent.json").as_os_str()]);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
}
