//! The mutation self-test: damage every golden packet and run directory in the
//! ways the contract forbids, and require each kind of damage to be caught by the
//! check that exists for it. A check that cannot fail shows up here.
//!
//! Mutations that are not about hashes are re-hashed after the edit, so the
//! semantic check has to catch them on its own rather than riding on `checksum`.

mod branch_truth;
#[cfg(test)]
mod equivalence;
mod profile;
mod witness;
mod workbench;

use crate::check;
use crate::corpus::record::CompletionRecord;
use crate::corpus::{self, Case};
use crate::judge::fixture_run::{self, AssembledRun};
use crate::judge::{dispatch, Origin, Step, Subject};
use crate::{
    digest, fsutil, packet, CorpusCheck, Finding, Invocation, JsonPath, Location, PacketCheck, Result, RunCheck,
};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Which mutations were tried, which escaped, and which were skipped (with why).
#[derive(Debug, Default)]
pub(crate) struct MutationReport {
    pub(crate) tried: Vec<String>,
    pub(crate) escaped: Vec<String>,
    pub(crate) skipped: Vec<String>,
}

impl MutationReport {
    pub(crate) fn total(&self) -> usize {
        self.tried.len()
    }
    fn record(&mut self, name: String, findings: &[Finding]) {
        if findings.is_empty() {
            self.escaped.push(name.clone());
        }
        self.tried.push(name);
    }
}

type Edit = Box<dyn Fn(&mut Map<String, Value>)>;

/// One packet mutation: what it does, the check meant to catch it, whether to re-hash.
struct PacketMutation {
    name: String,
    check: PacketCheck,
    rehash: bool,
    edit: Edit,
}

/// The self-test of one fixture: `golden` is its golden packet and `run` its
/// assembled run (when it has a `run/`), as the gate already read and built them.
/// Nothing is read again: the request is compiled once for every branch-isolation
/// mutation, each check's baseline runs once, and the run mutations damage the run
/// in memory. (The gate calls [`self_test_case_with`], with the request's isolation
/// its branch-isolation trial derived.)
#[cfg(test)]
pub(crate) fn self_test_case(
    case: &Case,
    golden: &Map<String, Value>,
    run: Option<&AssembledRun>,
    config: &Invocation,
) -> Result<MutationReport> {
    let isolation = check::Isolation::of(&case.request, config, &case.request_path().display().to_string());
    self_test_case_with(case, golden, run, (Arc::new(isolation), None), config)
}

/// [`self_test_case`] with the request's [`check::Isolation`] the gate already
/// derived, and what the request makes now when the gate has made it.
pub(crate) fn self_test_case_with(
    case: &Case,
    golden: &Map<String, Value>,
    run: Option<&AssembledRun>,
    (isolation, produced): (Arc<check::Isolation>, Option<Arc<Result<Value>>>),
    config: &Invocation,
) -> Result<MutationReport> {
    let mut report = MutationReport::default();
    let mutations = packet_mutations(golden, &case.request, config);
    let mut catchers = Catchers::new(case, golden, isolation, config);
    catchers.produced = produced;
    // A check that already fails on the intact packet would "catch" anything.
    let mut baseline: Vec<PacketCheck> = Vec::new();
    for check in mutations.iter().filter_map(|m| catchers.expected(m.check)) {
        if !baseline.contains(&check) {
            baseline.push(check);
        }
    }
    for check in baseline {
        let findings = catchers.run(check, golden)?;
        if !findings.is_empty() {
            report.escaped.push(format!("{}: {check} already fails on the intact packet: {}", case.name, findings[0]));
        }
    }
    let mut bench = workbench::Workbench::new(golden);
    for mutation in mutations {
        let Some(check) = catchers.expected(mutation.check) else { continue };
        let mutated = bench.packet();
        (mutation.edit)(mutated);
        if mutation.rehash {
            catchers.sealer.seal(mutated);
        }
        if let Some(why) = branch_truth::means_the_same(golden, mutated) {
            report.skipped.push(format!("{}: {} (not demanded of {check}): {why}", case.name, mutation.name));
            bench.restore();
            continue;
        }
        let findings = catchers.run(check, mutated)?;
        report.record(format!("{}: {} -> {check}", case.name, mutation.name), &findings);
        bench.restore();
    }
    if let Some(run) = run {
        run_mutations(case, run, config, &mut report)?;
    }
    Ok(report)
}

