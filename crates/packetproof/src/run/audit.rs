//! The audit of a run directory: the rules its files must satisfy (the `run::…` checks,
//! which `crate::check` dispatches to by name). The public functions are what `verify`
//! runs and what the conformance runner calls, one test case each; `evaluate` and
//! `complete` use the same problem finders, so a rule is written once.
//!
//! Each public check takes the run directory and, optionally, the packet it was
//! prepared from (a fixture's golden packet); without one the packet is rebuilt
//! from the run's own files (see the module docs of [`super`]).

use super::evaluate::{self, Evaluation};
use super::paths::MANIFEST_FILES;
use super::{format, Run, RunFile};
use crate::config::OutputMode;
use crate::report::{JsonPath, Location};
use crate::Invocation;
use crate::{canonical, digest, packet, provider, Finding, RunCheck};
use serde_json::{Map, Value};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// One problem: where (a file and JSONPath) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) at: Location,
    pub(crate) message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

fn problem(at: impl Into<Location>, message: impl Into<String>) -> Problem {
    Problem { at: at.into(), message: message.into() }
}

/// Problems name files relative to the run directory: findings are reported under
/// the run directory, and evaluation.json stays the same wherever the run is moved.
fn shown(file: &RunFile) -> Location {
    Location::named(&file.name)
}

fn at(file: &RunFile, path: JsonPath) -> Location {
    Location::in_file(&file.name, path)
}

fn findings(check: RunCheck, problems: Vec<Problem>) -> Vec<Finding> {
    problems.into_iter().map(|p| Finding::new(check, p.at, p.message)).collect()
}

/// The one finding of a check that cannot open the run at all.
pub(crate) fn unopened(check: RunCheck, dir: &Path, error: &str) -> Vec<Finding> {
    vec![Finding::new(check, Location::named(dir.display().to_string()), format!("cannot check the run: {error}"))]
}

/// The run's packet, or the one finding saying why the check cannot run.
fn packet_of<'a>(
    check: RunCheck,
    run: &'a Run,
    packet: Option<&'a Value>,
) -> Result<&'a Map<String, Value>, Vec<Finding>> {
    let dir = &run.dir.shown;
    match run.packet(packet).map_err(|e| unopened(check, dir, &e.to_string()))? {
        Value::Object(map) => Ok(map),
        _ => Err(vec![Finding::new(
            check,
            Location::named(dir.display().to_string()),
            "the packet is not a JSON object",
        )]),
    }
}

/// `run::agent-request`: the run's packet can be read (or rebuilt from its files)
/// and agent-request.json is exactly its agent view: nothing more (no schema for
/// Google), nothing changed. A rebuilt packet must reproduce its hashes, which the
/// packet rules the engine applies to it judge.
pub(crate) fn agent_request(run: &Run, packet: Option<&Value>) -> Vec<Finding> {
    let packet = match packet_of(RunCheck::AgentRequest, run, packet) {
        Ok(packet) => packet,
        Err(findings) => return findings,
    };
    // The packet itself is judged by the packet rules (`crate::judge` applies them to the run's packet).
    findings(RunCheck::AgentRequest, request_problems(run, packet))
}

/// `run::manifest-binding`: the manifest is the prepared receipt of this exact
/// packet, its file names stay inside the run, and the held-back context is the packet's.
pub(crate) fn manifest_binding(run: &Run, packet: Option<&Value>) -> Vec<Finding> {
    let packet = match packet_of(RunCheck::ManifestBinding, run, packet) {
        Ok(packet) => packet,
        Err(findings) => return findings,
    };
    let mut problems = manifest_problems(run, packet);
    problems.extend(context_problems(run, packet, true));
    findings(RunCheck::ManifestBinding, problems)
}

/// `run::snapshot-parity`: validation-schema.json has the bytes the manifest pins
/// (and, for non-Google runs, is the schema the agent was given). It is never
/// compared with the project's current snapshot: a prepared run keeps its own.
pub(crate) fn snapshot_parity(run: &Run, packet: Option<&Value>, config: &Invocation) -> Vec<Finding> {
    let packet = match packet_of(RunCheck::SnapshotParity, run, packet) {
        Ok(packet) => packet,
        Err(findings) => return findings,
    };
    if run.manifest.is_none() {
        return vec![Finding::new(
            RunCheck::SnapshotParity,
            shown(&run.manifest_file),
            "missing, so no snapshot checksum is pinned",
        )];
    }
    let problems = snapshot(run, packet, config.settings().output_mode(packet), config).err();
    findings(RunCheck::SnapshotParity, problems.unwrap_or_default())
}

