//! What a gate statement vouches for, read with the keys the reader trusts: the one
//! place `verify --gate`, `wire --check --gate` and `trace --gate` decide whether a
//! packet (or a template) passed the gate. A statement that cannot vouch (malformed,
//! not a gate statement, bad signature, untrusted key, another suite's) vouches for
//! nothing, and each packet held to it is unvouched with that reason; only a file
//! that cannot be read at all is an error (exit 2).

use super::gate::{GateStatement, GateSubject, GATE_PREDICATE_TYPE, GATE_PREDICATE_TYPE_V1};
use super::statement::STATEMENT_TYPE;
use super::{keys, Envelope, IN_TOTO_PAYLOAD_TYPE};
use crate::report::excerpt;
use crate::{canonical, digest, fsutil, Config, Finding, Location, Outcome, Result};
use ed25519_dalek::VerifyingKey;
use serde_json::Value;
use std::path::Path;

/// A gate statement as read: what it vouches for, or why it vouches for nothing.
#[derive(Debug, Clone)]
pub struct Gate {
    /// The file, as messages name it.
    pub file: String,
    vouching: std::result::Result<GateStatement, String>,
}

impl Gate {
    /// Read `file` and check it against `trusted` keys and `config`'s suite, and, given
    /// a maximum age, against the time it was signed. A valid statement signed under
    /// other settings than `config`'s refuses to judge at all: what the gate judged
    /// under (forbidden material, models and limits, the agents' contracts) is what
    /// everything held to it is judged under.
    pub fn read(
        file: &Path,
        trusted: &[VerifyingKey],
        config: &Config,
        max_age: Option<std::time::Duration>,
    ) -> Result<Gate> {
        let bytes = fsutil::read_bytes(file, config.limits.max_file_bytes)?;
        let shown = file.display().to_string();
        let mut vouching = vouching(&bytes, trusted, config);
        if let Ok(statement) = &vouching {
            let signed = &statement.predicate.suite.settings;
            if *signed != config.settings_sha256 {
                return Err(crate::Error::Config {
                    file: config.file_name(),
                    message: format!(
                        "the gate statement {shown} was signed under other settings: it binds {} \
                         {signed}, and the settings in use are {}; judging under settings the gate did not \
                         judge under could pass what it would refuse. Deploy the {} the gate signed, or run \
                         the gate again (packetproof test --attest) and use its statement",
                        crate::config::FILE_NAME,
                        config.settings_sha256,
                        crate::config::FILE_NAME
                    ),
                });
            }
        }
        // A statement signed in the future vouches for nothing, with or without a maximum age.
        if let Ok(statement) = &vouching {
            if let Err(why) = young_enough(statement, max_age, jiff::Timestamp::now()) {
                vouching = Err(why);
            }
        }
        Ok(Gate { vouching, file: shown })
    }

    /// Why the statement vouches for nothing, if it does not.
    pub fn refused(&self) -> Option<&str> {
        self.vouching.as_ref().err().map(String::as_str)
    }

    /// The statement, once signature and suite hold.
    pub fn statement(&self) -> Option<&GateStatement> {
        self.vouching.as_ref().ok()
    }

    /// The subject vouching for a packet of these bytes, or why none does.
    pub fn packet(&self, bytes: &[u8]) -> std::result::Result<&GateSubject, String> {
        let sha256 = digest::sha256(bytes);
        let exact = canonical::parse(bytes).ok();
        let exact = exact.as_ref().and_then(|p| p.get("exactInputHash")).and_then(Value::as_str).unwrap_or_default();
        self.packet_digest(sha256.trim_start_matches("sha256:"), exact)
    }

    /// The subject vouching for a packet whose bytes have this sha256 (lowercase hex),
    /// or why none does; `exact_input_hash` (the packet's own) names the packet the
    /// gate vouched for under the same hash, when there is one.
    pub fn packet_digest(&self, sha256: &str, exact_input_hash: &str) -> std::result::Result<&GateSubject, String> {
        let statement = self.vouching.as_ref().map_err(|why| format!("the gate statement {}: {why}", self.file))?;
        if let Some(subject) = statement.subject.iter().find(|s| s.sha256() == sha256) {
            return Ok(subject);
        }
        // A golden packet edited and re-hashed after the gate ran keeps no subject.
        let same = statement
            .subject
            .iter()
            .find(|s| !exact_input_hash.is_empty() && s.annotations.exact_input_hash == exact_input_hash);
        let hint = match same {
            Some(s) => format!(
                "; the gate vouched for {} with sha256 {} under the same exactInputHash (this packet was \
                 edited after the gate ran)",
                s.name,
                s.sha256()
            ),
            None => String::new(),
        };
        Err(format!(
            "not a subject of the gate statement {} (sha256:{sha256}; it vouches for {} packet(s)){hint}",
            self.file,
            statement.subject.len()
        ))
    }

