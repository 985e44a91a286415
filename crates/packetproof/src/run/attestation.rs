//! Signed run receipts (`packetproof attest`) and their check in `verify`
//! (`run::attestation`). The statement's subjects are the run's files with their
//! sha256, plus the packet's identity (its `checksum`); the predicate repeats what
//! completion.json says, so editing either the receipt or any run file breaks it.

use super::paths::RunDir;
use super::Run;
use crate::attest::{dsse, keys, Envelope, Predicate, Statement, Subject, IN_TOTO_PAYLOAD_TYPE};
use crate::report::{excerpt, JsonPath, Location};
use crate::{canonical, digest, fsutil, Config, Error, Finding, Result};
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

pub(crate) const CHECK: crate::RunCheck = crate::RunCheck::Attestation;
pub(crate) const FILE: &str = "attestation.json";
/// The subject naming the packet: its digest is the packet's `checksum` (sha256
/// of the canonical packet without that field), the contract's packet identity.
pub(crate) const PACKET_SUBJECT: &str = "runtime-packet";

/// Write a signed attestation for a completed run; returns where. Refused unless
/// every run check passes (a run that `verify` fails is not attested) and never
/// over an existing file.
pub(crate) fn attest(
    config: &Config,
    dir: &Path,
    key: &SigningKey,
    out: Option<&Path>,
    gate: super::AttestGate,
) -> Result<PathBuf> {
    // The run cannot change between the checks and the signature (other steps wait).
    let (_handle, _lock) = super::lock_run_dir(dir)?;
    let (findings, skipped) = gate(dir, None);
    if !findings.is_empty() {
        return Err(Error::Failed { file: dir.display().to_string(), findings });
    }
    let run = Run::open(dir, config)?;
    let completion = run.read_object(&run.completion)?;
    let mut predicate = predicate(&completion);
    predicate.skipped_checks = Some(serde_json::to_value(&skipped).expect("skipped checks serialize"));
    let text = envelope_text(&subjects(&run, &completion)?, predicate, key);
    let own = dir.join(FILE);
    let target = match out {
        Some(out) if super::real_path(out) != super::real_path(&own) => {
            super::refuse_foreign_output(out, super::OutputKind::Attestation, config, &[])?;
            out.to_path_buf()
        }
        _ => own,
    };
    fsutil::write_new(&target, text.as_bytes())?;
    Ok(target)
}

/// The bytes of attestation.json: the statement, pretty, signed into an envelope.
fn envelope_text(subjects: &[Subject], predicate: Predicate, key: &SigningKey) -> String {
    let body = Statement::new(subjects.to_vec(), predicate).to_pretty();
    let envelope = dsse::sign(IN_TOTO_PAYLOAD_TYPE, body.as_bytes(), key);
    serde_json::to_value(&envelope).map(|v| canonical::to_pretty(&v)).expect("an envelope serializes")
}

/// The subjects of a run as it is now: the packet identity, then every run file
/// (a provider-request.json too, when the run has one).
fn subjects(run: &Run, completion: &Map<String, Value>) -> Result<Vec<Subject>> {
    let checksum = completion.get("checksum").and_then(Value::as_str).unwrap_or_default();
    let mut out = vec![Subject::new(PACKET_SUBJECT, checksum.trim_start_matches("sha256:"))];
    for file in [
        &run.agent_request,
        &run.eval_context,
        &run.schema,
        &run.raw_output,
        &run.evaluation,
        &run.completion,
        &run.manifest_file,
    ] {
        out.push(Subject::new(&file.name, hex(&run.read(file)?)));
    }
    let capture = run.dir.resolve(crate::wire::RUN_FILE, crate::wire::RUN_FILE)?;
    if capture.is_file() {
        let bytes = fsutil::read_bytes(&capture, run.max_bytes)?;
        out.push(Subject::new(crate::wire::RUN_FILE, hex(&bytes)));
    }
    Ok(out)
}

fn hex(bytes: &[u8]) -> String {
    digest::sha256(bytes).trim_start_matches("sha256:").to_owned()
}