/// Which check must catch a mutation in one case, and running it: the one place that
/// decides which check answers for a mutation. A mutation is expected only from a
/// check that applies here: a packet of another exporter's templates cannot be
/// re-rendered, so where `packet::renders-from-input` (or any check) does not apply,
/// the fixture's fresh exporter output stands in for it (`packet::regenerates`: a
/// damaged golden packet is no longer what the exporter makes). A check the suite
/// turned off expects nothing. The request is compiled once for every
/// branch-isolation mutation, and the exporter run once per case.
struct Catchers<'a> {
    case: &'a Case,
    config: &'a Invocation,
    isolation: Arc<check::Isolation>,
    /// What the request makes now, made once per case (an exporter is a process), by the
    /// gate or here. A failure ends the self-test with its own error: made again, it fails.
    produced: Option<Arc<Result<Value>>>,
    /// The packet rules the engine applies to the golden packet, decided once per
    /// case (every mutation asks, and deciding hashes the suite's templates).
    applies: Vec<PacketCheck>,
    /// Hashes the damaged copies from their first changed member on.
    sealer: digest::incremental::Sealer<'a>,
    renders: check::renders_from_input::Renders,
}

impl<'a> Catchers<'a> {
    fn new(
        case: &'a Case,
        golden: &'a Map<String, Value>,
        isolation: Arc<check::Isolation>,
        config: &'a Invocation,
    ) -> Self {
        let value = Value::Object(golden.clone());
        let at = Subject::packet(&value, Some(Origin::Case(case)));
        let applies = PacketCheck::ALL
            .iter()
            .copied()
            .filter(|check| crate::judge::decide((*check).into(), &at, config, Step::Test).is_ok())
            .collect();
        let sealer = digest::incremental::Sealer::new(golden);
        Catchers { case, config, isolation, produced: None, applies, sealer, renders: Default::default() }
    }

    /// The check that must catch damage meant for `check`: itself when it applies
    /// to the golden packet (as the engine decides), else `packet::regenerates`.
    fn expected(&self, check: PacketCheck) -> Option<PacketCheck> {
        let applies = |check: PacketCheck| self.applies.contains(&check);
        match (applies(check), applies(PacketCheck::Regenerates)) {
            (true, _) => Some(check),
            (false, true) => Some(PacketCheck::Regenerates),
            (false, false) => None,
        }
    }

    fn run(&mut self, check: PacketCheck, packet: &Map<String, Value>) -> Result<Vec<Finding>> {
        match check {
            PacketCheck::BranchIsolation => Ok(self.isolation.check(packet, self.config)),
            PacketCheck::RendersFromInput => Ok(self.renders.check(packet, self.config)),
            PacketCheck::Regenerates => {
                if !matches!(self.produced.as_deref(), Some(Ok(_))) {
                    self.produced = Some(Arc::new(Ok(corpus::produce(self.case, self.config)?)));
                }
                let same = |produced: &Value| produced.as_object().is_some_and(|p| crate::numbers::same_map(p, packet));
                Ok(match matches!(self.produced.as_deref(), Some(Ok(produced)) if same(produced)) {
                    true => Vec::new(),
                    false => {
                        vec![Finding::new(check, Location::root(), "differs from what the fixture's request makes now")]
                    }
                })
            }
            // Caught or not is all the self-test asks: a hash compared without the
            // forensics that explain a mismatch (ten serialisations each).
            PacketCheck::ExactInputHash | PacketCheck::Checksum
                if !self.config.settings().canonical.accept_locale_key_order =>
            {
                let (key, recomputed) = match check {
                    PacketCheck::ExactInputHash => ("exactInputHash", self.sealer.exact_input_hash(packet)),
                    _ => ("checksum", self.sealer.checksum(packet)),
                };
                Ok(match packet.get(key).and_then(Value::as_str) == Some(recomputed.as_str()) {
                    true => Vec::new(),
                    false => {
                        vec![Finding::new(check, JsonPath::field(key), format!("{key} does not match the packet"))]
                    }
                })
            }
            other => Ok(dispatch::on_object(other, packet, Some(Origin::Case(self.case)), self.config)?.findings),
        }
    }
}

