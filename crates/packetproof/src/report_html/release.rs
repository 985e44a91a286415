//! What the release report shows, as data: the verdict and its violations, the
//! changed templates and files, the affected cases with their hashes before and
//! after, and each distinct change (grouped as `bless --review` groups them) with
//! its prompts side by side.

use super::side_by_side::{self, Row};
use crate::diff::FieldChange;
use crate::release::{ChangeKind, Report};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub(crate) struct ReleasePage {
    pub(crate) ok: bool,
    pub(crate) base: String,
    pub(crate) chosen_by: String,
    pub(crate) is_head: bool,
    pub(crate) violations: Vec<ViolationView>,
    pub(crate) templates: Vec<String>,
    /// Every changed file but the templates, with its kind.
    pub(crate) files: Vec<(String, String)>,
    pub(crate) cases: Vec<CaseView>,
    pub(crate) unchanged_cases: usize,
    pub(crate) changes: Vec<ChangeView>,
    /// The suite's evaluator verdicts that changed: (case, before, after), in words.
    pub(crate) verdicts: Vec<(String, String, String)>,
    /// packetproof.lock's changed pins: (file, digest at the base, digest now).
    pub(crate) lock: Vec<(String, Option<String>, Option<String>)>,
    /// Declared exporter files: (path, digest at the base, digest now).
    pub(crate) exporter_files: Vec<(String, Option<String>, Option<String>)>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ViolationView {
    pub(crate) message: String,
    pub(crate) cases: Vec<String>,
    pub(crate) paths: Vec<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct CaseView {
    pub(crate) name: String,
    pub(crate) new: bool,
    /// The numbers of the changes that touch it (from 1; a case may have several).
    pub(crate) changes: Vec<usize>,
    pub(crate) reblessed: bool,
    pub(crate) hash_before: Option<String>,
    pub(crate) hash_after: Option<String>,
    pub(crate) compile_error: Option<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ChangeView {
    pub(crate) number: usize,
    pub(crate) cases: Vec<String>,
    /// The prompts' side-by-side rows: (field name, rows), only the prompts that changed.
    pub(crate) prompts: Vec<(&'static str, Vec<Row>)>,
    pub(crate) fields: Vec<(String, String, String)>,
}

pub(crate) fn release_page(report: &Report) -> ReleasePage {
    let kind = |k: ChangeKind| serde_json::to_value(k).ok().and_then(|v| v.as_str().map(str::to_owned));
    let (templates, files): (Vec<_>, Vec<_>) =
        report.changed_files.iter().partition(|f| f.kind == ChangeKind::Template);
    let changes_of = |case: &str| -> Vec<usize> {
        (0..report.groups.len()).filter(|i| report.groups[*i].cases.iter().any(|c| c == case)).map(|i| i + 1).collect()
    };
    ReleasePage {
        ok: report.ok,
        base: report.base.commit.clone(),
        chosen_by: report.base.chosen_by.clone(),
        is_head: report.base.is_head,
        violations: report
            .violations
            .iter()
            .map(|v| ViolationView { message: v.message.clone(), cases: v.cases.clone(), paths: v.paths.clone() })
            .collect(),
        templates: templates.iter().map(|f| f.path.clone()).collect(),
        files: files.iter().map(|f| (f.path.clone(), kind(f.kind).unwrap_or_default())).collect(),
        cases: report
            .cases
            .iter()
            .map(|c| CaseView {
                name: c.case.clone(),
                new: c.new,
                changes: changes_of(&c.case),
                reblessed: !c.stale_in_tree,
                hash_before: c.hash_before.clone(),
                hash_after: c.hash_after.clone(),
                compile_error: c.compile_error.clone(),
            })
            .collect(),
        unchanged_cases: report.unchanged_cases,
        changes: report.groups.iter().enumerate().map(|(i, g)| change_view(i + 1, g)).collect(),
        verdicts: report.verdicts.iter().map(|v| (v.case.clone(), v.before.clone(), v.after.clone())).collect(),
        lock: report.lock.iter().map(|p| (p.file.clone(), p.before.clone(), p.after.clone())).collect(),
        exporter_files: report
            .exporter_files
            .iter()
            .map(|e| (e.path.clone(), e.before.clone(), e.after.clone()))
            .collect(),
    }
}

fn change_view(number: usize, group: &crate::diff::ChangeGroup) -> ChangeView {
    let prompts =
        [("systemPrompt", &group.system_prompt_diff), ("effectiveUserMessage", &group.effective_user_message_diff)]
            .into_iter()
            .map(|(name, diff)| (name, side_by_side::rows(diff)))
            .filter(|(_, rows)| !rows.is_empty())
            .collect();
    let fields = group
        .field_changes
        .iter()
        .map(|f| (f.path.clone(), FieldChange::shown(&f.before), FieldChange::shown(&f.after)))
        .collect();
    ChangeView { number, cases: group.cases.clone(), prompts, fields }
}