/// The predicate of a run receipt from completion.json as it is: a field it lacks
/// is null, so a broken receipt is compared, not refused.
fn predicate(completion: &Map<String, Value>) -> Predicate {
    let field = |key: &str| Some(completion.get(key).cloned().unwrap_or(Value::Null));
    Predicate {
        exact_input_hash: field("exactInputHash"),
        checksum: field("checksum"),
        scenario: field("scenario"),
        run_id: field("runId"),
        agent_task: field("agentTask"),
        completed_at: field("completedAt"),
        evaluation_ok: Some(completion.get("evaluation").and_then(|e| e.get("ok")).cloned().unwrap_or(Value::Null)),
        evaluator_notes: field("evaluatorNotes"),
        skipped_checks: None,
        unknown: Map::new(),
    }
}

/// `run::attestation` for `verify`. With trusted keys an attestation is required
/// and must carry a signature by one of them; with none, an attestation present
/// is still checked against the run's files and completion.json.
pub(crate) fn check(dir: &Path, trusted: &[VerifyingKey], config: &Config) -> Vec<Finding> {
    let finding = |file: &str, message: String| Finding::new(CHECK, Location::named(file), message);
    let Ok(run_dir) = RunDir::open(dir) else { return Vec::new() };
    let path = match run_dir.resolve(FILE, FILE) {
        Ok(path) => path,
        Err(e) => return vec![finding(FILE, e.to_string())],
    };
    if path.symlink_metadata().is_err() {
        return match trusted {
            [] => Vec::new(),
            _ => vec![finding(FILE, "missing: --trusted-key requires an attestation signed by a trusted key".into())],
        };
    }
    match check_file(dir, &path, trusted, config) {
        Ok(findings) => findings,
        Err(e) => vec![finding(FILE, e.to_string())],
    }
}

fn check_file(dir: &Path, path: &Path, trusted: &[VerifyingKey], config: &Config) -> Result<Vec<Finding>> {
    let mut out = Vec::new();
    let mut finding = |at: Location, message: String| out.push(Finding::new(CHECK, at, message));
    let value = fsutil::read_json(path, config.limits.max_file_bytes)?;
    let envelope = Envelope::from_json(value).map_err(|(at, expected)| Error::shape(FILE, at, expected))?;
    if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE {
        finding(
            Location::in_file(FILE, JsonPath::field("payloadType")),
            format!("is {}; expected {IN_TOTO_PAYLOAD_TYPE:?}", excerpt(&envelope.payload_type)),
        );
    }
    if !trusted.is_empty() {
        check_signatures(&envelope, trusted, &mut finding)?;
    }
    let Some(statement) = read_statement(&envelope, &mut finding)? else { return Ok(out) };
    let run = Run::open(dir, config)?;
    let completion = run.read_object(&run.completion)?;
    compare_subjects(&statement.subject, &subjects(&run, &completion)?, &mut finding);
    compare_predicate(&statement.predicate, &predicate(&completion), &run.completion.name, &mut finding);
    Ok(out)
}

/// A finding unless a signature by a trusted key verifies, or when there are more
/// signatures than are ever tried (none of them is then checked).
fn check_signatures(
    envelope: &Envelope,
    trusted: &[VerifyingKey],
    finding: &mut impl FnMut(Location, String),
) -> Result<()> {
    let at = || Location::in_file(FILE, JsonPath::field("signatures"));
    match envelope.signed_by(trusted) {
        Ok(Some(_)) => {}
        Ok(None) => finding(
            at(),
            format!(
                "no signature verifies with a trusted key ({} signature(s), keyids [{}]; trusted {:?}): \
                 the receipt was edited after signing or signed by another key",
                envelope.signatures.len(),
                // At most MAX_SIGNATURES of them, each a bounded excerpt: the message stays small.
                envelope.signatures.iter().map(|s| excerpt(&s.keyid)).collect::<Vec<_>>().join(", "),
                trusted.iter().map(keys::key_id).collect::<Vec<_>>()
            ),
        ),
        Err(e) if envelope.signatures.len() > dsse::MAX_SIGNATURES => finding(at(), e),
        Err(e) => return Err(Error::shape(FILE, JsonPath::field("payload"), e)),
    }
    Ok(())
}