/// `run::evaluation`: once there is a raw output it has been evaluated, the stored
/// evaluation passed, and evaluating the current raw output now gives the same
/// result (a Node-made evaluation without `rawOutputChecksum` is accepted when
/// re-evaluation agrees; `complete` requires the checksum).
pub(crate) fn evaluation(
    run: &Run,
    packet: Option<&Value>,
    config: &Invocation,
    packet_rules: super::PacketGate,
) -> Vec<Finding> {
    let packet = match run.packet(packet) {
        Ok(packet @ Value::Object(_)) => packet,
        _ => return packet_of(RunCheck::Evaluation, run, packet).err().unwrap_or_default(),
    };
    findings(RunCheck::Evaluation, evaluation_problems(run, packet, config, packet_rules, false))
}

/// `run::completion`: completion.json exists (otherwise the run is not completed
/// fresh-agent evidence, and this check fails) and binds the current bytes of
/// every file it names, the manifest's hashes, and a passing evaluation.
pub(crate) fn completion(run: &Run) -> Vec<Finding> {
    findings(RunCheck::Completion, completion_problems(run))
}

/// agent-request.json equals the packet's agent view, field by field.
pub(crate) fn request_problems(run: &Run, packet: &Map<String, Value>) -> Vec<Problem> {
    let file = &run.agent_request;
    let actual = match run.read_object(file) {
        Ok(map) => map,
        Err(e) => return vec![problem(shown(file), e.to_string())],
    };
    let Value::Object(expected) = provider::agent_request(packet) else {
        unreachable!("agent_request builds an object")
    };
    let mut out = Vec::new();
    for key in actual.keys().filter(|k| !expected.contains_key(*k)) {
        let why = if key == "outputSchema" {
            "must be absent: a text-JSON (Google) agent request never carries the schema; it is held back".to_owned()
        } else {
            "not allowed: the agent may see only systemPrompt, the effective user message, outputSchema, request settings and audit hashes".to_owned()
        };
        out.push(problem(at(file, JsonPath::field(key)), why));
    }
    for (key, value) in &expected {
        match actual.get(key) {
            None => out.push(problem(at(file, JsonPath::field(key)), "missing")),
            Some(found) if !crate::numbers::same(found, value) => out.push(problem(
                at(file, JsonPath::field(key)),
                format!("differs from the packet's {}", source_field(key)),
            )),
            Some(_) => {}
        }
    }
    out
}

fn source_field(request_key: &str) -> &str {
    match request_key {
        "userMessage" => "effectiveUserMessage",
        "schemaVersion" | "kind" | "executionPolicy" => "agent view (fixed value)",
        other => other,
    }
}

/// eval-context.json is the packet's held-back context. `required`: a missing file is a problem.
pub(crate) fn context_problems(run: &Run, packet: &Map<String, Value>, required: bool) -> Vec<Problem> {
    let file = &run.eval_context;
    let actual = match run.read_optional(file) {
        Ok(None) if required => {
            return vec![problem(shown(file), "missing: the held-back evaluator context is required")]
        }
        Ok(None) => return Vec::new(),
        Ok(Some(_)) => match run.read_object(file) {
            Ok(map) => map,
            Err(e) => return vec![problem(shown(file), e.to_string())],
        },
        Err(e) => return vec![problem(shown(file), e.to_string())],
    };
    let expected = super::format::EvalContext::of(packet).to_map();
    let mut out: Vec<Problem> = actual
        .keys()
        .filter(|k| !expected.contains_key(*k))
        .map(|k| problem(at(file, JsonPath::field(k)), "unknown field"))
        .collect();
    for (key, value) in &expected {
        if !crate::numbers::same_opt(actual.get(key), value) {
            let from = if key == "baseUserMessage" { "userMessage" } else { key.as_str() };
            out.push(problem(at(file, JsonPath::field(key)), format!("does not match the packet's {from}")));
        }
    }
    out
}

