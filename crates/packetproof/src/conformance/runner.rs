//! `packetproof test`'s runner: the gate's trials, the ones a command line selects
//! (libtest's filter and `--exact`, nextest's `--partition`), run over every core
//! with each outcome reported as an event the moment it is known. The reporters
//! (`reporter`, kind `Test`) render the events in libtest's formats; `cargo test`
//! runs the same trials through libtest-mimic (tests/conformance.rs).
//!
//! A trial that panics has failed, as in libtest: the runner and the other trials
//! go on.

use super::partition::Partition;
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// A trial's end, when it did not fail: it passed, or found that it cannot apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Completion {
    Completed,
    Ignored { reason: String },
}

impl Completion {
    pub(crate) fn ignored_with(reason: impl Into<String>) -> Completion {
        Completion::Ignored { reason: reason.into() }
    }
}

/// A trial that ran to its end, and the notes every report shows beside its verdict
/// (libtest's formats have no place for them).
pub(crate) struct Passed {
    pub(crate) completion: Completion,
    pub(crate) notes: Vec<String>,
}

impl From<Completion> for Passed {
    fn from(completion: Completion) -> Passed {
        Passed { completion, notes: Vec::new() }
    }
}

/// A failed trial, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failed(String);

impl Failed {
    pub(crate) fn message(&self) -> &str {
        &self.0
    }
}

impl From<String> for Failed {
    fn from(message: String) -> Failed {
        Failed(message)
    }
}

impl From<&str> for Failed {
    fn from(message: &str) -> Failed {
        Failed(message.to_owned())
    }
}

type Body = Box<dyn FnOnce() -> Result<Passed, Failed> + Send>;

/// One trial of the gate: a name and what it runs, or why it is ignored without running.
pub struct Trial {
    name: String,
    body: Result<Body, String>,
}

impl std::fmt::Debug for Trial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trial").field("name", &self.name).field("ignored", &self.body.as_ref().err()).finish()
    }
}

impl Trial {
    pub(crate) fn test(name: String, run: impl FnOnce() -> Result<Passed, Failed> + Send + 'static) -> Trial {
        Trial { name, body: Ok(Box::new(run)) }
    }

    /// A trial known before it runs to be ignored, with why.
    pub(crate) fn ignored(name: String, reason: impl Into<String>) -> Trial {
        Trial { name, body: Err(reason.into()) }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Run it on this thread, timed; a panic is a failure (libtest's message).
    pub fn run(self) -> Record {
        let start = Instant::now();
        let outcome = match self.body {
            Err(reason) => Ok(Completion::ignored_with(reason).into()),
            Ok(body) => catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
                let payload =
                    panic.downcast_ref::<String>().map(String::as_str).or(panic.downcast_ref::<&str>().copied());
                Err(match payload {
                    Some(payload) => format!("test panicked: {payload}").into(),
                    None => "test panicked".into(),
                })
            }),
        };
        let (failure, skipped, notes) = match outcome {
            Err(failed) => (Some(failed.0), None, Vec::new()),
            Ok(Passed { completion: Completion::Ignored { reason }, notes }) => (None, Some(reason), notes),
            Ok(Passed { completion: Completion::Completed, notes }) => (None, None, notes),
        };
        Record { name: self.name, time: start.elapsed(), failure, skipped, notes }
    }
}

/// One trial that ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub name: String,
    pub time: Duration,
    /// `None`: passed; `Some(message)`: failed with that message.
    pub failure: Option<String>,
    /// `Some(reason)`: the trial was ignored (its check cannot apply), and why.
    pub skipped: Option<String>,
    /// What the reports say beside a trial's verdict: a check that passed only under a
    /// suite setting.
    pub notes: Vec<String>,
}

/// Which trials run: libtest's FILTER (a part of the name, or with `exact` the whole
/// name), then one shard of those it keeps.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub filter: Option<String>,
    pub exact: bool,
    pub partition: Option<Partition>,
}

/// The trials a [`Selection`] keeps, in the order given, and how many it left out.
#[derive(Debug)]
pub struct Selected {
    trials: Vec<Trial>,
    /// Left out by the filter (libtest's `filtered out`).
    pub filtered_out: usize,
    /// Kept by the filter but in another shard.
    pub in_other_shards: usize,
}