/// The statement in the payload; `None` after a finding for each problem of its shape.
fn read_statement(envelope: &Envelope, finding: &mut impl FnMut(Location, String)) -> Result<Option<Statement>> {
    let body = envelope.body().map_err(|e| Error::shape(FILE, JsonPath::field("payload"), e))?;
    let value = canonical::parse(&body).map_err(|e| e.in_file(format!("{FILE} $.payload")))?;
    match Statement::from_json(value) {
        Ok(statement) => Ok(Some(statement)),
        Err(problems) => {
            for (at, expected) in problems {
                finding(in_payload(at), format!("expected {expected}"));
            }
            Ok(None)
        }
    }
}

/// A value of the statement the envelope's payload carries (encoded, so no file
/// holds it as written).
fn in_payload(at: JsonPath) -> Location {
    Location::encoded(FILE, "payload", at)
}

fn compare_subjects(found: &[Subject], now: &[Subject], finding: &mut impl FnMut(Location, String)) {
    for (i, subject) in found.iter().enumerate() {
        let at = in_payload(JsonPath::field("subject").index(i));
        match now.iter().find(|s| s.name == subject.name) {
            None => finding(at, format!("names {}, which the run does not have", excerpt(&subject.name))),
            Some(s) if s.digest.sha256 != subject.digest.sha256 => finding(
                at,
                format!(
                    "{:?} has sha256 {} now; the attestation records {} (edited after attestation)",
                    s.name,
                    s.digest.sha256,
                    excerpt(&subject.digest.sha256)
                ),
            ),
            Some(_) => {}
        }
    }
    for s in now.iter().filter(|s| !found.iter().any(|f| f.name == s.name)) {
        finding(
            in_payload(JsonPath::field("subject")),
            format!("{:?} is a run file the attestation does not cover", s.name),
        );
    }
}

/// Field by field under the JSON names, absent and unknown fields included.
fn compare_predicate(found: &Predicate, now: &Predicate, completion: &str, finding: &mut impl FnMut(Location, String)) {
    // What attest did not vouch for is its own record, not completion.json's.
    let skipped = found.skipped_checks.as_ref();
    if skipped.is_none_or(|list| skipped_checks_problem(list).is_some()) {
        let problem = skipped.map_or("missing".to_owned(), |list| skipped_checks_problem(list).unwrap_or_default());
        finding(in_payload(JsonPath::field("predicate").key("skippedChecks")), problem);
    }
    let found = Predicate { skipped_checks: None, ..found.clone() };
    let (found, now) = (found.to_map(), now.to_map());
    for (key, value) in &now {
        match found.get(key) {
            Some(v) if v == value => {}
            Some(v) => finding(
                in_payload(JsonPath::field("predicate").key(key)),
                format!("is {}; {completion} says {}", crate::wire::diff::show(v), crate::wire::diff::show(value)),
            ),
            None => finding(
                in_payload(JsonPath::field("predicate").key(key)),
                format!("missing; {completion} says {}", crate::wire::diff::show(value)),
            ),
        }
    }
    for key in found.keys().filter(|k| !now.contains_key(*k)) {
        finding(
            in_payload(JsonPath::field("predicate")),
            format!("{} is not a field of the run receipt predicate", excerpt(key)),
        );
    }
}

/// Why `skippedChecks` is not a list of `{check, reason}` naming rules of the book.
fn skipped_checks_problem(list: &Value) -> Option<String> {
    let Some(items) = list.as_array() else { return Some("expected an array of {check, reason}".into()) };
    items.iter().enumerate().find_map(|(i, item)| {
        let check = item.get("check").and_then(Value::as_str);
        let reason = item.get("reason").and_then(Value::as_str);
        let fields = item.as_object().map_or(0, Map::len);
        match (check.and_then(crate::Check::from_name), reason) {
            (Some(_), Some(_)) if fields == 2 => None,
            _ => Some(format!("item {i}: expected {{check, reason}} naming a check of the rule book")),
        }
    })
}

#[cfg(test)]
mod tests;
