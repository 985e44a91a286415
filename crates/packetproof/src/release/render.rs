//! The release report as text (a terminal) or Markdown (a pull-request comment),
//! for their reporters (`crate::reporter`). Text and Markdown say the same things in the same order: the verdict,
//! the base and how it was chosen, the violations, the changed files, the
//! changed cases (the unchanged ones only counted), then each distinct change.
//! Every list of case names is printed once: a violation whose cases are exactly
//! a change's cases refers to that change.

use super::{ChangeKind, ChangedFile, FieldChange, Report, Violation};
use crate::diff::changed_lines;

impl Report {
    /// For a terminal.
    pub(crate) fn text(&self) -> String {
        self.write(false)
    }

    /// For a pull-request comment.
    pub(crate) fn markdown(&self) -> String {
        self.write(true)
    }

    fn write(&self, md: bool) -> String {
        let mut out = String::new();
        let verdict = if self.ok { "passes" } else { "FAILS" };
        let code = |s: &str| if md { format!("`{s}`") } else { s.to_owned() };
        out.push_str(&if md {
            format!("## packetproof release check: {verdict}\n\n")
        } else {
            format!("packetproof release check: {verdict}\n\n")
        });
        let short: String = self.base.commit.chars().take(12).collect();
        out.push_str(&format!("Base: {} ({})\n", code(&short), self.base.chosen_by));
        if self.base.is_head {
            out.push_str(
                "The base is HEAD itself: only uncommitted changes are compared (name another with --base REV).\n",
            );
        }
        out.push('\n');
        for violation in &self.violations {
            out.push_str(&format!("- {}{}\n", if md { ":x: " } else { "" }, self.violation_line(violation, md)));
        }
        if !self.violations.is_empty() {
            out.push('\n');
        }
        self.write_files(&mut out, md);
        self.write_cases(&mut out, md);
        for (i, group) in self.groups.iter().enumerate() {
            let title = format!("Change {} of {}: {} case(s)", i + 1, self.groups.len(), group.cases.len());
            if md {
                out.push_str(&format!("\n### {title}\n"));
                write_group_markdown(&mut out, group);
            } else {
                out.push_str(&format!("\n{title}\n{}", group.body_text(("base", "tree"))));
            }
        }
        out
    }

    /// The violation, then its cases (or the change that lists them) and paths.
    fn violation_line(&self, violation: &Violation, md: bool) -> String {
        let mut line = violation.message.clone();
        if !violation.cases.is_empty() {
            line.push_str(&format!(": {}", self.name_cases(&violation.cases, md)));
        }
        if !violation.paths.is_empty() {
            let paths: Vec<String> =
                violation.paths.iter().map(|p| if md { format!("`{}`", shown(p, md)) } else { shown(p, md) }).collect();
            line.push_str(&format!(" ({})", paths.join(", ")));
        }
        line
    }

    /// A list of cases, by reference when the report already lists exactly them.
    fn name_cases(&self, cases: &[String], md: bool) -> String {
        let sorted = |mut list: Vec<String>| {
            list.sort();
            list
        };
        let wanted = sorted(cases.to_vec());
        if let Some(i) = self.groups.iter().position(|g| sorted(g.cases.clone()) == wanted) {
            return format!("the cases of change {}", i + 1);
        }
        if sorted(self.cases.iter().map(|c| c.case.clone()).collect()) == wanted {
            return format!("all {} case(s) listed under Packets", wanted.len());
        }
        let covering: Vec<usize> =
            (0..self.groups.len()).filter(|i| self.groups[*i].cases.iter().any(|c| wanted.contains(c))).collect();
        let union = sorted(covering.iter().flat_map(|i| self.groups[*i].cases.clone()).collect());
        if covering.len() > 1 && union == wanted {
            let numbers: Vec<String> = covering.iter().map(|i| (i + 1).to_string()).collect();
            return format!("the cases of changes {}", numbers.join(", "));
        }
        cases.iter().map(|c| shown(c, md)).collect::<Vec<_>>().join(", ")
    }

