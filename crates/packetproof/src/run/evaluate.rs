//! `packetproof evaluate`: check a fresh agent's raw output and write
//! evaluation.json in the Node evaluator's format, plus `rawOutputChecksum` (so
//! completion can refuse an evaluation of other bytes).
//!
//! This module reads the run and orchestrates; the rules are in `crate::evaluator`.
//! Stages, in the reference's order: packet, schema-snapshot (Google
//! runs), json-parse, then `evaluator::judge`. The first three stop evaluation when they
//! fail (stricter than the reference, which judges a Google answer after its own manifest
//! or snapshot failed).

use super::audit;
use super::Run;
use crate::config::OutputMode;
use crate::evaluator::document::{self, Facts, SchemaSource};
use crate::evaluator::{self, parse, Failure, Failures, JSON_PARSE, PACKET, SCHEMA_SNAPSHOT};
use crate::fsutil::{self, Replace};
use crate::Invocation;
use crate::{canonical, digest, suite_evaluator, Error, Result};
use serde_json::{Map, Value};
use std::path::PathBuf;

/// What to evaluate: a run directory, and optionally another packet, raw output
/// or report file than the run's own.
#[derive(Debug, Clone)]
pub struct EvaluateRequest {
    pub run_dir: PathBuf,
    /// Default: rebuilt from agent-request.json + eval-context.json.
    pub packet: Option<PathBuf>,
    /// Default: the manifest's rawOutput (raw-output.json).
    pub output: Option<PathBuf>,
    /// Default: the manifest's evaluation (evaluation.json).
    pub report: Option<PathBuf>,
    /// A schema snapshot to pin (`--schema`, for packets made elsewhere): the schema the
    /// answer is judged against (a Google run's held-back snapshot, else the packet's
    /// outputSchema) must be this one.
    pub schema: Option<PathBuf>,
}

/// The evaluation may replace only the run's own evaluation.json, and not even
/// that once a completion receipt binds it; never another run file.
fn refuse_receipt_overwrite(run: &Run, report: &std::path::Path) -> Result<()> {
    let completed = run.completion.path.symlink_metadata().is_ok();
    match run.file_at(report) {
        None => Ok(()),
        Some(file) if std::ptr::eq(file, &run.evaluation) && !completed => Ok(()),
        Some(file) if std::ptr::eq(file, &run.evaluation) => Err(Error::refused(
            run.show(file),
            "the run is completed; its receipted evaluation is never rewritten (use --report FILE outside the run)",
        )),
        Some(file) => Err(Error::refused(
            report.display(),
            format!("is the run's {}; an evaluation never replaces another run file", file.name),
        )),
    }
}

impl EvaluateRequest {
    /// Evaluate a run's own raw output into its own evaluation.json.
    pub(crate) fn for_run(run_dir: PathBuf) -> Self {
        EvaluateRequest { run_dir, packet: None, output: None, report: None, schema: None }
    }
}

/// One failed stage check, as evaluation.json records it.
pub(crate) type StageFailure = Failure;

/// The result of evaluating one raw output.
#[derive(Debug, Clone)]
#[must_use = "an evaluation dropped is a failure nobody sees"]
pub struct Evaluation {
    pub ok: bool,
    pub(crate) failures: Vec<StageFailure>,
    /// evaluation.json, Node's fields in Node's order, then `rawOutputChecksum`.
    pub document: Value,
    /// Said beside the verdict, never part of it: where the built-in evaluator
    /// disagrees with the suite's own.
    pub notes: Vec<String>,
}

