//! The self-test's own tests: mutations that leave the meaning skipped, every mutation caught, an intact packet or run that fails named first.

use super::*;
use crate::judge::fixture_run::assemble_run;

/// An `init` suite and its first case (shared with the equivalence tests).
pub(super) fn suite() -> (tempfile::TempDir, crate::Invocation, Case) {
    let dir = tempfile::tempdir().unwrap();
    crate::init::init(dir.path(), crate::bless::GoldenWrites::OnCommand, None).unwrap();
    let config = crate::Invocation::from(crate::Config::load(dir.path(), None).unwrap());
    let case = crate::corpus::cases(&config).unwrap().remove(0);
    (dir, config, case)
}

pub(super) fn golden(case: &Case, config: &Invocation) -> Map<String, Value> {
    case.packet(config).unwrap().as_object().unwrap().clone()
}

/// A packet that keeps a blank operatorInstruction (as the reference's exporter
/// writes it) means the same without it: removing it is skipped, saying why, and
/// is not demanded of packet::branch-consistency. Nothing else is skipped.
#[test]
fn a_mutation_that_leaves_the_meaning_is_skipped_and_named() {
    let config = crate::Invocation::from(crate::Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap());
    let case = corpus::cases(&config).unwrap().into_iter().find(|c| c.name == "anthropic-staged-both-no-evidence");
    let case = case.unwrap();
    let mut golden = golden(&case, &config);
    assert_eq!(golden["resolvedBranch"]["operatorInstructionPresent"], false);
    golden["renderInput"].as_object_mut().unwrap().insert("operatorInstruction".into(), "".into());
    digest::seal(&mut golden);
    let report = self_test_case(&case, &golden, None, &config).unwrap();
    let about = |list: &[String]| list.iter().filter(|m| m.contains("operatorInstruction")).count();
    assert_eq!(about(&report.escaped), 0, "{:#?}", report.escaped);
    assert_eq!(report.skipped.len(), 1, "{:#?}", report.skipped);
    assert!(report.skipped[0].contains("renderInput.operatorInstruction added or removed"), "{:?}", report.skipped);
    assert!(report.skipped[0].contains("a blank operatorInstruction is no instruction"), "{:?}", report.skipped);
}

/// Every mutation of an intact fixture is caught, its run's included.
#[test]
fn every_mutation_of_a_fixture_is_caught() {
    let (_dir, config, case) = suite();
    let run = assemble_run(&case, &config, Arc::new(crate::judge::Memo::new(&config))).unwrap();
    let report = self_test_case(&case, &golden(&case, &config), Some(&run), &config).unwrap();
    assert!(report.escaped.is_empty(), "{:#?}", report.escaped);
    assert!(report.total() > 40, "{}", report.total());
    assert!(report.tried.iter().any(|t| t.contains("duplicate agent task id in a sibling run")));
    // The damage was done to linked copies: the shared run still passes every check.
    for check in RunCheck::ALL {
        let findings = dispatch::on_run(*check, &run.dir, Some(&run.packet), &[], &config);
        assert!(findings.is_empty(), "{check}: {findings:?}");
    }
}

/// A check that already fails on the intact packet would "catch" anything: the
/// report names the fixture and the check, once (the baseline runs once per check).
#[test]
fn a_check_failing_on_the_intact_packet_is_named_with_its_fixture() {
    let (_dir, config, case) = suite();
    let mut golden = golden(&case, &config);
    golden.insert("checksum".into(), json!(digest::sha256(b"not this packet")));
    let report = self_test_case(&case, &golden, None, &config).unwrap();
    let baseline = format!("{}: packet::checksum already fails on the intact packet", case.name);
    assert_eq!(report.escaped.iter().filter(|e| e.starts_with(&baseline)).count(), 1, "{:#?}", report.escaped);
}

/// A run that does not pass before damage is reported, not damaged.
#[test]
fn a_failing_run_is_reported_before_any_damage() {
    let (_dir, config, case) = suite();
    let mut run = assemble_run(&case, &config, Arc::new(crate::judge::Memo::new(&config))).unwrap();
    run.refusals.push("evaluate failed: for the test".into());
    let mut report = MutationReport::default();
    run_mutations(&case, &run, &config, &mut report).unwrap();
    assert_eq!(report.escaped.len(), 1, "{:#?}", report.escaped);
    assert!(report.escaped[0].contains("the unmutated run must pass first"), "{}", report.escaped[0]);
}
