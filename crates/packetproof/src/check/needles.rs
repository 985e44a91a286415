//! Which of many strings occur in a text, found in one pass over the text
//! (Aho-Corasick) instead of one search per string: branch isolation looks for
//! every excluded request string and every unrendered template line in each
//! prompt, and the mutation self-test asks it dozens of times per fixture.

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use std::sync::Mutex;

/// Texts at least this long (the prompts) are remembered with what was found in
/// them, the last [`REMEMBERED`] of them: the self-test asks about dozens of damaged
/// copies of a packet, most with the golden packet's prompts.
const LONG: usize = 1024;
const REMEMBERED: usize = 4;

pub(crate) struct Needles {
    needles: Vec<String>,
    /// `None` when the automaton cannot be built (past its size limits): each
    /// needle is then looked for on its own.
    automaton: Option<AhoCorasick>,
    /// Long texts searched, whole, with what was found in each; the latest first.
    searched: Mutex<Vec<(String, Vec<bool>)>>,
}

impl Needles {
    pub(crate) fn new<'a>(needles: impl IntoIterator<Item = &'a str>) -> Needles {
        let needles: Vec<String> = needles.into_iter().map(str::to_owned).collect();
        // A contiguous NFA: built in a fraction of a DFA's time (a case's needles are
        // searched for a few dozen times, not millions), and still one pass per text.
        let automaton = AhoCorasick::builder().kind(Some(AhoCorasickKind::ContiguousNFA)).build(&needles).ok();
        Needles { needles, automaton, searched: Mutex::default() }
    }

    /// For each needle, in order, whether `text` contains it (as `str::contains`).
    pub(crate) fn found_in(&self, text: &str) -> Vec<bool> {
        if text.len() < LONG {
            return self.search(text);
        }
        let searched = |needles: &Self| {
            let list = needles.searched.lock().unwrap_or_else(|e| e.into_inner());
            list.iter().find(|(seen, _)| seen == text).map(|(_, found)| found.clone())
        };
        if let Some(found) = searched(self) {
            return found;
        }
        let found = self.search(text);
        let mut list = self.searched.lock().unwrap_or_else(|e| e.into_inner());
        list.insert(0, (text.to_owned(), found.clone()));
        list.truncate(REMEMBERED);
        found
    }

    fn search(&self, text: &str) -> Vec<bool> {
        let Some(automaton) = &self.automaton else {
            return self.needles.iter().map(|needle| text.contains(needle.as_str())).collect();
        };
        let mut found = vec![false; self.needles.len()];
        if self.needles.is_empty() {
            return found;
        }
        // Overlapping: every needle that occurs anywhere, even inside another's match.
        for hit in automaton.find_overlapping_iter(text) {
            found[hit.pattern().as_usize()] = true;
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_needle_found_is_one_the_text_contains() {
        let needles = ["abc", "bcd", "b", "abc", "", "zzz", "cdé", "é"];
        let finder = Needles::new(needles);
        for text in ["abcdé", "", "xbx", "zz", "abcabc zzz"] {
            let expected: Vec<bool> = needles.iter().map(|n| text.contains(n)).collect();
            assert_eq!(finder.found_in(text), expected, "{text:?}");
        }
        assert!(Needles::new([]).found_in("anything").is_empty());
    }

    /// A long text asked again, after others (more than are remembered), or changed
    /// in one place, gets what searching it afresh gets.
    #[test]
    fn a_remembered_text_is_found_in_as_searched_afresh() {
        let needles = ["needle one", "needle two", "x", "absent"];
        let finder = Needles::new(needles);
        let long = |i: usize, with: &str| format!("{}{with}{}", "a".repeat(LONG + i), "b".repeat(i));
        let mut texts: Vec<String> = (0..2 * REMEMBERED).map(|i| long(i, "needle one")).collect();
        texts.extend([long(0, "needle two"), long(0, "needle onf"), long(1, "x needle two"), long(0, "")]);
        for round in 0..3 {
            for text in texts.iter().skip(round).chain(texts.iter().rev()) {
                let expected: Vec<bool> = needles.iter().map(|n| text.contains(n)).collect();
                assert_eq!(finder.found_in(text), expected, "round {round}");
            }
        }
    }
}
