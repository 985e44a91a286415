//! `attest`'s bytes, pinned, and `verify`'s refusal of each broken attestation.

use super::*;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// attestation.json byte for byte (Ed25519 signatures are deterministic): key
/// order, pretty layout, base64 alphabet and the signed PAE may not drift.
#[test]
fn the_written_bytes_are_pinned() {
    let completion = serde_json::json!({
        "runId": "run-1", "checksum": "sha256:ab", "exactInputHash": "sha256:cd",
        "agentTask": "t", "completedAt": "2026-12-01T00:00:00.000Z", "evaluation": {"ok": true},
        "evaluatorNotes": ["n"], "extra": 1.5
    });
    let subjects = [
        Subject { name: PACKET_SUBJECT.into(), sha256: "ab".repeat(32) },
        Subject { name: "agent-request.json".into(), sha256: "0".repeat(64) },
    ];
    let text = envelope_text(&subjects, completion.as_object().unwrap(), &SigningKey::from_bytes(&[7; 32]));
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
      "sig": "ihJJ5vDNh1oSWEcvWwRGo+INI9XofgMZ6xhS1WZIrysLarh6Z825L1UAh+UoKtlxEkWaWc/6isShsE3HZkkSBQ=="
    }
  ]
}
"#;