fn packet_mutations(golden: &Map<String, Value>, request: &Value, config: &Invocation) -> Vec<PacketMutation> {
    let mut list = Vec::new();
    let mut add = |name: String, check: PacketCheck, rehash: bool, edit: Edit| {
        list.push(PacketMutation { name, check, rehash, edit })
    };
    // Each hashed field: one character changed.
    for key in ["systemPrompt", "effectiveUserMessage", "model"] {
        add(
            format!("one character of {key} changed"),
            PacketCheck::ExactInputHash,
            false,
            Box::new(move |p| flip_string(p.get_mut(key))),
        );
    }
    add("maxTokens changed".into(), PacketCheck::ExactInputHash, false, Box::new(|p| bump(p.get_mut("maxTokens"))));
    if golden.contains_key("outputSchema") {
        add(
            "outputSchema name changed".into(),
            PacketCheck::ExactInputHash,
            false,
            Box::new(|p| flip_string(p.get_mut("outputSchema").and_then(|s| s.get_mut("name")))),
        );
    }
    // Bound only by the checksum.
    add(
        "one character of userMessage changed".into(),
        PacketCheck::Checksum,
        false,
        Box::new(|p| flip_string(p.get_mut("userMessage"))),
    );
    add(
        "a string deep in renderInput changed".into(),
        PacketCheck::Checksum,
        false,
        Box::new(|p| flip_string(p.get_mut("renderInput").and_then(deepest_string))),
    );
    if config.settings().agent(golden).is_block_builder() {
        block_builder_mutations(golden, request, config, &mut add);
    } else {
        profile::mutations(golden, config.settings(), &mut add);
    }
    forbidden_material(config.settings().forbidden_of(config.settings().agent(golden)), &mut add);
    if config.settings().output_mode(golden) == Some(crate::config::OutputMode::Text) {
        // Plain text: asking for a schema is damage (profile::mutations adds it).
    } else if config.settings().output_mode(golden) == Some(crate::config::OutputMode::TextJson) {
        let schema = json!({ "name": "submit_block", "schema": { "type": "object" } });
        add(
            "outputSchema added to a text-JSON packet".into(),
            PacketCheck::ProviderShape,
            true,
            Box::new(move |p| {
                p.insert("outputSchema".into(), schema.clone());
            }),
        );
        add(
            "text-JSON suffix dropped".into(),
            PacketCheck::ProviderShape,
            true,
            Box::new(|p| {
                let user = p.get("userMessage").cloned().unwrap_or(Value::Null);
                p.insert("effectiveUserMessage".into(), user);
            }),
        );
    } else {
        add(
            "outputSchema removed".into(),
            PacketCheck::ProviderShape,
            true,
            Box::new(|p| {
                p.remove("outputSchema");
            }),
        );
        let suffix = config.settings().google_suffix.clone();
        add(
            "text-JSON suffix appended to a schema packet".into(),
            PacketCheck::ProviderShape,
            true,
            Box::new(move |p| {
                let user = p.get("userMessage").and_then(Value::as_str).unwrap_or_default().to_owned();
                p.insert("effectiveUserMessage".into(), format!("{user}{suffix}").into());
            }),
        );
    }
    if config.settings().agent(golden).is_block_builder() {
        list.extend(branch_truth::mutations(golden, config));
    }
    let mut add = |name: String, check: PacketCheck, rehash: bool, edit: Edit| {
        list.push(PacketMutation { name, check, rehash, edit })
    };
    add(
        "attempt set to 2".into(),
        PacketCheck::Contract,
        true,
        Box::new(|p| {
            p.insert("attempt".into(), 2.into());
        }),
    );
    list
}

/// The generated media URL the block builder's policy forbids.
const MEDIA_URL: &str = "https://cdn.example.com/generated/hero-7f3a.png";

/// Forbidden material planted deep in renderInput, from the agent's own lists (so an
/// agent that narrows or replaces them is damaged by what it forbids): a key, and a
/// text one of its value patterns matches: the media URL where the agent forbids it,
/// else the first pattern's shortest reading ([`witness`]). An empty list plants nothing.
fn forbidden_material(forbidden: &crate::forbidden::Forbidden, add: &mut impl FnMut(String, PacketCheck, bool, Edit)) {
    let key = forbidden.keys.iter().find(|k| *k == "previewScreens").or(forbidden.keys.first()).cloned();
    if let Some(key) = key {
        add(
            format!("{key} injected deep in renderInput"),
            PacketCheck::ForbiddenMaterial,
            true,
            Box::new(move |p| {
                if let Some(deep) = p.get_mut("renderInput").and_then(deepest_object) {
                    deep.insert(key.clone(), json!([{ "id": "s1" }]));
                }
            }),
        );
    }
    let matches = |text: &str| forbidden.matching_pattern(text).is_some();
    let planted = match matches(MEDIA_URL) {
        true => Some(("a generated media URL".to_owned(), MEDIA_URL.to_owned())),
        false => forbidden.patterns.iter().find_map(|pattern| {
            witness::of(pattern, matches).map(|text| (format!("a text matching forbidden pattern {pattern}"), text))
        }),
    };
    if let Some((what, text)) = planted {
        add(
            format!("{what} injected deep in renderInput"),
            PacketCheck::ForbiddenMaterial,
            true,
            Box::new(move |p| {
                if let Some(deep) = p.get_mut("renderInput").and_then(deepest_object) {
                    deep.insert("hero".into(), json!(text));
                }
            }),
        );
    }
}

