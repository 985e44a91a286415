//! Runs as events, formats as reporters (nextest's split). A command's run hands
//! what it found to a [`Reporter`] as [`Event`]s (`trace` one per call as it reads
//! them, `test` one as each trial starts and ends, the other commands one for the
//! whole run), and the reporter of the chosen
//! [`Format`] returns the text to print; the command line only writes it.
//!
//! One module per format renders every event that format offers: `text`, `json`
//! (every JSON document packetproof defines, `formatVersion` first, and libtest's
//! events), `junit`, `markdown`, `html` and `libtest` (libtest's pretty and terse,
//! which share their account of failures and summary line, and its JSON lines). So
//! each format's rendering of an outcome, a verify summary, the rule book, a traced
//! call, a trial or a release report is written once.
//!
//! What each command offers is [`Kind::formats`], one list per kind of report
//! (the command line's `--format` takes exactly those). A new [`Format`] does not
//! compile until [`Reporter::new`] says what it is, and a new [`Event`] until every
//! format's module says how it renders it (or that it does not): every match on
//! either is exhaustive. `tests` checks that each format's module renders exactly
//! the kinds that offer that format, so an offered format cannot lack a reporter.

mod html;
mod json;
mod junit;
mod libtest;
mod markdown;
mod text;

use crate::conformance::runner::RunEvent;
use crate::release;
use crate::run::evaluate::Evaluation;
use crate::trace::{Counts, Judged};
use crate::verify::Verification;
use crate::{Error, Format, Outcome, Result, Skipped};
use std::path::Path;