    /// `gate::vouched` on the packet of `outcome`, whose file has these bytes: a
    /// finding unless the gate vouches for them.
    pub fn hold(&self, outcome: &mut Outcome, bytes: &[u8]) {
        let sha256 = digest::sha256(bytes);
        let exact = canonical::parse(bytes).ok();
        let exact = exact.as_ref().and_then(|p| p.get("exactInputHash")).and_then(Value::as_str).unwrap_or_default();
        self.hold_digest(outcome, sha256.trim_start_matches("sha256:"), exact);
    }

    /// [`Gate::hold`] for a packet whose bytes have this sha256 (hex) and exactInputHash.
    pub fn hold_digest(&self, outcome: &mut Outcome, sha256: &str, exact_input_hash: &str) {
        let check = crate::InputCheck::GateVouched;
        outcome.ran(check);
        if let Err(why) = self.packet_digest(sha256, exact_input_hash) {
            outcome.findings.push(Finding::new(check, Location::root(), format!("unvouched: {why}")));
        }
    }

    /// Whether the gate lists a material with these bytes (a template it rendered from).
    pub fn vouches_material(&self, bytes: &[u8]) -> bool {
        let sha256 = digest::sha256(bytes);
        let hex = sha256.trim_start_matches("sha256:");
        self.statement().is_some_and(|s| s.predicate.materials.iter().any(|m| m.sha256() == hex))
    }
}

/// The statement of `bytes` once everything holds, else why not.
fn vouching(bytes: &[u8], trusted: &[VerifyingKey], config: &Config) -> std::result::Result<GateStatement, String> {
    let value = canonical::parse(bytes).map_err(|e| format!("malformed: {e}"))?;
    let envelope = Envelope::from_json(value)
        .map_err(|(at, expected)| format!("malformed: at {at}, expected {expected} (a DSSE envelope)"))?;
    if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE {
        return Err(format!(
            "malformed: payloadType is {}; expected {IN_TOTO_PAYLOAD_TYPE:?}",
            excerpt(&envelope.payload_type)
        ));
    }
    if trusted.is_empty() {
        return Err("no trusted key was given to check its signature with".to_owned());
    }
    match envelope.signed_by(trusted) {
        Ok(Some(_)) => {}
        Ok(None) => return Err(unsigned(&envelope, trusted)),
        Err(e) => return Err(format!("malformed: {e}")),
    }
    let body = envelope.body().map_err(|e| format!("malformed: {e}"))?;
    let value = canonical::parse(&body).map_err(|e| format!("malformed: the payload: {e}"))?;
    let kind = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    let known = [GATE_PREDICATE_TYPE, GATE_PREDICATE_TYPE_V1];
    if kind("_type") != STATEMENT_TYPE || !known.contains(&kind("predicateType").as_str()) {
        return Err(format!(
            "not a gate statement: _type {} and predicateType {}; expected {STATEMENT_TYPE:?} and \
             {GATE_PREDICATE_TYPE:?}",
            excerpt(&kind("_type")),
            excerpt(&kind("predicateType"))
        ));
    }
    let statement: GateStatement =
        serde_json::from_value(value).map_err(|e| format!("malformed: the gate statement: {e}"))?;
    if let Some(commit) = statement.predicate.commit.as_deref().filter(|c| !is_object_id(c)) {
        return Err(format!(
            "malformed: commit {} is no full git object id (40 or 64 lowercase hex digits)",
            excerpt(commit)
        ));
    }
    if let Some(bad) = statement.subject.iter().find(|s| !is_hex64(s.sha256())) {
        return Err(format!("malformed: subject {} has no sha256 of 64 lowercase hex digits", excerpt(&bad.name)));
    }
    let theirs = &statement.predicate.suite.name;
    if !config.is_suite() {
        return Err(format!(
            "a statement of the suite {}, and no suite settings (harness.toml) were found here to hold it to",
            excerpt(theirs)
        ));
    }
    let ours = config.suite_name();
    if *theirs != ours {
        return Err(format!(
            "a statement of another suite: {} (this suite is {ours:?}: [suite] name in {})",
            excerpt(theirs),
            config.file_name()
        ));
    }
    Ok(statement)
}

