//! `packetproof evaluate`: check a fresh agent's raw output and write
//! evaluation.json in the Node evaluator's format, plus `rawOutputChecksum` (so
//! completion can refuse an evaluation of other bytes).
//!
//! Stages, in order: packet, schema-snapshot, json-parse, schema,
//! asset-isolation, then the semantic stages of `run::semantic`. The first
//! three stop evaluation when they fail.

use super::checks::{self, Problem};
use super::{semantic, Run, PROOF_CLASS};
use crate::{canonical, digest, fsutil, packet, Config, Error, Result};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

pub const PACKET: &str = "packet";
pub const SCHEMA_SNAPSHOT: &str = "schema-snapshot";
pub const JSON_PARSE: &str = "json-parse";
pub const SCHEMA: &str = "schema";
pub const ASSET_ISOLATION: &str = "asset-isolation";

/// Schema errors listed before the rest are summarized as a count.
const MAX_SCHEMA_ERRORS: usize = 25;

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
    pub fn for_run(run_dir: PathBuf) -> Self {
        EvaluateRequest { run_dir, packet: None, output: None, report: None }
    }
}

/// One failed stage check, as evaluation.json records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageFailure {
    pub stage: &'static str,
    pub message: String,
}

/// The result of evaluating one raw output.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub ok: bool,
    pub failures: Vec<StageFailure>,
    /// evaluation.json, Node's fields in Node's order, then `rawOutputChecksum`.
    pub document: Value,
}

/// Evaluate a run's raw output and write the evaluation atomically; returns it
/// and where it was written.
pub fn evaluate(config: &Config, args: &EvaluateRequest) -> Result<(Evaluation, PathBuf)> {
    let run = Run::open(&args.run_dir, config)?;
    let given = args.packet.as_deref().map(|p| fsutil::read_json(p, config.limits.max_file_bytes)).transpose()?;
    let (raw, raw_name) = match &args.output {
        Some(path) => (fsutil::read_bytes(path, config.limits.max_file_bytes)?, path.display().to_string()),
        None => (run.read(&run.raw_output)?, run.raw_output.name.clone()),
    };
    let report = args.report.clone().unwrap_or_else(|| run.evaluation.path.clone());
    refuse_receipt_overwrite(&run, &report)?;
    let evaluation = assess(&run, given.as_ref(), (&raw, &raw_name), config)?;
    fsutil::write_atomic(&report, canonical::to_pretty(&evaluation.document).as_bytes())?;
    Ok((evaluation, report))
}

impl Evaluation {
    /// The text report: a verdict line for `report`, then one line per failure.
    pub fn render(&self, report: &str) -> String {
        let verdict = if self.ok { "ok" } else { "FAILED" };
        let mut text = format!("{report}: {verdict} ({} failure(s))\n", self.failures.len());
        for failure in &self.failures {
            text.push_str(&format!("  [{}] {}\n", failure.stage, failure.message));
        }
        text
    }
}

/// What evaluation has established so far; becomes evaluation.json.
struct State {
    failures: Vec<StageFailure>,
    exact_input_hash: Value,
    text_json: bool,
    snapshot_checksum: Value,
    schema_applied: bool,
    output: Option<Value>,
    raw_checksum: String,
}

impl State {
    fn fail(&mut self, stage: &'static str, message: impl Into<String>) {
        self.failures.push(StageFailure { stage, message: message.into() });
    }

    fn fail_all(&mut self, stage: &'static str, problems: Vec<Problem>) {
        for problem in problems {
            self.fail(stage, problem.to_string());
        }
    }

    fn finish(self) -> Evaluation {
        let ok = self.failures.is_empty();
        let summary = semantic::summarize(self.output.as_ref());
        let failures: Vec<Value> = self
            .failures
            .iter()
            .map(|f| {
                let mut m = Map::new();
                m.insert("stage".into(), f.stage.into());
                m.insert("message".into(), f.message.clone().into());
                Value::Object(m)
            })
            .collect();
        let mut d = Map::new();
        d.insert("ok".into(), ok.into());
        d.insert("proofClass".into(), PROOF_CLASS.into());
        d.insert("replacesRuntimeTaskDebug".into(), false.into());
        d.insert("exactInputHash".into(), self.exact_input_hash);
        d.insert("schemaValidationApplied".into(), self.schema_applied.into());
        let source = if self.text_json { "run-snapshot" } else { "provider-packet" };
        d.insert("schemaSource".into(), source.into());
        d.insert("validationSchemaChecksum".into(), self.snapshot_checksum);
        d.insert("earliestFailureStage".into(), self.failures.first().map_or(Value::Null, |f| f.stage.into()));
        d.insert("failures".into(), Value::Array(failures));
        d.insert("summary".into(), summary.to_json());
        d.insert("rawOutputChecksum".into(), self.raw_checksum.into());
        Evaluation { ok, failures: self.failures, document: Value::Object(d) }
    }
}