/// Evaluate a run's raw output and write the evaluation atomically; returns it
/// and where it was written.
/// The reference's evaluation is recorded as it comes out when it fails (the same
/// failure stages as the Node evaluator); a passing one is recorded only when the
/// run also passes `gate`: a run that `verify` would fail never gets a passing
/// evaluation (it is refused, and nothing is written).
pub(crate) fn evaluate(
    config: &Invocation,
    args: &EvaluateRequest,
    gate: super::RunGate,
    packet_rules: super::PacketGate,
) -> Result<(Evaluation, PathBuf)> {
    // Held until the evaluation is written: a concurrent complete sees it before or after.
    let (dir, _lock) = super::lock_run_dir(&args.run_dir)?;
    let run = Run::open(&args.run_dir, config.settings())?;
    let given =
        args.packet.as_deref().map(|p| fsutil::read_json(p, config.settings().limits.max_file_bytes)).transpose()?;
    let findings = gate(&run, given.as_ref());
    let (raw, raw_name) = match &args.output {
        Some(path) => (fsutil::read_bytes(path, config.settings().limits.max_file_bytes)?, path.display().to_string()),
        None => (run.read(&run.raw_output)?.to_vec(), run.raw_output.name.clone()),
    };
    let report = args.report.clone().unwrap_or_else(|| run.evaluation.path.clone());
    refuse_receipt_overwrite(&run, &report)?;
    // Decided once, by name, not by resolving paths again (a symlink swapped in
    // meanwhile would make the run's own file look like a foreign one).
    let own = args.report.is_none() || run.file_at(&report).is_some_and(|f| std::ptr::eq(f, &run.evaluation));
    if !own {
        let inputs: Vec<&std::path::Path> =
            [&args.packet, &args.output, &args.schema].into_iter().flatten().map(|p| p.as_path()).collect();
        super::ownership::refuse_foreign_output(&report, super::OutputKind::Evaluation, config.settings(), &inputs)?;
    }
    let pin = match &args.schema {
        Some(path) => {
            Some((path.display().to_string(), fsutil::read_json(path, config.settings().limits.max_file_bytes)?))
        }
        None => None,
    };
    let evaluation = assess(&run, given.as_ref(), pin.as_ref(), (&raw, &raw_name), config, packet_rules)?;
    if evaluation.ok && !findings.is_empty() {
        return Err(Error::Failed { file: args.run_dir.display().to_string(), findings });
    }
    let bytes = canonical::to_pretty(&evaluation.document);
    if own {
        // Relative to the opened run directory, never through a symlink: the name
        // was checked to stay inside, and the write cannot be redirected since.
        dir.write(&run.evaluation.name, bytes.as_bytes(), Replace::Allowed)?;
    } else {
        fsutil::write_atomic(&report, bytes.as_bytes())?;
    }
    Ok((evaluation, report))
}

