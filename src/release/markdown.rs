//! The release report as Markdown (for a pull-request comment) or JSON.

use super::{ChangeKind, ChangedFile, Report, ReportFormat};
use crate::canonical;
use crate::diff::changed_lines;

impl Report {
    pub fn render(&self, format: ReportFormat) -> String {
        match format {
            ReportFormat::Json => canonical::to_pretty(&serde_json::to_value(self).expect("a report serializes")),
            ReportFormat::Markdown => self.markdown(),
        }
    }

    /// Markdown fit for a pull-request comment; long diffs fold into `<details>`.
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
