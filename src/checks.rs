//! Named checks over the fixture corpus: the one implementation behind
//! `packetproof verify`, `packetproof bless` and `tests/conformance.rs`.
//! A check returns findings; an `Err` means its inputs could not be read.

use crate::corpus::Case;
use crate::packet::{self, PROMPT_TEXTS};
use crate::report::{walk, Finding, Trail};
use crate::{compile, fsutil, run, Config, Result};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

pub const REGENERATES: &str = "packet::regenerates";
pub const BRANCH_ISOLATION: &str = "packet::branch-isolation";

/// Per-packet checks, in report order.
pub const PACKET_CHECKS: [&str; 7] = [
    REGENERATES,
    packet::EXACT_INPUT_HASH,
    packet::CHECKSUM,
    packet::CONTRACT,
    BRANCH_ISOLATION,
    packet::FORBIDDEN,
    packet::PROVIDER_SHAPE,
];

/// What a check found, plus, for `packet::regenerates`, both texts for a diff.
#[derive(Debug, Default)]
pub struct Checked {
    pub findings: Vec<Finding>,
    pub mismatch: Option<Mismatch>,
}

/// A golden file that differs from what the tools produce now, reduced to what
/// changed: one `path = value` line per differing leaf (for a field-level diff),
/// and unified diffs of the prompt texts.
#[derive(Debug)]
pub struct Mismatch {
    pub golden: String,
    pub produced: String,
    pub text_diffs: String,
}

impl Mismatch {
    fn between(golden: &Value, produced: &Value) -> Mismatch {
        let changes = crate::release::field_changes(golden, produced, &crate::release::PROMPT_TEXTS);
        let lines = |pick: fn(&crate::release::FieldChange) -> &Option<String>| -> String {
            changes.iter().map(|c| format!("{} = {}\n", c.path, pick(c).as_deref().unwrap_or("(absent)"))).collect()
        };
        let mut text_diffs = String::new();
        for key in crate::release::PROMPT_TEXTS {
            let text = |v: &Value| v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
            let diff = crate::release::unified(&text(golden), &text(produced), ("golden", "recompiled"));
            if !diff.is_empty() {
                text_diffs.push_str(&format!("{key}:\n{diff}"));
            }
        }
        Mismatch { golden: lines(|c| &c.before), produced: lines(|c| &c.after), text_diffs }
    }
}

impl From<Vec<Finding>> for Checked {
    fn from(findings: Vec<Finding>) -> Self {
        Checked { findings, mismatch: None }
    }
}

/// Run one per-packet check on a case.
pub fn run_packet_check(check: &str, case: &Case, config: &Config) -> Result<Checked> {
    let packet = fsutil::read_json(&case.packet_under_test(), config.limits.max_file_bytes)?;
    if check == REGENERATES {
        return regenerates(case, &packet, config);
    }
    let Some(map) = packet.as_object() else {
        return Ok(vec![Finding::new(packet::CONTRACT, "$", "expected the packet to be a JSON object")].into());
    };
    check_packet(check, map, case, config).map(Checked::from)
}

/// The one dispatch from a packet check's name to its function (all but
/// `packet::regenerates`, which needs the packet as stored).
pub(crate) fn check_packet(
    check: &str,
    map: &Map<String, Value>,
    case: &Case,
    config: &Config,
) -> Result<Vec<Finding>> {
    Ok(match check {
        packet::EXACT_INPUT_HASH => packet::exact_input_hash(map),
        packet::CHECKSUM => packet::checksum(map),
        packet::CONTRACT => packet::contract(map, config),
        packet::FORBIDDEN => packet::forbidden_material(map, config),
        packet::PROVIDER_SHAPE => packet::provider_shape(map, config),
        BRANCH_ISOLATION => branch_isolation(map, &case.request, config, &case.request_path().display().to_string()),
        other => return Err(crate::Error::Usage(format!("unknown packet check {other:?}"))),
    })
}

