//! Release check of prompt changes (DESIGN §9): compare the working tree with a
//! base git revision, show which packets change and how, and enforce the policy
//! that every golden change is explained and every prompt change is re-blessed.
//!
//! Git is driven through its command line (`git show`, `git diff`): no crate
//! reads a repository's working tree, index and history as exactly as git does.

use crate::{canonical, compile, corpus, digest, provider, Config, Error, Result};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
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
    let changed_files = git.changed_files(&base, config)?;
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
    let mut violations = prompt_version_violations(config, &goldens);
    violations.extend(policy(&changed_files, &cases, &git.relative(&config.paths.fixtures)));
    violations.extend(orphaned_golden_changes(&changed_files, &cases, &git.relative(&config.paths.golden)));
    Ok(Report { base, ok: violations.is_empty(), changed_files, cases, groups: group(changes), violations })
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

/// A changed golden file must belong to a case (a deleted fixture leaves its golden
/// files to nobody; an edit there is unexplained by construction).
fn orphaned_golden_changes(changed: &[ChangedFile], cases: &[CaseReport], golden: &str) -> Vec<String> {
    changed
        .iter()
        .filter(|f| f.kind == ChangeKind::Golden)
        .filter(|f| !cases.iter().any(|c| f.path.starts_with(&format!("{golden}/{}/", c.case))))
        .map(|f| format!("golden file {} changed but belongs to no fixture", f.path))
        .collect()
}

/// The policy (DESIGN §9), each violation a sentence a reviewer can act on.
fn policy(changed: &[ChangedFile], cases: &[CaseReport], fixtures: &str) -> Vec<String> {
    let mut violations = Vec::new();
    let stale: Vec<&str> = cases.iter().filter(|c| c.stale_in_tree).map(|c| c.case.as_str()).collect();
    if !stale.is_empty() {
        let causes = kinds_present(
            changed,
            &[ChangeKind::Template, ChangeKind::Schema, ChangeKind::Reference, ChangeKind::Code],
        );
        violations.push(format!(
            "golden packets are not re-blessed for {} case(s) [{}]{}; run `packetproof bless` and commit the result",
            stale.len(),
            stale.join(", "),
            if causes.is_empty() { String::new() } else { format!(" after changes to {}", causes.join(", ")) }
        ));
    }
    let explained_by_references = changed.iter().any(|f| {
        matches!(f.kind, ChangeKind::Template | ChangeKind::Schema | ChangeKind::Reference | ChangeKind::Code)
    });
    for case in cases.iter().filter(|c| c.golden_changed) {
        let fixture_changed = changed
            .iter()
            .any(|f| f.kind == ChangeKind::Fixture && f.path.starts_with(&format!("{fixtures}/{}/", case.case)));
        if !explained_by_references && !fixture_changed {
            violations.push(format!(
                "golden files of case {} changed with no template, schema, compiler or fixture change to explain them",
                case.case
            ));
        }
    }
    violations
}

fn kinds_present(changed: &[ChangedFile], kinds: &[ChangeKind]) -> Vec<String> {
    let mut present: Vec<String> = kinds
        .iter()
        .filter(|k| changed.iter().any(|f| f.kind == **k))
        .map(|k| format!("{k:?}").to_lowercase() + "s")
        .collect();
    present.dedup();
    present
}

/// Each promptVersions entry of a golden packet must be the digest of that
/// template's bytes. One violation per template, naming every case that disagrees.
fn prompt_version_violations(config: &Config, packets: &[(String, Option<Value>)]) -> Vec<String> {
    let mut stale: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (case, packet) in packets {
        let Some(versions) = packet.as_ref().and_then(|p| p.get("promptVersions")).and_then(Value::as_object) else {
            continue;
        };
        for (path, version) in versions {
            let actual = std::fs::read(config.paths.prompts.join(path)).ok().map(|b| digest::sha256(&b));
            if actual.as_deref() != version.as_str() {
                stale.entry(path.clone()).or_default().push(case);
            }
        }
    }
    stale
        .into_iter()
        .map(|(path, cases)| {
            format!(
                "promptVersions[{path:?}] does not match the template's bytes in {} golden packet(s) [{}]",
                cases.len(),
                cases.join(", ")
            )
        })
        .collect()
}

