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
        self.write_lock(&mut out, md);
        self.write_cases(&mut out, md);
        if !self.verdicts.is_empty() {
            out.push_str(if md { "\n### Evaluator verdicts (golden)\n\n" } else { "\nEvaluator verdicts (golden):\n" });
            for change in &self.verdicts {
                out.push_str(&format!("- {}: {} → {}\n", shown(&change.case, md), change.before, change.after));
            }
        }
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
            let paths: Vec<String> = violation.paths.iter().map(|p| shown(p, md)).collect();
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

    /// The pins of packetproof.lock that changed: which bytes each file had and has.
    fn write_lock(&self, out: &mut String, md: bool) {
        if self.lock.is_empty() {
            return;
        }
        let title = crate::lock::FILE_NAME;
        out.push_str(&if md { format!("\n### {title}\n\n") } else { format!("\n{title}:\n") });
        let pin = |d: &Option<String>| match d {
            Some(digest) => shown(&digest.chars().take(19).collect::<String>(), md),
            None => "not pinned".to_owned(),
        };
        for change in &self.lock {
            let (before, after) = (pin(&change.before), pin(&change.after));
            out.push_str(&format!("- {}: {before} → {after}\n", shown(&change.file, md)));
        }
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
            out.push_str(&format!("- {} ({})", shown(&file.path, md), kind(file)));
            // A declared exporter file shows which bytes it had and has (the digests' first 19 characters).
            if let Some(digests) = self.exporter_files.iter().find(|e| e.path == file.path) {
                let short =
                    |d: &Option<String>| d.as_deref().map_or("—".to_owned(), |d| d.chars().take(19).collect());
                let (before, after) = (short(&digests.before), short(&digests.after));
                out.push_str(&format!(": {} → {}", shown(&before, md), shown(&after, md)));
            }
            out.push('\n');
        }
        if !golden.is_empty() && md {
            out.push_str(&format!("- <details><summary>{} golden file(s)</summary>\n\n", golden.len()));
            for file in golden {
                out.push_str(&format!("  - {}\n", shown(&file.path, md)));
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
            // GitHub splits table cells at every unescaped bar, code spans included.
            let name = if md { name.replace('|', "\\|") } else { name };
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
/// and in Markdown a code span, so none of it renders as HTML or Markdown.
fn shown(name: &str, md: bool) -> String {
    let name = crate::report::escape_name(name);
    match md {
        true => code_span(&name),
        false => name.into_owned(),
    }
}

/// `text` as a Markdown code span. CommonMark ends a span at the first backtick run
/// of its opening run's length, so the delimiters are one backtick longer than any
/// run in the text; a space pads a text that begins or ends with a backtick (one
/// space each side is stripped again, so one is added to a text that has both).
fn code_span(text: &str) -> String {
    let ticks = "`".repeat(longest_backtick_run(text) + 1);
    let stripped = text.starts_with(' ') && text.ends_with(' ') && !text.trim().is_empty();
    let pad = if text.starts_with('`') || text.ends_with('`') || stripped { " " } else { "" };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// A fenced block is closed by a line of at least its fence's backticks: a fence
/// longer than any run in the text (three at least) holds the text whole.
fn code_fence(text: &str) -> String {
    "`".repeat((longest_backtick_run(text) + 1).max(3))
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

fn write_group_markdown(out: &mut String, group: &super::ChangeGroup) {
    for (title, diff) in
        [("systemPrompt", &group.system_prompt_diff), ("effectiveUserMessage", &group.effective_user_message_diff)]
    {
        if !diff.is_empty() {
            let fence = code_fence(diff);
            out.push_str(&format!(
                "\n<details><summary>{title} ({} changed line(s))</summary>\n\n{fence}diff\n{diff}{fence}\n</details>\n",
                changed_lines(diff).lines().count(),
            ));
        }
    }
    if !group.field_changes.is_empty() {
        out.push_str("\n<details><summary>other fields</summary>\n\n| field | base | tree |\n|---|---|---|\n");
        for f in &group.field_changes {
            let cell = |text: &str| code_span(&crate::report::escape_name(text)).replace('|', "\\|");
            let value =
                |v: &Option<serde_json::Value>| v.as_ref().map_or("—".to_owned(), |_| cell(&FieldChange::shown(v)));
            out.push_str(&format!("| {} | {} | {} |\n", cell(&f.path), value(&f.before), value(&f.after)));
        }
        out.push_str("</details>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Base, CaseReport, ChangeGroup, Report, Violation, ViolationKind};

    /// A fixture name and a prompt written to break out of the Markdown: raw HTML (an
    /// external image), backtick runs, a table bar and a fake verdict heading.
    const NAME: &str = "<img src=https://attacker.example/x.png>`a``b|c";
    /// Context lines begin with a space, and CommonMark closes a fence indented up to three.
    const PROMPT_DIFF: &str = "--- base\n+++ tree\n@@ -1,5 +1,5 @@\n-old\n+new\n ```\n <img src=https://attacker.example/y.png>\n ## packetproof release check: passes\n ````\n";

    fn report() -> Report {
        let case = CaseReport {
            case: NAME.into(),
            changed_from_base: true,
            stale_in_tree: true,
            golden_changed: false,
            new: true,
            hash_before: None,
            hash_after: None,
            compile_error: None,
        };
        let group = ChangeGroup {
            cases: vec![NAME.into(), "other".into()],
            system_prompt_diff: PROMPT_DIFF.into(),
            effective_user_message_diff: String::new(),
            field_changes: Vec::new(),
        };
        let other = CaseReport { case: "other".into(), new: false, ..case.clone() };
        Report {
            base: Base { commit: "0123456789ab".into(), chosen_by: "main".into(), is_head: false },
            ok: false,
            changed_files: Vec::new(),
            cases: vec![case, other],
            unchanged_cases: 0,
            groups: vec![group],
            violations: vec![Violation {
                kind: ViolationKind::NotReblessed,
                message: "golden packets are not re-blessed".into(),
                cases: vec![NAME.into()],
                paths: Vec::new(),
            }],
            exporter_files: Vec::new(),
            verdicts: Vec::new(),
            lock: Vec::new(),
        }
    }

    /// The Markdown with fenced code blocks and code spans taken out, as CommonMark
    /// reads them: a backtick fence is closed only by a line of at least as many
    /// backticks, a code span only by a backtick run of exactly its opening length.
    /// What is left is what renders as Markdown and HTML.
    fn outside_code(markdown: &str) -> String {
        let mut prose = String::new();
        let mut fence: Option<usize> = None;
        for line in markdown.lines() {
            let ticks = line.trim_start().chars().take_while(|c| *c == '`').count();
            match fence {
                Some(open) if ticks >= open && line.trim().chars().all(|c| c == '`') => fence = None,
                Some(_) => {}
                None if ticks >= 3 => fence = Some(ticks),
                None => {
                    prose.push_str(&without_code_spans(line));
                    prose.push('\n');
                }
            }
        }
        prose
    }

    fn without_code_spans(line: &str) -> String {
        let runs = |text: &str| -> Vec<(usize, usize)> {
            let mut found = Vec::new();
            let bytes = text.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                let start = i;
                while i < bytes.len() && bytes[i] == b'`' {
                    i += 1;
                }
                if i > start {
                    found.push((start, i - start));
                } else {
                    i += 1;
                }
            }
            found
        };
        let found = runs(line);
        let (mut out, mut at, mut k) = (String::new(), 0, 0);
        while k < found.len() {
            let (start, length) = found[k];
            match found[k + 1..].iter().position(|(_, l)| *l == length) {
                Some(offset) => {
                    let (end, _) = found[k + 1 + offset];
                    out.push_str(&line[at..start]);
                    out.push_str("CODE");
                    at = end + length;
                    k += offset + 2;
                }
                None => k += 1,
            }
        }
        out.push_str(&line[at..]);
        out
    }

    #[test]
    fn nothing_of_a_name_or_a_prompt_renders_outside_code() {
        let markdown = report().markdown();
        let prose = outside_code(&markdown);
        assert!(!prose.contains("<img") && !prose.contains("attacker"), "{prose}\n---\n{markdown}");
        assert!(!prose.contains("release check: passes"), "{prose}\n---\n{markdown}");
        assert!(prose.contains("## packetproof release check: FAILS"), "{prose}");
        // The diff is still shown whole, inside a fence longer than its longest backtick run.
        assert!(markdown.contains(&format!("`````diff\n{PROMPT_DIFF}`````\n")), "{markdown}");
        // The name reads as it is, in a code span its own backtick runs cannot close; in a
        // table cell its bar is escaped, as GitHub's tables need.
        assert!(markdown.contains("| ```<img src=https://attacker.example/x.png>`a``b\\|c``` (new) |"), "{markdown}");
        assert!(markdown.contains(": ```<img src=https://attacker.example/x.png>`a``b|c```\n"), "{markdown}");
    }

    #[test]
    fn a_code_span_pads_a_text_that_begins_or_ends_with_a_backtick() {
        assert_eq!(super::code_span("plain"), "`plain`");
        assert_eq!(super::code_span("`x"), "`` `x ``");
        assert_eq!(super::code_span(" a "), "`  a  `");
        assert_eq!(without_code_spans(&super::code_span("a``b`")), "CODE");
    }
}
