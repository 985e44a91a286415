//! A side-by-side, word-level view of one changed prompt, read from the unified
//! diff of a change group ([`crate::diff::ChangeGroup`]: the hunks that make that
//! change, as the text report and `bless --review` show them): context lines on
//! both sides, removed lines facing the added ones, and within a replaced line the
//! words that changed (the `similar` crate's word diff).

use serde::Serialize;
use similar::{ChangeTag, TextDiff};

/// One row of the view: a line on each side (absent where the other side has
/// more lines), or, between two hunks, a gap.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Row {
    /// `same`, `changed` or `gap`.
    pub(crate) kind: &'static str,
    pub(crate) left: Option<Side>,
    pub(crate) right: Option<Side>,
}

/// One line: its number (from 1) and its text in runs of unchanged and changed words.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Side {
    pub(crate) number: usize,
    pub(crate) spans: Vec<Span>,
}

/// A line with its number.
type Numbered = (usize, String);

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) text: String,
    pub(crate) changed: bool,
}

/// The rows of a unified diff (none for an empty one). Each `@@ -a,b +c,d @@`
/// hunk starts a block (a gap row before every block but the first); runs of `-`
/// lines and the `+` lines after them face each other.
pub(crate) fn rows(unified: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    let (mut old_line, mut new_line) = (0, 0);
    let (mut removed, mut added): (Vec<Numbered>, Vec<Numbered>) = (Vec::new(), Vec::new());
    for line in unified.lines().skip_while(|l| !l.starts_with("@@")) {
        if !line.starts_with('+') {
            flush(&mut rows, &mut removed, &mut added);
        }
        if let Some(header) = line.strip_prefix("@@") {
            if !rows.is_empty() {
                rows.push(Row { kind: "gap", left: None, right: None });
            }
            (old_line, new_line) = hunk_starts(header);
        } else if let Some(text) = line.strip_prefix('-') {
            removed.push((old_line, text.to_owned()));
            old_line += 1;
        } else if let Some(text) = line.strip_prefix('+') {
            added.push((new_line, text.to_owned()));
            new_line += 1;
        } else if let Some(text) = line.strip_prefix(' ') {
            rows.push(same_row(Some((old_line, text.to_owned())), Some((new_line, text.to_owned()))));
            (old_line, new_line) = (old_line + 1, new_line + 1);
        }
        // `\ No newline at end of file` shows nothing.
    }
    flush(&mut rows, &mut removed, &mut added);
    rows
}

/// The first line numbers (from 1) of a hunk header's two sides: `-a[,b] +c[,d] @@`.
fn hunk_starts(header: &str) -> (usize, usize) {
    let start = |sign: char| {
        header
            .split_whitespace()
            .find_map(|part| part.strip_prefix(sign))
            .and_then(|range| range.split(',').next()?.parse::<usize>().ok())
            .unwrap_or(1)
            .max(1)
    };
    (start('-'), start('+'))
}

/// The removed lines facing the added ones, row by row.
fn flush(rows: &mut Vec<Row>, removed: &mut Vec<Numbered>, added: &mut Vec<Numbered>) {
    let (mut old, mut new) = (removed.drain(..), added.drain(..));
    loop {
        match (old.next(), new.next()) {
            (None, None) => break,
            (left, right) => rows.push(changed_row(left, right)),
        }
    }
}

fn same_row(left: Option<Numbered>, right: Option<Numbered>) -> Row {
    let side = |l: Option<Numbered>| l.map(|(i, text)| Side { number: i, spans: vec![Span { text, changed: false }] });
    Row { kind: "same", left: side(left), right: side(right) }
}

/// A removed line facing an added one is diffed word by word; a line with no
/// counterpart changed whole.
fn changed_row(left: Option<Numbered>, right: Option<Numbered>) -> Row {
    let whole = |l: Option<Numbered>| l.map(|(i, text)| Side { number: i, spans: vec![Span { text, changed: true }] });
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
        left: Some(Side { number: *li, spans: old_spans }),
        right: Some(Side { number: *ri, spans: new_spans }),
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
    use crate::diff::unified;

    fn shown(side: &Option<Side>) -> String {
        side.as_ref().map_or("·".into(), |s| {
            s.spans.iter().map(|sp| if sp.changed { format!("[{}]", sp.text) } else { sp.text.clone() }).collect()
        })
    }

    fn of(before: &str, after: &str) -> Vec<Row> {
        rows(&unified(before, after, ("base", "tree")))
    }

    #[test]
    fn a_replaced_line_shows_the_words_that_changed_on_each_side() {
        let before = "one\ntwo\nthe quick brown fox\nfour\n";
        let after = "one\ntwo\nthe slow brown fox\nfour\nfive\n";
        let rows = of(before, after);
        let changed: Vec<(String, String)> =
            rows.iter().filter(|r| r.kind == "changed").map(|r| (shown(&r.left), shown(&r.right))).collect();
        assert_eq!(
            changed,
            [("the [quick] brown fox".to_owned(), "the [slow] brown fox".to_owned()), ("·".into(), "[five]".into())]
        );
        let third = rows.iter().find(|r| r.kind == "changed").unwrap();
        assert_eq!((third.left.as_ref().unwrap().number, third.right.as_ref().unwrap().number), (3, 3));
        let last = rows.last().unwrap();
        assert_eq!((last.left.as_ref(), last.right.as_ref().unwrap().number), (None, 5));
        assert!(rows.iter().any(|r| r.kind == "same" && shown(&r.left) == "one"));
    }

    #[test]
    fn distant_changes_are_separated_by_a_gap_and_equal_texts_give_nothing() {
        let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 2\n", "line two\n").replace("line 19\n", "line nineteen\n");
        let rows = of(&before, &after);
        assert_eq!(rows.iter().filter(|r| r.kind == "gap").count(), 1);
        let numbers: Vec<usize> =
            rows.iter().filter(|r| r.kind == "changed").map(|r| r.right.as_ref().unwrap().number).collect();
        assert_eq!(numbers, [2, 19]);
        assert!(of(&before, &before).is_empty());
        assert!(super::rows("").is_empty());
    }

    #[test]
    fn hunk_headers_give_the_first_line_of_each_side() {
        assert_eq!(hunk_starts(" -3,7 +4,8 @@"), (3, 4));
        assert_eq!(hunk_starts(" -3 +0,0 @@"), (3, 1));
    }
}
