//! `packetproof verify PATH…`: every applicable check on packets and run
//! directories, whatever stage they are at. A directory is searched recursively
//! for packets (`runtime-packet*.json`, or any JSON object with `packetVersion`),
//! run directories (those with run-manifest.json, or agent-request.json without a
//! packet beside it), and golden case folders (agent-request.json beside
//! runtime-packet.json, which must be exactly that packet's agent view).

use super::checks::{self, COMPLETION};
use super::paths::{AGENT_REQUEST, MANIFEST};
use crate::cli::{print_outcomes, Status};
use crate::{canonical, fsutil, packet, Config, Error, Finding, Format, Outcome, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const NOTHING_FOUND: &str = "verify::nothing-found";

#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// Packets, run directories, or directories to search for both.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// An Ed25519 public key (SPKI PEM) whose signature a run's attestation.json must
    /// carry; repeatable (any one of them suffices).
    #[arg(long = "trusted-key", value_name = "PUB.pem")]
    pub trusted_keys: Vec<PathBuf>,
}

pub fn command(config: &Config, args: &VerifyArgs) -> Result<Status> {
    let keys = args.trusted_keys.iter().map(|k| crate::attest::keys::verifying_key(k)).collect::<Result<Vec<_>>>()?;
    print_outcomes(&verify_with_keys(config, &args.paths, &keys)?, args.format)
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Packet(PathBuf),
    Run(PathBuf),
    /// A golden case folder: agent-request.json beside the packet it must be the view of.
    AgentView(PathBuf),
}

pub const AGENT_VIEW: &str = "golden::agent-request";

/// One outcome per packet and run directory found under `paths`.
pub fn verify(config: &Config, paths: &[PathBuf]) -> Result<Vec<Outcome>> {
    verify_with_keys(config, paths, &[])
}

/// `verify`, with the keys a run's attestation must be signed by (none: an
/// attestation present is still checked against the run's files).
pub fn verify_with_keys(
    config: &Config,
    paths: &[PathBuf],
    keys: &[ed25519_dalek::VerifyingKey],
) -> Result<Vec<Outcome>> {
    let mut outcomes = Vec::new();
    let mut runs = Vec::new();
    // Golden folders of the project's own corpus are also recompiled and checked
    // for branch isolation: what `cargo test` runs as packet::regenerates.
    let corpus = crate::corpus::cases(config)?;
    for path in paths {
        let targets = discover(path, config)?;
        if targets.is_empty() {
            outcomes.push(Outcome::new(
                path.display().to_string(),
                vec![Finding::new(NOTHING_FOUND, path.display().to_string(), "no packet or run directory found here")],
            ));
        }
        for target in targets {
            match target {
                Target::Packet(file) => outcomes.push(verify_packet(&file, &corpus, config)),
                Target::Run(dir) => {
                    outcomes.push(verify_run(&dir, keys, config));
                    runs.push((outcomes.len() - 1, dir));
                }
                Target::AgentView(dir) => outcomes.push(verify_agent_view(&dir, config)),
            }
        }
    }
    flag_reused_tasks(&mut outcomes, &runs, config);
    Ok(outcomes)
}

/// A packet against the contract; the golden packet of a corpus case is also
/// recompiled from its request and checked for branch isolation.
fn verify_packet(file: &Path, corpus: &[crate::corpus::Case], config: &Config) -> Outcome {
    let shown = file.display().to_string();
    let mut outcome = match fsutil::read_json(file, config.limits.max_file_bytes) {
        Ok(value) => Outcome::new(shown, packet::validate(&value, config)),
        Err(e) => return Outcome::new(shown.clone(), vec![Finding::new(packet::CONTRACT, shown, e.to_string())]),
    };
    let real = |p: &Path| p.canonicalize().ok();
    if let Some(case) = corpus.iter().find(|c| c.own_packet().is_none() && real(&c.golden_packet()) == real(file)) {
        for check in [crate::checks::REGENERATES, crate::checks::BRANCH_ISOLATION] {
            match crate::checks::run(check, case, config) {
                Ok(checked) => outcome.findings.extend(checked.findings),
                Err(e) => outcome.findings.push(Finding::new(check, outcome.target.clone(), e.to_string())),
            }
        }
        outcome.ok = outcome.findings.is_empty();
    }
    outcome
}

