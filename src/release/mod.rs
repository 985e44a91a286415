//! Release check of prompt changes: compare the working tree with a base git
//! revision, show which packets change and how (`grouping`, `markdown`), and
//! enforce the policy (`policy`) that every golden change is explained and
//! every prompt change is re-blessed.

mod grouping;
mod markdown;
mod policy;

pub use crate::diff::FieldChange;

use crate::git::Git;
use crate::{compile, corpus, provider, Config, Error, Result};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// Kinds of changed files the policy reasons about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    Template,
    Schema,
    Reference,
    /// The compiler's own source: a change there can explain new packets.
    Code,
    Fixture,
    Golden,
    Other,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChangedFile {
    pub path: String,
    pub kind: ChangeKind,
}

/// One fixture: its recompiled packet against the golden packet at the base and in the tree.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseReport {
    pub case: String,
    /// The recompiled packet differs from the golden packet at the base (the release changes it).
    pub changed_from_base: bool,
    /// The recompiled packet differs from the golden packet in the tree (not re-blessed).
    pub stale_in_tree: bool,
    /// The golden packet file itself differs between base and tree.
    pub golden_changed: bool,
    pub hash_before: Option<String>,
    pub hash_after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compile_error: Option<String>,
}

/// Cases whose packets changed in the same way, shown once.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeGroup {
    pub cases: Vec<String>,
    pub system_prompt_diff: String,
    pub effective_user_message_diff: String,
    pub field_changes: Vec<FieldChange>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub base: String,
    pub ok: bool,
    pub changed_files: Vec<ChangedFile>,
    pub cases: Vec<CaseReport>,
    pub groups: Vec<ChangeGroup>,
    pub violations: Vec<String>,
}

/// Run the release check against `base` (default: the merge base with main).
pub fn check(config: &Config, base: Option<&str>) -> Result<Report> {
    let git = Git::open(&config.root)?;
    let base = match base {
        Some(rev) => git.run(&["rev-parse", "--verify", &format!("{rev}^{{commit}}")])?,
        None => default_base(&git)?,
    };
    let changed_files = changed_files(&git, &base, config)?;
    let mut cases = Vec::new();
    let mut changes: Vec<(String, Value, Value)> = Vec::new();
    let mut goldens = Vec::new();
    // Negative cases with a hand-broken packet of their own have no golden files.
    for case in corpus::cases(config)?.into_iter().filter(|c| c.own_packet().is_none()) {
        let golden_path = case.golden_packet();
        let tree = read_json_opt(&golden_path)?;
        let at_base = git.show_json(&base, &golden_path)?;
        let (recompiled, compile_error) = match recompile(&case, config) {
            Ok(packet) => (Some(packet), None),
            Err(e) => (None, Some(e.to_string())),
        };
        // The agent's view is golden too: it is what a fresh agent actually reads.
        let view_path = case.golden_agent_request();
        let view_tree = read_json_opt(&view_path)?;
        let view_recompiled = recompiled.as_ref().and_then(Value::as_object).map(provider::agent_request);
        let report = CaseReport {
            case: case.name.clone(),
            changed_from_base: recompiled.is_some() && recompiled != at_base,
            stale_in_tree: recompiled.is_none() || recompiled != tree || view_recompiled != view_tree,
            golden_changed: tree != at_base || view_tree != git.show_json(&base, &view_path)?,
            hash_before: at_base.as_ref().and_then(hash_of),
            hash_after: recompiled.as_ref().and_then(hash_of),
            compile_error,
        };
        if let (Some(before), Some(after)) = (&at_base, &recompiled) {
            if report.changed_from_base {
                changes.push((case.name.clone(), before.clone(), after.clone()));
            }
        }
        goldens.push((case.name.clone(), tree));
        cases.push(report);
    }
    let mut violations = policy::prompt_version_violations(config, &goldens);
    violations.extend(policy::policy(&changed_files, &cases, &git.relative(&config.paths.fixtures)));
    violations.extend(policy::orphaned_golden_changes(&changed_files, &cases, &git.relative(&config.paths.golden)));
    Ok(Report { base, ok: violations.is_empty(), changed_files, cases, groups: grouping::group(changes), violations })
}

/// The merge base with `main`, else with `origin/main`.
fn default_base(git: &Git) -> Result<String> {
    for branch in ["main", "origin/main"] {
        if let Ok(base) = git.run(&["merge-base", "HEAD", branch]) {
            return Ok(base);
        }
    }
    Err(Error::Usage("no merge base with `main` or `origin/main`; name the base with --base REV".into()))
}

fn recompile(case: &corpus::Case, config: &Config) -> Result<Value> {
    compile::compile(&case.request, config, &case.request_path().display().to_string())
}

fn hash_of(packet: &Value) -> Option<String> {
    packet.get("exactInputHash").and_then(Value::as_str).map(str::to_owned)
}

fn read_json_opt(path: &Path) -> Result<Option<Value>> {
    if !path.exists() {
        return Ok(None);
    }
    crate::fsutil::read_json(path, crate::fsutil::DEFAULT_MAX_BYTES).map(Some)
}

/// How the release report prints: Markdown for a pull-request comment, JSON for machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReportFormat {
    #[default]
    Markdown,
    Json,
}

/// The changed files, each classified by what it is to the policy.
fn changed_files(git: &Git, base: &str, config: &Config) -> Result<Vec<ChangedFile>> {
    let paths = git.changed_paths(base)?;
    let classes = [
        (git.relative(&config.paths.prompts), ChangeKind::Template),
        (git.relative(&config.paths.builder_schema), ChangeKind::Schema),
        (git.relative(&config.paths.schema_snapshot), ChangeKind::Schema),
        (git.relative(&config.paths.google_suffix), ChangeKind::Reference),
        (git.relative(&config.root.join(crate::config::FILE_NAME)), ChangeKind::Reference),
        (git.relative(&config.paths.fixtures), ChangeKind::Fixture),
        (git.relative(&config.paths.golden), ChangeKind::Golden),
        (git.relative(&config.root.join("src")), ChangeKind::Code),
    ];
    Ok(paths
        .into_iter()
        .map(|path| {
            let kind = classes
                .iter()
                .find(|(prefix, _)| &path == prefix || path.starts_with(&format!("{prefix}/")))
                .map_or(ChangeKind::Other, |(_, kind)| *kind);
            ChangedFile { path, kind }
        })
        .collect())
}
