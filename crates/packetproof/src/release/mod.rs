//! Release check of prompt changes: compare the working tree with a base git
//! revision, show which packets change and how (grouped; `render` writes it as
//! text or Markdown for the reporters), and enforce the policy (`policy`) that
//! every golden change is explained and every prompt change is re-blessed.

mod policy;
mod prompts;
mod render;

pub(crate) use crate::diff::{ChangeGroup, FieldChange};

use crate::git::Git;
use crate::Invocation;
use crate::{corpus, provider, Error, Result};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// Kinds of changed files the policy reasons about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum ChangeKind {
    Template,
    Schema,
    Reference,
    /// The compiler's own source: a change there can explain new packets.
    Code,
    /// A file `[exporter] files` declares (the exporter's code or inputs): it explains
    /// the golden changes it causes.
    Exporter,
    Fixture,
    Golden,
    /// `packetproof.lock`: written by `bless`, like the golden files.
    Lock,
    Other,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ChangedFile {
    pub(crate) path: String,
    pub(crate) kind: ChangeKind,
}

/// One fixture: its recompiled packet against the golden packet at the base and in the tree.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CaseReport {
    pub(crate) case: String,
    /// The recompiled packet differs from the golden packet at the base (the release changes it).
    pub(crate) changed_from_base: bool,
    /// The recompiled packet differs from the golden packet in the tree (not re-blessed).
    pub(crate) stale_in_tree: bool,
    /// The golden packet file itself differs between base and tree.
    pub(crate) golden_changed: bool,
    /// The case has no golden packet at the base: this release adds it.
    pub(crate) new: bool,
    pub(crate) hash_before: Option<String>,
    pub(crate) hash_after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) compile_error: Option<String>,
}

impl CaseReport {
    /// Anything to say about this case (the report lists only these).
    pub(crate) fn changed(&self) -> bool {
        self.new || self.changed_from_base || self.stale_in_tree || self.golden_changed || self.compile_error.is_some()
    }
}

/// What the policy forbids, structured for machines; `message` reads on its own
/// and the renderers add `cases` and `paths`, each list printed once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Violation {
    pub(crate) kind: ViolationKind,
    pub(crate) message: String,
    pub(crate) cases: Vec<String>,
    pub(crate) paths: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum ViolationKind {
    /// Golden packets differ from what their requests compile to now.
    NotReblessed,
    /// Golden files changed with nothing to explain the change.
    UnexplainedGoldenChange,
    /// A changed golden file belongs to no fixture.
    OrphanedGoldenChange,
    /// promptVersions do not match the templates' bytes.
    PromptVersionMismatch,
    /// A promptVersions label changed, but the template's text did not.
    LabelWithoutText,
    /// A template's text changed, but its promptVersions label did not.
    TextWithoutLabel,
    /// Prompts changed under the same labels, and the templates they stand for cannot be seen.
    UnexplainedPromptChange,
    /// packetproof.lock does not pin the suite's schema and templates as they are.
    LockNotBlessed,
}

/// How the base revision was chosen, said in the report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Base {
    pub(crate) commit: String,
    /// `--base REV`, or the merge base with which branch.
    pub(crate) chosen_by: String,
    /// The base is HEAD itself: only uncommitted changes are compared.
    pub(crate) is_head: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub(crate) base: Base,
    pub ok: bool,
    pub(crate) changed_files: Vec<ChangedFile>,
    /// The cases with anything to report; the others are only counted.
    pub(crate) cases: Vec<CaseReport>,
    pub(crate) unchanged_cases: usize,
    pub(crate) groups: Vec<ChangeGroup>,
    pub(crate) violations: Vec<Violation>,
    /// The changed files `[exporter] files` declares, each with its digest at the base and now.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) exporter_files: Vec<ExporterFile>,
    /// The golden verdicts of the suite's `[evaluator]` that differ from the base's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) verdicts: Vec<VerdictChange>,
    /// The pins of packetproof.lock that differ from the base's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) lock: Vec<crate::lock::PinChange>,
}

/// A declared exporter file that changed: sha256 of its bytes at the base and in
/// the tree (`None`: not there).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ExporterFile {
    pub(crate) path: String,
    pub(crate) before: Option<String>,
    pub(crate) after: Option<String>,
}

/// The digests of the changed files of kind `exporter`.
fn exporter_files(git: &Git, base: &str, changed: &[ChangedFile], config: &Invocation) -> Result<Vec<ExporterFile>> {
    let mut out = Vec::new();
    for file in changed.iter().filter(|f| f.kind == ChangeKind::Exporter) {
        let path = git.path_of(&file.path);
        let before = git.show_bytes(base, &path)?.map(|bytes| crate::digest::sha256(&bytes));
        let after = match path.is_file() {
            true => {
                Some(crate::digest::sha256(&crate::fsutil::read_bytes(&path, config.settings().limits.max_file_bytes)?))
            }
            false => None,
        };
        out.push(ExporterFile { path: file.path.clone(), before, after });
    }
    Ok(out)
}