/// Recompile the request and compare with the packet byte for byte (as pretty JSON).
fn regenerates(case: &Case, packet: &Value, config: &Config) -> Result<Checked> {
    let produced = match compile::compile(&case.request, config, &case.request_path().display().to_string()) {
        Ok(produced) => produced,
        Err(e) => {
            return Ok(vec![Finding::new(REGENERATES, "$", format!("the request no longer compiles: {e}"))].into())
        }
    };
    if &produced == packet {
        return agent_view_regenerates(case, packet, config);
    }
    let changed: Vec<String> = crate::release::field_changes(packet, &produced, &crate::release::PROMPT_TEXTS)
        .into_iter()
        .map(|c| c.path)
        .collect();
    let texts: Vec<&str> =
        ["systemPrompt", "effectiveUserMessage"].into_iter().filter(|k| packet.get(*k) != produced.get(*k)).collect();
    let changed = texts.iter().map(|t| format!("$.{t}")).chain(changed).collect::<Vec<_>>().join(", ");
    let message =
        format!("the golden packet differs from the recompiled request (changed: {changed}); {}", rebless_hint(case));
    Ok(Checked {
        findings: vec![Finding::new(REGENERATES, "$", message)],
        mismatch: Some(Mismatch::between(packet, &produced)),
    })
}

fn rebless_hint(case: &Case) -> String {
    if case.own_packet().is_some() {
        return "this negative case carries its own runtime-packet.json, which is never blessed".into();
    }
    format!("re-bless with `packetproof bless {0}` or `PACKETPROOF_BLESS=1 cargo test {0}`", case.name)
}

/// The golden agent-request.json (when the case has golden files) is the agent view of the packet.
fn agent_view_regenerates(case: &Case, packet: &Value, config: &Config) -> Result<Checked> {
    let file = case.golden_agent_request();
    if case.own_packet().is_some() || !file.is_file() {
        return Ok(Checked::default());
    }
    let stored = fsutil::read_json(&file, config.limits.max_file_bytes)?;
    let Some(map) = packet.as_object() else { return Ok(Checked::default()) };
    let produced = crate::provider::agent_request(map);
    if stored == produced {
        return Ok(Checked::default());
    }
    let message = format!("{} is not the agent view of the golden packet; {}", file.display(), rebless_hint(case));
    Ok(Checked {
        findings: vec![Finding::new(REGENERATES, file.display().to_string(), message)],
        mismatch: Some(Mismatch::between(&stored, &produced)),
    })
}

/// Only the resolved branch renders: the branch recorded is the one the request
/// resolves to, renderInput holds only that branch's parts, and no text from the
/// regions the branch excluded occurs in the prompts or renderInput.
pub fn branch_isolation(packet: &Map<String, Value>, request: &Value, config: &Config, file: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut fail = |path: &str, message: String| out.push(Finding::new(BRANCH_ISOLATION, path, message));
    let branch = packet.get("resolvedBranch").cloned().unwrap_or(Value::Null);
    match compile::compile(request, config, file) {
        Ok(expected) => {
            let derived = expected.get("resolvedBranch").cloned().unwrap_or(Value::Null);
            for (field, value) in derived.as_object().into_iter().flatten() {
                if branch.get(field) != Some(value) {
                    fail(
                        &format!("$.resolvedBranch.{field}"),
                        format!(
                            "the request resolves to {value}, the packet records {}",
                            branch.get(field).map_or("nothing".into(), Value::to_string)
                        ),
                    );
                }
            }
            same_evidence(packet, &expected, &mut fail);
        }
        Err(e) => fail("$", format!("the request does not compile, so its branch cannot be derived: {e}")),
    }
    let input = packet.get("renderInput").unwrap_or(&Value::Null);
    for (path, present, expected) in render_input_parts(input, &branch) {
        if present != expected {
            let verb = if expected {
                "missing although the branch resolves it"
            } else {
                "present although the branch excludes it"
            };
            fail(path, verb.into());
        }
    }
    out.extend(excluded_text_findings(packet, request, config));
    out.extend(unrendered_partial_findings(packet, config));
    out
}

