//! The HTML reports: `packetproof test --report FILE.html` and `release-check
//! --format html`, read as text (every fixture, the matrix, each trial's state,
//! hostile names escaped, the output rule), then in headless Chromium (the
//! rendered DOM and a screenshot; ignored, with the reason, where
//! /usr/bin/chromium is absent).

use crate::support;
use libtest_mimic::Trial;
use std::path::{Path, PathBuf};
use std::process::Command;

const CASE: &str = "openai-staged-alone-selected";
/// A fixture name that would open a tag, reverse the text after it and break a line.
const HOSTILE: &str = "x<script>alert(1)\u{202E}\n-staged-end";
/// The filter that selects every fixture's trials and no corpus-wide one.
const FIXTURE_TRIALS: &str = "staged-";
/// The cells of the matrix: every value of every resolvedBranch field (2+2+3+4+2+2+2+2) by 3 providers.
const MATRIX_CELLS: usize = 19 * 3;
const CHROMIUM: &str = "/usr/bin/chromium";

/// An init suite whose Google fixture carries [`HOSTILE`] as its name and whose
/// [`CASE`] golden packet is broken (its checksum no longer holds).
fn hostile_suite(folder: &crate::support::Project) -> PathBuf {
    let suite = folder.init();
    for dir in ["fixtures", "golden"] {
        std::fs::rename(suite.join(dir).join("google-staged-both-selected"), suite.join(dir).join(HOSTILE)).unwrap();
    }
    let golden = suite.join(format!("golden/{CASE}/runtime-packet.json"));
    let text = std::fs::read_to_string(&golden).unwrap();
    std::fs::write(&golden, text.replacen("\"maxTokens\": ", "\"maxTokens\": 1", 1)).unwrap();
    suite
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

fn test_report_shows_the_matrix_and_every_trials_state() {
    let folder = crate::support::Project::empty();
    let suite = hostile_suite(&folder);
    // Every fixture's trials run (its self-test included); the corpus-wide ones are filtered out.
    let out = folder.run_in("suite", &["test", FIXTURE_TRIALS, "--report", "report.html"]);
    assert_eq!(out.code, 101, "{}", out.describe());
    let html = std::fs::read_to_string(suite.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<title>packetproof test: FAILED</title>"));
    assert_eq!(count(&html, "data-cell="), MATRIX_CELLS, "{html}");
    assert_eq!(count(&html, "<tr data-fixture="), 3);
    // 10 packet checks, 9 run checks and the self-test per fixture, and 5 corpus-wide checks.
    assert_eq!(count(&html, "data-state="), 3 * 20 + 5, "{html}");
    for name in
        ["anthropic-staged-both-selected-interop-shape", CASE, "x&lt;script&gt;alert(1)\\u{202e}\\u{a}-staged-end"]
    {
        assert!(html.contains(&format!("<tr data-fixture=\"{name}\">")), "{name} missing");
        assert!(html.contains(&format!("<li>{name}</li>")), "{name} covers nothing in the matrix");
    }
    assert!(!html.contains("<script") && !html.contains('\u{202E}'), "a name reached the page raw");
    assert!(html.contains("✗ failed<span class=\"detail\">[packet::checksum]"), "{html}");
    let skipped = "○ skipped<span class=\"detail\">not applicable: the fixture&#39;s run/ has no provider-request.json";
    assert!(html.contains(skipped), "{html}");
    let not_run =
        "<th scope=\"row\"><code>corpus::layout</code></th><td class=\"state not-run\" data-state=\"not-run\"";
    assert!(html.contains(not_run), "{html}");
    assert!(html.contains("✓ 40 passed, ✗ 11 failed, ○ 9 skipped, · 5 not-run."), "{html}");
    // One answer: the gaps the page counts are the ones corpus::branch-coverage names.
    // (init's suite turns the check off while it is small; turned on, it names the same gaps.)
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    let on = settings.replace("require_branch_coverage = false", "require_branch_coverage = true");
    assert_ne!(on, settings);
    std::fs::write(suite.join("harness.toml"), on).unwrap();
    let coverage = folder.run_in("suite", &["test", "corpus::branch-coverage"]);
    let named: Vec<&str> = coverage.stdout.lines().filter(|l| l.contains("[corpus::branch-coverage]")).collect();
    assert_eq!(coverage.code, 101, "{}", coverage.describe());
    assert!(html.contains(&format!("<strong>{} gap(s)</strong>", named.len())), "{html}");
    // The paragraph above the table counts them and lists none (round 6: 62 pairs there);
    // each is a marked cell's title or an item of the list below the table.
    let (above, below) = html.split_once("<table class=\"matrix\"").unwrap();
    let above = &above[above.find("<section id=\"coverage\">").unwrap()..];
    let listed = count(below, "<li data-gap>");
    for line in &named {
        let gap = line.split_once("no golden packet covers ").map_or(*line, |(_, gap)| gap.trim_end());
        let gap = gap.replace('"', "&quot;");
        assert!(!above.contains(&gap), "{gap} is listed above the table: {above}");
        let in_cell =
            below.split("title=\"").skip(1).any(|t| t.split('"').next().unwrap().split("; ").any(|g| g == gap));
        assert!(in_cell != below.contains(&format!("<li data-gap>{gap}</li>")), "{gap}: a cell's or listed: {html}");
    }
    let marked = named.len() - listed;
    assert!(above.contains(&format!("{marked} marked ∅ gap in the table")), "{above}");
    assert!(listed == 0 || above.contains(&format!("and {listed} listed below it")), "{above}");
}

fn the_report_is_written_only_where_the_output_rule_allows() {
    let folder = crate::support::Project::empty();
    let suite = folder.init();
    let settings = std::fs::read(suite.join("harness.toml")).unwrap();
    std::fs::write(suite.join("notes.html"), "<p>mine</p>").unwrap();
    let mut transcript = String::new();
    for target in
        ["harness.toml", "notes.html", "golden/report.html", "fixtures/report.html", "references/prompts/report.html"]
    {
        let out = folder.run_in("suite", &["test", "packet::checksum", "--report", target]);
        assert_eq!(out.code, 2, "{target}: {}", out.describe());
        assert!(!out.stdout.contains("running"), "{target}: refused before any trial ran: {}", out.stdout);
        transcript.push_str(&format!("=== --report {target}\n{}\n", out.describe()));
    }
    assert_output_snapshot!(text: "test_report_refusals", transcript, folder.root());
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(suite.join("harness.toml"), suite.join("link.html")).unwrap();
        let out = folder.run_in("suite", &["test", "packet::checksum", "--report", "link.html"]);
        assert_eq!(out.code, 2, "{}", out.describe());
    }
    let out = folder.run_in("suite", &["test", "packet::checksum", "--report", "a.html", "--junit", "a.html"]);
    assert!(out.code == 2 && out.stderr.contains("--report and --junit both name a.html"), "{}", out.describe());
    assert_eq!(std::fs::read(suite.join("harness.toml")).unwrap(), settings);
    assert_eq!(std::fs::read_to_string(suite.join("notes.html")).unwrap(), "<p>mine</p>");
    assert!(!suite.join("golden/report.html").exists());
    // Its own earlier report is replaced.
    for _ in 0..2 {
        let out = folder.run_in("suite", &["test", "packet::checksum", "--report", "out.html"]);
        assert_eq!(out.code, 0, "{}", out.describe());
    }
}

/// An init suite under git, its system prompt edited (`bless`: and re-blessed).
#[track_caller]
fn edited_repository(folder: &crate::support::Project, bless: bool) -> PathBuf {
    let suite = folder.init();
    let git = |args: &[&str]| support::git(&suite, args);
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    let template = suite.join("references/prompts/system.md.j2");
    let text = std::fs::read_to_string(&template).unwrap();
    std::fs::write(&template, text.replacen("You adapt one block", "You carefully adapt one <block>", 1)).unwrap();
    if bless {
        assert_eq!(folder.run_in("suite", &["bless"]).code, 0);
    }
    suite
}

fn release_check_html_shows_each_change_side_by_side() {
    let folder = crate::support::Project::empty();
    edited_repository(&folder, true);
    let out = folder.run_in("suite", &["release-check", "--format", "html"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    let html = out.stdout;
    assert!(html.contains("<span class=\"verdict pass\">✓ passes</span>"), "{html}");
    assert!(html.contains("<li><code>references/prompts/system.md.j2</code></li>"), "{html}");
    assert!(html.contains("<h2>Change 1 of 1: 3 case(s)</h2>"), "{html}");
    assert_eq!(count(&html, "<tr data-case="), 3);
    assert_eq!(count(&html, "<td class=\"hash\"><code>sha256:"), 8, "every hash before and after, and the lock's pins");
    let lock =
        html.split("<table id=\"lock\">").nth(1).expect("the lock's changed pins").split("</table>").next().unwrap();
    assert_eq!(count(lock, "<tr><td><code>references/prompts/system.md.j2</code></td>"), 1, "{lock}");
    // Word level: on the left the old words, on the right the added ones, escaped.
    assert!(html.contains("<td class=\"old changed\">You adapt one <del>block</del> of a screen"), "{html}");
    let new = "<td class=\"new changed\">You <ins>carefully </ins>adapt one <ins>&lt;block&gt;</ins> of a screen";
    assert!(html.contains(new), "{html}");
    assert!(!html.contains("<block>"));

    let folder = crate::support::Project::empty();
    edited_repository(&folder, false);
    let out = folder.run_in("suite", &["release-check", "--format", "html"]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stdout.contains("<span class=\"verdict fail\">✗ FAILS</span>"), "{}", out.stdout);
    assert!(out.stdout.contains("golden packets are not re-blessed for 3 case(s)"), "{}", out.stdout);
    assert!(out.stdout.contains("<td class=\"failed\">✗ no</td>"), "{}", out.stdout);
}

/// Chromium with nothing of its own running: no network, no sync, a fresh profile.
fn chromium(profile: &Path, args: &[&str]) -> std::process::Output {
    Command::new(CHROMIUM)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        .args(["--disable-component-update", "--disable-sync", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("run chromium")
}

/// The DOM Chromium built from `page`, and a screenshot of it kept as `shot`.
#[track_caller]
fn render(page: &Path, shot: &Path) -> String {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", page.display());
    let dom = chromium(profile.path(), &["--dump-dom", &url]);
    assert!(dom.status.success(), "chromium: {}", String::from_utf8_lossy(&dom.stderr));
    let size = "--window-size=1400,1800";
    let shot_arg = format!("--screenshot={}", shot.display());
    let out = chromium(profile.path(), &[size, &shot_arg, &url]);
    assert!(out.status.success() && shot.is_file(), "screenshot: {}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read(shot).unwrap().starts_with(b"\x89PNG"), "{} is not a PNG", shot.display());
    // Printable: Chromium lays it out for paper (the page's @media print).
    let pdf = shot.with_extension("pdf");
    let out = chromium(profile.path(), &[&format!("--print-to-pdf={}", pdf.display()), "--no-pdf-header-footer", &url]);
    assert!(out.status.success(), "print: {}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read(&pdf).unwrap().starts_with(b"%PDF-"), "{} is not a PDF", pdf.display());
    String::from_utf8(dom.stdout).unwrap()
}

/// Nothing in the page reaches out: no URL, no script, no external asset.
#[track_caller]
fn assert_offline(dom: &str) {
    for outside in ["http:", "https:", "file:", "<script", "<link", "<img", "<iframe", " src=", "url(", "@import"] {
        assert!(!dom.contains(outside), "the page holds {outside:?}:\n{dom}");
    }
}

fn both_reports_render_in_chromium() {
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html");
    std::fs::create_dir_all(&shots).unwrap();
    let folder = crate::support::Project::empty();
    let suite = hostile_suite(&folder);
    assert_eq!(folder.run_in("suite", &["test", FIXTURE_TRIALS, "--report", "report.html"]).code, 101);
    let dom = render(&suite.join("report.html"), &shots.join("test.png"));
    assert_offline(&dom);
    assert_eq!(count(&dom, "data-cell="), MATRIX_CELLS, "the matrix is complete in the DOM");
    for name in
        ["anthropic-staged-both-selected-interop-shape", CASE, "x&lt;script&gt;alert(1)\\u{202e}\\u{a}-staged-end"]
    {
        assert_eq!(count(&dom, &format!("<tr data-fixture=\"{name}\">")), 1, "{name} in the DOM:\n{dom}");
    }
    assert_eq!(count(&dom, "<script"), 0, "no script element came out of a fixture name");

    let folder = crate::support::Project::empty();
    let suite = edited_repository(&folder, true);
    let out = folder.run_in("suite", &["release-check", "--format", "html"]);
    let page = suite.parent().unwrap().join("release.html");
    std::fs::write(&page, out.stdout).unwrap();
    let dom = render(&page, &shots.join("release.png"));
    assert_offline(&dom);
    assert_eq!(count(&dom, "<tr data-case="), 3);
    assert!(dom.contains("<ins>&lt;block&gt;</ins>"), "{dom}");
}

/// The browser test, through the one policy for what a machine may lack.
fn needs_chromium(name: String, test: fn()) -> Trial {
    let missing =
        (!Path::new(CHROMIUM).is_file()).then(|| format!("{CHROMIUM} is absent (Debian: apt-get install chromium)"));
    crate::support::needs("chromium", missing, crate::support::trial(name, test))
}

pub fn trials() -> Vec<Trial> {
    let mut trials = trials![
        test_report_shows_the_matrix_and_every_trials_state,
        the_report_is_written_only_where_the_output_rule_allows,
        release_check_html_shows_each_change_side_by_side,
    ];
    let name = support::test_name(module_path!(), "both_reports_render_in_chromium");
    trials.push(needs_chromium(name, both_reports_render_in_chromium));
    trials
}
