//! `attest`'s bytes, pinned, and `verify`'s refusal of each broken attestation.

use super::*;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::json;

/// attestation.json byte for byte (Ed25519 signatures are deterministic): key
/// order, pretty layout, base64 alphabet and the signed PAE may not drift.
#[test]
fn the_written_bytes_are_pinned() {
    let completion = serde_json::json!({
        "runId": "run-1", "checksum": "sha256:ab", "exactInputHash": "sha256:cd",
        "agentTask": "t", "completedAt": "2026-12-01T00:00:00.000Z", "evaluation": {"ok": true},
        "evaluatorNotes": ["n"], "extra": 1.5
    });
    let subjects = [subject(PACKET_SUBJECT, &"ab".repeat(32)), subject("agent-request.json", &"0".repeat(64))];
    let mut predicate = predicate(completion.as_object().unwrap());
    predicate.skipped_checks = Some(json!([{"check": "packet::regenerates", "reason": "why"}]));
    let text = envelope_text(&subjects, predicate, &SigningKey::from_bytes(&[7; 32]));
    assert_eq!(text, PINNED_ENVELOPE.replace("{payload}", &STANDARD.encode(PINNED_STATEMENT)));
}

const PINNED_STATEMENT: &str = r#"{
  "_type": "https://in-toto.io/Statement/v1",
  "subject": [
    {
      "name": "runtime-packet",
      "digest": {
        "sha256": "abababababababababababababababababababababababababababababababab"
      }
    },
    {
      "name": "agent-request.json",
      "digest": {
        "sha256": "0000000000000000000000000000000000000000000000000000000000000000"
      }
    }
  ],
  "predicateType": "urn:packetproof:predicate:run-receipt:v1",
  "predicate": {
    "exactInputHash": "sha256:cd",
    "checksum": "sha256:ab",
    "scenario": null,
    "runId": "run-1",
    "agentTask": "t",
    "completedAt": "2026-12-01T00:00:00.000Z",
    "evaluationOk": true,
    "evaluatorNotes": [
      "n"
    ],
    "skippedChecks": [
      {
        "check": "packet::regenerates",
        "reason": "why"
      }
    ]
  }
}
"#;

const PINNED_ENVELOPE: &str = r#"{
  "payload": "{payload}",
  "payloadType": "application/vnd.in-toto+json",
  "signatures": [
    {
      "keyid": "sha256:324be2dea8bc44461b0233e51fa48902ed6b1cc671e7739af2551e0bfe68f54e",
      "sig": "GIi63ESdwBw9p+t2OZqhaXMlPMoOFUrCAOk92DqP3TNtj6wspOQJuCiQ8qM/MMoou0Od0CGvTalWCgXMIRnOBg=="
    }
  ]
}
"#;

fn key() -> SigningKey {
    SigningKey::from_bytes(&[7; 32])
}

/// A receipt statement as JSON, for editing into broken ones.
fn statement_json() -> Value {
    let completion = serde_json::json!({"runId": "r", "evaluation": {"ok": true}});
    let mut predicate = predicate(completion.as_object().unwrap());
    predicate.skipped_checks = Some(json!([]));
    let text = envelope_text(&[subject("a.json", &"0".repeat(64))], predicate, &key());
    let envelope = canonical::parse(text.as_bytes()).unwrap();
    canonical::parse(&STANDARD.decode(envelope["payload"].as_str().unwrap()).unwrap()).unwrap()
}

/// An envelope over `payload` (any bytes), signed by `key()`, as JSON to edit.
fn envelope_over(payload: &[u8]) -> Value {
    serde_json::to_value(dsse::sign(IN_TOTO_PAYLOAD_TYPE, payload, &key())).unwrap()
}

/// `verify`'s attestation findings for a folder holding only this attestation.json:
/// every refusal tested with it comes before the run's own files are read.
fn findings(envelope: &Value, trusted: &[VerifyingKey]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(FILE), envelope.to_string()).unwrap();
    let config = Config::builtin(dir.path(), None).unwrap();
    check(dir.path(), trusted, &config).into_iter().map(|f| format!("{}: {}", f.path, f.message)).collect()
}