/// A fixture's golden evaluator verdict at the base and in the tree, each said in words.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct VerdictChange {
    pub(crate) case: String,
    pub(crate) before: String,
    pub(crate) after: String,
}

/// A golden verdict in words: "passes", "fails at stage \"x\" (n failure(s))", or "none".
fn verdict_said(verdict: Option<&Value>) -> String {
    let Some(verdict) = verdict else { return "none".into() };
    let count = verdict["failures"].as_array().map_or(0, Vec::len);
    match verdict["earliestFailureStage"].as_str() {
        None => "passes".into(),
        Some(stage) => format!("fails at stage {stage:?} ({count} failure(s))"),
    }
}

/// Run the release check against `base` (default: see `default_base`).
pub fn check(config: &Invocation, base: Option<&str>) -> Result<Report> {
    let git = Git::open(&config.settings().root)?;
    let (base, chosen_by) = match base {
        Some(rev) => (git.run(&["rev-parse", "--verify", &format!("{rev}^{{commit}}")])?, format!("--base {rev}")),
        None => default_base(&git)?,
    };
    let is_head = git.run(&["rev-parse", "--verify", "HEAD^{commit}"]).is_ok_and(|head| head == base);
    let changed_files = changed_files(&git, &base, config)?;
    let mut cases = Vec::new();
    let mut changes: Vec<(String, Value, Value)> = Vec::new();
    let mut goldens = Vec::new();
    let mut verdicts = Vec::new();
    // Negative cases with a hand-broken packet of their own have no golden files.
    for case in corpus::cases(config)?.into_iter().filter(|c| !c.has_own_packet()) {
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
            new: at_base.is_none(),
            hash_before: at_base.as_ref().and_then(hash_of),
            hash_after: recompiled.as_ref().and_then(hash_of),
            compile_error,
        };
        if let (Some(before), Some(after)) = (&at_base, &recompiled) {
            if report.changed_from_base {
                changes.push((case.name.clone(), before.clone(), after.clone()));
            }
        }
        let (verdict_tree, verdict_base) =
            (read_json_opt(&case.golden_verdict())?, git.show_json(&base, &case.golden_verdict())?);
        if verdict_tree != verdict_base {
            let (mut before, mut after) = (verdict_said(verdict_base.as_ref()), verdict_said(verdict_tree.as_ref()));
            if before == after {
                (before, after) = (format!("{before}, as blessed at the base"), format!("{after}, other failures"));
            }
            verdicts.push(VerdictChange { case: case.name.clone(), before, after });
        }
        goldens.push((case.name.clone(), tree, at_base));
        cases.push(report);
    }
    let goldens: Vec<prompts::Golden> = goldens
        .iter()
        .map(|(case, tree, base)| prompts::Golden {
            case,
            tree: tree.as_ref(),
            base: base.as_ref(),
            explained_otherwise: explained_otherwise(
                &changed_files,
                &git.relative(&config.settings().paths.fixtures),
                case,
            ),
        })
        .collect();
    let mut violations = prompts::violations(config, &git, &base, &goldens)?;
    let packetproof = crate::distribution::command_in(&config.settings().root);
    violations.extend(policy::policy(
        &changed_files,
        &cases,
        &git.relative(&config.settings().paths.fixtures),
        packetproof,
    ));
    violations.extend(policy::orphaned_golden_changes(
        &changed_files,
        &cases,
        &git.relative(&config.settings().paths.golden),
    ));
    violations.extend(lock_not_blessed(config)?);
    let exporter_files = exporter_files(&git, &base, &changed_files, config)?;
    let lock_at_base = git.show_bytes(&base, &config.settings().root.join(crate::lock::FILE_NAME))?;
    let lock = crate::lock::diff(config.settings(), lock_at_base.as_deref())?;
    let all = cases.len();
    cases.retain(CaseReport::changed);
    Ok(Report {
        base: Base { commit: base, chosen_by, is_head },
        ok: violations.is_empty(),
        changed_files,
        unchanged_cases: all - cases.len(),
        cases,
        groups: crate::diff::group(changes, ("base", "tree")),
        violations,
        exporter_files,
        verdicts,
        lock,
    })
}

/// Whether a change other than a template's may have changed `case`'s prompts: the
/// compiler's or exporter's code, a schema or reference file, or the case's own fixture.
fn explained_otherwise(changed: &[ChangedFile], fixtures: &str, case: &str) -> bool {
    changed.iter().any(|f| match f.kind {
        ChangeKind::Code | ChangeKind::Exporter | ChangeKind::Schema | ChangeKind::Reference => true,
        ChangeKind::Fixture => f.path.starts_with(&format!("{fixtures}/{case}/")),
        _ => false,
    })
}