/// Group changed packets whose changes read the same, so one template edit that
/// touches 20 packets is one entry with 20 cases.
fn group(changes: Vec<(String, Value, Value)>) -> Vec<ChangeGroup> {
    let mut groups: BTreeMap<String, ChangeGroup> = BTreeMap::new();
    for (case, before, after) in changes {
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
        let system = unified(&text(&before, "systemPrompt"), &text(&after, "systemPrompt"), ("base", "tree"));
        let user =
            unified(&text(&before, "effectiveUserMessage"), &text(&after, "effectiveUserMessage"), ("base", "tree"));
        // The hashes are in the per-case table, and userMessage is shown by the
        // effectiveUserMessage diff; here they would only repeat what is shown.
        let skip = ["systemPrompt", "effectiveUserMessage", "userMessage", "exactInputHash", "checksum"];
        let fields = field_changes(&before, &after, &skip);
        let key = format!(
            "{}\u{0}{}\u{0}{}",
            changed_lines(&system),
            changed_lines(&user),
            // Values too: two cases whose maxTokens changed differently are two changes.
            fields.iter().map(|f| format!("{}={:?}>{:?}", f.path, f.before, f.after)).collect::<Vec<_>>().join(",")
        );
        groups
            .entry(key)
            .or_insert_with(|| ChangeGroup {
                cases: Vec::new(),
                system_prompt_diff: system,
                effective_user_message_diff: user,
                field_changes: fields,
            })
            .cases
            .push(case);
    }
    let mut groups: Vec<ChangeGroup> = groups.into_values().collect();
    groups.sort_by(|a, b| b.cases.len().cmp(&a.cases.len()).then_with(|| a.cases.cmp(&b.cases)));
    groups
}

pub(crate) fn unified(before: &str, after: &str, labels: (&str, &str)) -> String {
    if before == after {
        return String::new();
    }
    similar::TextDiff::from_lines(before, after).unified_diff().context_radius(2).header(labels.0, labels.1).to_string()
}

/// The +/- lines of a unified diff: what a group has in common across cases.
fn changed_lines(diff: &str) -> String {
    diff.lines()
        .filter(|l| (l.starts_with('+') || l.starts_with('-')) && !l.starts_with("+++") && !l.starts_with("---"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The prompt texts, shown as unified diffs rather than as changed fields.
pub(crate) const PROMPT_TEXTS: [&str; 2] = ["systemPrompt", "effectiveUserMessage"];

/// Leaf-level differences, leaving out the top-level fields in `skip`.
pub(crate) fn field_changes(before: &Value, after: &Value, skip: &[&str]) -> Vec<FieldChange> {
    let mut out = Vec::new();
    let (Some(b), Some(a)) = (before.as_object(), after.as_object()) else {
        diff_values("$", Some(before), Some(after), &mut out);
        return out;
    };
    let keys: std::collections::BTreeSet<&String> = b.keys().chain(a.keys()).collect();
    for key in keys.into_iter().filter(|k| !skip.contains(&k.as_str())) {
        diff_values(&crate::report::child("$", key), b.get(key), a.get(key), &mut out);
    }
    out
}

fn diff_values(path: &str, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<FieldChange>) {
    match (before, after) {
        (Some(b), Some(a)) if b == a => {}
        (Some(Value::Object(b)), Some(Value::Object(a))) => {
            let keys: std::collections::BTreeSet<&String> = b.keys().chain(a.keys()).collect();
            for key in keys {
                diff_values(&crate::report::child(path, key), b.get(key), a.get(key), out);
            }
        }
        (Some(Value::Array(b)), Some(Value::Array(a))) if b.len() == a.len() => {
            for (i, (x, y)) in b.iter().zip(a).enumerate() {
                diff_values(&crate::report::index(path, i), Some(x), Some(y), out);
            }
        }
        _ => out.push(FieldChange { path: path.to_owned(), before: before.map(short), after: after.map(short) }),
    }
}

fn short(value: &Value) -> String {
    let text = String::from_utf8(canonical::to_vec(value)).unwrap_or_default();
    if text.chars().count() > 120 {
        format!("{}… ({} bytes)", text.chars().take(117).collect::<String>(), text.len())
    } else {
        text
    }
}

/// How the release report prints: Markdown for a pull-request comment, JSON for machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ReportFormat {
    #[default]
    Markdown,
    Json,
}

impl Report {
    pub fn render(&self, format: ReportFormat) -> String {
        match format {
            ReportFormat::Json => canonical::to_pretty(&serde_json::to_value(self).expect("a report serializes")),
            ReportFormat::Markdown => self.markdown(),
        }
    }

    /// Markdown fit for a pull-request comment; long diffs fold into <details>.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        let verdict = if self.ok { "passes" } else { "FAILS" };
        md.push_str(&format!("## packetproof release check: {verdict}\n\nBase: `{}`\n\n", self.base));
        for violation in &self.violations {
            md.push_str(&format!("- :x: {violation}\n"));
        }
        if !self.violations.is_empty() {
            md.push('\n');
        }
        md.push_str("### Changed files\n\n");
        if self.changed_files.is_empty() {
            md.push_str("None.\n");
        }
        let kind = |f: &ChangedFile| {
            serde_json::to_value(f.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
        };
        let (golden, sources): (Vec<&ChangedFile>, Vec<&ChangedFile>) =
            self.changed_files.iter().partition(|f| f.kind == ChangeKind::Golden);
        for file in sources {
            md.push_str(&format!("- `{}` ({})\n", file.path, kind(file)));
        }
        if !golden.is_empty() {
            md.push_str(&format!("- <details><summary>{} golden file(s)</summary>\n\n", golden.len()));
            for file in golden {
                md.push_str(&format!("  - `{}`\n", file.path));
            }
            md.push_str("  </details>\n");
        }
        md.push_str("\n### Packets\n\n| case | changed by this release | golden up to date | exactInputHash before | after |\n|---|---|---|---|---|\n");
        for c in &self.cases {
            let hash = |h: &Option<String>| {
                h.as_deref().map_or("—".to_owned(), |h| format!("`{}`", h.chars().take(19).collect::<String>()))
            };
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                c.case,
                if c.changed_from_base { "yes" } else { "no" },
                if c.stale_in_tree { "**no**" } else { "yes" },
                hash(&c.hash_before),
                hash(&c.hash_after)
            ));
        }
        for (i, g) in self.groups.iter().enumerate() {
            md.push_str(&format!("\n### Change {} — {} case(s): {}\n", i + 1, g.cases.len(), g.cases.join(", ")));
            for (title, diff) in
                [("systemPrompt", &g.system_prompt_diff), ("effectiveUserMessage", &g.effective_user_message_diff)]
            {
                if !diff.is_empty() {
                    md.push_str(&format!(
                        "\n<details><summary>{title} ({} changed line(s))</summary>\n\n```diff\n{}```\n</details>\n",
                        changed_lines(diff).lines().count(),
                        diff
                    ));
                }
            }
            if !g.field_changes.is_empty() {
                md.push_str("\n<details><summary>other fields</summary>\n\n| field | base | tree |\n|---|---|---|\n");
                for f in &g.field_changes {
                    let cell = |v: &Option<String>| {
                        v.as_deref().map_or("—".to_owned(), |v| format!("`{}`", v.replace('|', "\\|")))
                    };
                    md.push_str(&format!("| `{}` | {} | {} |\n", f.path, cell(&f.before), cell(&f.after)));
                }
                md.push_str("</details>\n");
            }
        }
        md
    }
}