/// The manifest is the prepared receipt of this packet (Node's fields, exactly).
pub(crate) fn manifest_problems(run: &Run, packet: &Map<String, Value>) -> Vec<Problem> {
    let file = &run.manifest_file;
    let Some(manifest) = &run.manifest else {
        return vec![problem(shown(file), "missing: every prepared run has its immutable preparation receipt")];
    };
    let mut out = Vec::new();
    let mut expect = |key: &str, expected: Value, what: &str| {
        if !crate::numbers::same_opt(manifest.get(key), &expected) {
            let found = packet::describe(manifest.get(key));
            out.push(problem(at(file, JsonPath::field(key)), format!("expected {expected} ({what}), found {found}")));
        }
    };
    let fixed = format::manifest_fixed();
    let keys = format::manifest_keys();
    for key in keys.iter().map(String::as_str) {
        if let Some((_, value, what)) = fixed.iter().find(|(k, ..)| *k == key) {
            expect(key, value.clone(), what);
        } else if format::MANIFEST_PACKET_KEYS.contains(&key) {
            let bound = packet.get(key).cloned().unwrap_or(Value::Null);
            expect(key, bound, "the packet's own; the manifest must bind this exact packet");
        }
    }
    for (key, _) in MANIFEST_FILES {
        if !manifest.get(key).is_some_and(Value::is_string) {
            out.push(problem(at(file, JsonPath::field(key)), "expected a file name"));
        }
    }
    if !manifest.get("validationSchemaChecksum").and_then(Value::as_str).is_some_and(digest::is_digest) {
        out.push(problem(
            at(file, JsonPath::field("validationSchemaChecksum")),
            "expected sha256:<64 lowercase hex> of the snapshot bytes",
        ));
    }
    for key in manifest.keys().filter(|k| !keys.contains(k) && format::contract_names(k)) {
        let why = "not a manifest field: the contract names it for another file, and a manifest never carries it";
        out.push(problem(at(file, JsonPath::field(key)), why));
    }
    out
}

/// The note on a manifest's fields beyond packetproof's format (the reference's tools
/// add some, e.g. `skillVersion`): accepted and kept, and bound with the manifest's
/// bytes wherever those are digested (a run attestation's subject).
pub(crate) fn manifest_note(dir: &Path, config: &Invocation) -> Option<String> {
    let run = Run::open(dir, config.settings()).ok()?;
    let keys = format::manifest_keys();
    let extra: Vec<&str> = run
        .manifest
        .iter()
        .flat_map(|m| m.keys())
        .filter(|k| !keys.contains(k) && !format::contract_names(k))
        .map(String::as_str)
        .collect();
    (!extra.is_empty()).then(|| {
        format!(
            "{}: fields beyond packetproof's run format, accepted as the reference's tools write them and kept \
             (bound with the manifest's bytes): {}",
            run.manifest_file.name,
            extra.join(", ")
        )
    })
}

/// The note on a completion receipt's fields beyond packetproof's format, as for the
/// manifest: accepted and kept (bound with the receipt's bytes).
pub(crate) fn completion_note(dir: &Path, config: &Invocation) -> Option<String> {
    let run = Run::open(dir, config.settings()).ok()?;
    run.read_optional(&run.completion).ok().flatten()?;
    let receipt = run.read_object(&run.completion).ok()?;
    let known = format::completion_keys();
    let extra: Vec<&str> =
        receipt.keys().filter(|k| !known.contains(k) && !format::contract_names(k)).map(String::as_str).collect();
    (!extra.is_empty()).then(|| {
        format!(
            "{}: fields beyond packetproof's run format, accepted as the reference's tools write them and kept: {}",
            run.completion.name,
            extra.join(", ")
        )
    })
}

/// Where a digest pins bytes, values are not enough: said after a digest mismatch
/// when the file still holds the values it was made with (a formatter that wrote
/// `6.0` for `6`, re-indented it or reordered its keys).
const BYTES_NOT_VALUES: &str = "; its values are the packet's outputSchema, so only its bytes differ (an \
     editor or formatter re-saved it?): the manifest pins the bytes prepare wrote, not values, so restore them \
     (prepare the packet into a new directory and copy its validation-schema.json, or undo the re-save)";