/// Damage only the block builder's rules see: a branch field flipped, a line of an
/// unrendered partial, an unselected evidence item.
fn block_builder_mutations(
    golden: &Map<String, Value>,
    request: &Value,
    config: &Invocation,
    add: &mut impl FnMut(String, PacketCheck, bool, Edit),
) {
    // Each resolvedBranch field set to another value.
    for (field, allowed) in packet::BRANCH_FIELDS {
        let current = golden.get("resolvedBranch").and_then(|b| b.get(field)).cloned().unwrap_or(Value::Null);
        let other = branch_truth::other_value(config.settings().agent(golden), field, allowed, &current);
        add(
            format!("resolvedBranch.{field} set to {other}"),
            PacketCheck::BranchIsolation,
            true,
            Box::new(move |p| {
                if let Some(Value::Object(branch)) = p.get_mut("resolvedBranch") {
                    branch.insert(field.into(), other.clone());
                }
            }),
        );
    }
    let own_templates = crate::check::renders_from_input::applies(golden, config).is_ok();
    let unrendered = if own_templates { check::packet::unrendered_lines(golden, config) } else { Vec::new() };
    if let Some((template, line)) = unrendered.into_iter().next() {
        let mutation = move |p: &mut Map<String, Value>| {
            for key in ["userMessage", "effectiveUserMessage"] {
                if let Some(Value::String(text)) = p.get_mut(key) {
                    text.push_str(&format!("\n{line}"));
                }
            }
        };
        add(
            format!("a line of the unrendered {template} appended to the user message"),
            PacketCheck::BranchIsolation,
            true,
            Box::new(mutation),
        );
    }
    if let Some(item) = unselected_item(golden, request) {
        let mutation = move |p: &mut Map<String, Value>| {
            if let Some(Value::Array(items)) = p.get_mut("renderInput").and_then(|i| i.pointer_mut("/evidence/items")) {
                items.push(item.clone());
            }
        };
        add(
            "an unselected evidence item added to renderInput".into(),
            PacketCheck::BranchIsolation,
            true,
            Box::new(mutation),
        );
    }
}

/// An available evidence item of the request that the packet does not render.
fn unselected_item(golden: &Map<String, Value>, request: &Value) -> Option<Value> {
    let rendered = golden.get("renderInput").and_then(|i| i.pointer("/evidence/items")).and_then(Value::as_array)?;
    let available = request.pointer("/evidence/availableItems").and_then(Value::as_array)?;
    let key = |item: &Value| (item.get("kind").cloned(), item.get("id").cloned());
    available.iter().find(|item| !rendered.iter().any(|r| key(r) == key(item))).cloned()
}

/// Change one character in the middle of a string (staying valid UTF-8).
fn flip_string(value: Option<&mut Value>) {
    if let Some(Value::String(text)) = value {
        let chars: Vec<char> = text.chars().collect();
        let i = chars.len() / 2;
        let replacement = if chars.get(i) == Some(&'x') { 'y' } else { 'x' };
        *text = chars.iter().enumerate().map(|(j, c)| if j == i { replacement } else { *c }).collect();
    }
}

fn bump(value: Option<&mut Value>) {
    if let Some(v) = value {
        *v = json!(v.as_u64().unwrap_or(0) + 1);
    }
}

fn deepest_string(value: &mut Value) -> Option<&mut Value> {
    fn depth(v: &Value) -> usize {
        match v {
            Value::String(_) => 1,
            Value::Array(items) => items.iter().map(depth).max().map_or(0, |d| d + 1),
            Value::Object(map) => map.values().map(depth).max().map_or(0, |d| d + 1),
            _ => 0,
        }
    }
    match value {
        Value::String(_) => Some(value),
        Value::Array(items) => items.iter_mut().max_by_key(|v| depth(v)).and_then(deepest_string),
        Value::Object(map) => map.values_mut().max_by_key(|v| depth(v)).and_then(deepest_string),
        _ => None,
    }
}