    fn write_files(&self, out: &mut String, md: bool) {
        out.push_str(if md { "### Changed files\n\n" } else { "Changed files:\n" });
        if self.changed_files.is_empty() {
            out.push_str("None.\n");
        }
        let kind = |f: &ChangedFile| {
            serde_json::to_value(f.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
        };
        let (golden, sources): (Vec<&ChangedFile>, Vec<&ChangedFile>) =
            self.changed_files.iter().partition(|f| f.kind == ChangeKind::Golden);
        for file in sources {
            out.push_str(&format!(
                "- {} ({})\n",
                if md { format!("`{}`", shown(&file.path, md)) } else { shown(&file.path, md) },
                kind(file)
            ));
        }
        if !golden.is_empty() && md {
            out.push_str(&format!("- <details><summary>{} golden file(s)</summary>\n\n", golden.len()));
            for file in golden {
                out.push_str(&format!("  - `{}`\n", shown(&file.path, md)));
            }
            out.push_str("  </details>\n");
        } else if !golden.is_empty() {
            out.push_str(&format!("- {} golden file(s)\n", golden.len()));
        }
    }

    /// One row per case with anything to say; the others are counted.
    fn write_cases(&self, out: &mut String, md: bool) {
        let counted = format!("{} case(s) changed, {} unchanged", self.cases.len(), self.unchanged_cases);
        out.push_str(&if md { format!("\n### Packets: {counted}\n\n") } else { format!("\nPackets: {counted}\n") });
        if self.cases.is_empty() {
            return;
        }
        if md {
            out.push_str(
                "| case | change | golden up to date | exactInputHash before | after |\n|---|---|---|---|---|\n",
            );
        }
        for c in &self.cases {
            let hash =
                |h: &Option<String>| h.as_deref().map_or("—".to_owned(), |h| h.chars().take(19).collect::<String>());
            let change = self.groups.iter().position(|g| g.cases.contains(&c.case)).map(|i| (i + 1).to_string());
            let name = if c.new { format!("{} (new)", shown(&c.case, md)) } else { shown(&c.case, md) };
            let current = if c.stale_in_tree { "NO" } else { "yes" };
            let change = change.unwrap_or_else(|| "—".into());
            let (before, after) = (hash(&c.hash_before), hash(&c.hash_after));
            out.push_str(&if md {
                format!("| {name} | {change} | {current} | `{before}` | `{after}` |\n")
            } else {
                format!("- {name}: change {change}, golden up to date: {current}, exactInputHash {before} → {after}\n")
            });
        }
    }
}

/// A case name or path as the report shows it: on one line, with no control or
/// bidirectional character (a name cannot fake a report line or reorder one),
/// and in Markdown unable to end a table cell or a code span.
fn shown(name: &str, md: bool) -> String {
    let name = crate::report::escape_name(name);
    match md {
        true => name.replace('|', "\\|").replace('`', "'"),
        false => name.into_owned(),
    }
}

fn write_group_markdown(out: &mut String, group: &super::ChangeGroup) {
    for (title, diff) in
        [("systemPrompt", &group.system_prompt_diff), ("effectiveUserMessage", &group.effective_user_message_diff)]
    {
        if !diff.is_empty() {
            out.push_str(&format!(
                "\n<details><summary>{title} ({} changed line(s))</summary>\n\n```diff\n{}```\n</details>\n",
                changed_lines(diff).lines().count(),
                diff
            ));
        }
    }
    if !group.field_changes.is_empty() {
        out.push_str("\n<details><summary>other fields</summary>\n\n| field | base | tree |\n|---|---|---|\n");
        for f in &group.field_changes {
            let cell = |v: &Option<serde_json::Value>| {
                v.as_ref().map_or("—".to_owned(), |_| format!("`{}`", FieldChange::shown(v).replace('|', "\\|")))
            };
            out.push_str(&format!("| `{}` | {} | {} |\n", f.path, cell(&f.before), cell(&f.after)));
        }
        out.push_str("</details>\n");
    }
}