/// The run's held-back schema snapshot, checked. Google: required, with the bytes the manifest
/// pins; never the packaged schema. Others: when the run has a manifest its snapshot must be the
/// packet's outputSchema. `Ok` holds the snapshot document once it was read and holds (`None`:
/// another provider's run without a manifest pins none); a Google answer is judged by its `schema`.
pub(crate) fn snapshot(
    run: &Run,
    packet: &Map<String, Value>,
    mode: Option<OutputMode>,
    config: &Invocation,
) -> Result<Option<Arc<Value>>, Vec<Problem>> {
    let text_json = mode == Some(OutputMode::TextJson);
    let file = &run.schema;
    let pinned = run.manifest.as_ref().and_then(|m| m.get("validationSchemaChecksum")).and_then(Value::as_str);
    let packet_schema = packet.get("outputSchema");
    if !text_json && run.manifest.is_none() {
        return Ok(None);
    }
    let bytes = match run.read_optional(file) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            let why =
                "missing: the run's pinned validation schema is required (the packaged schema is never used instead)";
            return Err(vec![problem(shown(file), why)]);
        }
        Err(e) => return Err(vec![problem(shown(file), e.to_string())]),
    };
    let actual = super::snapshots::sha256(&bytes, config);
    if pinned != Some(actual.as_str()) {
        let mut why = format!("bytes have checksum {actual}, but the manifest pins {}", pinned.unwrap_or("nothing"));
        let parsed = canonical::parse(&bytes).ok();
        if !text_json && parsed.is_some_and(|parsed| crate::numbers::same_opt(packet_schema, &parsed)) {
            why.push_str(BYTES_NOT_VALUES);
        }
        return Err(vec![problem(shown(file), why)]);
    }
    let snapshot = match super::snapshots::parsed(&bytes, config) {
        Ok(value) => value,
        Err(e) => return Err(vec![problem(shown(file), format!("invalid JSON at {e}"))]),
    };
    if !snapshot.get("schema").is_some_and(Value::is_object) {
        let why = "expected the JSON Schema object of the output envelope";
        return Err(vec![problem(at(file, JsonPath::field("schema")), why)]);
    }
    if mode == Some(OutputMode::Text) {
        if *snapshot != super::format::plain_text_snapshot() {
            let why = "is not the plain-text run's: under a plain-text contract the agent is given no schema, and the \
                       held-back file says so";
            return Err(vec![problem(shown(file), why)]);
        }
    } else if !text_json && !crate::numbers::same_opt(packet_schema, snapshot.as_ref()) {
        let why = "differs from the packet's outputSchema: the held-back schema must be the one the agent was given";
        return Err(vec![problem(shown(file), why)]);
    }
    Ok(Some(snapshot))
}

/// The stored evaluation exists once there is raw output, passed, and agrees with
/// a fresh evaluation of the current raw output. `require_checksum`: the stored
/// evaluation must record the raw output's checksum (Node's do not).
/// `packet_rules`: the packet's rules as the evaluation's packet stage applies them
/// (the engine's, so a re-evaluation judges the packet as `evaluate` did).
pub(crate) fn evaluation_problems(
    run: &Run,
    packet: &Value,
    config: &Invocation,
    packet_rules: super::PacketGate,
    require_checksum: bool,
) -> Vec<Problem> {
    let (raw, stored) = match (run.read_optional(&run.raw_output), run.read_optional(&run.evaluation)) {
        (Err(e), _) | (_, Err(e)) => {
            return vec![problem(Location::named(run.dir.shown.display().to_string()), e.to_string())]
        }
        (Ok(raw), Ok(stored)) => (raw, stored),
    };
    let (raw, stored) = match (raw, stored) {
        (None, None) => return Vec::new(), // awaiting the agent; `run::completion` says the run is not completed
        (Some(_), None) => {
            return vec![problem(shown(&run.evaluation), "missing: the raw output has not been evaluated")]
        }
        (None, Some(_)) => {
            return vec![problem(shown(&run.raw_output), "missing, but an evaluation exists: it evaluated other bytes")]
        }
        (Some(raw), Some(stored)) => (raw, stored),
    };
    let stored = match canonical::parse(&stored) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return vec![problem(shown(&run.evaluation), "expected a JSON object")],
        Err(e) => return vec![problem(shown(&run.evaluation), format!("invalid JSON at {e}"))],
    };
    let fresh = match evaluate::assess(run, Some(packet), None, (&raw, &run.raw_output.name), config, packet_rules) {
        Ok(fresh) => fresh,
        Err(e) => return vec![problem(Location::named(run.dir.shown.display().to_string()), e.to_string())],
    };
    compare_evaluation(run, &stored, &fresh, &digest::sha256(&raw), require_checksum)
}

