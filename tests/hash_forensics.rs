//! Hash forensics: for each known exporter mistake, a packet whose
//! stored hash was made that way, with the wrong bytes written out here by hand,
//! so the test does not share code with what it tests. The finding must name the
//! cause in words and as the `cause` field.

#[path = "support/mod.rs"]
mod support;

use packetproof::{digest, packet, Config};
use serde_json::{Map, Value};
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn config() -> packetproof::Invocation {
    packetproof::Invocation::from(Config::load(Path::new(ROOT), None).expect("harness.toml loads"))
}

fn parse(text: &str) -> Map<String, Value> {
    match packetproof::canonical::parse(text.as_bytes()).unwrap() {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

/// A Google-shaped packet (no outputSchema) with the hash material fields only.
const GOOGLE: &str = r#"{"attempt":1,"provider":"google","model":"m","maxTokens":5,"systemPrompt":"s","userMessage":"u","effectiveUserMessage":"u!"}"#;
/// An Anthropic-shaped one whose outputSchema keys sort differently under localeCompare.
const ANTHROPIC: &str = r#"{"attempt":1,"provider":"anthropic","model":"m","maxTokens":5,"systemPrompt":"s","userMessage":"u","effectiveUserMessage":"u","outputSchema":{"B":1,"a":2}}"#;

/// The exactInputHash finding of `packet` after storing sha256(`wrong`) in it.
fn exact_input_finding(packet: &str, wrong: &str) -> packetproof::Finding {
    let mut packet = parse(packet);
    packet.insert("exactInputHash".into(), digest::sha256(wrong.as_bytes()).into());
    let findings = packet::exact_input_hash(&packet, &config());
    assert_eq!(findings.len(), 1, "{findings:?}");
    findings.into_iter().next().unwrap()
}

#[track_caller]
fn assert_cause(finding: &packetproof::Finding, id: &str, words: &str) {
    assert_eq!(finding.cause.as_deref(), Some(id), "{finding}");
    assert!(finding.message.contains(words), "{words:?} not in {finding}");
}

#[test]
fn the_right_material_needs_no_forensics() {
    let right = r#"{"attempt":1,"maxTokens":5,"messages":[{"content":"s","role":"system"},{"content":"u!","role":"user"}],"model":"m","provider":"google"}"#;
    let mut packet = parse(GOOGLE);
    packet.insert("exactInputHash".into(), digest::sha256(right.as_bytes()).into());
    assert!(packet::exact_input_hash(&packet, &config()).is_empty());
}

#[test]
fn an_unexplained_hash_has_no_cause() {
    let finding = exact_input_finding(GOOGLE, "something else entirely");
    assert_eq!(finding.cause, None, "{finding}");
    assert!(finding.message.contains("exactInputHash does not match the packet"), "{finding}");
}

#[test]
fn locale_compare_key_order() {
    let wrong = r#"{"attempt":1,"maxTokens":5,"messages":[{"content":"s","role":"system"},{"content":"u","role":"user"}],"model":"m","outputSchema":{"a":2,"B":1},"provider":"anthropic"}"#;
    let finding = exact_input_finding(ANTHROPIC, wrong);
    assert_cause(&finding, "locale-compare-key-order", "the stored exactInputHash is what a localeCompare key order");
}

/// `[canonical] accept_locale_key_order`: the reference's hashes (mixed-case sibling keys
/// in localeCompare order, bytes written out here by hand) pass, with a note naming it;
/// any other wrong hash still fails, and without the setting this one fails too.
#[test]
fn locale_ordered_hashes_pass_only_when_the_suite_accepts_them() {
    let wrong = r#"{"attempt":1,"maxTokens":5,"messages":[{"content":"s","role":"system"},{"content":"u","role":"user"}],"model":"m","outputSchema":{"a":2,"B":1},"provider":"anthropic"}"#;
    let mut packet = parse(ANTHROPIC);
    packet.insert("exactInputHash".into(), digest::sha256(wrong.as_bytes()).into());
    let mut accepting = Config::load(Path::new(ROOT), None).expect("harness.toml loads");
    accepting.canonical.accept_locale_key_order = true;
    let accepting = packetproof::Invocation::from(accepting);
    assert!(packet::exact_input_hash(&packet, &accepting).is_empty());
    let notes = packet::notes(&Value::Object(packet.clone()), &accepting);
    assert!(
        notes.iter().any(|n| n.starts_with("$.exactInputHash: accepted in JavaScript localeCompare key order")),
        "{notes:?}"
    );
    assert_eq!(packet::exact_input_hash(&packet, &config()).len(), 1);
    packet.insert("exactInputHash".into(), digest::sha256(b"another mistake").into());
    assert_eq!(packet::exact_input_hash(&packet, &accepting).len(), 1);
}

/// ICU root collation orders keys beyond ASCII as JavaScript's localeCompare does
/// (Node 20: ["b", "é", "e", "Z", "z", "ä", "a"].sort((x, y) => x.localeCompare(y))).
#[test]
fn locale_order_covers_non_ascii_keys() {
    let mut keys = ["b", "é", "e", "Z", "z", "ä", "a"];
    keys.sort_by(|a, b| packetproof::canonical::node_locale_order(a, b));
    assert_eq!(keys, ["a", "ä", "b", "e", "é", "z", "Z"]);
}

#[test]
fn user_message_hashed_instead_of_effective_user_message() {
    let wrong = r#"{"attempt":1,"maxTokens":5,"messages":[{"content":"s","role":"system"},{"content":"u","role":"user"}],"model":"m","provider":"google"}"#;
    let finding = exact_input_finding(GOOGLE, wrong);
    assert_cause(&finding, "user-message-hashed", "hashing userMessage instead of effectiveUserMessage");
}

#[test]
fn output_schema_as_null_when_absent() {
    let wrong = r#"{"attempt":1,"maxTokens":5,"messages":[{"content":"s","role":"system"},{"content":"u!","role":"user"}],"model":"m","outputSchema":null,"provider":"google"}"#;
    assert_cause(&exact_input_finding(GOOGLE, wrong), "output-schema-null", "including outputSchema as null");
}

#[test]
fn output_schema_included_when_absent() {
    // The exporter hashed before removing the runtime schema from a Google packet.
    let snapshot = packetproof::schema::snapshot(&config()).unwrap();
    let schema = String::from_utf8(packetproof::canonical::to_vec(&snapshot)).unwrap();
    let wrong = format!(
        r#"{{"attempt":1,"maxTokens":5,"messages":[{{"content":"s","role":"system"}},{{"content":"u!","role":"user"}}],"model":"m","outputSchema":{schema},"provider":"google"}}"#
    );
    assert_cause(
        &exact_input_finding(GOOGLE, &wrong),
        "output-schema-included-when-absent",
        "including the runtime outputSchema",
    );
}

#[test]
fn output_schema_left_out_when_present() {
    let wrong = r#"{"attempt":1,"maxTokens":5,"messages":[{"content":"s","role":"system"},{"content":"u","role":"user"}],"model":"m","provider":"anthropic"}"#;
    assert_cause(&exact_input_finding(ANTHROPIC, wrong), "output-schema-left-out", "leaving outputSchema out");
}

#[test]
fn pretty_printed_json() {
    let wrong = r#"{
  "attempt": 1,
  "maxTokens": 5,
  "messages": [
    {
      "content": "s",
      "role": "system"
    },
    {
      "content": "u!",
      "role": "user"
    }
  ],
  "model": "m",
  "provider": "google"
}"#;
    assert_cause(&exact_input_finding(GOOGLE, wrong), "pretty-printed-json", "pretty-printed JSON");
}

#[test]
fn unsorted_json() {
    // JSON.stringify of the material in the seed's own key order.
    let wrong = r#"{"attempt":1,"provider":"google","model":"m","maxTokens":5,"messages":[{"role":"system","content":"s"},{"role":"user","content":"u!"}]}"#;
    assert_cause(&exact_input_finding(GOOGLE, wrong), "unsorted-keys", "unsorted keys");
}

#[test]
fn unsorted_pretty_printed_json() {
    let wrong = r#"{
  "attempt": 1,
  "provider": "google",
  "model": "m",
  "maxTokens": 5,
  "messages": [
    {
      "role": "system",
      "content": "s"
    },
    {
      "role": "user",
      "content": "u!"
    }
  ]
}"#;
    assert_cause(
        &exact_input_finding(GOOGLE, wrong),
        "unsorted-pretty-printed-json",
        "pretty-printed JSON with unsorted keys",
    );
}