/// renderInput holds exactly the evidence items the request resolves to (by kind
/// and id, whatever their text: a short or numeric item escapes text matching)
/// and records the mode that was requested.
fn same_evidence(packet: &Map<String, Value>, expected: &Value, fail: &mut impl FnMut(&str, String)) {
    let (input, expected) = (packet.get("renderInput"), expected.get("renderInput"));
    let identities = |input: Option<&Value>| -> Vec<String> {
        let items = input.and_then(|i| i.pointer("/evidence/items")).and_then(Value::as_array);
        let id = |item: &Value, key: &str| item.get(key).and_then(Value::as_str).unwrap_or("?").to_owned();
        items.into_iter().flatten().map(|item| format!("@{}[{}]", id(item, "kind"), id(item, "id"))).collect()
    };
    let (found, wanted) = (identities(input), identities(expected));
    for item in found.iter().filter(|item| !wanted.contains(item)) {
        fail("$.renderInput.evidence.items", format!("holds {item}, which the resolved branch does not select"));
    }
    for item in wanted.iter().filter(|item| !found.contains(item)) {
        fail("$.renderInput.evidence.items", format!("lacks {item}, which the resolved branch selects"));
    }
    let requested = |input: Option<&Value>| input.and_then(|i| i.pointer("/evidence/requestedMode")).cloned();
    if requested(input) != requested(expected) {
        fail("$.renderInput.evidence.requestedMode", format!("expected the requested mode {:?}", requested(expected)));
    }
}

/// (path, present in renderInput, required by the branch) for each branch-dependent part.
fn render_input_parts(input: &Value, branch: &Value) -> Vec<(&'static str, bool, bool)> {
    let text = |key: &str| branch.get(key).and_then(Value::as_str).unwrap_or("");
    let flag = |key: &str| branch.get(key).and_then(Value::as_bool).unwrap_or(false);
    let neighbours = text("neighbours");
    let items = input.pointer("/evidence/items").and_then(Value::as_array).map_or(0, Vec::len);
    vec![
        (
            "$.renderInput.target.predecessor",
            input.pointer("/target/predecessor").is_some(),
            matches!(neighbours, "both" | "predecessor-only"),
        ),
        (
            "$.renderInput.target.successor",
            input.pointer("/target/successor").is_some(),
            matches!(neighbours, "both" | "successor-only"),
        ),
        ("$.renderInput.target.themeSummary", input.pointer("/target/themeSummary").is_some(), flag("hasTargetTheme")),
        (
            "$.renderInput.operatorInstruction",
            input.get("operatorInstruction").is_some(),
            flag("operatorInstructionPresent"),
        ),
        ("$.renderInput.evidence.items", items > 0, text("evidenceMode") != "no-evidence"),
        (
            "$.renderInput.evidence.mode",
            input.pointer("/evidence/mode").and_then(Value::as_str) == Some(text("evidenceMode")),
            true,
        ),
    ]
}

/// No line of a prompt template that was not rendered (the partials of the branch
/// values that did not resolve) occurs in the prompt texts.
fn unrendered_partial_findings(packet: &Map<String, Value>, config: &Config) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, line) in unrendered_lines(packet, config) {
        for key in PROMPT_TEXTS {
            if packet.get(key).and_then(Value::as_str).is_some_and(|t| t.contains(&line)) {
                out.push(Finding::new(
                    BRANCH_ISOLATION,
                    format!("$.{key}"),
                    format!("contains text of {name}, a template of a branch that did not resolve: {line:?}"),
                ));
            }
        }
    }
    out
}

