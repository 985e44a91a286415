//! `packetproof prepare`: turn a valid packet into a run directory, file for file
//! as the Node tools write it. The manifest is written last, so a run directory is
//! "prepared" only once everything it binds is in place, and it is never rewritten:
//! an identical re-prepare is a no-op, a different one is refused.

use super::paths::{RunDir, AGENT_REQUEST, EVAL_CONTEXT, MANIFEST, VALIDATION_SCHEMA};
use super::PacketGate;
use crate::fsutil::{self, Replace};
use crate::Invocation;
use crate::JsonPath;
use crate::{canonical, digest, provider, Error, Result};
use serde_json::{Map, Value};
use std::path::Path;

/// Prepare `out_dir` from `packet_file`; returns the names of the files written.
/// The packet is read once, and `gate` judges the bytes that are then written.
pub fn prepare(config: &Invocation, packet_file: &Path, out_dir: &Path, gate: PacketGate) -> Result<Vec<&'static str>> {
    let shown = packet_file.display().to_string();
    let value = fsutil::read_json(packet_file, config.settings().limits.max_file_bytes)?;
    provider::expect_packet(&value, &shown)?;
    let findings = gate(&value);
    if !findings.is_empty() {
        return Err(Error::Failed { file: shown, findings });
    }
    let packet = value.as_object().expect("the gate refuses non-objects (packet::contract)");
    refuse_what_the_run_cannot_carry(packet, config, &shown)?;
    let snapshot = read_snapshot(config, packet, &shown)?;
    let files = run_files(packet, &snapshot);
    super::ownership::refuse_run_inside_another(out_dir)?;
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    // One prepare at a time per directory: concurrent ones see each other's files.
    let (handle, _lock) = super::lock_run_dir(out_dir)?;
    let dir = RunDir::open(out_dir)?;
    // Check everything before writing anything: an existing file must already be
    // exactly what this packet makes.
    // The manifest is checked first: a different manifest is the clearest refusal.
    let mut missing = Vec::new();
    for (name, bytes) in files.iter().rev() {
        let path = dir.resolve(name, &dir.show(name))?;
        let existing = match path.symlink_metadata() {
            Ok(_) => fsutil::read_bytes(&path, config.settings().limits.max_file_bytes).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(&path, e)),
        };
        match existing {
            Ok(Some(existing)) if existing == *bytes => {}
            Ok(Some(_)) if *name == MANIFEST => {
                return Err(Error::refused(
                    dir.show(name),
                    "a different run manifest exists; a manifest is never rewritten (prepare into a new directory)",
                ))
            }
            Ok(Some(_)) => {
                return Err(Error::refused(dir.show(name), "exists with other content than this packet makes"))
            }
            Ok(None) => missing.push((*name, bytes)),
            Err(e) => return Err(e),
        }
    }
    missing.reverse(); // write in file order, the manifest last
    for (name, bytes) in &missing {
        // A manifest is never replaced (even one a writer without the lock made meanwhile).
        let replace = if *name == MANIFEST { Replace::Refused } else { Replace::Allowed };
        handle.write(name, bytes, replace)?;
    }
    Ok(missing.into_iter().map(|(name, ..)| name).collect())
}

/// The snapshot's raw bytes. For non-Google packets the snapshot must be the
/// schema the agent is given, or the held-back copy would not be the run's schema.
/// A plain-text contract's run holds [`super::format::plain_text_snapshot`] instead.
fn read_snapshot(config: &Invocation, packet: &Map<String, Value>, shown: &str) -> Result<Vec<u8>> {
    if config.settings().agent(packet).output == crate::profile::Output::Text {
        return Ok(canonical::to_pretty(&super::format::plain_text_snapshot()).into_bytes());
    }
    let (path, bytes) = config.schema_bytes_of(config.settings().agent(packet))?;
    let snapshot = canonical::parse(&bytes).map_err(|e| e.in_file(&path))?;
    if !snapshot.get("schema").is_some_and(Value::is_object) {
        return Err(Error::shape(path, JsonPath::field("schema"), "the JSON Schema object of the output envelope"));
    }
    if let Some(schema) = packet.get("outputSchema") {
        if !crate::numbers::same(schema, &snapshot) {
            let message = format!("differs from the schema snapshot {path}");
            let finding =
                crate::Finding::new(crate::RunCheck::SnapshotParity, crate::JsonPath::field("outputSchema"), message);
            return Err(Error::Failed { file: shown.to_owned(), findings: vec![finding] });
        }
    }
    Ok(bytes.into_owned())
}

/// The four files, manifest last, as Node writes them (2-space JSON + newline).
/// The run files (Node's format) carry the contract's fields; a packet whose run
/// would rebuild to another packet (a field of its own, a fixed value changed, which
/// a suite's skip of packet::contract lets through) is refused here rather than
/// prepared into a run that every later step fails on its checksum.
fn refuse_what_the_run_cannot_carry(packet: &Map<String, Value>, config: &Invocation, shown: &str) -> Result<()> {
    let context = super::format::EvalContext::of(packet);
    let Value::Object(request) = provider::agent_request(packet) else { return Ok(()) };
    let rebuilt = super::rebuild_packet(&request, &context, &super::Fixed::of(config.settings()));
    let Some(rebuilt) = rebuilt.as_object() else { return Ok(()) };
    let lost: Vec<&str> = packet
        .iter()
        .filter(|(key, value)| rebuilt.get(*key).is_none_or(|r| !crate::numbers::same(r, value)))
        .map(|(key, _)| key.as_str())
        .collect();
    if lost.is_empty() {
        return Ok(());
    }
    let message = format!(
        "the run files carry the contract's fields only, so a run of this packet would rebuild without {} \
         (its checksum would not hold at any later step)",
        lost.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", ")
    );
    let finding = crate::Finding::new(crate::RunCheck::AgentRequest, JsonPath::root(), message);
    Err(Error::Failed { file: shown.to_owned(), findings: vec![finding] })
}

fn run_files(packet: &Map<String, Value>, snapshot: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let pretty = |value: &Value| canonical::to_pretty(value).into_bytes();
    vec![
        (AGENT_REQUEST, pretty(&provider::agent_request(packet))),
        (EVAL_CONTEXT, pretty(&Value::Object(super::format::EvalContext::of(packet).to_map()))),
        (VALIDATION_SCHEMA, snapshot.to_vec()),
        (MANIFEST, pretty(&super::format::manifest(packet, &digest::sha256(snapshot)))),
    ]
}