/// Evaluate `raw` for `run` without writing anything (verify and complete use this
/// to re-check a stored evaluation). Errors only for unreadable required inputs.
/// `raw` is the output's bytes and the name to report them under; `pin` a schema
/// snapshot (file name, value) the run's schema must be.
pub(crate) fn assess(
    run: &Run,
    given: Option<&Value>,
    pin: Option<&(String, Value)>,
    raw: (&[u8], &str),
    config: &Invocation,
    packet_rules: super::PacketGate,
) -> Result<Evaluation> {
    let (raw, raw_name) = raw;
    let request = run.read_object(&run.agent_request)?;
    let mut out = Failures::default();
    let mut facts = Facts {
        exact_input_hash: request.get("exactInputHash").cloned(),
        schema_applied: false,
        schema_source: SchemaSource::Unavailable,
        snapshot_checksum: None,
        raw_checksum: digest::sha256(raw),
    };
    let finish = |out: Failures, facts: &Facts, output: Option<&Value>| {
        let document = document::build(&out.list, facts, output);
        Ok(Evaluation { ok: out.is_empty(), failures: out.list, document, notes: Vec::new() })
    };
    let Some(packet) = packet_stage(run, given, config, packet_rules, &mut out)? else {
        return finish(out, &facts, None);
    };
    facts.exact_input_hash = packet.get("exactInputHash").cloned();
    let packet_schema = packet.get("outputSchema").and_then(|s| s.get("schema")).filter(|s| s.is_object());
    let held_back;
    let schema = match packet_schema {
        Some(schema) => {
            facts.schema_source = SchemaSource::ProviderPacket;
            Some(schema)
        }
        // Only text-JSON (Google) runs are judged against the held-back snapshot; for the
        // others the reference ignores the run files, and so does evaluation (verify's
        // run::manifest-binding and run::snapshot-parity check them).
        None if config.settings().output_mode(packet) == Some(OutputMode::TextJson) => {
            held_back = snapshot_stage(run, packet, (&mut facts, &mut out), config);
            held_back.as_deref().and_then(|snapshot| snapshot.get("schema"))
        }
        None => None,
    };
    if let Some((file, pinned)) = pin.filter(|_| out.is_empty()) {
        pin_stage(run, packet, (file, pinned), &mut out);
    }
    // A packet or held-back file that failed stops here: nothing after could be trusted.
    if !out.is_empty() {
        return finish(out, &facts, None);
    }
    // The suite's own evaluator judges the answer from here on (json-parse included).
    if let Some(suite) = &config.settings().agent(packet).evaluator {
        return suite_evaluated(suite, run, packet, schema, (raw, raw_name), &facts, config);
    }
    let scope = evaluator::scope(config.settings().agent(packet))
        .map_err(|why| Error::Config { file: config.settings().file_name(), message: why })?;
    let output = match parse::parse_output(raw) {
        Ok(output) => output,
        Err(message) => {
            out.fail(JSON_PARSE, format!("{raw_name}: {message}"));
            return finish(out, &facts, None);
        }
    };
    let judgement = evaluator::judge(&output, packet, schema, config);
    facts.schema_applied = judgement.schema_applied;
    let mut evaluation = finish(judgement.failures, &facts, Some(&output))?;
    evaluation.notes.extend(scope.note().map(str::to_owned));
    Ok(evaluation)
}

/// The evaluation by the suite's `[evaluator]`, with the checksum of the bytes it
/// judged; where the built-in evaluator applies (a block-builder packet) and reaches
/// another verdict, a note says so.
fn suite_evaluated(
    suite: &crate::config::Evaluator,
    run: &Run,
    packet: &Map<String, Value>,
    schema: Option<&Value>,
    (raw, raw_name): (&[u8], &str),
    facts: &Facts,
    config: &Invocation,
) -> Result<Evaluation> {
    let verdict = suite_evaluator::evaluate(suite, config, &run.dir.shown, &Value::Object(packet.clone()), raw)?;
    let notes = builtin_disagreement(&verdict.failures, packet, schema, (raw, raw_name), config).into_iter().collect();
    let mut document = verdict.document;
    document.insert("rawOutputChecksum".into(), Value::from(facts.raw_checksum.clone()));
    Ok(Evaluation { ok: verdict.ok, failures: verdict.failures, document: Value::Object(document), notes })
}

/// The built-in evaluator's verdict where it differs from the suite's (`suite`, its
/// failures): a different first failing stage, or one passes where the other fails.
/// It judges only the block builder's answers, so other agents' packets get none.
fn builtin_disagreement(
    suite: &[Failure],
    packet: &Map<String, Value>,
    schema: Option<&Value>,
    (raw, raw_name): (&[u8], &str),
    config: &Invocation,
) -> Option<String> {
    // The built-in evaluator is the block-builder profile's: beside a suite's own it
    // speaks only of that profile's packets.
    let agent = config.settings().agent(packet);
    let id = packet.get("agentId").and_then(Value::as_str);
    if !agent.is_block_builder() || !id.is_some_and(|id| agent.agent_ids.iter().any(|a| a == id)) {
        return None;
    }
    let builtin = match parse::parse_output(raw) {
        Ok(output) => evaluator::judge(&output, packet, schema, config).failures.list,
        Err(message) => vec![Failure { stage: JSON_PARSE.into(), message: format!("{raw_name}: {message}") }],
    };
    if builtin.first().map(|f| &f.stage) == suite.first().map(|f| &f.stage) {
        return None;
    }
    let say = |failures: &[Failure]| match failures.first() {
        None => "passes".to_owned(),
        Some(first) => format!("fails at stage {:?} ({})", first.stage, crate::report::excerpt(&first.message)),
    };
    Some(format!(
        "the built-in block-builder evaluator disagrees with the suite's [evaluator] (a note, not a failure): \
         the built-in one {}, the suite's {}",
        say(&builtin),
        say(suite)
    ))
}