fn compare_evaluation(
    run: &Run,
    stored: &Map<String, Value>,
    fresh: &Evaluation,
    raw_checksum: &str,
    require_checksum: bool,
) -> Vec<Problem> {
    let file = &run.evaluation;
    let mut out = Vec::new();
    match stored.get("rawOutputChecksum").and_then(Value::as_str) {
        Some(recorded) if recorded != raw_checksum => out.push(problem(
            at(file, JsonPath::field("rawOutputChecksum")),
            format!(
                "the evaluation was made from raw output {recorded}, but {} now has {raw_checksum}; re-evaluate",
                run.raw_output.name
            ),
        )),
        None if require_checksum => out.push(problem(
            at(file, JsonPath::field("rawOutputChecksum")),
            "missing: this evaluation does not record which raw output it checked; run `packetproof evaluate` again",
        )),
        _ => {}
    }
    if stored.get("ok") != Some(&Value::Bool(true)) {
        let stage = packet::describe(stored.get("earliestFailureStage"));
        out.push(problem(
            at(file, JsonPath::field("ok")),
            format!("the evaluation did not pass (earliest failure stage: {stage})"),
        ));
        let failures = stored.get("failures").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for (i, failure) in failures.iter().enumerate() {
            let text = |key: &str| failure.get(key).and_then(Value::as_str).unwrap_or("?").to_owned();
            out.push(problem(
                at(file, JsonPath::field("failures").index(i)),
                format!("[{}] {}", text("stage"), text("message")),
            ));
        }
        return out;
    }
    if !fresh.ok {
        let first = fresh.failures.first().map(|f| format!("[{}] {}", f.stage, f.message)).unwrap_or_default();
        out.push(problem(
            at(file, JsonPath::field("ok")),
            format!("records a pass, but evaluating the current files fails: {first}"),
        ));
        return out;
    }
    let Value::Object(expected) = &fresh.document else { unreachable!("evaluation documents are objects") };
    for (key, value) in expected.iter().filter(|(k, _)| k.as_str() != "rawOutputChecksum") {
        if !crate::numbers::same_opt(stored.get(key), value) {
            out.push(problem(
                at(file, JsonPath::field(key)),
                format!("expected {value} (re-evaluation), found {}", packet::describe(stored.get(key))),
            ));
        }
    }
    out
}

fn expect_eq(out: &mut Vec<Problem>, at: Location, found: Option<&Value>, expected: &Value, what: &str) {
    if !crate::numbers::same_opt(found, expected) {
        out.push(problem(at, format!("expected {expected} ({what}), found {}", packet::describe(found))));
    }
}

/// completion.json binds the run as it is now.
/// The answer a completion receipts is bare JSON: a fenced block passes the
/// reference's evaluator, but its completion refuses it, and so does packetproof.
pub(crate) fn answer_problems(run: &Run) -> Vec<Problem> {
    match run.read_optional(&run.raw_output) {
        Ok(Some(raw)) if crate::evaluator::parse::is_fenced(&raw) => vec![problem(
            shown(&run.raw_output),
            "is a fenced block, not bare JSON: the evaluation accepts it, but a completion receipts only an answer \
             that is one JSON object (as the reference's completion does)",
        )],
        _ => Vec::new(),
    }
}