#[test]
fn each_wrong_statement_field_is_named_by_its_path() {
    let hex = "{name, digest: {sha256: 64 lowercase hex}}";
    let cases: [(&str, Value, &[&str]); 6] = [
        (
            "/_type",
            json!("https://in-toto.io/Statement/v0.1"),
            &["$._type: expected \"https://in-toto.io/Statement/v1\""],
        ),
        (
            "/predicateType",
            json!("https://slsa.dev/provenance/v1"),
            &["$.predicateType: expected \"urn:packetproof:predicate:run-receipt:v1\""],
        ),
        ("/predicate", json!(["not", "an", "object"]), &["$.predicate: expected an object"]),
        ("/subject", json!({"name": "a.json"}), &["$.subject: expected an array of subjects"]),
        ("/subject/0/digest/sha256", json!("0".repeat(63) + "A"), &[&format!("$.subject[0]: expected {hex}")]),
        ("/subject/0/name", json!(7), &[&format!("$.subject[0]: expected {hex}")]),
    ];
    for (pointer, value, expected) in cases {
        let mut statement = statement_json();
        *statement.pointer_mut(pointer).unwrap() = value;
        let expected: Vec<String> = expected.iter().map(|e| format!("{FILE} payload {e}")).collect();
        assert_eq!(findings(&envelope_over(statement.to_string().as_bytes()), &[]), expected, "{pointer}");
    }
    let not_an_object = findings(&envelope_over(b"[]"), &[]);
    let paths: Vec<&str> = not_an_object.iter().map(|f| f.split(": ").next().unwrap()).collect();
    let at = |p: &str| format!("{FILE} payload {p}");
    assert_eq!(paths, [at("$._type"), at("$.predicateType"), at("$.predicate"), at("$.subject")]);
}

#[test]
fn a_payload_that_is_not_base64_or_not_json_is_refused_at_its_path() {
    let mut envelope = envelope_over(b"{}");
    envelope["payload"] = json!("not base64!");
    for trusted in [&[][..], &[key().verifying_key()]] {
        let found = findings(&envelope, trusted);
        assert!(matches!(&found[..], [f] if f.contains("at $.payload: expected payload is not base64")), "{found:?}");
    }
    let found = findings(&envelope_over(b"{\"_type\": "), &[]);
    assert!(matches!(&found[..], [f] if f.starts_with(&format!("{FILE}: {FILE} $.payload:1:"))), "{found:?}");
}

#[test]
fn another_payload_type_is_named_and_the_statement_still_checked() {
    let mut envelope = envelope_over(b"[]");
    envelope["payloadType"] = json!("application/json");
    let found = findings(&envelope, &[]);
    assert_eq!(found[0], format!("{FILE} $.payloadType: is \"application/json\"; expected \"{IN_TOTO_PAYLOAD_TYPE}\""));
    assert_eq!(found.len(), 5, "{found:?}");
}

/// A keyid is a hint, never trusted: only a signature that verifies counts.
#[test]
fn no_verifying_signature_is_a_finding_whatever_the_keyids_claim() {
    let trusted = SigningKey::from_bytes(&[8; 32]).verifying_key();
    let mut envelope = envelope_over(b"[]");
    envelope["signatures"][0]["keyid"] = json!(keys::key_id(&trusted));
    let mut garbled = envelope["signatures"][0].clone();
    garbled["sig"] = json!("%%% not base64 %%%");
    envelope["signatures"].as_array_mut().unwrap().push(garbled);
    let found = findings(&envelope, &[trusted]);
    assert!(
        found[0].starts_with(&format!("{FILE} $.signatures: no signature verifies with a trusted key (2 signature(s)")),
        "{found:?}"
    );
}

#[test]
fn more_than_sixteen_signatures_are_a_finding_with_a_trusted_key() {
    let mut envelope = envelope_over(b"[]");
    let signature = envelope["signatures"][0].clone();
    envelope["signatures"] = Value::Array(vec![signature; dsse::MAX_SIGNATURES + 1]);
    let found = findings(&envelope, &[key().verifying_key()]);
    assert_eq!(
        found[0],
        format!(
            "{FILE} $.signatures: 17 signatures; at most 16 are accepted (each is tried against every trusted key)"
        )
    );
}

fn subject(name: &str, sha256: &str) -> Subject {
    Subject::new(name, sha256)
}

fn subject_findings(found: &[Subject], now: &[Subject]) -> Vec<String> {
    let mut out = Vec::new();
    compare_subjects(found, now, &mut |at, message| out.push(format!("{at}: {message}")));
    out
}

#[test]
fn a_subject_the_run_lacks_a_changed_digest_and_an_uncovered_file_are_findings() {
    let (a, b) = ("a".repeat(64), "b".repeat(64));
    let now = [subject("a.json", &a), subject("b.json", &b)];
    assert_eq!(subject_findings(&now, &now), Vec::<String>::new());
    let found = [subject("a.json", &b), subject("ghost.json", &a)];
    assert_eq!(
        subject_findings(&found, &now),
        [
            format!("{FILE} payload $.subject[0]: \"a.json\" has sha256 {a} now; the attestation records \"{b}\" (edited after attestation)"),
            format!("{FILE} payload $.subject[1]: names \"ghost.json\", which the run does not have"),
            format!("{FILE} payload $.subject: \"b.json\" is a run file the attestation does not cover"),
        ]
    );
    // No subject at all: every run file is uncovered.
    assert_eq!(subject_findings(&[], &now).len(), 2);
}

/// The findings comparing a statement's predicate (as JSON) with completion.json's.
fn predicate_findings(found: Value, completion: Value) -> Vec<String> {
    let mut out = Vec::new();
    let now = predicate(completion.as_object().unwrap());
    let found: Predicate = serde_json::from_value(found).unwrap();
    compare_predicate(&found, &now, "completion.json", &mut |at, m| out.push(format!("{at}: {m}")));
    out
}

