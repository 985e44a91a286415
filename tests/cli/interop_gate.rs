//! The interop gate itself: a test whose `../shared` corpus is absent is ignored on
//! a developer's checkout and fails under CI; a present corpus runs the test.

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

pub fn trials() -> Vec<Trial> {
    trials![an_absent_corpus_fails_under_ci_and_is_ignored_elsewhere]
}
