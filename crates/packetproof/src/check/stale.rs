//! The conformance gate's account of stale golden files: every case whose
//! `packet::regenerates` found a difference is recorded here while the checks
//! run, and the report shows each distinct change once, grouped by the cases
//! it affects (as the release check groups them), ending with the one command
//! that re-blesses them. Per-case failures then stay one line each.

use super::Mismatch;
use crate::diff::{group, ChangeGroup};
use serde_json::Value;
use std::sync::Mutex;

/// The fastest correct fix after `cargo test` shows stale golden files: bless
/// re-compiles the cases (a second or two) where `PACKETPROOF_BLESS=1 cargo test`
/// would run the whole test suite again. Golden files are written only after the
/// developer has read the grouped diff.
pub const BLESS_COMMAND: &str = "cargo run -- bless";

const LABELS: (&str, &str) = ("golden", "recompiled");

/// Stale cases, collected from checks that may run on several threads.
#[derive(Debug, Default)]
pub struct StaleGoldens {
    found: Mutex<Vec<(String, Value, Value)>>,
}

impl StaleGoldens {
    pub(crate) const fn new() -> StaleGoldens {
        StaleGoldens { found: Mutex::new(Vec::new()) }
    }

    /// Record that `case`'s golden file differs from what the tools produce now. The
    /// name is kept escaped: the report lists it on a line with others.
    pub(crate) fn record(&self, case: &str, mismatch: &Mismatch) {
        let case = crate::report::escape_name(case).into_owned();
        let entry = (case, mismatch.golden_value.clone(), mismatch.produced_value.clone());
        self.lock().push(entry);
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// The distinct changes, largest group first.
    pub(crate) fn groups(&self) -> Vec<ChangeGroup> {
        let mut found = self.lock().clone();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        group(found, LABELS)
    }

    /// Every distinct change once, with the cases it affects, then `command` (the
    /// one that re-blesses them) on the last line. Empty when nothing was recorded.
    pub fn report(&self, command: &str) -> String {
        let groups = self.groups();
        if groups.is_empty() {
            return String::new();
        }
        // A case with two changes is in two groups: count it once.
        let mut names: Vec<&String> = groups.iter().flat_map(|g| &g.cases).collect();
        names.sort();
        names.dedup();
        let cases = names.len();
        let mut text = format!(
            "\nThe golden files of {cases} case(s) are stale: {} distinct change(s) ({} on the left, {} on the right).\n",
            groups.len(),
            LABELS.0,
            LABELS.1
        );
        for (i, g) in groups.iter().enumerate() {
            text.push_str(&format!(
                "\nchange {} of {}, {} case(s): {}\n",
                i + 1,
                groups.len(),
                g.cases.len(),
                g.cases.join(", ")
            ));
            match g.body_text(LABELS) {
                body if body.is_empty() => text.push_str("  only exactInputHash and checksum differ\n"),
                body => text.push_str(&body),
            }
        }
        text.push_str(&format!(
            "\nIf these changes are intended, re-bless the {cases} case(s) (`{command} --review` asks change by change):\n    {command}\n"
        ));
        text
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(String, Value, Value)>> {
        self.found.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{canonical, compile, corpus, provider, Invocation, PacketCheck};
    use std::path::Path;

    /// A copy of the project's sources with golden files written from them.
    fn blessed_copy() -> (tempfile::TempDir, crate::Invocation) {
        let from = Path::new(crate::PROJECT_ROOT);
        let dir = tempfile::tempdir().unwrap();
        for item in ["harness.toml", "references", "fixtures"] {
            for entry in walkdir::WalkDir::new(from.join(item)).into_iter().map(Result::unwrap) {
                let to = dir.path().join(entry.path().strip_prefix(from).unwrap());
                if entry.file_type().is_dir() {
                    std::fs::create_dir_all(&to).unwrap();
                } else {
                    std::fs::copy(entry.path(), &to).unwrap();
                }
            }
        }
        std::fs::create_dir_all(dir.path().join("golden")).unwrap();
        let config = crate::Invocation::from(crate::Config::load(dir.path(), None).unwrap());
        for case in corpus::cases(&config).unwrap().iter().filter(|c| !c.has_own_packet()) {
            let packet = compile::compile(&case.request, &config, &case.name).unwrap();
            std::fs::create_dir_all(&case.golden_dir).unwrap();
            std::fs::write(case.golden_packet(), canonical::to_pretty(&packet)).unwrap();
            let view = provider::agent_request(packet.as_object().unwrap());
            std::fs::write(case.golden_agent_request(), canonical::to_pretty(&view)).unwrap();
        }
        (dir, config)
    }

    /// What the gate does with `packet::regenerates` on every case.
    fn gate(config: &Invocation) -> (StaleGoldens, usize) {
        let stale = StaleGoldens::new();
        let mut failed = 0;
        // Negative cases with a hand-broken packet declare this failure; the gate expects it.
        for case in corpus::cases(config).unwrap().into_iter().filter(|c| !c.has_own_packet()) {
            let packet = case.packet(config).unwrap();
            let origin = Some(crate::judge::Origin::Case(&case));
            let checked = crate::judge::dispatch::on_packet(PacketCheck::Regenerates, &packet, origin, config).unwrap();
            failed += usize::from(!checked.findings.is_empty());
            if let Some(mismatch) = &checked.mismatch {
                stale.record(&case.name, mismatch);
            }
        }
        (stale, failed)
    }

    /// After a one-sentence template edit the gate shows the change once, names
    /// every affected case once, and ends with the command that re-blesses them.
    #[test]
    fn a_template_edit_reads_as_one_change_ending_with_the_bless_command() {
        let (dir, config) = blessed_copy();
        let (stale, failed) = gate(&config);
        assert!(stale.is_empty() && failed == 0, "a fresh bless is not current: {}", stale.report(BLESS_COMMAND));
        let template = dir.path().join("references/prompts/system.md.j2");
        let text = std::fs::read_to_string(&template).unwrap();
        let sentence = "This sentence was added by the stale-report test.";
        std::fs::write(&template, text.replacen('\n', &format!(" {sentence}\n"), 1)).unwrap();
        let (stale, failed) = gate(&config);
        let report = stale.report(BLESS_COMMAND);
        let groups = stale.groups();
        assert_eq!(groups.len(), 1, "{report}");
        assert_eq!(groups[0].cases.len(), failed, "{report}");
        assert!(failed >= 14, "{report}");
        let added = report.lines().filter(|l| l.trim_start().starts_with('+') && l.contains(sentence)).count();
        assert_eq!(added, 1, "the diff is shown more than once:\n{report}");
        for case in &groups[0].cases {
            assert_eq!(report.matches(&format!("{case},")).count() + report.matches(&format!("{case}\n")).count(), 1);
        }
        assert!(report.contains("1 distinct change(s)"), "{report}");
        assert!(report.contains("$.promptVersions[\"system.md.j2\"]"), "{report}");
        assert_eq!(report.trim_end().lines().last().unwrap().trim(), BLESS_COMMAND, "{report}");
    }
}
