//! What an app does to a rendering before sending it, and the template shape of the
//! texts it can then send.
//!
//! A trimmed rendering is the rendering with its whitespace taken off an end. The
//! texts a template can be sent as are exactly the texts that have no such
//! whitespace at that end and that some rendering extends by whitespace only (the
//! rendering cut where its trailing whitespace starts). That is computed on the
//! shape, piece by piece from the trimmed end: a piece that may render blank (a
//! whitespace literal, a slot, a loop, a branch with a blank body) lets the cut fall
//! into the piece before it, so the end becomes a choice between "this piece, then
//! the rest cut" and "this piece cut, the rest blank". Literal parts stay exact, and
//! the matcher then refuses a text with whitespace left at the trimmed end.

use super::{Piece, Template};
use serde::Deserialize;

/// What the app does to a rendering before sending it (`[contract.templates]
/// rendering`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trim {
    /// Nothing: the rendering is sent as the engine rendered it.
    #[default]
    AsRendered,
    /// Every `\n` at its end removed (JavaScript `.replace(/\n+$/, '')`, Python
    /// `.rstrip("\n")`).
    StripTrailingNewlines,
    /// Whitespace removed from its end (Rust `trim_end`, Python `.rstrip()`,
    /// JavaScript `.trimEnd()`); what the block builder's compiler does.
    TrimEnd,
    /// Whitespace removed from both ends (Rust `trim`, Python `.strip()`,
    /// JavaScript `.trim()`).
    #[serde(rename = "trim")]
    Both,
}

/// Which end a cut is at.
#[derive(Clone, Copy)]
enum Side {
    Start,
    End,
}

impl Trim {
    /// The characters taken off: Unicode White_Space (`char::is_whitespace`) or `\n`.
    fn removes(self) -> fn(char) -> bool {
        match self {
            Trim::StripTrailingNewlines => |c| c == '\n',
            _ => char::is_whitespace,
        }
    }

    /// Whether `text` could be a rendering after this edit (no removed character
    /// left at a trimmed end).
    pub(super) fn could_send(self, text: &str) -> bool {
        let removes = self.removes();
        let clean_end = || !text.chars().next_back().is_some_and(removes);
        let clean_start = || !text.chars().next().is_some_and(removes);
        match self {
            Trim::AsRendered => true,
            Trim::StripTrailingNewlines | Trim::TrimEnd => clean_end(),
            Trim::Both => clean_end() && clean_start(),
        }
    }

    /// The template whose renderings, once cut at the trimmed ends, are this edit's
    /// outputs (with [`Trim::could_send`], exactly).
    pub(super) fn template(self, template: Template) -> Template {
        let ws = self.removes();
        let pieces = match self {
            Trim::AsRendered => template.pieces,
            Trim::StripTrailingNewlines | Trim::TrimEnd => cut(template.pieces, Side::End, ws),
            Trim::Both => cut(cut(template.pieces, Side::End, ws), Side::Start, ws),
        };
        Template { pieces }
    }
}

/// Whether every piece may render as `ws` characters only (or nothing).
fn blank(pieces: &[Piece], ws: fn(char) -> bool) -> bool {
    pieces.iter().all(|p| piece_blank(p, ws))
}

fn piece_blank(piece: &Piece, ws: fn(char) -> bool) -> bool {
    match piece {
        Piece::Literal(text) => text.chars().all(ws),
        Piece::Slot(_) | Piece::Held { .. } | Piece::Repeat(_) => true,
        Piece::Branch(bodies) => bodies.iter().any(|(_, body)| blank(&body.pieces, ws)),
        Piece::Choice(bodies) => bodies.iter().any(|body| blank(&body.pieces, ws)),
    }
}

/// The sequence `pieces` with its renderings cut anywhere in the `ws` run at `side`.
fn cut(mut pieces: Vec<Piece>, side: Side, ws: fn(char) -> bool) -> Vec<Piece> {
    if pieces.is_empty() {
        return pieces;
    }
    match side {
        Side::End => {
            // pieces[k+1..] may all be blank: the cut may fall in any piece from k on.
            let mut k = pieces.len() - 1;
            while k > 0 && piece_blank(&pieces[k], ws) {
                k -= 1;
            }
            let tail = pieces.split_off(k);
            let mut tail = tail.into_iter().rev();
            let mut acc = tail.next().map(|last| cut_piece(last, side, ws)).unwrap_or_default();
            for piece in tail {
                let alone = cut_piece(piece.clone(), side, ws);
                let mut whole = vec![piece];
                whole.extend(acc);
                acc = vec![Piece::Choice(vec![Template { pieces: whole }, Template { pieces: alone }])];
            }
            pieces.extend(acc);
            pieces
        }
        Side::Start => {
            // pieces[..k] may all be blank: the cut may fall in any piece up to k.
            let mut k = 0;
            while k + 1 < pieces.len() && piece_blank(&pieces[k], ws) {
                k += 1;
            }
            let rest = pieces.split_off(k + 1);
            let mut head = pieces.into_iter();
            let mut acc = head.next().map(|first| cut_piece(first, side, ws)).unwrap_or_default();
            for piece in head {
                let alone = cut_piece(piece.clone(), side, ws);
                acc.push(piece);
                acc = vec![Piece::Choice(vec![Template { pieces: acc }, Template { pieces: alone }])];
            }
            acc.extend(rest);
            acc
        }
    }
}

