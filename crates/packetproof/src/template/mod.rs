//! Template conformance: is a text a rendering of a template, whatever values its
//! variable slots held? A template of any style is reduced to one shape, literal
//! text, slots, branches (one of several bodies) and repeats (a body any number of
//! times); [`jinja`] reads minijinja templates into it, [`format`](mod@format) Python
//! `str.format` templates and [`mustache`] mustache templates, each as its engine
//! renders them. What the app does to a rendering before sending it ([`Trim`]) is
//! applied to the shape.
//!
//! A text conforms when it is the literal text exactly, with anything in the slots,
//! for some choice of branches and repeat counts. The matcher compiles the shape to
//! one regular expression whose literal parts are escaped (`regex::escape`): nothing
//! of the template or the text is ever read as pattern syntax, and the `regex` crate
//! matches in time linear in the text (finite automata, no backtracking), so no
//! template and no text can make matching slow. Its size limits bound the memory a
//! huge template may take; past them the template is refused, never matched loosely.

pub mod format;
pub mod jinja;
pub mod mustache;
mod trim;

pub use trim::Trim;

use regex::{Regex, RegexBuilder};

/// A template in the shape every style reduces to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Template {
    pub pieces: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text that must appear exactly.
    Literal(String),
    /// A variable slot: any text, reported under this name.
    Slot(String),
    /// One of several bodies, each with a label (`if x`, `else`, the included file).
    Branch(Vec<(String, Template)>),
    /// A body any number of times, none included (a loop).
    Repeat(Template),
    /// One of several bodies, unlabelled (how a trimmed end may have been cut).
    Choice(Vec<Template>),
}

/// How a text conformed: the value of each slot (in a repeat, its last time) and
/// the label of each branch taken, in template order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendering {
    pub slots: Vec<(String, String)>,
    pub branches: Vec<String>,
}

/// The regular expression is at most this large once compiled; a larger template is refused.
const SIZE_LIMIT: usize = 32 << 20;
/// Groups nest at most this deep (a trimmed end nests one group per piece that may render blank).
const NEST_LIMIT: u32 = 1000;

/// A template ready to match texts against.
#[derive(Debug, Clone)]
pub struct Matcher {
    regex: Regex,
    /// Capture group `s{i}` is slot `slots[i]`.
    slots: Vec<String>,
    /// Capture group `b{i}` (empty) marks that branch `branches[i]` was taken.
    branches: Vec<String>,
    /// What the app does to a rendering: a text it could not have sent (whitespace
    /// left at a trimmed end) is no rendering.
    trim: Trim,
}

impl Template {
    pub fn literal(text: &str) -> Piece {
        Piece::Literal(text.to_owned())
    }

    /// The matcher of the template's renderings once `trim` is done to them (the
    /// app's edit before sending), or why the template is too large to match.
    pub fn matcher(&self, trim: Trim) -> Result<Matcher, String> {
        let trimmed = trim.template(self.clone());
        let mut pattern = String::from(r"\A");
        let (mut slots, mut branches) = (Vec::new(), Vec::new());
        write(&trimmed.pieces, &mut pattern, &mut slots, &mut branches);
        pattern.push_str(r"\z");
        let regex = RegexBuilder::new(&pattern)
            .size_limit(SIZE_LIMIT)
            .dfa_size_limit(SIZE_LIMIT)
            .nest_limit(NEST_LIMIT)
            .build()
            .map_err(|e| format!("the template is too large to match: {e}"))?;
        Ok(Matcher { regex, slots, branches, trim })
    }
}

fn write(pieces: &[Piece], out: &mut String, slots: &mut Vec<String>, branches: &mut Vec<String>) {
    for piece in pieces {
        match piece {
            Piece::Literal(text) => out.push_str(&regex::escape(text)),
            Piece::Slot(name) => {
                // Lazy: a slot takes the least text that lets the rest match.
                out.push_str(&format!("(?P<s{}>(?s:.*?))", slots.len()));
                slots.push(name.clone());
            }
            Piece::Branch(bodies) => {
                out.push_str("(?:");
                for (i, (label, body)) in bodies.iter().enumerate() {
                    if i > 0 {
                        out.push('|');
                    }
                    out.push_str(&format!("(?P<b{}>)", branches.len()));
                    branches.push(label.clone());
                    write(&body.pieces, out, slots, branches);
                }
                // A branch of no bodies matches nothing (an include that names no template there is).
                if bodies.is_empty() {
                    out.push_str(r"[^\s\S]");
                }
                out.push(')');
            }
            Piece::Repeat(body) => {
                out.push_str("(?:");
                write(&body.pieces, out, slots, branches);
                out.push_str(")*");
            }
            Piece::Choice(bodies) => {
                out.push_str("(?:");
                for (i, body) in bodies.iter().enumerate() {
                    if i > 0 {
                        out.push('|');
                    }
                    write(&body.pieces, out, slots, branches);
                }
                if bodies.is_empty() {
                    out.push_str(r"[^\s\S]");
                }
                out.push(')');
            }
        }
    }
}