impl Selection {
    fn keeps(&self, name: &str) -> bool {
        match &self.filter {
            None => true,
            Some(filter) if self.exact => name == filter,
            Some(filter) => name.contains(filter.as_str()),
        }
    }

    /// The trials this selection runs. As in nextest, the filter applies first and the
    /// shard is taken from the trials it keeps.
    pub fn select(&self, trials: Vec<Trial>) -> Selected {
        let total = trials.len();
        let mut kept: Vec<Trial> = trials.into_iter().filter(|t| self.keeps(&t.name)).collect();
        let filtered_out = total - kept.len();
        if let Some(partition) = self.partition {
            let chosen: HashSet<String> =
                partition.select(kept.iter().map(|t| t.name.as_str())).into_iter().map(str::to_owned).collect();
            kept.retain(|t| chosen.contains(&t.name));
        }
        Selected { in_other_shards: total - filtered_out - kept.len(), filtered_out, trials: kept }
    }
}

impl Selected {
    /// The names of the trials to run, in order (`--list`).
    pub fn names(&self) -> Vec<String> {
        self.trials.iter().map(|t| t.name.clone()).collect()
    }
}

/// What a run reports, as it happens.
#[derive(Debug, Clone, Copy)]
pub enum RunEvent<'a> {
    /// `--list`: the trials selected (the runner never reports it; the command does).
    Listed(&'a [String]),
    /// The run begins: the trials it will run, in order.
    Started(&'a [String]),
    /// A trial begins.
    TrialStarted(&'a str),
    /// A trial ended: its outcome, and the reason when it was ignored.
    TrialFinished(&'a Record),
    /// Every trial ended: the counts.
    Finished(&'a Summary),
}

/// The end of a run.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub ignored: usize,
    pub filtered_out: usize,
    pub time: Duration,
    /// Every trial that ran, in name order.
    pub records: Vec<Record>,
}

impl Summary {
    fn count(&mut self, record: &Record) {
        match (&record.failure, &record.skipped) {
            (Some(_), _) => self.failed += 1,
            (None, Some(_)) => self.ignored += 1,
            (None, None) => self.passed += 1,
        }
    }
}

/// What a worker tells the reporting thread.
enum Message {
    Started(String),
    Finished(Record),
}

/// Run `selected` over every core, handing each event to `report` on this thread.
pub fn run(selected: Selected, report: impl FnMut(RunEvent<'_>)) -> Summary {
    run_on(selected, crate::parallel::workers(), report)
}

/// [`run`] on `workers` threads.
pub(crate) fn run_on(selected: Selected, workers: usize, mut report: impl FnMut(RunEvent<'_>)) -> Summary {
    let start = Instant::now();
    report(RunEvent::Started(&selected.names()));
    let mut summary = Summary { filtered_out: selected.filtered_out, ..Summary::default() };
    // Each trial is taken from its cell once, by the worker that claims it.
    let cells: Vec<Mutex<Option<Trial>>> = selected.trials.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let (sender, receiver) = mpsc::channel();
    std::thread::scope(|scope| {
        let cells = &cells;
        scope.spawn(move || {
            crate::parallel::map_in_order(cells, workers, |cell| {
                let Some(trial) = cell.lock().unwrap_or_else(|e| e.into_inner()).take() else { return };
                // A send fails only when the receiver is gone, which it never is before the workers end.
                let _ = sender.send(Message::Started(trial.name.clone()));
                let _ = sender.send(Message::Finished(trial.run()));
            });
        });
        for message in receiver {
            match message {
                Message::Started(name) => report(RunEvent::TrialStarted(&name)),
                Message::Finished(record) => {
                    summary.count(&record);
                    report(RunEvent::TrialFinished(&record));
                    summary.records.push(record);
                }
            }
        }
    });
    summary.records.sort_by(|a, b| a.name.cmp(&b.name));
    summary.time = start.elapsed();
    report(RunEvent::Finished(&summary));
    summary
}

#[cfg(test)]
mod tests;
