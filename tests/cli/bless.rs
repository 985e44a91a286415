//! `packetproof bless`: what it says per case, the review that needs a terminal,
//! and golden folders that belong to no fixture.

use crate::support;
use libtest_mimic::Trial;

const CASES: [&str; 2] = ["google-staged-both-selected", "openai-staged-succ-default"];

/// A project with two fixtures, not blessed yet.
fn project() -> support::Project {
    support::Project::suite(&CASES)
}

fn mtime(path: &std::path::Path) -> std::time::SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

/// What every bless says of the one rule it does not run.
const NOT_DUE: &str =
    "  [packet::regenerates] not applicable: bless writes what the request makes now: there is nothing to regenerate\n";

const PINNED: &str = "pinned    packetproof.lock (the digests of the suite's schema and templates)\n";

/// new the first time, unchanged (and not rewritten) the next, updated after a change.
fn bless_says_new_updated_or_unchanged_and_skips_identical_files() {
    let project = project();
    let out = project.run(&["bless"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    // Each rule that did not run on a blessed packet is named once, with why.
    // The first bless pins the suite's schema and templates in its lock; later ones change nothing there.
    assert_eq!(out.stdout, format!("new       {}\nnew       {}\n{NOT_DUE}{PINNED}", CASES[0], CASES[1]));
    let packet = project.path(&format!("golden/{}/runtime-packet.json", CASES[1]));
    let written = mtime(&packet);
    let out = project.run(&["bless"]);
    assert_eq!(out.stdout, format!("unchanged {}\nunchanged {}\n{NOT_DUE}", CASES[0], CASES[1]), "{}", out.describe());
    assert_eq!(mtime(&packet), written, "an identical file was rewritten");
    let request = project.path(&format!("fixtures/{}/request.json", CASES[1]));
    let text = std::fs::read_to_string(&request).unwrap();
    let tokens = serde_json::from_str::<serde_json::Value>(&text).unwrap()["maxTokens"].as_u64().unwrap();
    std::fs::write(&request, text.replacen(&format!("{tokens}"), &format!("{}", tokens + 1), 1)).unwrap();
    let out = project.run(&["bless"]);
    assert_eq!(out.stdout, format!("unchanged {}\nupdated   {}\n{NOT_DUE}", CASES[0], CASES[1]), "{}", out.describe());
}

/// The review asks on a terminal; with none (a pipe, here) it refuses and writes nothing.
fn review_refuses_without_a_terminal() {
    let project = project();
    let out = project.run(&["bless", "--review"]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains("--review asks on a terminal"), "{}", out.describe());
    assert_eq!(std::fs::read_dir(project.path("golden")).unwrap().count(), 0, "the review wrote without asking");
}

fn unreferenced_golden_folders_are_listed_rejected_or_deleted() {
    let project = project();
    assert_eq!(project.run(&["bless"]).code, 0);
    std::fs::remove_dir_all(project.path(&format!("fixtures/{}", CASES[0]))).unwrap();
    let orphan = project.path(&format!("golden/{}", CASES[0]));
    let warned = project.run(&["bless"]);
    assert_eq!(warned.code, 0, "{}", warned.describe());
    assert_output_snapshot!("bless_unreferenced_warn", warned, project.root());
    let rejected = project.run(&["bless", "--unreferenced", "reject"]);
    assert_eq!(rejected.code, 1, "{}", rejected.describe());
    assert_output_snapshot!("bless_unreferenced_reject", rejected, project.root());
    assert!(orphan.exists());
    let deleted = project.run(&["bless", "--unreferenced", "delete"]);
    assert_eq!(deleted.code, 0, "{}", deleted.describe());
    assert_output_snapshot!("bless_unreferenced_delete", deleted, project.root());
    assert!(!orphan.exists(), "the unreferenced folder is still there");
    assert!(project.path(&format!("golden/{}/runtime-packet.json", CASES[1])).is_file(), "a referenced case went");
    assert_eq!(project.run(&["bless", "--unreferenced", "reject"]).code, 0);
}

/// A request that no longer compiles fails a check: exit 1 (as in every command),
/// naming the file and the rule; a fixture folder that cannot be read is exit 2.
fn a_request_that_does_not_compile_is_exit_1_and_an_unreadable_one_exit_2() {
    let project = project();
    let request = project.path(&format!("fixtures/{}/request.json", CASES[0]));
    let mut value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&request).unwrap()).unwrap();
    value.as_object_mut().unwrap().remove("maxTokens");
    std::fs::write(&request, value.to_string()).unwrap();
    let out = project.run(&["bless"]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert_output_snapshot!("bless_a_request_that_does_not_compile", out, project.root());
    std::fs::write(&request, "{").unwrap();
    let out = project.run(&["bless"]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert_output_snapshot!("bless_an_unreadable_request", out, project.root());
}

/// A value of PACKETPROOF_BLESS that means nothing is refused (exit 2), said once,
/// as the environment variable it is (not as command-line usage).
fn a_bad_bless_variable_is_refused_once() {
    let project = project();
    let out = support::exec(project.bin().env("PACKETPROOF_BLESS", "maybe").arg("bless"));
    assert_eq!(out.code, 2, "{}", out.describe());
    let said = "environment variable PACKETPROOF_BLESS is \"maybe\"; expected 1 or true";
    assert_eq!(out.stderr.matches(said).count(), 1, "{}", out.describe());
    assert!(!out.stderr.contains("usage:"), "{}", out.describe());
}

/// `golden/<case>` that is a symlink leading out of the suite
/// is refused; nothing is written where it leads.
#[cfg(unix)]
fn a_symlinked_golden_case_folder_is_never_written_through() {
    let project = project();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), project.path(&format!("golden/{}", CASES[0]))).unwrap();
    let out = project.run(&["bless"]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains("symlink"), "{}", out.describe());
    let written: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
    assert!(written.is_empty(), "bless wrote outside the suite: {written:?}");
}