/// The lock pins files that have changed since (`corpus::lock`'s findings, as one
/// violation naming the files); nothing before the suite's first bless.
fn lock_not_blessed(config: &Invocation) -> Result<Option<Violation>> {
    let stale = crate::lock::check(config.settings())?;
    if stale.is_empty() {
        return Ok(None);
    }
    Ok(Some(Violation {
        kind: ViolationKind::LockNotBlessed,
        message: format!(
            "{} does not pin {} file(s) as they are now; review them, run `{} bless` and commit the result",
            crate::lock::FILE_NAME,
            stale.len(),
            crate::distribution::command_in(&config.settings().root)
        ),
        cases: Vec::new(),
        paths: stale.iter().map(|f| f.path.to_string()).collect(),
    }))
}

/// The merge base with `main`, else with `origin/main`, and which it was.
/// The default base: the merge base of HEAD and the current branch's upstream,
/// else the remote's default branch (`origin/HEAD`, or another remote's), else
/// `main`, else `master`. The second value says which, for the report.
fn default_base(git: &Git) -> Result<(String, String)> {
    let mut candidates: Vec<(String, &str)> = Vec::new();
    if let Ok(upstream) = git.run(&["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"]) {
        candidates.push((upstream, "the current branch's upstream"));
    }
    let remotes = git.run(&["remote"]).unwrap_or_default();
    let mut remotes: Vec<&str> = remotes.lines().map(str::trim).filter(|r| !r.is_empty()).collect();
    remotes.sort_by_key(|r| *r != "origin");
    for remote in remotes {
        if let Ok(head) = git.run(&["symbolic-ref", "--short", &format!("refs/remotes/{remote}/HEAD")]) {
            candidates.push((head, "the remote's default branch"));
        }
    }
    candidates.push(("main".into(), "main"));
    candidates.push(("master".into(), "master"));
    for (branch, why) in candidates {
        if let Ok(base) = git.run(&["merge-base", "HEAD", &branch]) {
            let said = if why == branch {
                format!("the merge base of HEAD and {branch}")
            } else {
                format!("the merge base of HEAD and {branch} ({why})")
            };
            return Ok((base, said));
        }
    }
    Err(Error::Usage(
        "no base to compare with: the current branch has no upstream, no remote names a default branch, and there \
         is no `main` or `master`; name the base with --base REV"
            .into(),
    ))
}

fn recompile(case: &corpus::Case, config: &Invocation) -> Result<Value> {
    corpus::produce(case, config)
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

/// The changed files, each classified by what it is to the policy.
fn changed_files(git: &Git, base: &str, config: &Invocation) -> Result<Vec<ChangedFile>> {
    let paths = git.changed_paths(base)?;
    // A resource the suite does not name is built into the binary: no file of it can change.
    let named = [
        (&config.settings().paths.prompts, ChangeKind::Template),
        (&config.settings().paths.builder_schema, ChangeKind::Schema),
        (&config.settings().paths.schema_snapshot, ChangeKind::Schema),
        (&config.settings().paths.google_suffix, ChangeKind::Reference),
    ];
    let agent_schemas = config.settings().agents.all().iter().map(|agent| (&agent.schema, ChangeKind::Schema));
    let mut classes: Vec<(String, ChangeKind)> = named
        .into_iter()
        .chain(agent_schemas)
        .filter_map(|(path, kind)| Some((git.relative(path.as_ref()?), kind)))
        .collect();
    classes.extend([
        (git.relative(&config.settings().root.join(crate::config::FILE_NAME)), ChangeKind::Reference),
        (git.relative(&config.settings().root.join(crate::lock::FILE_NAME)), ChangeKind::Lock),
        (git.relative(&config.settings().paths.fixtures), ChangeKind::Fixture),
        (git.relative(&config.settings().paths.golden), ChangeKind::Golden),
        // A workspace keeps its crates' code in crates/ (this project's library is there).
        (git.relative(&config.settings().root.join("src")), ChangeKind::Code),
        (git.relative(&config.settings().root.join("crates")), ChangeKind::Code),
    ]);
    // The exporter's declared files, as patterns from the repository's top (resolved
    // from the suite's folder when the settings loaded; a deleted file still matches).
    let declared: Vec<String> = config
        .settings()
        .exporter
        .iter()
        .flat_map(|e| {
            let top = git.relative(&e.resolved.top);
            e.resolved.patterns.iter().map(move |pattern| match top.is_empty() {
                true => pattern.clone(),
                false => format!("{top}/{pattern}"),
            })
        })
        .collect();
    Ok(paths
        .into_iter()
        .map(|path| {
            let exporter = declared.iter().any(|glob| crate::config::glob::matches(glob, &path));
            let kind = classes
                .iter()
                .find(|(prefix, _)| &path == prefix || path.starts_with(&format!("{prefix}/")))
                .map_or(ChangeKind::Other, |(_, kind)| *kind);
            let kind = if exporter { ChangeKind::Exporter } else { kind };
            ChangedFile { path, kind }
        })
        .collect())
}