/// One piece's renderings cut in the `ws` run at `side`.
fn cut_piece(piece: Piece, side: Side, ws: fn(char) -> bool) -> Vec<Piece> {
    match piece {
        Piece::Literal(text) => {
            let kept = match side {
                Side::End => text.trim_end_matches(ws),
                Side::Start => text.trim_start_matches(ws),
            };
            if kept.is_empty() {
                Vec::new()
            } else {
                vec![Piece::Literal(kept.to_owned())]
            }
        }
        slot @ (Piece::Slot(_) | Piece::Held { .. }) => vec![slot],
        Piece::Branch(bodies) => vec![Piece::Branch(
            bodies.into_iter().map(|(label, body)| (label, Template { pieces: cut(body.pieces, side, ws) })).collect(),
        )],
        Piece::Choice(bodies) => vec![Piece::Choice(
            bodies.into_iter().map(|body| Template { pieces: cut(body.pieces, side, ws) }).collect(),
        )],
        // A loop is run no times, or its last (first) time is cut.
        Piece::Repeat(body) => {
            let cut_body = cut(body.pieces.clone(), side, ws);
            let looped = match side {
                Side::End => [vec![Piece::Repeat(body)], cut_body].concat(),
                Side::Start => [cut_body, vec![Piece::Repeat(body)]].concat(),
            };
            vec![Piece::Choice(vec![Template { pieces: looped }, Template::default()])]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{lit, slot};
    use super::*;
    use crate::template::Check as _;

    fn matcher(pieces: Vec<Piece>, trim: Trim) -> super::super::Matcher {
        Template { pieces }.matcher(trim).unwrap()
    }

    #[test]
    fn trailing_whitespace_is_trimmed_into_branches() {
        let branch = Piece::Branch(vec![("x".into(), Template { pieces: vec![lit("X\n\n")] })]);
        let m = matcher(vec![lit("A "), branch, lit(" \n")], Trim::TrimEnd);
        assert!(m.accepts("A X"));
        assert!(!m.accepts("A X\n"), "whitespace left at a trimmed end");
        assert!(!m.accepts("A Y"));
    }

    /// A template that ends in a slot rendered empty, or in a loop, is cut before them.
    #[test]
    fn a_blank_end_lets_the_cut_fall_earlier() {
        let m = matcher(vec![lit("Notes:\n"), slot("notes"), lit("\n")], Trim::TrimEnd);
        for text in ["Notes:", "Notes:\nsome\n\nlines", "Notes:\n{{ x }}"] {
            assert!(m.accepts(text), "{text:?}");
        }
        assert!(!m.accepts("Notez:"));
        assert!(!m.accepts("Notes: "));
        let item = Template { pieces: vec![lit("- "), slot("item"), lit("\n")] };
        let m = matcher(vec![lit("List:\n"), Piece::Repeat(item), lit("\n")], Trim::TrimEnd);
        for text in ["List:", "List:\n- a", "List:\n- a\n- b\nc", "List:\n- a\n-"] {
            assert!(m.accepts(text), "{text:?}");
        }
        assert!(!m.accepts("List:\n* a"));
        assert!(!m.accepts("List:\n- a\n"));
        assert!(!m.accepts("List :\n- a"));
    }

    #[test]
    fn strip_trailing_newlines_takes_newlines_only() {
        let m = matcher(vec![lit("Hi "), slot("name"), lit(" \n\n")], Trim::StripTrailingNewlines);
        assert!(m.accepts("Hi Ada "));
        assert!(m.accepts("Hi  "), "an empty name");
        assert!(!m.accepts("Hi Ada"), "the space is not a newline");
        assert!(!m.accepts("Hi Ada \n"));
        let m = matcher(vec![lit("Hi "), slot("name"), lit(" \n\n")], Trim::AsRendered);
        assert!(m.accepts("Hi Ada \n\n") && !m.accepts("Hi Ada "));
    }

    #[test]
    fn trim_cuts_both_ends() {
        let m = matcher(vec![lit("\n  "), slot("a"), lit(" and "), slot("b"), lit("\n")], Trim::Both);
        for text in ["x and y", "and y", "x and", "and"] {
            assert!(m.accepts(text), "{text:?}");
        }
        assert!(!m.accepts(" x and y"));
        assert!(!m.accepts("x or y"));
        let m = matcher(vec![lit("\n"), Piece::Repeat(Template { pieces: vec![lit(" - "), slot("i")] })], Trim::Both);
        for text in ["", "- a", "- a - b", "- a -"] {
            assert!(m.accepts(text), "{text:?}");
        }
        assert!(!m.accepts("* a") && !m.accepts("a"));
    }

    /// Many pieces that may render blank at the end nest, but stay small and legal
    /// (hundreds; past the nesting limit the template is refused as too large).
    #[test]
    fn a_long_blank_end_compiles() {
        let mut pieces = vec![lit("Head")];
        for i in 0..150 {
            pieces.push(lit("\n"));
            pieces.push(slot(&format!("s{i}")));
        }
        let m = matcher(pieces, Trim::Both);
        assert!(m.accepts("Head"));
        assert!(m.accepts("Head\n\n\nx"));
        assert!(!m.accepts("Hexd"));
    }
}