/// (template, line) for the literal lines of the templates a packet did not
/// render. Lines with template syntax, short lines and lines that a rendered
/// template also has are left out: they prove nothing.
pub(crate) fn unrendered_lines(packet: &Map<String, Value>, config: &Config) -> Vec<(String, String)> {
    let rendered: Vec<&str> =
        packet.get("promptPaths").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let root = &config.paths.prompts;
    let templates: Vec<(String, String)> = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let name = e.path().strip_prefix(root).ok()?.to_string_lossy().replace('\\', "/");
            Some((name, std::fs::read_to_string(e.path()).ok()?))
        })
        .collect();
    let rendered_text: String =
        templates.iter().filter(|(name, _)| rendered.contains(&name.as_str())).map(|(_, text)| text.as_str()).collect();
    let mut out = Vec::new();
    for (name, text) in templates.iter().filter(|(name, _)| !rendered.contains(&name.as_str())) {
        for line in text.lines().map(str::trim) {
            let literal = line.len() >= config.taint.min_length
                && !["{{", "{%", "{#"].iter().any(|syntax| line.contains(syntax))
                && !rendered_text.contains(line);
            if literal {
                out.push((name.clone(), line.to_owned()));
            }
        }
    }
    out
}

/// No string of an excluded request region occurs in any prompt text or renderInput string.
fn excluded_text_findings(packet: &Map<String, Value>, request: &Value, config: &Config) -> Vec<Finding> {
    let excluded = compile::excluded_text(request, config);
    let mut out = Vec::new();
    for key in PROMPT_TEXTS {
        let Some(text) = packet.get(key).and_then(Value::as_str) else { continue };
        for (origin, needle) in &excluded {
            if text.contains(needle.as_str()) {
                out.push(Finding::new(
                    BRANCH_ISOLATION,
                    format!("$.{key}"),
                    format!("contains excluded text from request {origin}: {needle:?}"),
                ));
            }
        }
    }
    if let Some(input) = packet.get("renderInput") {
        let mut trail = Trail::new("$.renderInput");
        walk(input, &mut trail, &mut |value, _, trail| {
            let Some(text) = value.as_str() else { return };
            for (origin, needle) in &excluded {
                if text.contains(needle.as_str()) {
                    out.push(Finding::new(
                        BRANCH_ISOLATION,
                        trail.render(),
                        format!("contains excluded text from request {origin}: {needle:?}"),
                    ));
                }
            }
        });
    }
    out
}

/// Per-run checks, for cases whose fixture has a `run/` directory.
pub const RUN_CHECKS: [&str; 5] = [
    run::checks::AGENT_REQUEST,
    run::checks::MANIFEST_BINDING,
    run::checks::SNAPSHOT_PARITY,
    run::checks::EVALUATION,
    run::checks::COMPLETION,
];

/// The checks that apply to a case, in report order.
pub fn applicable(case: &Case) -> Vec<&'static str> {
    let mut checks = PACKET_CHECKS.to_vec();
    if case.run_fixture().is_some() {
        checks.extend(RUN_CHECKS);
    }
    checks
}

/// Run one named check on a case.
pub fn run(check: &str, case: &Case, config: &Config) -> Result<Checked> {
    if !RUN_CHECKS.contains(&check) {
        return run_packet_check(check, case, config);
    }
    let assembled = assemble_run(case, config)?;
    let (dir, packet) = (assembled.dir.as_path(), Some(&assembled.packet));
    let mut findings = match check {
        run::checks::AGENT_REQUEST => run::checks::agent_request(dir, packet, config),
        run::checks::MANIFEST_BINDING => run::checks::manifest_binding(dir, packet, config),
        run::checks::SNAPSHOT_PARITY => run::checks::snapshot_parity(dir, packet, config),
        run::checks::EVALUATION => run::checks::evaluation(dir, packet, config),
        _ => run::checks::completion(dir, config),
    };
    // The lifecycle's own refusals explain a missing evaluation or receipt.
    if let Some(name) = findings.first().map(|f| f.check) {
        for step in &assembled.refusals {
            findings.push(Finding::new(name, LIFECYCLE, step.clone()));
        }
    }
    Ok(findings.into())
}

/// `run/completion.toml`: what the operator records when completing the run.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompletionRecord {
    pub scenario: String,
    pub run_id: String,
    pub agent_task: String,
    pub notes: Vec<String>,
}

