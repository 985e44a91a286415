//! A side-by-side, word-level view of one changed prompt: the lines around each
//! change (as in a unified diff, three of context), the removed and added lines
//! facing each other, and within a replaced line the words that changed. The
//! line and word diffs are the `similar` crate's.

use serde::Serialize;
use similar::{ChangeTag, DiffOp, TextDiff};

/// Lines of context kept around each change.
const CONTEXT: usize = 3;

/// One row of the view: a line on each side (absent where the other side has
/// more lines), or, between two distant changes, a gap.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Row {
    /// `same`, `changed` or `gap`.
    pub kind: &'static str,
    pub left: Option<Side>,
    pub right: Option<Side>,
}

/// One line: its number (from 1) and its text in runs of unchanged and changed words.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Side {
    pub number: usize,
    pub spans: Vec<Span>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Span {
    pub text: String,
    pub changed: bool,
}

/// The rows that show how `before` became `after` (none when they are equal).
pub fn rows(before: &str, after: &str) -> Vec<Row> {
    let diff = TextDiff::from_lines(before, after);
    let (old, new) = (diff.old_slices(), diff.new_slices());
    let line = |slices: &[&str], i: usize| slices[i].strip_suffix('\n').unwrap_or(slices[i]).to_owned();
    let mut rows = Vec::new();
    for (n, group) in diff.grouped_ops(CONTEXT).iter().enumerate() {
        if n > 0 {
            rows.push(Row { kind: "gap", left: None, right: None });
        }
        for op in group {
            let (_, old_range, new_range) = op.as_tag_tuple();
            let same = matches!(op, DiffOp::Equal { .. });
            for i in 0..old_range.len().max(new_range.len()) {
                let left = (i < old_range.len()).then(|| (old_range.start + i, line(old, old_range.start + i)));
                let right = (i < new_range.len()).then(|| (new_range.start + i, line(new, new_range.start + i)));
                rows.push(if same { same_row(left, right) } else { changed_row(left, right) });
            }
        }
    }
    rows
}

fn same_row(left: Option<(usize, String)>, right: Option<(usize, String)>) -> Row {
    let side = |l: Option<(usize, String)>| {
        l.map(|(i, text)| Side { number: i + 1, spans: vec![Span { text, changed: false }] })
    };
    Row { kind: "same", left: side(left), right: side(right) }
}

/// A removed line facing an added one is diffed word by word; a line with no
/// counterpart changed whole.
fn changed_row(left: Option<(usize, String)>, right: Option<(usize, String)>) -> Row {
    let whole = |l: Option<(usize, String)>| {
        l.map(|(i, text)| Side { number: i + 1, spans: vec![Span { text, changed: true }] })
    };
    let (Some((li, old)), Some((ri, new))) = (&left, &right) else {
        return Row { kind: "changed", left: whole(left), right: whole(right) };
    };
    let (mut old_spans, mut new_spans) = (Vec::new(), Vec::new());
    for change in TextDiff::from_words(old.as_str(), new.as_str()).iter_all_changes() {
        let text = change.value();
        match change.tag() {
            ChangeTag::Equal => {
                push(&mut old_spans, text, false);
                push(&mut new_spans, text, false);
            }
            ChangeTag::Delete => push(&mut old_spans, text, true),
            ChangeTag::Insert => push(&mut new_spans, text, true),
        }
    }
    Row {
        kind: "changed",
        left: Some(Side { number: li + 1, spans: old_spans }),
        right: Some(Side { number: ri + 1, spans: new_spans }),
    }
}

/// Append `text`, joining it to the last span when that one is alike.
fn push(spans: &mut Vec<Span>, text: &str, changed: bool) {
    match spans.last_mut() {
        Some(last) if last.changed == changed => last.text.push_str(text),
        _ => spans.push(Span { text: text.to_owned(), changed }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(side: &Option<Side>) -> String {
        side.as_ref().map_or("·".into(), |s| {
            s.spans.iter().map(|sp| if sp.changed { format!("[{}]", sp.text) } else { sp.text.clone() }).collect()
        })
    }

    #[test]
    fn a_replaced_line_shows_the_words_that_changed_on_each_side() {
        let before = "one\ntwo\nthe quick brown fox\nfour\n";
        let after = "one\ntwo\nthe slow brown fox\nfour\nfive\n";
        let rows = rows(before, after);
        let changed: Vec<(String, String)> =
            rows.iter().filter(|r| r.kind == "changed").map(|r| (shown(&r.left), shown(&r.right))).collect();
        assert_eq!(
            changed,
            [("the [quick] brown fox".to_owned(), "the [slow] brown fox".to_owned()), ("·".into(), "[five]".into())]
        );
        let third = rows.iter().find(|r| r.kind == "changed").unwrap();
        assert_eq!((third.left.as_ref().unwrap().number, third.right.as_ref().unwrap().number), (3, 3));
        assert!(rows.iter().any(|r| r.kind == "same" && shown(&r.left) == "one"));
    }

    #[test]
    fn distant_changes_are_separated_by_a_gap_and_equal_texts_give_nothing() {
        let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 2\n", "line two\n").replace("line 19\n", "line nineteen\n");
        let rows = rows(&before, &after);
        assert_eq!(rows.iter().filter(|r| r.kind == "gap").count(), 1);
        assert_eq!(rows.iter().filter(|r| r.kind == "changed").count(), 2);
        assert!(super::rows(&before, &before).is_empty());
    }
}