/// Evaluate `raw` for `run` without writing anything (verify and complete use this
/// to re-check a stored evaluation). Errors only for unreadable required inputs.
/// `raw` is the output's bytes and the name to report them under.
pub(crate) fn assess(run: &Run, given: Option<&Value>, raw: (&[u8], &str), config: &Config) -> Result<Evaluation> {
    let (raw, raw_name) = raw;
    let request = run.read_object(&run.agent_request)?;
    let provider = request.get("provider").and_then(Value::as_str).unwrap_or_default();
    let mut state = State {
        failures: Vec::new(),
        exact_input_hash: request.get("exactInputHash").cloned().unwrap_or(Value::Null),
        text_json: config.is_text_json(provider),
        snapshot_checksum: Value::Null,
        schema_applied: false,
        output: None,
        raw_checksum: digest::sha256(raw),
    };
    let Some(packet) = packet_stage(run, given, config, &mut state)? else { return Ok(state.finish()) };
    let (schema, problems) = checks::snapshot(run, &packet, state.text_json);
    if state.text_json {
        state.snapshot_checksum =
            run.manifest.as_ref().and_then(|m| m.get("validationSchemaChecksum")).cloned().unwrap_or(Value::Null);
    }
    state.fail_all(SCHEMA_SNAPSHOT, problems);
    if schema.is_none() && state.failures.is_empty() {
        state.fail(
            SCHEMA_SNAPSHOT,
            "no validation schema: the packet carries no outputSchema and the run pins no snapshot",
        );
    }
    let Some(schema) = schema.filter(|_| state.failures.is_empty()) else { return Ok(state.finish()) };
    let output = match parse_output(raw) {
        Ok(output) => output,
        Err(message) => {
            state.fail(JSON_PARSE, format!("{raw_name}: {message}"));
            return Ok(state.finish());
        }
    };
    schema_stage(&schema, &output, &mut state);
    let mut isolation = Vec::new();
    packet::scan(&output, "$", config, "asset-isolation", &mut isolation);
    for finding in isolation {
        state.fail(
            ASSET_ISOLATION,
            format!("{}: {} (output must carry semantic asset intents only)", finding.path, finding.message),
        );
    }
    semantic::check(&output, &packet, &mut |stage, message| state.fail(stage, message));
    state.output = Some(output);
    Ok(state.finish())
}

/// The packet stage: the packet is valid, the agent saw exactly its agent view,
/// the held-back context is its own, and the manifest binds it. `None` stops.
fn packet_stage(
    run: &Run,
    given: Option<&Value>,
    config: &Config,
    state: &mut State,
) -> Result<Option<Map<String, Value>>> {
    let packet = match run.packet(given) {
        Ok(Value::Object(packet)) => packet,
        Ok(_) => {
            state.fail(PACKET, "--packet: expected a JSON object");
            return Ok(None);
        }
        Err(error @ Error::Io { .. }) if given.is_none() && run.eval_context.path.symlink_metadata().is_err() => {
            state.fail(
                PACKET,
                format!("{error}: the held-back eval context is required to rebuild the packet (or give --packet)"),
            );
            return Ok(None);
        }
        Err(error) => {
            state.fail(PACKET, error.to_string());
            return Ok(None);
        }
    };
    state.exact_input_hash = packet.get("exactInputHash").cloned().unwrap_or(Value::Null);
    state.text_json = config.is_text_json(packet.get("provider").and_then(Value::as_str).unwrap_or_default());
    for finding in packet::validate(&Value::Object(packet.clone()), config) {
        state.fail(PACKET, format!("packet {finding}"));
    }
    state.fail_all(PACKET, checks::request_problems(run, &packet));
    // A Google run needs both held-back files; other runs are checked when present.
    state.fail_all(PACKET, checks::context_problems(run, &packet, state.text_json));
    match &run.manifest {
        Some(_) => state.fail_all(PACKET, checks::manifest_problems(run, &packet)),
        None if state.text_json => state.fail(
            PACKET,
            format!(
                "{}: missing; a Google run is evaluated only against the snapshot its manifest pins",
                run.manifest_file.name
            ),
        ),
        None => {}
    }
    Ok(state.failures.is_empty().then_some(packet))
}

