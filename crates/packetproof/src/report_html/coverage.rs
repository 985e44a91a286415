//! What the test report shows, as data: the coverage matrix (every value of every
//! resolvedBranch field against every provider, each cell naming the fixtures
//! whose golden packet has it) and the state of every trial, fixture by fixture,
//! from the records of the run ([`crate::conformance::runner::Summary`]).

use crate::conformance::runner::Record;
use crate::corpus::{self, Case};
use crate::Invocation;
use crate::{fsutil, Check, CorpusCheck, PacketCheck, Result, RunCheck};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The test report's content.
#[derive(Debug, Serialize)]
pub(crate) struct TestPage {
    pub(crate) suite: String,
    /// (state, how many trials), in the order passed, failed, skipped, not-run.
    pub(crate) counts: Vec<(&'static str, usize)>,
    pub(crate) failed: bool,
    pub(crate) matrix: Matrix,
    /// Column heads of the fixture table: every packet and run check, and the self-test.
    pub(crate) checks: Vec<String>,
    pub(crate) fixtures: Vec<FixtureRow>,
    pub(crate) corpus: Vec<Named>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Matrix {
    pub(crate) providers: Vec<String>,
    pub(crate) rows: Vec<MatrixRow>,
    /// What `corpus::branch-coverage` finds missing, word for word (one answer in every output).
    pub(crate) gaps: Vec<String>,
    /// How many of them the table marks (a value never seen, or never with a provider).
    pub(crate) marked: usize,
    /// The others, listed below the table: two branch fields' values never seen together.
    pub(crate) listed: Vec<String>,
    /// The positive fixtures counted, and those whose golden packet could not be read (with why).
    pub(crate) counted: usize,
    pub(crate) unread: Vec<Named>,
}

/// One value of one field: `span` is the field's row count on its first row (0 on the others).
#[derive(Debug, Serialize)]
pub(crate) struct MatrixRow {
    pub(crate) field: String,
    pub(crate) span: usize,
    pub(crate) value: String,
    pub(crate) cells: Vec<Vec<String>>,
    /// Per cell: the one of [`Matrix::gaps`] it is, if any (an empty cell the check does not require is no gap).
    pub(crate) gap: Vec<Option<String>>,
}

#[derive(Debug, Serialize)]
pub(crate) struct FixtureRow {
    pub(crate) name: String,
    pub(crate) negative: bool,
    pub(crate) states: Vec<State>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Named {
    pub(crate) name: String,
    pub(crate) state: State,
}

/// A trial's state: `passed`, `failed` (detail: the first finding), `skipped`
/// (detail: the reason), `not-run` (filtered out or in another shard) or `none`
/// (not a check of this fixture).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct State {
    pub(crate) kind: &'static str,
    pub(crate) detail: String,
}

impl State {
    fn none(why: &str) -> State {
        State { kind: "none", detail: why.to_owned() }
    }

    fn of(name: &str, records: &BTreeMap<&str, &Record>) -> State {
        let state = |kind, detail: &str| State { kind, detail: detail.to_owned() };
        match records.get(name) {
            Some(Record { failure: Some(message), .. }) => state("failed", first_finding(message)),
            Some(Record { skipped: Some(reason), .. }) => state("skipped", reason),
            Some(Record { notes, .. }) => state("passed", &notes.join("; ")),
            None => state("not-run", "not run: filtered out, or in another shard"),
        }
    }
}

/// A failed trial's message is a heading ("X failed:") and one `[check] path: …`
/// line per finding: the first finding, else the first line.
fn first_finding(message: &str) -> &str {
    let mut lines = message.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.clone().next().unwrap_or("failed");
    lines.find(|l| l.starts_with('[')).unwrap_or(first)
}

/// The page for the trials recorded in `records`.
pub(crate) fn test_page(config: &Invocation, records: &[Record]) -> Result<TestPage> {
    let by_name: BTreeMap<&str, &Record> = records.iter().map(|r| (r.name.as_str(), r)).collect();
    let cases = corpus::cases(config)?;
    // Every packet and run check, then the self-test, which runs per positive fixture.
    let mutation = CorpusCheck::MutationSelfTest.name();
    let mut columns: Vec<String> = PacketCheck::ALL.iter().map(|c| Check::Packet(*c).to_string()).collect();
    columns.extend(RunCheck::ALL.iter().map(|c| Check::Run(*c).to_string()));
    columns.push(mutation.to_owned());
    let fixtures: Vec<FixtureRow> = cases
        .iter()
        .map(|case| {
            let mut own: Vec<String> = crate::judge::checks_of(case).iter().map(ToString::to_string).collect();
            if case.expect.is_none() {
                own.push(mutation.to_owned());
            }
            let states = columns
                .iter()
                .map(|column| match own.contains(column) {
                    true => State::of(&crate::conformance::trial_name(&case.name, column), &by_name),
                    false if column == mutation => {
                        State::none("negative fixtures are not mutated: they are broken on purpose")
                    }
                    false => State::none("not a check of this fixture (it has no run/)"),
                })
                .collect();
            FixtureRow { name: case.name.clone(), negative: case.expect.is_some(), states }
        })
        .collect();
    let corpus: Vec<Named> = CorpusCheck::ALL
        .iter()
        .filter(|c| **c != CorpusCheck::MutationSelfTest)
        .map(|c| Named { name: c.name().to_owned(), state: State::of(c.name(), &by_name) })
        .collect();
    let states: Vec<&State> = fixtures.iter().flat_map(|f| &f.states).chain(corpus.iter().map(|n| &n.state)).collect();
    let counts: Vec<(&'static str, usize)> = ["passed", "failed", "skipped", "not-run"]
        .into_iter()
        .map(|kind| (kind, states.iter().filter(|s| s.kind == kind).count()))
        .collect();
    Ok(TestPage {
        suite: config.settings().root.display().to_string(),
        failed: counts[1].1 > 0,
        counts,
        matrix: matrix(&cases, config),
        checks: columns,
        fixtures,
        corpus,
    })
}

/// The matrix over the positive fixtures' golden packets, as `corpus::branch-coverage`
/// counts them (a negative fixture's packet is broken on purpose and covers nothing).
pub(crate) fn matrix(cases: &[Case], config: &Invocation) -> Matrix {
    let mut packets = Vec::new();
    let mut unread = Vec::new();
    for case in cases.iter().filter(|c| c.expect.is_none()) {
        match fsutil::read_json(&case.golden_packet(), config.settings().limits.max_file_bytes) {
            Ok(packet) => packets.push((case.name.clone(), corpus::branch_row(&packet))),
            Err(e) => unread.push(Named {
                name: case.name.clone(),
                state: State { kind: "failed", detail: format!("no golden packet counted: {e}") },
            }),
        }
    }
    let mut providers: Vec<String> = config.settings().providers.keys().cloned().collect();
    for (_, row) in &packets {
        if let Some(p) = row["provider"].as_str().filter(|p| !providers.iter().any(|q| q == p)) {
            providers.push(p.to_owned());
        }
    }
    let all_rows: Vec<Value> = packets.iter().map(|(_, row)| row.clone()).collect();
    let gaps = corpus::coverage_gaps(&all_rows, config.settings());
    // The gaps some cell shows, by index.
    let mut in_table: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
    let mut rows = Vec::new();
    for agent in config.settings().agents.all() {
        let packets: Vec<&(String, Value)> =
            packets.iter().filter(|(_, row)| std::ptr::eq(config.settings().agents.of_value(row), agent)).collect();
        let prefix = if config.settings().agents.several() { format!("agent {}: ", agent.name) } else { String::new() };
        for branch_field in &agent.branch {
            let field = branch_field.name.as_str();
            let values: Vec<Value> = match &branch_field.values {
                Some(values) => values.iter().map(|v| Value::from(v.as_str())).collect(),
                None => vec![Value::Bool(false), Value::Bool(true)],
            };
            for (i, value) in values.iter().enumerate() {
                let cells = providers
                    .iter()
                    .map(|p| {
                        packets
                            .iter()
                            .filter(|(_, row)| &row[field] == value && row["provider"] == p.as_str())
                            .map(|(name, _)| name.clone())
                            .collect()
                    })
                    .collect();
                let shown = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
                let gap = providers
                    .iter()
                    .map(|p| {
                        let here: Vec<usize> =
                            (0..gaps.len()).filter(|&i| gaps[i].is_cell(&agent.name, field, value, p)).collect();
                        in_table.extend(&here);
                        let words: Vec<String> = here.iter().map(|&i| gaps[i].to_string()).collect();
                        (!words.is_empty()).then(|| words.join("; "))
                    })
                    .collect();
                rows.push(MatrixRow {
                    field: format!("{prefix}{field}"),
                    span: if i == 0 { values.len() } else { 0 },
                    value: shown,
                    cells,
                    gap,
                });
            }
        }
    }
    let listed = (0..gaps.len()).filter(|i| !in_table.contains(i)).map(|i| gaps[i].to_string()).collect();
    let gaps = gaps.iter().map(ToString::to_string).collect();
    Matrix { providers, rows, gaps, marked: in_table.len(), listed, counted: all_rows.len(), unread }
}
