//! Splitting a conforming text into its template's pieces, in time linear in the
//! text: every slot value, every time round a loop, and every branch taken.
//!
//! Hand-written over `regex-automata`'s lazy DFAs because no engine does this
//! exactly: the `regex` crate's captures run a PikeVM (its cost is the text's length
//! times the live states, seconds per MB on a text that repeats the template) and
//! report only a loop's last time round, so a shape or a forbidden key in an earlier
//! time round went unseen. Here each piece's end is found with two DFA passes: a
//! reverse DFA of the pieces after it marks where they can start (so the rest is
//! known to match), and a forward DFA of the piece marks where it can end; the
//! piece takes the first end both allow (a loop the last, as `*` does). Every choice
//! keeps a match of the rest, so the split never backtracks. The DFAs are built
//! with `MatchKind::All` (every end, not the leftmost-first one) and never give up
//! (a cache clear costs time, not correctness); every step counts against a budget,
//! past which the text is not judged.

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::hybrid::LazyStateID;
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};
use std::sync::{Mutex, OnceLock};

/// An NFA is at most this large; a larger template is refused.
const SIZE_LIMIT: usize = 32 << 20;
/// Groups nest at most this deep (a trimmed end nests one group per piece that may render blank).
const NEST_LIMIT: u32 = 1000;
/// Each lazy DFA keeps at most this many bytes of states before it clears them.
const CACHE_CAPACITY: usize = 4 << 20;
/// DFA steps one text may take: past them it is not judged (never passed).
pub(super) const STEP_BUDGET: u64 = 1 << 28;

/// Why a text was not split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsplit {
    /// Deciding would take more than the per-call bound of DFA steps.
    OverBudget,
    /// An automaton could not be built or run (a template past the size limits).
    Engine(String),
}

impl std::fmt::Display for Unsplit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsplit::OverBudget => write!(f, "it takes more than the per-call bound of {STEP_BUDGET} matching steps"),
            Unsplit::Engine(why) => f.write_str(why),
        }
    }
}

/// A lazy DFA over one pattern, built on first use, with caches to reuse.
#[derive(Debug, Default)]
pub(super) struct Automaton {
    /// Boxed: a DFA is large, and templates nest automata deeply.
    dfa: OnceLock<Result<Box<DFA>, String>>,
    caches: Mutex<Vec<Cache>>,
}

impl Automaton {
    /// Build now (the whole template's, so a template too large is refused when read).
    pub(super) fn prepare(&self, pattern: impl FnOnce() -> String) -> Result<(), String> {
        self.dfa(pattern, false).map(|_| ())
    }

    fn dfa(&self, pattern: impl FnOnce() -> String, reverse: bool) -> Result<&DFA, String> {
        self.dfa.get_or_init(|| build(&pattern(), reverse).map(Box::new)).as_deref().map_err(Clone::clone)
    }

    /// Run `f` with the DFA and a cache of it (taken from the pool, put back after).
    fn with<R>(
        &self,
        pattern: impl FnOnce() -> String,
        reverse: bool,
        f: impl FnOnce(&DFA, &mut Cache) -> Result<R, Unsplit>,
    ) -> Result<R, Unsplit> {
        let dfa = self.dfa(pattern, reverse).map_err(Unsplit::Engine)?;
        let taken = self.caches.lock().ok().and_then(|mut pool| pool.pop());
        let mut cache = taken.unwrap_or_else(|| dfa.create_cache());
        let result = f(dfa, &mut cache);
        if let Ok(mut pool) = self.caches.lock() {
            pool.push(cache);
        }
        result
    }
}

fn build(pattern: &str, reverse: bool) -> Result<DFA, String> {
    DFA::builder()
        .configure(
            DFA::config()
                .match_kind(MatchKind::All)
                .cache_capacity(CACHE_CAPACITY)
                .skip_cache_capacity_check(true)
                .minimum_cache_clear_count(None),
        )
        .syntax(syntax::Config::new().nest_limit(NEST_LIMIT))
        .thompson(
            thompson::Config::new()
                .reverse(reverse)
                .which_captures(WhichCaptures::None)
                .nfa_size_limit(Some(SIZE_LIMIT)),
        )
        .build(pattern)
        .map_err(|e| format!("the template is too large to match: {e}"))
}

/// The DFA steps a split has left.
pub(super) struct Budget(u64);

impl Budget {
    pub(super) fn new(steps: u64) -> Budget {
        Budget(steps)
    }

