//! The interop gate itself: a test whose `../shared` corpus is absent is ignored on
//! a developer's checkout and fails under CI; a present corpus runs the test. And the
//! one policy for what else a machine may lack (`support::needs`): the same, except
//! that CI may name what it does not install, with why.

use crate::support;
use libtest_mimic::{Arguments, Conclusion, Trial};
use std::path::Path;

/// Run one gated trial (a passing one) and return the counts. Its report goes to a
/// log file, so that this suite's own output shows no inner "FAILED".
fn run(ci: bool, present: bool) -> Conclusion {
    let trial = support::gate(ci, Trial::test("gated", || Ok(())), present, Path::new("/nonexistent/interop"));
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let logfile = Some(log.path().display().to_string());
    let quiet = Arguments { quiet: true, test_threads: Some(1), logfile, ..Arguments::default() };
    libtest_mimic::run(&quiet, vec![trial])
}

fn an_absent_corpus_fails_under_ci_and_is_ignored_elsewhere() {
    let under_ci = run(true, false);
    assert_eq!((under_ci.num_failed, under_ci.num_passed, under_ci.num_ignored), (1, 0, 0));
    let local = run(false, false);
    assert_eq!((local.num_failed, local.num_passed, local.num_ignored), (0, 0, 1));
    for ci in [true, false] {
        let present = run(ci, true);
        assert_eq!((present.num_failed, present.num_passed, present.num_ignored), (0, 1, 0));
    }
}

/// Run one trial through `support::needs_under` and return the counts.
fn needing(ci: bool, without: Option<&str>, missing: Option<&str>) -> (u64, u64, u64) {
    let trial = Trial::test("needing", || Ok(()));
    let trial = support::needs_under(ci, without, "a-tool", missing.map(str::to_owned), trial);
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let logfile = Some(log.path().display().to_string());
    let quiet = Arguments { quiet: true, test_threads: Some(1), logfile, ..Arguments::default() };
    let done = libtest_mimic::run(&quiet, vec![trial]);
    (done.num_failed, done.num_passed, done.num_ignored)
}

fn a_missing_tool_fails_under_ci_unless_ci_says_why_it_does_not_install_it() {
    let absent = Some("a-tool not found");
    assert_eq!(needing(true, None, absent), (1, 0, 0), "CI must install it");
    assert_eq!(needing(true, Some("other: not here"), absent), (1, 0, 0), "another tool's reason is not its");
    assert_eq!(needing(true, Some("a-tool:  "), absent), (1, 0, 0), "a blank reason is none");
    assert_eq!(needing(true, Some("other: x; a-tool: a release build"), absent), (0, 0, 1));
    assert_eq!(needing(false, None, absent), (0, 0, 1), "a developer's machine ignores it");
    for ci in [true, false] {
        assert_eq!(needing(ci, None, None), (0, 1, 0), "present, it runs");
    }
}

pub fn trials() -> Vec<Trial> {
    trials![
        an_absent_corpus_fails_under_ci_and_is_ignored_elsewhere,
        a_missing_tool_fails_under_ci_unless_ci_says_why_it_does_not_install_it
    ]
}