#[test]
fn google_suffix_with_a_trailing_newline() {
    let wrong = r#"{"attempt":1,"maxTokens":5,"messages":[{"content":"s","role":"system"},{"content":"u!\n","role":"user"}],"model":"m","provider":"google"}"#;
    assert_cause(
        &exact_input_finding(GOOGLE, wrong),
        "suffix-trailing-newline",
        "a Google suffix with a trailing newline",
    );
}

#[test]
fn google_suffix_without_its_trailing_newline() {
    let packet = GOOGLE.replace(r#""effectiveUserMessage":"u!""#, r#""effectiveUserMessage":"u!\n""#);
    let wrong = r#"{"attempt":1,"maxTokens":5,"messages":[{"content":"s","role":"system"},{"content":"u!","role":"user"}],"model":"m","provider":"google"}"#;
    assert_cause(
        &exact_input_finding(&packet, wrong),
        "suffix-without-trailing-newline",
        "without its trailing newline",
    );
}

#[test]
fn a_different_google_suffix() {
    // The packet shows one suffix; the exporter hashed the project's.
    let suffix = config().settings().google_suffix.clone();
    let content = serde_json::to_string(&format!("u{suffix}")).unwrap();
    let wrong = format!(
        r#"{{"attempt":1,"maxTokens":5,"messages":[{{"content":"s","role":"system"}},{{"content":{content},"role":"user"}}],"model":"m","provider":"google"}}"#
    );
    assert_cause(&exact_input_finding(GOOGLE, &wrong), "different-google-suffix", "a different Google suffix");
    let content = serde_json::to_string(&format!("u{suffix}\n")).unwrap();
    let wrong = format!(
        r#"{{"attempt":1,"maxTokens":5,"messages":[{{"content":"s","role":"system"}},{{"content":{content},"role":"user"}}],"model":"m","provider":"google"}}"#
    );
    assert_cause(
        &exact_input_finding(GOOGLE, &wrong),
        "different-google-suffix-trailing-newline",
        "and a trailing newline",
    );
}

#[test]
fn numbers_printed_as_floats() {
    let wrong = r#"{"attempt":1.0,"maxTokens":5.0,"messages":[{"content":"s","role":"system"},{"content":"u!","role":"user"}],"model":"m","provider":"google"}"#;
    assert_cause(&exact_input_finding(GOOGLE, wrong), "numbers-printed-as-floats", "printing every number as a float");
}

#[test]
fn numbers_printed_without_ecmascript_formatting() {
    // The file wrote `1e0`; an exporter that prints its double as Rust or Python would: `1.0`.
    let packet = GOOGLE.replace(r#""attempt":1"#, r#""attempt":1e0"#);
    let wrong = r#"{"attempt":1.0,"maxTokens":5,"messages":[{"content":"s","role":"system"},{"content":"u!","role":"user"}],"model":"m","provider":"google"}"#;
    assert_cause(&exact_input_finding(&packet, wrong), "numbers-printed-shortest", "without ECMAScript formatting");
}

// ---------------------------------------------------------------- checksum

/// Insertion order: a, renderInput, exactInputHash, checksum.
const SMALL: &str = r#"{"a":1,"renderInput":{"B":1,"a":2},"exactInputHash":"h"}"#;

fn checksum_finding(packet: &str, wrong: &str) -> packetproof::Finding {
    let mut packet = parse(packet);
    packet.insert("checksum".into(), digest::sha256(wrong.as_bytes()).into());
    let findings = packet::checksum(&packet, &config());
    assert_eq!(findings.len(), 1, "{findings:?}");
    findings.into_iter().next().unwrap()
}

#[test]
fn checksum_causes() {
    let cases: [(&str, &str, &str); 8] = [
        (r#"{"a":1,"exactInputHash":"h","renderInput":{"a":2,"B":1}}"#, "locale-compare-key-order", "localeCompare"),
        (
            r#"{"a":1,"checksum":"","exactInputHash":"h","renderInput":{"B":1,"a":2}}"#,
            "checksum-field-included-empty",
            "including the checksum field (as \"\")",
        ),
        (
            r#"{"a":1,"checksum":null,"exactInputHash":"h","renderInput":{"B":1,"a":2}}"#,
            "checksum-field-included-null",
            "including the checksum field (as null)",
        ),
        (r#"{"a":1,"renderInput":{"B":1,"a":2}}"#, "checksum-without-exact-input-hash", "leaving exactInputHash out"),
        (
            "{\n  \"a\": 1,\n  \"exactInputHash\": \"h\",\n  \"renderInput\": {\n    \"B\": 1,\n    \"a\": 2\n  }\n}",
            "pretty-printed-json",
            "pretty-printed",
        ),
        (r#"{"a":1,"renderInput":{"B":1,"a":2},"exactInputHash":"h"}"#, "unsorted-keys", "unsorted keys"),
        (
            "{\n  \"a\": 1,\n  \"renderInput\": {\n    \"B\": 1,\n    \"a\": 2\n  },\n  \"exactInputHash\": \"h\"\n}",
            "unsorted-pretty-printed-json",
            "unsorted keys",
        ),
        (
            r#"{"a":1.0,"exactInputHash":"h","renderInput":{"B":1.0,"a":2.0}}"#,
            "numbers-printed-as-floats",
            "as a float",
        ),
    ];
    for (wrong, id, words) in cases {
        let finding = checksum_finding(SMALL, wrong);
        assert_cause(&finding, id, words);
        assert!(finding.message.contains("the stored checksum is what"), "{finding}");
    }
    // The file wrote `1e0`; the exporter printed its double as Rust or Python would.
    let shortest = r#"{"n":5,"one":1e0,"exactInputHash":"h"}"#;
    let finding = checksum_finding(shortest, r#"{"exactInputHash":"h","n":5,"one":1.0}"#);
    assert_cause(&finding, "numbers-printed-shortest", "without ECMAScript formatting");
}

#[test]
fn validate_gives_the_cause_as_a_json_field() {
    let mut packet = match support::compiled_packet("openai-staged-succ-default") {
        Value::Object(map) => map,
        _ => unreachable!(),
    };
    // The checksum an exporter computes before it sets exactInputHash.
    let mut rest = packet.clone();
    rest.remove("checksum");
    rest.remove("exactInputHash");
    let wrong = digest::sha256(&packetproof::canonical::to_vec(&Value::Object(rest)));
    packet.insert("checksum".into(), wrong.into());
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("packet.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&Value::Object(packet)).unwrap()).unwrap();
    let output = support::bin().args(["validate", "--format", "json", "--packet"]).arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stdout));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let findings = report["results"][0]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report}");
    assert_eq!(findings[0]["check"], "packet::checksum");
    assert_eq!(findings[0]["cause"], "checksum-without-exact-input-hash", "{report}");
    let message = findings[0]["message"].as_str().unwrap();
    assert!(
        message.ends_with("the stored checksum is what leaving exactInputHash out of the checksum gives"),
        "{message}"
    );
}