    fn take(&mut self, steps: usize) -> Result<(), Unsplit> {
        self.0 = self.0.checked_sub(steps as u64).ok_or(Unsplit::OverBudget)?;
        Ok(())
    }
}

fn step(dfa: &DFA, cache: &mut Cache, sid: LazyStateID, byte: Option<u8>) -> Result<LazyStateID, Unsplit> {
    let next = match byte {
        Some(b) => dfa.next_state(cache, sid, b),
        None => dfa.next_eoi_state(cache, sid),
    };
    let next = next.map_err(|e| Unsplit::Engine(format!("the matcher gave up: {e}")))?;
    if next.is_quit() {
        return Err(Unsplit::Engine("the matcher met a byte it cannot decide".into()));
    }
    Ok(next)
}

/// The ends `x` in `s..=e` (ascending) where `text[s..x]` matches, each passed to
/// `stop`, until `stop` says so or no longer end can match.
pub(super) fn forward(
    automaton: &Automaton,
    pattern: impl FnOnce() -> String,
    text: &[u8],
    (s, e): (usize, usize),
    budget: &mut Budget,
    mut stop: impl FnMut(usize) -> bool,
) -> Result<(), Unsplit> {
    automaton.with(pattern, false, |dfa, cache| {
        let input = Input::new(text).range(s..e).anchored(Anchored::Yes);
        let mut sid = dfa.start_state_forward(cache, &input).map_err(|e| Unsplit::Engine(e.to_string()))?;
        for (x, &byte) in text[s..e].iter().enumerate() {
            budget.take(1)?;
            sid = step(dfa, cache, sid, Some(byte))?;
            // A DFA state says a match one byte late: it ended before this byte.
            if sid.is_match() && stop(s + x) {
                return Ok(());
            }
            if sid.is_dead() {
                return Ok(());
            }
        }
        if step(dfa, cache, sid, None)?.is_match() {
            stop(e);
        }
        Ok(())
    })
}

/// The length of the longest prefix of `text` that some match extends (`text.len()`:
/// all of it, so the text ends too early or matches).
pub(super) fn reach(
    automaton: &Automaton,
    pattern: impl FnOnce() -> String,
    text: &[u8],
    budget: &mut Budget,
) -> Result<usize, Unsplit> {
    automaton.with(pattern, false, |dfa, cache| {
        let input = Input::new(text).anchored(Anchored::Yes);
        let mut sid = dfa.start_state_forward(cache, &input).map_err(|e| Unsplit::Engine(e.to_string()))?;
        for (x, &byte) in text.iter().enumerate() {
            budget.take(1)?;
            sid = step(dfa, cache, sid, Some(byte))?;
            if sid.is_dead() {
                return Ok(x);
            }
        }
        Ok(text.len())
    })
}

/// Where the longest suffix of `text` that ends some match starts (`0`: all of it).
pub(super) fn reach_back(
    automaton: &Automaton,
    pattern: impl FnOnce() -> String,
    text: &[u8],
    budget: &mut Budget,
) -> Result<usize, Unsplit> {
    automaton.with(pattern, true, |dfa, cache| {
        let input = Input::new(text).anchored(Anchored::Yes);
        let mut sid = dfa.start_state_reverse(cache, &input).map_err(|e| Unsplit::Engine(e.to_string()))?;
        for j in (0..text.len()).rev() {
            budget.take(1)?;
            sid = step(dfa, cache, sid, Some(text[j]))?;
            if sid.is_dead() {
                return Ok(j + 1);
            }
        }
        Ok(0)
    })
}

/// For each `j` in `s..=e`, whether `text[j..e]` matches (index `j - s`).
pub(super) fn starts(
    automaton: &Automaton,
    pattern: impl FnOnce() -> String,
    text: &[u8],
    (s, e): (usize, usize),
    budget: &mut Budget,
) -> Result<Vec<bool>, Unsplit> {
    automaton.with(pattern, true, |dfa, cache| {
        let mut marks = vec![false; e - s + 1];
        let input = Input::new(text).range(s..e).anchored(Anchored::Yes);
        let mut sid = dfa.start_state_reverse(cache, &input).map_err(|e| Unsplit::Engine(e.to_string()))?;
        for j in (s..e).rev() {
            budget.take(1)?;
            sid = step(dfa, cache, sid, Some(text[j]))?;
            if sid.is_match() {
                marks[j + 1 - s] = true;
            }
            if sid.is_dead() {
                return Ok(marks);
            }
        }
        marks[0] = step(dfa, cache, sid, None)?.is_match();
        Ok(marks)
    })
}