struct Git {
    top: PathBuf,
}

impl Git {
    fn open(root: &Path) -> Result<Git> {
        let out = git_in(root, &["rev-parse", "--show-toplevel"])?;
        Ok(Git { top: PathBuf::from(out) })
    }

    fn run(&self, args: &[&str]) -> Result<String> {
        git_in(&self.top, args)
    }

    /// Path of `file` relative to the repository top, with `/` separators.
    fn relative(&self, file: &Path) -> String {
        let top = self.top.canonicalize().unwrap_or_else(|_| self.top.clone());
        let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
        let parent_canon =
            file.parent().and_then(|p| p.canonicalize().ok()).map(|p| p.join(file.file_name().unwrap_or_default()));
        let file = parent_canon.unwrap_or(file);
        file.strip_prefix(&top).unwrap_or(&file).to_string_lossy().replace('\\', "/")
    }

    fn show_json(&self, rev: &str, file: &Path) -> Result<Option<Value>> {
        let spec = format!("{rev}:{}", self.relative(file));
        let out = Command::new("git")
            .current_dir(&self.top)
            .args(["show", &spec])
            .output()
            .map_err(|e| Error::io("git", e))?;
        if !out.status.success() {
            return Ok(None); // not present at the base: a new case
        }
        canonical::parse(&out.stdout).map(Some).map_err(|e| e.in_file(spec))
    }