/// The packet stage: the packet's own rules, and (packetproof's additions) the agent saw
/// exactly its agent view and the held-back context is its own. `None` stops.
fn packet_stage<'a>(
    run: &'a Run,
    given: Option<&'a Value>,
    config: &Invocation,
    packet_rules: super::PacketGate,
    out: &mut Failures,
) -> Result<Option<&'a Map<String, Value>>> {
    let whole = match run.packet(given) {
        Ok(whole @ Value::Object(_)) => whole,
        Ok(_) => {
            out.fail(PACKET, "--packet: expected a JSON object");
            return Ok(None);
        }
        Err(error @ Error::Io { .. }) if given.is_none() && run.eval_context.path.symlink_metadata().is_err() => {
            out.fail(
                PACKET,
                format!("{error}: the held-back eval context is required to rebuild the packet (or give --packet)"),
            );
            return Ok(None);
        }
        Err(error) => {
            out.fail(PACKET, error.to_string());
            return Ok(None);
        }
    };
    let packet = whole.as_object().expect("matched an object above");
    for finding in packet_rules(whole) {
        out.fail(PACKET, format!("packet {finding}"));
    }
    // An unnamed provider is packet::contract's finding above; its run is held to the schema mode's rules.
    let text_json = config.settings().output_mode(packet) == Some(OutputMode::TextJson);
    for problem in audit::request_problems(run, packet) {
        out.fail(PACKET, problem.to_string());
    }
    // A Google run needs its held-back context; other runs are checked when it is present.
    for problem in audit::context_problems(run, packet, text_json) {
        out.fail(PACKET, problem.to_string());
    }
    Ok(Some(packet))
}

/// The schema-snapshot stage of a Google run: the manifest exists and binds this packet,
/// and the held-back snapshot has the bytes it pins. Returns the snapshot's schema.
fn snapshot_stage(
    run: &Run,
    packet: &Map<String, Value>,
    (facts, out): (&mut Facts, &mut Failures),
    config: &Invocation,
) -> Option<std::sync::Arc<Value>> {
    if let Ok(Some(bytes)) = run.read_optional(&run.schema) {
        facts.snapshot_checksum = Some(super::snapshots::sha256(&bytes, config));
    }
    if run.manifest.is_none() {
        out.fail(
            SCHEMA_SNAPSHOT,
            format!(
                "{}: missing; a Google run is evaluated only against the snapshot its manifest pins",
                run.manifest_file.name
            ),
        );
        return None;
    }
    for problem in audit::manifest_problems(run, packet) {
        out.fail(SCHEMA_SNAPSHOT, problem.to_string());
    }
    match audit::snapshot(run, packet, Some(OutputMode::TextJson), config) {
        Ok(snapshot) => {
            facts.schema_source = SchemaSource::RunSnapshot;
            snapshot
        }
        Err(problems) => {
            problems.into_iter().for_each(|problem| out.fail(SCHEMA_SNAPSHOT, problem.to_string()));
            None
        }
    }
}

/// `--schema FILE`: the schema this run is judged against is the pinned snapshot.
fn pin_stage(run: &Run, packet: &Map<String, Value>, (file, pinned): (&String, &Value), out: &mut Failures) {
    let (name, actual) = match packet.get("outputSchema") {
        Some(schema) => ("$.outputSchema of the packet".to_owned(), Some(schema.clone())),
        None => {
            let held_back = run.read_optional(&run.schema).ok().flatten();
            (run.schema.name.clone(), held_back.and_then(|bytes| canonical::parse(&bytes).ok()))
        }
    };
    if actual.as_ref() != Some(pinned) {
        out.fail(SCHEMA_SNAPSHOT, format!("{name} is not the pinned schema snapshot {file} (--schema)"));
    }
}