fn schema_stage(schema: &Value, output: &Value, state: &mut State) {
    let validator = match validator(schema) {
        Ok(validator) => validator,
        Err(message) => {
            state.fail(SCHEMA, format!("the validation schema does not compile: {message}"));
            return;
        }
    };
    state.schema_applied = true;
    let errors: Vec<String> = validator
        .iter_errors(output)
        .map(|e| format!("at {}: {e}", pointer_path(&e.instance_path.to_string())))
        .collect();
    let extra = errors.len().saturating_sub(MAX_SCHEMA_ERRORS);
    for message in errors.into_iter().take(MAX_SCHEMA_ERRORS) {
        state.fail(SCHEMA, message);
    }
    if extra > 0 {
        state.fail(SCHEMA, format!("and {extra} more schema error(s)"));
    }
}

/// A JSON pointer (`/result/x/0`) as a JSONPath (`$.result.x[0]`), like every other message.
fn pointer_path(pointer: &str) -> String {
    pointer.split('/').skip(1).fold("$".to_owned(), |path, step| {
        let step = step.replace("~1", "/").replace("~0", "~");
        match step.parse::<usize>() {
            Ok(i) => crate::report::index(&path, i),
            Err(_) => crate::report::child(&path, &step),
        }
    })
}

/// The compiled validator for `schema`, compiled once per schema digest for the
/// whole process (verify evaluates many runs pinned to the same snapshot). No
/// network: jsonschema is built without its resolver features.
pub(crate) fn validator(schema: &Value) -> std::result::Result<Arc<jsonschema::Validator>, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let key = digest::sha256(&canonical::to_vec(schema));
    let cache = CACHE.get_or_init(Default::default);
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(Arc::clone(found));
    }
    let compiled = Arc::new(jsonschema::validator_for(schema).map_err(|e| e.to_string())?);
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(key, Arc::clone(&compiled));
    Ok(compiled)
}

/// json-parse: the whole text trimmed, optionally one fenced ```json block around
/// all of it; then the strict parser (duplicate keys are refused, not resolved).
pub(crate) fn parse_output(raw: &[u8]) -> std::result::Result<Value, String> {
    let text =
        std::str::from_utf8(raw).map_err(|e| format!("not UTF-8 (invalid byte at offset {})", e.valid_up_to()))?;
    let body = unfence(text.trim());
    if body.is_empty() {
        return Err("empty output: expected one JSON object".into());
    }
    canonical::parse(body.as_bytes()).map_err(|e| format!("invalid JSON at {e}"))
}

fn unfence(text: &str) -> &str {
    let Some(inner) = text.strip_prefix("```").and_then(|t| t.strip_suffix("```")) else { return text };
    match inner.split_once('\n') {
        Some((info, body)) if info.trim().is_empty() || info.trim().eq_ignore_ascii_case("json") => body.trim(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fenced_and_trimmed_output_parses() {
        assert_eq!(parse_output(b"  \n{\"a\":1}\n ").unwrap(), json!({"a": 1}));
        assert_eq!(parse_output(b"```json\n{\"a\":1}\n```").unwrap(), json!({"a": 1}));
        assert_eq!(parse_output(b"```\n{\"a\":1}\n```\n").unwrap(), json!({"a": 1}));
        assert!(parse_output(b"Here you go: ```json\n{\"a\":1}\n```").is_err());
        assert!(parse_output(b"```python\n{\"a\":1}\n```").is_err());
        assert!(parse_output(b"{\"a\":1,\"a\":2}").unwrap_err().contains("duplicate"));
        assert!(parse_output(b"   ").is_err());
    }

    #[test]
    fn validator_is_compiled_once_per_schema() {
        let schema = json!({"type": "object", "required": ["result"]});
        let a = validator(&schema).unwrap();
        let b = validator(&json!({"required": ["result"], "type": "object"})).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "same digest, same compiled validator");
        assert!(!a.is_valid(&json!({})));
    }

    #[test]
    fn remote_refs_are_never_fetched() {
        let schema = json!({"$ref": "https://example.invalid/schema.json"});
        assert!(validator(&schema).is_err());
    }

    #[test]
    fn pointers_read_as_json_paths() {
        assert_eq!(pointer_path(""), "$");
        assert_eq!(
            pointer_path("/result/onboardingStrategySequence/0/a~1b"),
            "$.result.onboardingStrategySequence[0][\"a/b\"]"
        );
    }
}