    fn changed_files(&self, base: &str, config: &Config) -> Result<Vec<ChangedFile>> {
        // NUL-separated and unquoted, so any file name comes back as it is.
        let tracked = self.run(&["-c", "core.quotePath=false", "diff", "--name-only", "-z", base, "--"])?;
        let untracked = self.run(&["ls-files", "-z", "--others", "--exclude-standard"])?;
        let mut paths: Vec<&str> = tracked.split('\0').chain(untracked.split('\0')).filter(|l| !l.is_empty()).collect();
        paths.sort_unstable();
        paths.dedup();
        let classes = [
            (self.relative(&config.paths.prompts), ChangeKind::Template),
            (self.relative(&config.paths.builder_schema), ChangeKind::Schema),
            (self.relative(&config.paths.schema_snapshot), ChangeKind::Schema),
            (self.relative(&config.paths.google_suffix), ChangeKind::Reference),
            (self.relative(&config.root.join(crate::config::FILE_NAME)), ChangeKind::Reference),
            (self.relative(&config.paths.fixtures), ChangeKind::Fixture),
            (self.relative(&config.paths.golden), ChangeKind::Golden),
            (self.relative(&config.root.join("src")), ChangeKind::Code),
        ];
        Ok(paths
            .into_iter()
            .map(|path| {
                let kind = classes
                    .iter()
                    .find(|(prefix, _)| path == prefix || path.starts_with(&format!("{prefix}/")))
                    .map_or(ChangeKind::Other, |(_, kind)| *kind);
                ChangedFile { path: path.to_owned(), kind }
            })
            .collect())
    }
}

fn git_in(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git").current_dir(dir).args(args).output().map_err(|e| Error::io("git", e))?;
    if !out.status.success() {
        return Err(Error::Usage(format!(
            "git {} failed in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
}

/// `packetproof release-check`: print the report; exit 1 when the policy fails.
pub(crate) fn run(config: &Config, base: Option<&str>, format: ReportFormat) -> Result<crate::cli::Status> {
    let report = check(config, base)?;
    print!("{}", report.render(format));
    Ok(if report.ok { crate::cli::Status::Holds } else { crate::cli::Status::Failed })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_changes_name_leaf_paths() {
        let before = json!({"maxTokens": 10, "renderInput": {"a": [1, 2], "b": "x"}, "systemPrompt": "s"});
        let after = json!({"maxTokens": 10, "renderInput": {"a": [1, 3], "c": true}, "systemPrompt": "t"});
        let paths: Vec<String> = field_changes(&before, &after, &PROMPT_TEXTS).into_iter().map(|f| f.path).collect();
        assert_eq!(paths, ["$.renderInput.a[1]", "$.renderInput.b", "$.renderInput.c"]);
    }

    #[test]
    fn same_template_edit_groups_cases() {
        let packet = |user: &str| json!({"systemPrompt": "one\ntwo\n", "effectiveUserMessage": user});
        let edited = |user: &str| json!({"systemPrompt": "one\n2\n", "effectiveUserMessage": user});
        let changes = vec![
            ("a".into(), packet("alpha\n"), edited("alpha\n")),
            ("b".into(), packet("beta\n"), edited("beta\n")),
            ("c".into(), packet("gamma\n"), packet("GAMMA\n")),
        ];
        let groups = group(changes);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].cases, ["a", "b"]);
        assert!(groups[0].system_prompt_diff.contains("-two\n+2\n"), "{}", groups[0].system_prompt_diff);
        assert_eq!(groups[1].cases, ["c"]);
    }

    #[test]
    fn unexplained_golden_change_is_a_violation() {
        let case = |name: &str, golden_changed| CaseReport {
            case: name.into(),
            changed_from_base: false,
            stale_in_tree: false,
            golden_changed,
            hash_before: None,
            hash_after: None,
            compile_error: None,
        };
        let golden_only = vec![ChangedFile { path: "golden/a/runtime-packet.json".into(), kind: ChangeKind::Golden }];
        assert_eq!(policy(&golden_only, &[case("a", true)], "fixtures").len(), 1);
        let with_fixture = vec![ChangedFile { path: "fixtures/a/request.json".into(), kind: ChangeKind::Fixture }];
        assert!(policy(&with_fixture, &[case("a", true)], "fixtures").is_empty());
        assert_eq!(
            policy(&with_fixture, &[case("b", true)], "fixtures").len(),
            1,
            "a fixture explains only its own case"
        );
        let code = vec![ChangedFile { path: "src/compile/prompts.rs".into(), kind: ChangeKind::Code }];
        assert!(policy(&code, &[case("a", true)], "fixtures").is_empty(), "a compiler change explains new packets");
        let nested = vec![ChangedFile { path: "fixtures/group/a/request.json".into(), kind: ChangeKind::Fixture }];
        assert!(policy(&nested, &[case("group/a", true)], "fixtures").is_empty(), "nested case names");
        assert_eq!(policy(&nested, &[case("a", true)], "fixtures").len(), 1, "a path segment is not a case");
    }
}