impl Matcher {
    /// How `text` renders this template, or `None` when it does not.
    pub fn matches(&self, text: &str) -> Option<Rendering> {
        if !self.is_match(text) {
            return None;
        }
        let captures = self.regex.captures(text)?;
        let slots = (0..self.slots.len())
            .filter_map(|i| Some((self.slots[i].clone(), captures.name(&format!("s{i}"))?.as_str().to_owned())))
            .collect();
        let branches = (0..self.branches.len())
            .filter(|i| captures.name(&format!("b{i}")).is_some())
            .map(|i| self.branches[i].clone())
            .collect();
        Some(Rendering { slots, branches })
    }

    /// Whether `text` renders this template (no slot values are taken out).
    pub fn is_match(&self, text: &str) -> bool {
        self.trim.could_send(text) && self.regex.is_match(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn lit(text: &str) -> Piece {
        Piece::Literal(text.into())
    }

    pub(super) fn slot(name: &str) -> Piece {
        Piece::Slot(name.into())
    }

    #[test]
    fn literal_text_must_be_exact_and_slots_take_anything() {
        let t = Template { pieces: vec![lit("Hello "), slot("name"), lit(", welcome to "), slot("place"), lit(".")] };
        let m = t.matcher(Trim::AsRendered).unwrap();
        let r = m.matches("Hello Ada, welcome to the lab (a.k.a. *.*).").unwrap();
        assert_eq!(r.slots, [("name".into(), "Ada".into()), ("place".into(), "the lab (a.k.a. *.*)".into())]);
        assert!(m.matches("Hello Ada, welcome in the lab.").is_none());
        assert!(m.matches("Hello Ada, welcome to the lab.!").is_none());
        assert!(m.matches("hello Ada, welcome to the lab.").is_none());
    }

    /// Regex syntax in the template is text: `.*` in a literal matches only `.*`.
    #[test]
    fn pattern_syntax_in_a_literal_is_literal() {
        let t = Template { pieces: vec![lit("a.*b(c|d)$"), slot("x")] };
        let m = t.matcher(Trim::AsRendered).unwrap();
        assert!(m.is_match("a.*b(c|d)$ tail"));
        assert!(!m.is_match("axxb(c|d)$"));
        assert!(!m.is_match("a.*bc"));
    }

    #[test]
    fn a_branch_is_one_of_its_bodies_and_is_reported() {
        let branch = Piece::Branch(vec![
            ("a".into(), Template { pieces: vec![lit("Mode A: "), slot("x")] }),
            ("b".into(), Template { pieces: vec![lit("Mode B.")] }),
        ]);
        let m = Template { pieces: vec![lit("<"), branch, lit(">")] }.matcher(Trim::AsRendered).unwrap();
        assert_eq!(m.matches("<Mode A: 1>").unwrap().branches, ["a"]);
        assert_eq!(m.matches("<Mode B.>").unwrap().branches, ["b"]);
        assert!(m.matches("<Mode C.>").is_none());
        assert!(m.matches("<Mode B: 1>").is_none());
    }

    #[test]
    fn a_repeat_matches_any_number_of_times() {
        let item = Template { pieces: vec![lit("- "), slot("item"), lit("\n")] };
        let m = Template { pieces: vec![lit("List:\n"), Piece::Repeat(item), lit("End")] }
            .matcher(Trim::AsRendered)
            .unwrap();
        assert!(m.is_match("List:\nEnd"));
        let r = m.matches("List:\n- a\n- b\nEnd").unwrap();
        assert_eq!(r.slots, [("item".into(), "b".into())]);
        assert!(!m.is_match("List:\n* a\nEnd"));
    }

    /// A text built to make a backtracking matcher explode (many slots, a literal
    /// that almost occurs everywhere) is decided quickly.
    #[test]
    fn matching_is_linear_on_hostile_input() {
        let mut pieces = Vec::new();
        for i in 0..50 {
            pieces.push(slot(&format!("s{i}")));
            pieces.push(lit("ab"));
        }
        pieces.push(lit("c"));
        let m = Template { pieces }.matcher(Trim::AsRendered).unwrap();
        let text = "a".repeat(200_000) + &"ab".repeat(60);
        let start = std::time::Instant::now();
        assert!(!m.is_match(&text));
        assert!(m.is_match(&(text.clone() + "c")));
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
    }
}