#[test]
fn a_predicate_field_changed_missing_or_unknown_is_a_finding() {
    let completion = json!({"runId": "r", "scenario": null, "evaluation": {"ok": true}});
    let mut found = statement_json()["predicate"].clone();
    assert_eq!(predicate_findings(found.clone(), completion.clone()), Vec::<String>::new());
    found["runId"] = json!("other");
    found.as_object_mut().unwrap().remove("scenario");
    found["extra"] = json!(1);
    let at = |p: &str| format!("{FILE} payload $.predicate{p}");
    assert_eq!(
        predicate_findings(found.clone(), completion.clone()),
        [
            format!("{}: missing; completion.json says null", at(".scenario")),
            format!("{}: is \"other\"; completion.json says \"r\"", at(".runId")),
            format!("{}: \"extra\" is not a field of the run receipt predicate", at("")),
        ]
    );
    // A null field is not a missing one.
    found = statement_json()["predicate"].clone();
    found["runId"] = Value::Null;
    assert_eq!(
        predicate_findings(found, completion),
        [format!("{}: is null; completion.json says \"r\"", at(".runId"))]
    );
}

/// `value` with the member at `pointer` replaced, or removed (`None`).
fn edited(mut value: Value, pointer: &str, new: Option<Value>) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    match (value.pointer_mut(parent).unwrap(), new) {
        (Value::Object(map), Some(new)) => drop(map.insert(key.to_owned(), new)),
        (Value::Object(map), None) => drop(map.remove(key)),
        (Value::Array(items), Some(new)) => items[key.parse::<usize>().unwrap()] = new,
        _ => unreachable!("{pointer}"),
    }
    value
}

#[test]
fn a_malformed_envelope_is_refused_at_the_path_it_breaks() {
    let envelope = envelope_over(b"[]");
    let missing = "nothing (the field is missing)";
    let cases = [
        ("/payloadType", None, format!("$.payloadType: expected a string, found {missing}")),
        ("/payload", Some(json!(7)), "$.payload: expected a string, found a number".into()),
        ("/signatures", Some(json!({})), "$.signatures: expected an array, found an object".into()),
        ("/signatures/0", Some(json!("sig")), "$.signatures[0]: expected a signature {keyid, sig}, found a string".into()),
        ("/signatures/0/sig", None, format!("$.signatures[0].sig: expected a string, found {missing}")),
        ("/signatures/0/keyid", Some(Value::Null), "$.signatures[0].keyid: expected a string, found null".into()),
        (
            "/extra",
            Some(json!(1)),
            "$: expected a DSSE envelope with only the fields payload, payloadType, signatures, found the field \"extra\"".into(),
        ),
        (
            "/signatures/0/extra",
            Some(json!(1)),
            "$.signatures[0]: expected a signature with only the fields keyid, sig, found the field \"extra\"".into(),
        ),
    ];
    for (pointer, new, expected) in cases {
        let found = findings(&edited(envelope.clone(), pointer, new), &[key().verifying_key()]);
        assert_eq!(found, [format!("{FILE}: {FILE}: at {expected}")], "{pointer}");
    }
    let found = findings(&json!([]), &[]);
    let expected = "$: expected a DSSE envelope {payload, payloadType, signatures}, found an array";
    assert_eq!(found, [format!("{FILE}: {FILE}: at {expected}")]);
}

/// The receipt says what it did not vouch for: a predicate without skippedChecks, or
/// with one that names no rule of the book or lacks a reason, is a finding.
#[test]
fn skipped_checks_missing_or_malformed_is_a_finding() {
    let completion = json!({"runId": "r", "scenario": null, "evaluation": {"ok": true}});
    let intact = statement_json()["predicate"].clone();
    let at = format!("{FILE} payload $.predicate.skippedChecks");
    let cases = [
        (None, "missing".to_owned()),
        (Some(json!({})), "expected an array of {check, reason}".to_owned()),
        (
            Some(json!([{"check": "packet::nope", "reason": "r"}])),
            "item 0: expected {check, reason} naming a check of the rule book".into(),
        ),
        (
            Some(json!([{"check": "packet::contract"}])),
            "item 0: expected {check, reason} naming a check of the rule book".into(),
        ),
    ];
    for (value, message) in cases {
        let mut found = intact.clone();
        match value {
            Some(value) => found["skippedChecks"] = value,
            None => drop(found.as_object_mut().unwrap().remove("skippedChecks")),
        }
        assert_eq!(predicate_findings(found, completion.clone()), [format!("{at}: {message}")]);
    }
    let mut named = intact;
    named["skippedChecks"] = json!([{"check": "packet::contract", "reason": "our own fields"}]);
    assert_eq!(predicate_findings(named, completion), Vec::<String>::new());
}