pub const COMPLETION_RECORD: &str = "completion.toml";

impl CompletionRecord {
    pub fn load(case: &Case) -> Result<Option<CompletionRecord>> {
        let Some(run_dir) = case.run_fixture() else { return Ok(None) };
        let path = run_dir.join(COMPLETION_RECORD);
        if !path.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(|e| crate::Error::io(&path, e))?;
        toml::from_str(&text)
            .map(Some)
            .map_err(|e| crate::Error::Config { file: path.display().to_string(), message: e.to_string() })
    }
}

/// A run directory built for a case in a temporary folder: prepared from the
/// case's packet, given the fixture's agent artifacts, evaluated, and completed
/// when the fixture records a completion. A file in the fixture's `run/` replaces
/// what the lifecycle step that writes it would have written (a negative case's
/// hand-broken manifest, snapshot, agent request, evaluation or receipt).
pub struct AssembledRun {
    _root: tempfile::TempDir,
    pub dir: PathBuf,
    pub packet: Value,
    /// Steps of the lifecycle that refused (a negative case expects some).
    pub refusals: Vec<String>,
}

/// The path of findings that report the lifecycle's refusals, not a check's own.
pub const LIFECYCLE: &str = "lifecycle";

/// Files the fixture may supply that `evaluate` and `complete` would write.
const AFTER_EVALUATION: [&str; 2] = [run::paths::EVALUATION, run::paths::COMPLETION];

pub fn assemble_run(case: &Case, config: &Config) -> Result<AssembledRun> {
    let root = tempfile::tempdir().map_err(|e| crate::Error::io(std::env::temp_dir(), e))?;
    let dir = root.path().join("run");
    let packet_file = case.packet_under_test();
    let packet = fsutil::read_json(&packet_file, config.limits.max_file_bytes)?;
    run::prepare::prepare(config, &packet_file, &dir)?;
    let fixture = case.run_fixture();
    let supplied = |name: &str| fixture.as_ref().map(|f| f.join(name)).filter(|p| p.is_file());
    copy_fixture_files(fixture.as_deref(), &dir, |name| !AFTER_EVALUATION.contains(&name))?;
    let mut refusals = Vec::new();
    if supplied(run::paths::EVALUATION).is_none() {
        match run::evaluate::evaluate(config, &run::EvaluateRequest::for_run(dir.clone())) {
            Ok((evaluation, _)) if !evaluation.ok => {
                let failures: Vec<String> =
                    evaluation.failures.iter().map(|f| format!("[{}] {}", f.stage, f.message)).collect();
                refusals.push(format!("evaluate failed: {}", failures.join("; ")));
            }
            Ok(_) => {}
            Err(e) => refusals.push(format!("evaluate refused: {e}")),
        }
    }
    copy_fixture_files(fixture.as_deref(), &dir, |name| AFTER_EVALUATION.contains(&name))?;
    if let Some(record) = CompletionRecord::load(case)?.filter(|_| supplied(run::paths::COMPLETION).is_none()) {
        let args = run::CompleteRequest {
            run_dir: dir.clone(),
            scenario: record.scenario,
            run_id: record.run_id,
            agent_task: record.agent_task,
            notes: record.notes,
            runs_root: Some(root.path().to_path_buf()),
        };
        if let Err(e) = run::complete::complete(config, &args) {
            refusals.push(format!("complete refused: {e}"));
        }
    }
    Ok(AssembledRun { _root: root, dir, packet, refusals })
}