/// A golden agent-request.json is exactly the agent view of the packet beside it.
fn verify_agent_view(dir: &Path, config: &Config) -> Outcome {
    let file = dir.join(AGENT_REQUEST);
    let shown = file.display().to_string();
    let read = |p: &Path| fsutil::read_json(p, config.limits.max_file_bytes);
    let findings = match (read(&dir.join(crate::corpus::PACKET_FILE)), read(&file)) {
        (Ok(Value::Object(packet)), Ok(request)) if crate::provider::agent_request(&packet) == request => Vec::new(),
        (Ok(Value::Object(_)), Ok(_)) => {
            vec![Finding::new(
                AGENT_VIEW,
                shown.clone(),
                "is not the agent view of the runtime-packet.json beside it (re-bless)",
            )]
        }
        (Ok(_), Ok(_)) => vec![Finding::new(AGENT_VIEW, shown.clone(), "the packet beside it is not a JSON object")],
        (Err(e), _) | (_, Err(e)) => vec![Finding::new(AGENT_VIEW, shown.clone(), e.to_string())],
    };
    Outcome::new(shown, findings)
}

fn verify_run(dir: &Path, keys: &[ed25519_dalek::VerifyingKey], config: &Config) -> Outcome {
    let mut findings = checks::all(dir, None, config);
    findings.extend(super::provider_request::check(dir, config));
    findings.extend(super::attestation::check(dir, keys, config));
    let mut outcome = Outcome::new(dir.display().to_string(), findings);
    if keys.is_empty() && dir.join(super::attestation::FILE).exists() {
        outcome
            .notes
            .push("attestation.json: digests and predicate checked; its signature is not (no --trusted-key)".into());
    }
    outcome.notes.push(format!("stage: {}", stage(dir)));
    outcome
}

/// How far the run has come, by which files exist (for the report only).
fn stage(dir: &Path) -> &'static str {
    let has = |name: &str| dir.join(name).exists();
    match (has(MANIFEST), has(super::paths::RAW_OUTPUT), has(super::paths::EVALUATION), has(super::paths::COMPLETION)) {
        (_, _, _, true) => "completed",
        (_, _, true, false) => "evaluated, not completed",
        (_, true, false, _) => "answered, not evaluated",
        (true, false, false, _) => "prepared, awaiting agent",
        _ => "incomplete preparation",
    }
}

/// The same agent task id in two completions is one agent reused: both fail.
fn flag_reused_tasks(outcomes: &mut [Outcome], runs: &[(usize, PathBuf)], config: &Config) {
    let mut by_task: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, dir) in runs {
        let file = dir.join(super::paths::COMPLETION);
        let task = fsutil::read_json(&file, config.limits.max_file_bytes)
            .ok()
            .and_then(|v| v.get("agentTask").and_then(Value::as_str).map(str::to_owned));
        if let Some(task) = task {
            by_task.entry(task).or_default().push(*i);
        }
    }
    for (task, users) in by_task.into_iter().filter(|(_, users)| users.len() > 1) {
        let names: Vec<String> = users.iter().map(|i| outcomes[*i].target.clone()).collect();
        for i in &users {
            let outcome = &mut outcomes[*i];
            outcome.findings.push(Finding::new(
                COMPLETION,
                format!("{} $.agentTask", outcome.target),
                format!("agent task {task:?} is recorded by {} runs: {names:?}", users.len()),
            ));
            outcome.ok = false;
        }
    }
}

fn discover(path: &Path, config: &Config) -> Result<Vec<Target>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_dir() {
        return Ok(vec![Target::Packet(path.to_path_buf())]);
    }
    let mut targets = Vec::new();
    let walker = walkdir::WalkDir::new(path).sort_by_file_name().into_iter();
    let walker = walker.filter_entry(super::paths::may_hold_runs);
    for entry in walker {
        let entry = entry
            .map_err(|e| Error::io(e.path().unwrap_or(path).to_path_buf(), std::io::Error::other(e.to_string())))?;
        let p = entry.path();
        if entry.file_type().is_dir() {
            let has = |name: &str| p.join(name).is_file();
            if has(MANIFEST) || (has(AGENT_REQUEST) && !has(crate::corpus::PACKET_FILE)) {
                targets.push(Target::Run(p.to_path_buf()));
            } else if has(AGENT_REQUEST) {
                targets.push(Target::AgentView(p.to_path_buf()));
            }
        } else if is_packet_file(p, config) {
            targets.push(Target::Packet(p.to_path_buf()));
        }
    }
    Ok(targets)
}

fn is_packet_file(path: &Path, config: &Config) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    if !name.ends_with(".json") {
        return false;
    }
    if name.starts_with("runtime-packet") {
        return true;
    }
    // Any other JSON object with packetVersion is a packet too; unreadable or
    // non-JSON files are not packets and are left alone.
    fsutil::read_bytes(path, config.limits.max_file_bytes)
        .ok()
        .and_then(|bytes| canonical::parse(&bytes).ok())
        .is_some_and(|v| v.get("packetVersion").is_some())
}