/// Whether the statement was signed at most `max_age` before `now` (`--gate-max-age`):
/// an older one, or one that records no time (v1), vouches for nothing then; one
/// signed in the future never does.
fn young_enough(
    statement: &GateStatement,
    max_age: Option<std::time::Duration>,
    now: jiff::Timestamp,
) -> std::result::Result<(), String> {
    let Some(signed_at) = &statement.predicate.signed_at else {
        if max_age.is_none() {
            return Ok(());
        }
        return Err("expired: it records no signing time (a v1 statement), and a maximum age was given (--gate-max-age); sign it again".to_owned());
    };
    let signed: jiff::Timestamp =
        signed_at.parse().map_err(|_| format!("malformed: signedAt {} is not an RFC 3339 time", excerpt(signed_at)))?;
    let age = now.duration_since(signed);
    // A minute of clock skew between the machines that sign and read.
    if age < jiff::SignedDuration::from_secs(-60) {
        return Err(format!("malformed: signed at {signed_at}, later than now ({now})"));
    }
    let Some(max_age) = max_age else { return Ok(()) };
    let max = jiff::SignedDuration::try_from(max_age).unwrap_or(jiff::SignedDuration::MAX);
    if age > max {
        return Err(format!(
            "expired: signed at {signed_at}, {} ago, and the maximum age is {} (--gate-max-age); sign it again",
            human(age.as_secs()),
            human(max.as_secs())
        ));
    }
    Ok(())
}