/// The fixture's run files (not the completion record) whose names `pick` selects.
fn copy_fixture_files(fixture: Option<&Path>, dir: &Path, pick: impl Fn(&str) -> bool) -> Result<()> {
    let Some(fixture) = fixture else { return Ok(()) };
    let entries = std::fs::read_dir(fixture).map_err(|e| crate::Error::io(fixture, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| crate::Error::io(fixture, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == COMPLETION_RECORD || !entry.path().is_file() || !pick(&name) {
            continue;
        }
        let bytes = std::fs::read(entry.path()).map_err(|e| crate::Error::io(entry.path(), e))?;
        fsutil::write_atomic(&dir.join(&name), &bytes)?;
    }
    Ok(())
}

pub const SNAPSHOT: &str = "corpus::snapshot-parity";
pub const UNIQUE_TASKS: &str = "corpus::unique-agent-tasks";
pub const COVERAGE: &str = "corpus::branch-coverage";

/// Corpus-wide checks (the mutation self-test lives in `mutation`).
pub const CORPUS_CHECKS: [&str; 3] = [SNAPSHOT, UNIQUE_TASKS, COVERAGE];

pub fn run_corpus(check: &str, config: &Config) -> Result<Vec<Finding>> {
    match check {
        SNAPSHOT => crate::schema::check(config),
        UNIQUE_TASKS => {
            let mut tasks = Vec::new();
            for case in crate::corpus::cases(config)? {
                if let Some(record) = CompletionRecord::load(&case)? {
                    tasks.push((case.name, record.agent_task));
                }
            }
            Ok(unique_agent_tasks(&tasks))
        }
        COVERAGE => {
            let mut rows = Vec::new();
            for case in crate::corpus::cases(config)?.iter().filter(|c| c.expect.is_none()) {
                rows.push(crate::corpus::branch_row(&fsutil::read_json(
                    &case.golden_packet(),
                    config.limits.max_file_bytes,
                )?));
            }
            let gaps = crate::corpus::coverage_gaps(&rows, config);
            Ok(gaps
                .into_iter()
                .map(|gap| {
                    Finding::new(
                        COVERAGE,
                        config.paths.golden.display().to_string(),
                        format!("no golden packet covers {gap}"),
                    )
                })
                .collect())
        }
        other => Err(crate::Error::Usage(format!("unknown corpus check {other:?}"))),
    }
}

/// A fresh agent's task id is used by one run only.
pub fn unique_agent_tasks(tasks: &[(String, String)]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, (case, task)) in tasks.iter().enumerate() {
        if let Some((first, _)) = tasks[..i].iter().find(|(_, t)| t == task) {
            out.push(Finding::new(
                UNIQUE_TASKS,
                format!("{case}/run/{COMPLETION_RECORD}"),
                format!("agent task {task:?} is already used by {first}"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An unselected item with no long text escapes text matching; its identity does not.
    #[test]
    fn branch_isolation_names_an_unselected_item_whatever_its_text() {
        let config = Config::load(Path::new(env!("CARGO_MANIFEST_DIR")), None).unwrap();
        let case = crate::corpus::cases(&config)
            .unwrap()
            .into_iter()
            .find(|c| c.name == "google-staged-both-selected")
            .unwrap();
        let short = serde_json::json!({"kind": "rating", "id": "r9", "accessible": true, "value": {"stars": 1}});
        let mut request = case.request.clone();
        request["evidence"]["availableItems"].as_array_mut().unwrap().push(short.clone());
        let mut packet = compile::compile(&request, &config, "test").unwrap();
        assert!(branch_isolation(packet.as_object().unwrap(), &request, &config, "test").is_empty());
        packet["renderInput"]["evidence"]["items"].as_array_mut().unwrap().push(short);
        let findings = branch_isolation(packet.as_object().unwrap(), &request, &config, "test");
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(
            findings[0].message.contains("holds @rating[r9], which the resolved branch does not select"),
            "{}",
            findings[0]
        );
    }

    #[test]
    fn a_reused_agent_task_is_named_with_both_cases() {
        let tasks =
            [("a".to_owned(), "t1".to_owned()), ("b".to_owned(), "t2".to_owned()), ("c".to_owned(), "t1".to_owned())];
        let findings = unique_agent_tasks(&tasks);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].path, "c/run/completion.toml");
        assert!(findings[0].message.contains("already used by a"), "{}", findings[0]);
        assert!(unique_agent_tasks(&tasks[..2]).is_empty());
    }
}
