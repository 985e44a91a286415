//! The checks that need the suite's corpus: `packet::regenerates` and
//! `packet::branch-isolation` (a packet against its fixture's request) and the
//! corpus-wide ones. A check returns findings; an `Err` means its inputs could
//! not be read. Which checks run, and when, is the engine's (`crate::judge`).

mod needles;
pub(crate) mod packet;
pub(crate) mod renders_from_input;
pub mod stale;

use crate::corpus::record::{CompletionRecord, COMPLETION_RECORD};
use crate::corpus::{self};
use crate::Invocation;
use crate::{fsutil, CorpusCheck, Error, Finding, Location, Result};

pub use packet::EXPORTER_FAILED;
pub(crate) use packet::{branch_isolation, Isolation, Mismatch};

/// The error to exit with when the suite's `[exporter]` failed to make a packet of
/// `outcomes` again: `verify --run-exporter` then exits 2, could not run, as `bless` does.
pub fn exporter_failure(outcomes: &[crate::Outcome], config: &Invocation) -> Option<Error> {
    let failed = |o: &&crate::Outcome| o.findings.iter().any(|f| f.cause.as_deref() == Some(EXPORTER_FAILED));
    let targets: Vec<&str> = outcomes.iter().filter(failed).map(|o| o.target.as_str()).collect();
    let exporter = config.settings().exporter.as_ref().filter(|_| !targets.is_empty())?;
    Some(Error::Exporter {
        request: targets.join(", "),
        command: format!("{:?}", exporter.command),
        reason: "failed, so packet::regenerates could not run (see the report above)".into(),
    })
}

/// What a check found, plus, for `packet::regenerates`, both texts for a diff.
#[derive(Debug, Default)]
#[must_use = "a check's findings dropped are failures nobody sees"]
pub(crate) struct Checked {
    pub(crate) findings: Vec<Finding>,
    pub(crate) mismatch: Option<Mismatch>,
}

impl From<Vec<Finding>> for Checked {
    fn from(findings: Vec<Finding>) -> Self {
        Checked { findings, mismatch: None }
    }
}

/// Run one corpus-wide check.
pub(crate) fn on_corpus(check: CorpusCheck, config: &Invocation) -> Result<Vec<Finding>> {
    match check {
        CorpusCheck::Layout => {
            let cases = corpus::cases(config)?;
            Ok(corpus::layout::layout(config.settings(), &cases)?.findings(config.settings()))
        }
        CorpusCheck::SnapshotParity => crate::schema::check(config),
        CorpusCheck::UniqueAgentTasks => {
            let mut tasks = Vec::new();
            for case in corpus::cases(config)? {
                if let Some(record) = CompletionRecord::load(&case)? {
                    tasks.push((CompletionRecord::written(&case), case.name, record.agent_task));
                }
            }
            // Oldest record first: a reused id is blamed on the fixture being added.
            tasks.sort_by_key(|task| task.0);
            Ok(unique_agent_tasks(&tasks.into_iter().map(|(_, case, task)| (case, task)).collect::<Vec<_>>()))
        }
        CorpusCheck::BranchCoverage => branch_coverage(config),
        CorpusCheck::Lock => {
            let mut findings = crate::lock::check(config.settings())?;
            // The app's own report of its templates is a program of the suite's.
            if config.policy().run_exporter {
                findings.extend(crate::exporter::reported_drift(config)?);
            }
            Ok(findings)
        }
        // The self-test damages packets and runs and calls back into this module, so
        // it lives above it (`crate::mutation::self_test_case`, one trial per fixture).
        CorpusCheck::MutationSelfTest => Err(Error::Internal(format!("{check} runs through mutation::self_test_case"))),
    }
}

/// Every branch value combination the contract names has a golden packet.
fn branch_coverage(config: &Invocation) -> Result<Vec<Finding>> {
    let mut rows = Vec::new();
    for case in corpus::cases(config)?.iter().filter(|c| c.expect.is_none()) {
        rows.push(corpus::branch_row(&fsutil::read_json(
            &case.golden_packet(),
            config.settings().limits.max_file_bytes,
        )?));
    }
    let gaps = corpus::coverage_gaps(&rows, config.settings());
    let at = config.settings().paths.golden.display().to_string();
    Ok(gaps
        .into_iter()
        .map(|gap| {
            Finding::new(CorpusCheck::BranchCoverage, Location::named(&at), format!("no golden packet covers {gap}"))
        })
        .collect())
}

/// A fresh agent's task id is used by one run only.
pub(crate) fn unique_agent_tasks(tasks: &[(String, String)]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, (case, task)) in tasks.iter().enumerate() {
        if let Some((first, _)) = tasks[..i].iter().find(|(_, t)| t == task) {
            out.push(Finding::new(
                CorpusCheck::UniqueAgentTasks,
                Location::named(format!("{case}/run/{COMPLETION_RECORD}")),
                format!("agent task {task:?} is already used by {first}"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_agent_task_is_named_with_both_cases() {
        let tasks =
            [("a".to_owned(), "t1".to_owned()), ("b".to_owned(), "t2".to_owned()), ("c".to_owned(), "t1".to_owned())];
        let findings = unique_agent_tasks(&tasks);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].path, Location::named("c/run/completion.toml"));
        assert!(findings[0].message.contains("already used by a"), "{}", findings[0]);
        assert!(unique_agent_tasks(&tasks[..2]).is_empty());
    }
}