/// A full git object id: SHA-1's 40 or SHA-256's 64 lowercase hex digits.
fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Seconds as the largest whole unit that fits (`3 d`, `5 h`, `12 min`, `40 s`).
fn human(secs: i64) -> String {
    match secs {
        s if s >= 86_400 => format!("{} d", s / 86_400),
        s if s >= 3_600 => format!("{} h", s / 3_600),
        s if s >= 60 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

/// Why no signature verifies: a signature whose keyid names a trusted key was made
/// over other bytes (edited after signing); otherwise another key signed it.
fn unsigned(envelope: &Envelope, trusted: &[VerifyingKey]) -> String {
    let ids: Vec<String> = trusted.iter().map(keys::key_id).collect();
    let keyids: Vec<String> = envelope.signatures.iter().map(|s| excerpt(&s.keyid)).collect();
    if envelope.signatures.iter().any(|s| ids.contains(&s.keyid)) {
        return format!(
            "bad signature: the signature by the trusted key {} does not verify (the statement was edited after \
             signing)",
            envelope.signatures.iter().find(|s| ids.contains(&s.keyid)).map_or("", |s| s.keyid.as_str())
        );
    }
    format!(
        "signed by an untrusted key: {} signature(s), keyids [{}]; trusted {ids:?}",
        envelope.signatures.len(),
        keyids.join(", ")
    )
}

fn is_hex64(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::super::gate::{GatePredicate, SubjectAnnotations, SuiteIdentity, Tool};
    use super::super::statement::DigestSet;
    use super::*;
    use ed25519_dalek::SigningKey;

    fn statement(suite: &str, predicate_type: &str) -> GateStatement {
        GateStatement {
            statement_type: STATEMENT_TYPE.into(),
            subject: vec![GateSubject {
                name: "golden/a/runtime-packet.json".into(),
                digest: DigestSet { sha256: "a".repeat(64) },
                annotations: SubjectAnnotations { exact_input_hash: "sha256:e".into() },
            }],
            predicate_type: predicate_type.into(),
            predicate: GatePredicate {
                packetproof: Tool { version: "0".into() },
                commit: None,
                signed_at: Some("2026-01-10T00:00:00.000Z".into()),
                tree_clean: Some(true),
                suite: SuiteIdentity { name: suite.into(), settings: "sha256:s".into() },
                materials: Vec::new(),
                checks_ran: Vec::new(),
                checks_skipped: Vec::new(),
            },
        }
    }

    fn envelope(statement: &serde_json::Value, key: &SigningKey) -> Vec<u8> {
        let body = statement.to_string();
        serde_json::to_vec(&super::super::dsse::sign(IN_TOTO_PAYLOAD_TYPE, body.as_bytes(), key)).unwrap()
    }

    #[test]
    fn each_reason_a_statement_vouches_for_nothing_is_named() {
        let config = Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap();
        let (key, other) = (SigningKey::from_bytes(&[7; 32]), SigningKey::from_bytes(&[8; 32]));
        let trusted = [key.verifying_key()];
        let ours = serde_json::to_value(statement(&config.suite_name(), GATE_PREDICATE_TYPE)).unwrap();
        let gate = |bytes: &[u8]| Gate { file: "g".into(), vouching: vouching(bytes, &trusted, &config) };

        let valid = gate(&envelope(&ours, &key));
        assert_eq!(valid.refused(), None);
        assert_eq!(valid.packet_digest(&"a".repeat(64), "").unwrap().name, "golden/a/runtime-packet.json");
        let missing = valid.packet_digest(&"b".repeat(64), "").unwrap_err();
        assert!(missing.starts_with("not a subject") && !missing.contains("edited"), "{missing}");
        let edited = valid.packet_digest(&"b".repeat(64), "sha256:e").unwrap_err();
        assert!(edited.contains("edited after the gate ran"), "{edited}");

        let refused = |bytes: Vec<u8>| gate(&bytes).refused().unwrap().to_owned();
        assert!(refused(envelope(&ours, &other)).starts_with("signed by an untrusted key"));
        let mut tampered: serde_json::Value = serde_json::from_slice(&envelope(&ours, &key)).unwrap();
        tampered["payload"] = serde_json::json!(base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            ours.to_string().replace("golden/a", "golden/b")
        ));
        assert!(refused(serde_json::to_vec(&tampered).unwrap()).starts_with("bad signature"));
        let theirs = serde_json::to_value(statement("another", GATE_PREDICATE_TYPE)).unwrap();
        assert!(refused(envelope(&theirs, &key)).starts_with("a statement of another suite: \"another\""));
        let receipt = serde_json::to_value(statement(&config.suite_name(), "urn:packetproof:predicate:run-receipt:v1"));
        assert!(refused(envelope(&receipt.unwrap(), &key)).starts_with("not a gate statement"));
        let mut extra = ours.clone();
        extra["predicate"]["vouchesForEverything"] = serde_json::json!(true);
        assert!(refused(envelope(&extra, &key)).starts_with("malformed: the gate statement"));
        assert!(refused(b"not json".to_vec()).starts_with("malformed"));
        for commit in ["HEAD", "abc123", &"A".repeat(40), &"a".repeat(41)] {
            let mut named = ours.clone();
            named["predicate"]["commit"] = serde_json::json!(commit);
            assert!(refused(envelope(&named, &key)).contains("no full git object id"), "{commit}");
        }
        let mut full = ours.clone();
        full["predicate"]["commit"] = serde_json::json!("0123456789abcdef0123456789abcdef01234567");
        assert_eq!(gate(&envelope(&full, &key)).refused(), None);
        assert!(refused(b"{\"payload\": 1}".to_vec()).starts_with("malformed"));
        // Not a packet of the gate either when the statement is refused: the reason is the statement's.
        let refused_gate = gate(&envelope(&ours, &other));
        assert!(refused_gate.packet_digest(&"a".repeat(64), "").unwrap_err().contains("untrusted key"));
    }

    #[test]
    fn a_maximum_age_refuses_old_untimed_and_future_statements() {
        let config = Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap();
        let signed = statement(&config.suite_name(), GATE_PREDICATE_TYPE);
        let at = |text: &str| text.parse::<jiff::Timestamp>().unwrap();
        let day = std::time::Duration::from_secs(86_400);
        assert_eq!(young_enough(&signed, Some(30 * day), at("2026-02-01T00:00:00Z")), Ok(()));
        let old = young_enough(&signed, Some(7 * day), at("2026-02-01T00:00:00Z")).unwrap_err();
        assert_eq!(
            old,
            "expired: signed at 2026-01-10T00:00:00.000Z, 22 d ago, and the maximum age is 7 d (--gate-max-age); \
             sign it again"
        );
        let future = young_enough(&signed, Some(7 * day), at("2026-01-09T00:00:00Z")).unwrap_err();
        assert!(future.contains("later than now"), "{future}");
        let mut untimed = signed.clone();
        untimed.predicate.signed_at = None;
        assert!(young_enough(&untimed, Some(7 * day), at("2026-01-10T00:00:00Z"))
            .unwrap_err()
            .contains("v1 statement"));
        // Without a maximum age: any past time, or none, vouches; the future never does.
        assert_eq!(young_enough(&signed, None, at("2030-01-01T00:00:00Z")), Ok(()));
        assert_eq!(young_enough(&untimed, None, at("2026-01-10T00:00:00Z")), Ok(()));
        let future = young_enough(&signed, None, at("2026-01-09T00:00:00Z")).unwrap_err();
        assert!(future.contains("later than now"), "{future}");
    }
}