/// What a command reports, as it happens.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// `validate`, `schema --check`, `wire --check`: each target's outcome.
    Outcomes(&'a [Outcome]),
    /// `verify`: every outcome, the checks that ran and the counts (`verbose`: text
    /// lists every target, not only the failures).
    Verified { found: &'a Verification, verbose: bool },
    /// `checks`: the rule book.
    RuleBook,
    /// `evaluate`: the evaluation, where it was written, and the rules the step did not run.
    Evaluated { evaluation: &'a Evaluation, report: &'a Path, skipped: &'a [Skipped] },
    /// `trace`: one GenAI call, judged as it was read.
    TraceCall(&'a Judged),
    /// `trace`, at the end: the counts, and the rules that did not run on a reviewed packet.
    TraceEnd { counts: &'a Counts, skipped: &'a [Skipped] },
    /// `release-check`: the report.
    Release(&'a release::Report),
    /// `test`: the run of the gate's trials, event by event, and `--list`.
    Test(RunEvent<'a>),
}

/// The kinds of report, one per command (or family of commands), each with the
/// formats it offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum Kind {
    Outcomes,
    Verification,
    RuleBook,
    Evaluation,
    Trace,
    Release,
    Test,
}

impl Kind {
    /// Every kind.
    pub const ALL: &'static [Kind] = <Kind as strum::VariantArray>::VARIANTS;

    /// The formats a command reporting this kind offers (`--format`), the default first.
    pub const fn formats(self) -> &'static [Format] {
        match self {
            Kind::Outcomes | Kind::Verification | Kind::RuleBook | Kind::Evaluation => &[Format::Text, Format::Json],
            Kind::Trace => &[Format::Text, Format::Json, Format::Junit],
            Kind::Release => &[Format::Text, Format::Markdown, Format::Json, Format::Html],
            Kind::Test => &[Format::Pretty, Format::Terse, Format::Json],
        }
    }

    /// The commands that report this kind, for messages.
    pub const fn commands(self) -> &'static str {
        match self {
            Kind::Outcomes => "validate, schema --check and wire --check",
            Kind::Verification => "verify",
            Kind::RuleBook => "checks",
            Kind::Evaluation => "evaluate",
            Kind::Trace => "trace",
            Kind::Release => "release-check",
            Kind::Test => "test",
        }
    }
}

impl Event<'_> {
    /// The kind of report this event belongs to.
    pub const fn kind(&self) -> Kind {
        match self {
            Event::Outcomes(_) => Kind::Outcomes,
            Event::Verified { .. } => Kind::Verification,
            Event::RuleBook => Kind::RuleBook,
            Event::Evaluated { .. } => Kind::Evaluation,
            Event::TraceCall(_) | Event::TraceEnd { .. } => Kind::Trace,
            Event::Release(_) => Kind::Release,
            Event::Test(_) => Kind::Test,
        }
    }
}

/// Renders one command's events in one format.
#[derive(Debug)]
pub struct Reporter {
    kind: Kind,
    state: State,
}

/// Each format's reporter, with what it keeps between events.
#[derive(Debug)]
enum State {
    Text(text::Paint),
    /// How many traced calls were written (the document opens before the first).
    Json(json::Stream),
    /// JUnit needs its counts up front: it keeps one small record per call.
    Junit(junit::Cases),
    Markdown,
    Html,
    /// libtest's pretty or terse: the widest name, and the failures listed at the end.
    Libtest(libtest::Printer),
}

impl Reporter {
    /// The reporter of `format` for a command reporting `kind`; `color`: text may
    /// carry ANSI styles (the command line decides: a terminal, no `NO_COLOR`).
    /// A format the kind does not offer is a usage error naming those it does.
    pub fn new(format: Format, kind: Kind, color: bool) -> Result<Reporter> {
        if !kind.formats().contains(&format) {
            let offered: Vec<&str> = kind.formats().iter().map(|f| f.name()).collect();
            return Err(Error::Usage(format!(
                "--format {format} is not offered by {} (offered: {})",
                kind.commands(),
                offered.join(", ")
            )));
        }
        Ok(Reporter { kind, state: State::of(format, color) })
    }

    /// The text `event` prints as (empty when the format prints it later, or never).
    pub fn report(&mut self, event: Event<'_>) -> Result<String> {
        if event.kind() != self.kind {
            return Err(Error::Internal(format!(
                "a reporter for {} was handed an event of {}",
                self.kind.commands(),
                event.kind().commands()
            )));
        }
        // At most so many findings per check, each message bounded, in every format:
        // a hostile input cannot flood the report.
        match event {
            Event::Outcomes(outcomes) => {
                let capped: Vec<Outcome> = outcomes.iter().map(Outcome::capped).collect();
                self.state.render(Event::Outcomes(&capped))
            }
            Event::Verified { found, verbose } => {
                let capped = Verification {
                    outcomes: found.outcomes.iter().map(Outcome::capped).collect(),
                    checks: found.checks.clone(),
                    skipped: found.skipped.clone(),
                    ..Verification::default()
                };
                self.state.render(Event::Verified { found: &capped, verbose })
            }
            Event::RuleBook
            | Event::Evaluated { .. }
            | Event::TraceCall(_)
            | Event::TraceEnd { .. }
            | Event::Release(_)
            | Event::Test(_) => self.state.render(event),
        }
    }
}

impl State {
    fn of(format: Format, color: bool) -> State {
        match format {
            Format::Text => State::Text(text::Paint::new(color)),
            Format::Json => State::Json(json::Stream::default()),
            Format::Junit => State::Junit(junit::Cases::default()),
            Format::Markdown => State::Markdown,
            Format::Html => State::Html,
            Format::Pretty => State::Libtest(libtest::Printer::new(false, color)),
            Format::Terse => State::Libtest(libtest::Printer::new(true, color)),
        }
    }

    fn render(&mut self, event: Event<'_>) -> Result<String> {
        match self {
            State::Text(paint) => text::render(event, *paint),
            State::Json(stream) => Ok(json::render(event, stream)),
            State::Junit(cases) => junit::render(event, cases),
            State::Markdown => markdown::render(event),
            State::Html => html::render(event),
            State::Libtest(printer) => match event {
                Event::Test(event) => Ok(printer.render(event)),
                _ => Err(not_offered(printer.format(), &event)),
            },
        }
    }
}

/// `event` in `format`, on its own and without colours (a library user's report).
pub fn render(format: Format, event: Event<'_>) -> Result<String> {
    Reporter::new(format, event.kind(), false)?.report(event)
}

/// The rules a step did not run (`prepare`, `complete`, `attest`, `bless`), one text
/// line each under the step's own line.
pub fn not_applicable(skipped: &[Skipped], color: bool) -> String {
    text::skipped(skipped, "  ", text::Paint::new(color))
}

/// The rules the reviewed packets of `trace`, `serve` and `wire` did not run, one line
/// per reason naming every check it stops.
pub fn not_applicable_line(skipped: &[Skipped], color: bool) -> String {
    text::skipped_line(skipped, text::Paint::new(color))
}

/// One judged call as a JSON line of its own (`serve`'s findings,
/// schemas/serve-finding.schema.json), ending in a newline.
pub fn trace_line(judged: &Judged) -> String {
    json::trace_line(judged)
}

/// A format module's answer for an event of a kind that does not offer it.
fn not_offered(format: Format, event: &Event<'_>) -> Error {
    Error::Internal(format!("no {format} reporter for {} (it does not offer {format})", event.kind().commands()))
}

#[cfg(test)]
mod tests;