#[cfg(not(unix))]
fn a_symlinked_golden_case_folder_is_never_written_through() {}

/// A fixture named with a newline or U+202E is printed escaped.
fn fixture_names_cannot_fake_report_lines() {
    let project = project();
    let evil = "evil\nunchanged everything-is-fine\u{202e}txt.exe";
    let request = format!("fixtures/{}/request.json", CASES[0]);
    support::copy_tree(&support::root().join(&request), &project.path(&format!("fixtures/{evil}/request.json")));
    let out = project.run(&["bless"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(
        out.stdout.contains("new       evil\\u{a}unchanged everything-is-fine\\u{202e}txt.exe\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.lines().any(|l| l.starts_with("unchanged")), "{}", out.stdout);
    assert!(!out.stdout.contains('\u{202e}'), "{}", out.stdout);
}

/// Add one to a case's maxTokens: its golden files are then stale, both of them.
fn edit_request(project: &support::Project, case: &str) {
    let request = project.path(&format!("fixtures/{case}/request.json"));
    let text = std::fs::read_to_string(&request).unwrap();
    let tokens = serde_json::from_str::<serde_json::Value>(&text).unwrap()["maxTokens"].as_u64().unwrap();
    std::fs::write(&request, text.replacen(&format!("{tokens}"), &format!("{}", tokens + 1), 1)).unwrap();
}

/// The temp files of this crate's writes in `dir`.
fn temps(dir: &std::path::Path) -> Vec<String> {
    let names = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
    names.filter(|n| n.starts_with(".packetproof-")).collect()
}

/// A case's two golden files are written whole or not at all: when one of them
/// cannot be written (here agent-request.json is a folder, which is never
/// replaced), the other is left as it was, and no temp file stays behind.
fn a_case_is_written_whole_or_not_at_all() {
    let project = project();
    assert_eq!(project.run(&["bless"]).code, 0);
    let folder = project.path(&format!("golden/{}", CASES[1]));
    let packet = std::fs::read(folder.join("runtime-packet.json")).unwrap();
    edit_request(&project, CASES[1]);
    std::fs::remove_file(folder.join("agent-request.json")).unwrap();
    std::fs::create_dir(folder.join("agent-request.json")).unwrap();
    let out = project.run(&["bless", CASES[1]]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains("only a regular file is ever replaced"), "{}", out.describe());
    assert!(std::fs::read(folder.join("runtime-packet.json")).unwrap() == packet, "half a case was written");
    assert!(temps(&folder).is_empty(), "{:?}", temps(&folder));
}

/// What a bless killed mid-write leaves (a new packet beside the old agent view, and
/// a temp file) fails `verify golden` and the gate, and the next bless of the case
/// makes it whole and removes the temp file.
fn a_killed_bless_is_found_by_verify_and_test_and_undone_by_the_next_bless() {
    let project = project();
    assert_eq!(project.run(&["bless"]).code, 0);
    let folder = project.path(&format!("golden/{}", CASES[1]));
    let old_view = std::fs::read(folder.join("agent-request.json")).unwrap();
    edit_request(&project, CASES[1]);
    assert_eq!(project.run(&["bless"]).code, 0);
    std::fs::write(folder.join("agent-request.json"), old_view).unwrap();
    let temp = folder.join(".packetproof-4242-dead-0.tmp");
    std::fs::write(&temp, b"half a packet").unwrap();
    let golden = project.path("golden");
    let verify = project.run(&["verify", golden.to_str().unwrap()]);
    assert_eq!(verify.code, 1, "{}", verify.describe());
    assert!(verify.stdout.contains("[golden::agent-request]"), "{}", verify.stdout);
    let found = format!("[corpus::layout] {}: ", temp.display());
    assert!(verify.stdout.contains(&found), "{}", verify.stdout);
    let gate = project.run(&["test", "--exact", "corpus::layout"]);
    assert_eq!(gate.code, 101, "{}", gate.describe());
    assert!(gate.stdout.contains(&found), "{}", gate.stdout);
    let out = project.run(&["bless"]);
    assert_eq!(out.stdout, format!("unchanged {}\nupdated   {}\n{NOT_DUE}", CASES[0], CASES[1]), "{}", out.describe());
    assert!(!temp.exists(), "the next bless left the temp file");
    assert_eq!(project.run(&["verify", golden.to_str().unwrap()]).code, 0);
    assert_eq!(project.run(&["test", "--exact", "corpus::layout"]).code, 0);
}

pub fn trials() -> Vec<Trial> {
    trials![
        a_case_is_written_whole_or_not_at_all,
        a_killed_bless_is_found_by_verify_and_test_and_undone_by_the_next_bless,
        a_bad_bless_variable_is_refused_once,
        a_request_that_does_not_compile_is_exit_1_and_an_unreadable_one_exit_2,
        bless_says_new_updated_or_unchanged_and_skips_identical_files,
        review_refuses_without_a_terminal,
        unreferenced_golden_folders_are_listed_rejected_or_deleted,
        a_symlinked_golden_case_folder_is_never_written_through,
        fixture_names_cannot_fake_report_lines,
    ]
}