pub(crate) fn completion_problems(run: &Run) -> Vec<Problem> {
    let file = &run.completion;
    let receipt = match run.read_optional(file) {
        Ok(None) => {
            return vec![problem(
                shown(file),
                "missing: the run is not completed; a prepared manifest or a passing evaluation without a completion receipt is not fresh-agent evidence",
            )]
        }
        Ok(Some(_)) => match run.read_object(file) {
            Ok(map) => map,
            Err(e) => return vec![problem(shown(file), e.to_string())],
        },
        Err(e) => return vec![problem(shown(file), e.to_string())],
    };
    let mut out = answer_problems(run);
    let mut expect = |path: JsonPath, found: Option<&Value>, expected: &Value, what: &str| {
        expect_eq(&mut out, at(file, path), found, expected, what);
    };
    for (key, value, what) in format::completion_fixed() {
        expect(JsonPath::field(key), receipt.get(key), &value, what);
    }
    let boundary = receipt.get("inputBoundary");
    let field = |key: &str| boundary.and_then(|b| b.get(key));
    let kind = format::INPUT_BOUNDARY_KIND.into();
    let boundary_at = |key: &str| JsonPath::field("inputBoundary").key(key);
    expect(boundary_at("kind"), field("kind"), &kind, "the agent saw only its request");
    expect(boundary_at("file"), field("file"), &run.agent_request.name.clone().into(), "the run's agent request");
    for key in format::input_boundary_denied() {
        expect(boundary_at(&key), field(&key), &false.into(), "a fresh, isolated agent");
    }
    let mut unbound = Vec::new();
    for (path, found, target) in [
        (JsonPath::field("inputBoundary").key("checksum"), field("checksum"), &run.agent_request),
        (
            JsonPath::field("rawOutput").key("checksum"),
            receipt.get("rawOutput").and_then(|r| r.get("checksum")),
            &run.raw_output,
        ),
        (
            JsonPath::field("evaluation").key("checksum"),
            receipt.get("evaluation").and_then(|r| r.get("checksum")),
            &run.evaluation,
        ),
    ] {
        match run.read(target) {
            Ok(bytes) => expect(
                path.clone(),
                found,
                &digest::sha256(&bytes).into(),
                &format!("the current bytes of {}", target.name),
            ),
            Err(e) => unbound.push(problem(at(file, path), format!("cannot bind: {e}"))),
        }
    }
    expect(
        JsonPath::field("rawOutput").key("file"),
        receipt.get("rawOutput").and_then(|r| r.get("file")),
        &run.raw_output.name.clone().into(),
        "the run's raw output",
    );
    expect(
        JsonPath::field("evaluation").key("file"),
        receipt.get("evaluation").and_then(|r| r.get("file")),
        &run.evaluation.name.clone().into(),
        "the run's evaluation",
    );
    expect(
        JsonPath::field("evaluation").key("ok"),
        receipt.get("evaluation").and_then(|r| r.get("ok")),
        &true.into(),
        "only passing evaluations are completed",
    );
    if let Some(manifest) = &run.manifest {
        for key in format::COMPLETION_MANIFEST_KEYS {
            expect(JsonPath::field(key), receipt.get(key), manifest.get(key).unwrap_or(&Value::Null), "the manifest's");
        }
    } else {
        unbound.push(problem(shown(&run.manifest_file), "missing: a completion must bind the prepared manifest"));
    }
    out.extend(unbound);
    for key in ["scenario", "runId", "agentTask"] {
        let bad = |s: &str| s.trim().is_empty() || s.chars().any(char::is_control);
        if receipt.get(key).and_then(Value::as_str).is_none_or(bad) {
            out.push(problem(at(file, JsonPath::field(key)), "expected a non-blank string without control characters"));
        }
    }
    out.extend(receipt_shape_problems(file, &receipt));
    if !receipt.get("completedAt").and_then(Value::as_str).is_some_and(super::is_rfc3339_millis) {
        out.push(problem(at(file, JsonPath::field("completedAt")), "expected an RFC 3339 UTC time with milliseconds"));
    }
    let notes = receipt.get("evaluatorNotes").and_then(Value::as_array);
    if !notes.is_some_and(|n| !n.is_empty() && n.iter().all(|x| x.as_str().is_some_and(|s| !s.trim().is_empty()))) {
        out.push(problem(at(file, JsonPath::field("evaluatorNotes")), "expected at least one note, none blank"));
    }
    out
}

/// The receipt's shape evolves as the manifest's does: a top-level field the reference's
/// tools add (`recordedBy`) is accepted, kept and noted (`completion_note`); one the
/// contract names for another file, and any unknown field inside the receipt's own
/// objects, is an edit (a forged or hand-extended receipt).
fn receipt_shape_problems(file: &RunFile, receipt: &Map<String, Value>) -> Vec<Problem> {
    let unknown = |path: JsonPath| problem(at(file, path), "unknown field");
    let known = format::completion_keys();
    let mut out: Vec<Problem> = receipt
        .keys()
        .filter(|k| !known.contains(k) && format::contract_names(k))
        .map(|k| {
            problem(at(file, JsonPath::field(k)), "not a completion field: the contract names it for another file")
        })
        .collect();
    for (key, known) in format::completion_nested_keys() {
        match receipt.get(&key) {
            Some(Value::Object(inner)) => {
                out.extend(inner.keys().filter(|k| !known.contains(k)).map(|k| unknown(JsonPath::field(&key).key(k))))
            }
            found => out.push(problem(
                at(file, JsonPath::field(&key)),
                format!("expected an object, found {}", packet::describe(found)),
            )),
        }
    }
    out
}