/// The most deeply nested object under `value`: where an injection is hardest to see.
fn deepest_object(value: &mut Value) -> Option<&mut Map<String, Value>> {
    fn find(value: &Value, pointer: String, depth: usize, best: &mut (usize, String)) {
        match value {
            Value::Object(map) => {
                if depth >= best.0 {
                    *best = (depth, pointer.clone());
                }
                for (key, child) in map {
                    let escaped = key.replace('~', "~0").replace('/', "~1");
                    find(child, format!("{pointer}/{escaped}"), depth + 1, best);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    find(child, format!("{pointer}/{i}"), depth + 1, best);
                }
            }
            _ => {}
        }
    }
    let mut best = (0, String::new());
    find(value, String::new(), 0, &mut best);
    value.pointer_mut(&best.1).and_then(Value::as_object_mut)
}

/// Damage a passing run directory after the fact, one way at a time, in memory
/// (the shared run keeps its bytes); a second run beside a copy of it reuses its task.
fn run_mutations(case: &Case, run: &AssembledRun, config: &Invocation, report: &mut MutationReport) -> Result<()> {
    if !run.refusals.is_empty() {
        report.record(format!("{}: the unmutated run must pass first ({:?})", case.name, run.refusals), &[]);
        return Ok(());
    }
    type RunEdit = fn(&mut Vec<u8>);
    let edits: [(&str, &str, RunCheck, RunEdit); 4] = [
        ("one byte of validation-schema.json flipped", "validation-schema.json", RunCheck::SnapshotParity, |b| {
            let i = b.len() / 2;
            b[i] ^= 0x01;
        }),
        ("manifest exactInputHash changed", "run-manifest.json", RunCheck::ManifestBinding, |b| {
            edit_json(b, |m| m["exactInputHash"] = json!(digest::sha256(b"another packet")))
        }),
        ("renderInput added to agent-request.json", "agent-request.json", RunCheck::AgentRequest, |b| {
            edit_json(b, |m| m["renderInput"] = json!({}))
        }),
        ("raw output edited after evaluation", "raw-output.json", RunCheck::Completion, |b| b.extend_from_slice(b"\n")),
    ];
    // Damaged in memory: each check reads the run with one file's bytes replaced.
    let intact = crate::run::Run::open(&run.dir, config.settings())?;
    for (name, file, check, edit) in edits {
        let mut bytes = fsutil::read_bytes(&run.dir.join(file), fsutil::DEFAULT_MAX_BYTES)?;
        edit(&mut bytes);
        let damaged = intact.with_file(file, bytes, config.settings())?;
        let findings = dispatch::on_opened(check, &run.dir, Ok(&damaged), Some(&run.packet), &[], config);
        report.record(format!("{}: {name} -> {check}", case.name), &findings);
    }
    duplicate_task(case, &run.copy()?, config, report)
}

/// A second run that reuses a completed run's agent task id is refused.
fn duplicate_task(case: &Case, run: &AssembledRun, config: &Invocation, report: &mut MutationReport) -> Result<()> {
    let Some(record) = CompletionRecord::load(case)? else { return Ok(()) };
    // The completed run and, beside it, the same run evaluated but not yet completed.
    let first = run;
    let second = first.root().join("second-run");
    fixture_run::copy_files(&first.dir, &second, |name| name != crate::run::paths::COMPLETION)?;
    let args = crate::run::CompleteRequest {
        run_dir: second,
        scenario: record.scenario,
        run_id: "run-2".into(),
        agent_task: record.agent_task.clone(),
        notes: record.notes,
        runs_root: Some(first.root().to_path_buf()),
    };
    let refused = match crate::judge::complete(config, &args) {
        Err(e) if e.to_string().contains(&record.agent_task) => {
            vec![Finding::new(CorpusCheck::UniqueAgentTasks, Location::named("complete"), e.to_string())]
        }
        _ => Vec::new(),
    };
    report.record(format!("{}: duplicate agent task id in a sibling run -> complete", case.name), &refused);
    let tasks = [(case.name.clone(), record.agent_task.clone()), ("sibling".to_owned(), record.agent_task)];
    report.record(
        format!("{}: duplicate agent task id in the corpus -> {}", case.name, CorpusCheck::UniqueAgentTasks),
        &check::unique_agent_tasks(&tasks),
    );
    Ok(())
}

/// A JSON file's bytes edited (a file of the run, which is always JSON); bytes
/// that do not parse are left as they are, and the check then says why.
fn edit_json(bytes: &mut Vec<u8>, edit: impl FnOnce(&mut Value)) {
    if let Ok(mut value) = crate::canonical::parse(bytes) {
        edit(&mut value);
        *bytes = crate::canonical::to_pretty(&value).into_bytes();
    }
}

#[cfg(test)]
mod tests;
