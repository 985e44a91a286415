//! Which of many strings occur in a text, found in one pass over the text
//! (Aho-Corasick) instead of one search per string: branch isolation looks for
//! every excluded request string and every unrendered template line in each
//! prompt, and the mutation self-test asks it dozens of times per fixture.

use aho_corasick::{AhoCorasick, AhoCorasickKind};

pub(crate) struct Needles {
    needles: Vec<String>,
    /// `None` when the automaton cannot be built (past its size limits): each
    /// needle is then looked for on its own.
    automaton: Option<AhoCorasick>,
}

impl Needles {
    pub(crate) fn new<'a>(needles: impl IntoIterator<Item = &'a str>) -> Needles {
        let needles: Vec<String> = needles.into_iter().map(str::to_owned).collect();
        // A contiguous NFA: built in a fraction of a DFA's time (a case's needles are
        // searched for a few dozen times, not millions), and still one pass per text.
        let automaton = AhoCorasick::builder().kind(Some(AhoCorasickKind::ContiguousNFA)).build(&needles).ok();
        Needles { needles, automaton }
    }

    /// For each needle, in order, whether `text` contains it (as `str::contains`).
    pub(crate) fn found_in(&self, text: &str) -> Vec<bool> {
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
}
