//! The release page over a hostile change: every case name and prompt line escaped.

use super::*;
use crate::release::{Base, CaseReport, Report};
use serde_json::json;

const HOSTILE_CASE: &str = "case<script>alert(1)</script>\u{202E}\nnext";

fn report() -> Report {
    let before = json!({"systemPrompt": "Say hello.\nKeep it short.\n", "effectiveUserMessage": "same\n"});
    let after = json!({"systemPrompt": "Say <script>x</script> \u{202E}olleh.\nKeep it short.\n", "effectiveUserMessage": "same\n"});
    Report {
        base: Base { commit: "0".repeat(40), chosen_by: "--base main".into(), is_head: false },
        ok: false,
        changed_files: Vec::new(),
        cases: vec![CaseReport {
            case: HOSTILE_CASE.into(),
            changed_from_base: true,
            stale_in_tree: true,
            golden_changed: false,
            new: false,
            hash_before: Some("sha256:aa".into()),
            hash_after: Some("sha256:bb".into()),
            compile_error: None,
        }],
        unchanged_cases: 0,
        groups: crate::diff::group(vec![(HOSTILE_CASE.into(), before, after)], ("base", "tree")),
        violations: Vec::new(),
        exporter_files: Vec::new(),
        verdicts: Vec::new(),
        lock: Vec::new(),
    }
}

#[test]
fn the_release_page_escapes_case_names_and_prompt_text() {
    let html = release_report(&report()).unwrap();
    assert!(is_report(&html));
    assert!(!html.contains("<script") && !html.contains('\u{202E}'), "{html}");
    let name = "case&lt;script&gt;alert(1)&lt;/script&gt;\\u{202e}\\u{a}next";
    assert!(html.contains(&format!("<tr data-case=\"{name}\">")), "{html}");
    assert!(html.contains("<del>hello.</del>"), "{html}");
    assert!(html.contains("<ins>&lt;script&gt;x&lt;/script&gt; \\u{202e}olleh.</ins>"), "{html}");
    assert!(html.contains("<span class=\"verdict fail\">✗ FAILS</span>"), "{html}");
    assert!(html.contains("<td class=\"failed\">✗ no</td>"), "{html}");
    // Only the changed prompt is shown side by side.
    assert!(html.contains("<code>systemPrompt</code>") && !html.contains("<code>effectiveUserMessage</code>"));
}

/// The verdicts, exporter files and lock pins that changed are on the page, escaped, as
/// in the text and Markdown reports.
#[test]
fn the_release_page_shows_changed_verdicts_exporter_files_and_lock_pins() {
    let mut report = report();
    report.verdicts = vec![crate::release::VerdictChange {
        case: HOSTILE_CASE.into(),
        before: "passes".into(),
        after: "fails at stage \"<b>\" (1 failure(s))".into(),
    }];
    report.exporter_files = vec![crate::release::ExporterFile {
        path: "app/x<y>.py".into(),
        before: None,
        after: Some("sha256:cc".into()),
    }];
    report.lock =
        vec![crate::lock::PinChange { file: "prompts/a.txt".into(), before: Some("sha256:dd".into()), after: None }];
    let html = release_report(&report).unwrap();
    assert!(!html.contains("<b>") && !html.contains('\u{202E}'), "{html}");
    assert!(html.contains("<h2>Evaluator verdicts (golden)</h2>"), "{html}");
    assert!(html.contains("<td>fails at stage &quot;&lt;b&gt;&quot; (1 failure(s))</td>"), "{html}");
    assert!(html.contains("<td><code>app/x&lt;y&gt;.py</code></td><td class=\"hash\">—</td>"), "{html}");
    let pin = "<td><code>prompts/a.txt</code></td><td class=\"hash\"><code>sha256:dd</code></td><td class=\"hash\">not pinned</td>";
    assert!(html.contains(pin), "{html}");
}

#[test]
fn only_a_packetproof_report_counts_as_one() {
    assert!(is_report(&format!("<!DOCTYPE html>\n<html>{GENERATOR}")));
    assert!(!is_report("<!DOCTYPE html><p>mine</p>"));
    assert!(!is_report(&format!("notes {GENERATOR}")));
}
