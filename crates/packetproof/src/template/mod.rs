//! Template conformance: is a text a rendering of a template, whatever values its
//! variable slots held? A template of any style is reduced to one shape, literal
//! text, slots, branches (one of several bodies) and repeats (a body any number of
//! times); [`jinja`] reads minijinja templates into it, [`format`](mod@format) Python
//! `str.format` templates and [`mustache`] mustache templates, each as its engine
//! renders them. What the app does to a rendering before sending it ([`Trim`]) is
//! applied to the shape.
//!
//! A text conforms when it is the literal text exactly, with values of their shapes
//! (any text, unless held to one) in the slots, for some choice of branches and
//! repeat counts. The matcher compiles the shape to regular expressions whose literal
//! parts are escaped (`regex::escape`): nothing of the template or the text is ever
//! read as pattern syntax. Deciding and splitting a text into slot values runs lazy
//! DFAs (`split`), in time linear in the text, every step counted against a
//! per-call bound; size limits bound the memory a huge template may take, and past
//! them the template is refused, never matched loosely.

mod compiled;
pub mod format;
pub mod format_spec;
pub mod jinja;
pub mod located;
pub mod mustache;
pub mod shape;
mod split;
mod trim;

pub use shape::{Shape, SlotContract};
pub use split::Unsplit;
pub use trim::Trim;

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
    /// A slot whose value the engine itself holds to a pattern, whatever the data: an
    /// HTML-escaped mustache slot, a `str.format` field with a conversion or a format
    /// spec. No rendering of the template holds anything else there.
    Held { name: String, pattern: String },
    /// One of several bodies, each with a label (`if x`, `else`, the included file).
    Branch(Vec<(String, Template)>),
    /// A body any number of times, none included (a loop).
    Repeat(Template),
    /// One of several bodies, unlabelled (how a trimmed end may have been cut).
    Choice(Vec<Template>),
}

/// How a text conformed: the value of each slot, every time it was filled (each time
/// round a loop), and the label of each branch taken, in text order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendering {
    pub slots: Vec<(String, String)>,
    pub branches: Vec<String>,
}

/// Templates nested at most this deep are split on the caller's thread.
const SHALLOW: usize = 24;
/// Stack a level of nesting may take while splitting (generous: frames of unoptimised builds).
const STACK_PER_LEVEL: usize = 32 << 10;

/// A template ready to match texts against.
#[derive(Debug)]
pub struct Matcher {
    root: compiled::Seq,
    /// DFA steps one text may take (the per-call bound).
    steps: u64,
    /// What the app does to a rendering: a text it could not have sent (whitespace
    /// left at a trimmed end) is no rendering.
    trim: Trim,
}

impl Template {
    pub fn literal(text: &str) -> Piece {
        Piece::Literal(text.to_owned())
    }

    /// The template whose renderings are this one's once `trim` is done to them (a
    /// template whose rendering fills another's slot; whitespace left at the cut end
    /// is not refused there, as the outer text's ends are).
    pub fn trimmed(self, trim: Trim) -> Template {
        trim.template(self)
    }

    /// The matcher of the template's renderings once `trim` is done to them (the
    /// app's edit before sending), any text in its slots; or why the template is too
    /// large to match.
    pub fn matcher(&self, trim: Trim) -> Result<Matcher, String> {
        self.shaped_matcher(trim, &|_| None)
    }

    /// [`Template::matcher`] with each slot's values held to the pattern `shape_of`
    /// gives for its name (a regular expression of the whole value; `None`: any text).
    pub fn shaped_matcher(&self, trim: Trim, shape_of: compiled::ShapeOf) -> Result<Matcher, String> {
        let trimmed = trim.template(self.clone());
        let root = compiled::Seq::compile(&trimmed.pieces, shape_of);
        root.prepare()?;
        Ok(Matcher { root, trim, steps: split::STEP_BUDGET })
    }
}

impl Matcher {
    /// How `text` renders this template (`None`: it does not), or why it was not
    /// decided (past the per-call bound of matching steps).
    pub fn matches(&self, text: &str) -> Result<Option<Rendering>, Unsplit> {
        // Splitting recurses once per nested branch or loop (a trimmed end nests one per
        // piece): a deep template is split on a thread with the stack it needs.
        if self.root.depth <= SHALLOW {
            return self.split(text);
        }
        let stack = (self.root.depth * STACK_PER_LEVEL).max(1 << 20);
        std::thread::scope(|scope| {
            let worker = std::thread::Builder::new().stack_size(stack).spawn_scoped(scope, || self.split(text));
            match worker {
                Ok(worker) => worker.join().unwrap_or_else(|_| Err(Unsplit::Engine("the matcher failed".into()))),
                Err(e) => Err(Unsplit::Engine(format!("no thread to match on: {e}"))),
            }
        })
    }

    /// The same matcher with another per-call bound of DFA steps.
    pub fn with_step_budget(mut self, steps: u64) -> Matcher {
        self.steps = steps;
        self
    }

    fn split(&self, text: &str) -> Result<Option<Rendering>, Unsplit> {
        let mut budget = split::Budget::new(self.steps);
        if !self.trim.could_send(text) || !self.root.is_match(text.as_bytes(), &mut budget)? {
            return Ok(None);
        }
        let mut rendering = Rendering::default();
        self.root.split(text.as_bytes(), (0, text.len()), &mut budget, &mut rendering)?;
        Ok(Some(rendering))
    }

    /// Where `text` departs from every rendering, read from its start: the byte offset
    /// of the first byte no rendering has after the bytes before it; and read from its
    /// end: the offset after the last byte no rendering has before the bytes after it.
    /// (`(text.len(), 0)`: no departure is seen, as when a slot could hold the rest.)
    pub fn departs_at(&self, text: &str) -> Result<(usize, usize), Unsplit> {
        let mut budget = split::Budget::new(self.steps);
        let ahead = self.root.reach(text.as_bytes(), &mut budget)?;
        let back = self.root.reach_back(text.as_bytes(), &mut budget)?;
        // On character boundaries: the byte that differs may be inside a character.
        let floor = |at: usize| (0..=at).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
        let ceil = |at: usize| (at..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
        Ok((floor(ahead), ceil(back)))
    }

    /// Whether `text` renders this template (no slot values are taken out).
    pub fn is_match(&self, text: &str) -> Result<bool, Unsplit> {
        Ok(self.trim.could_send(text) && self.root.is_match(text.as_bytes(), &mut split::Budget::new(self.steps))?)
    }
}

/// Matching in tests, where the per-call bound is never reached.
#[cfg(test)]
pub(crate) trait Check {
    fn accepts(&self, text: &str) -> bool;
    fn found(&self, text: &str) -> Option<Rendering>;
}

#[cfg(test)]
impl Check for Matcher {
    fn accepts(&self, text: &str) -> bool {
        self.is_match(text).expect("within the per-call bound")
    }

    fn found(&self, text: &str) -> Option<Rendering> {
        self.matches(text).expect("within the per-call bound")
    }
}

#[cfg(test)]
mod round_trip_tests;

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
        let r = m.found("Hello Ada, welcome to the lab (a.k.a. *.*).").unwrap();
        assert_eq!(r.slots, [("name".into(), "Ada".into()), ("place".into(), "the lab (a.k.a. *.*)".into())]);
        assert!(m.found("Hello Ada, welcome in the lab.").is_none());
        assert!(m.found("Hello Ada, welcome to the lab.!").is_none());
        assert!(m.found("hello Ada, welcome to the lab.").is_none());
    }

    /// Regex syntax in the template is text: `.*` in a literal matches only `.*`.
    #[test]
    fn pattern_syntax_in_a_literal_is_literal() {
        let t = Template { pieces: vec![lit("a.*b(c|d)$"), slot("x")] };
        let m = t.matcher(Trim::AsRendered).unwrap();
        assert!(m.accepts("a.*b(c|d)$ tail"));
        assert!(!m.accepts("axxb(c|d)$"));
        assert!(!m.accepts("a.*bc"));
    }

    #[test]
    fn a_branch_is_one_of_its_bodies_and_is_reported() {
        let branch = Piece::Branch(vec![
            ("a".into(), Template { pieces: vec![lit("Mode A: "), slot("x")] }),
            ("b".into(), Template { pieces: vec![lit("Mode B.")] }),
        ]);
        let m = Template { pieces: vec![lit("<"), branch, lit(">")] }.matcher(Trim::AsRendered).unwrap();
        assert_eq!(m.found("<Mode A: 1>").unwrap().branches, ["a"]);
        assert_eq!(m.found("<Mode B.>").unwrap().branches, ["b"]);
        assert!(m.found("<Mode C.>").is_none());
        assert!(m.found("<Mode B: 1>").is_none());
    }

    #[test]
    fn a_repeat_matches_any_number_of_times() {
        let item = Template { pieces: vec![lit("- "), slot("item"), lit("\n")] };
        let m = Template { pieces: vec![lit("List:\n"), Piece::Repeat(item), lit("End")] }
            .matcher(Trim::AsRendered)
            .unwrap();
        assert!(m.accepts("List:\nEnd"));
        let r = m.found("List:\n- a\n- b\nEnd").unwrap();
        assert_eq!(r.slots, [("item".into(), "a".into()), ("item".into(), "b".into())]);
        assert!(!m.accepts("List:\n* a\nEnd"));
    }

    /// Every time round a loop is reported, so a shape or a forbidden key in any of
    /// them is seen, and a slot's shape decides the split.
    #[test]
    fn every_time_round_a_loop_is_split_out() {
        let item = Template { pieces: vec![lit("- "), slot("title"), lit(" ("), slot("count"), lit(")\n")] };
        let t = Template { pieces: vec![lit("Items:\n"), Piece::Repeat(item), lit("Done")] };
        let m = t.matcher(Trim::AsRendered).unwrap();
        let r = m.found("Items:\n- a (1)\n- b (x) (2)\n- c (3)\nDone").unwrap();
        let values: Vec<&str> = r.slots.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(values, ["a", "1", "b", "x) (2", "c", "3"]);
        let integer = |name: &str| (name == "count").then(|| "[0-9]+".to_owned());
        let shaped = t.shaped_matcher(Trim::AsRendered, &integer).unwrap();
        let r = shaped.found("Items:\n- a (1)\n- b (x) (2)\n- c (3)\nDone").unwrap();
        let values: Vec<&str> = r.slots.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(values, ["a", "1", "b (x)", "2", "c", "3"]);
        assert!(!shaped.accepts("Items:\n- a (one)\nDone"));
    }

    /// The per-call bound: a text that would take more steps is not decided (an
    /// error the caller reports as not judgeable), never passed; 1 MB of the
    /// template's own text in a slot is well within the default bound.
    #[test]
    fn matching_is_bounded_per_call() {
        let mut pieces = Vec::new();
        for i in 0..20 {
            pieces.push(lit("<rule>"));
            pieces.push(slot(&format!("s{i}")));
            pieces.push(lit("</rule>\n"));
        }
        let t = Template { pieces };
        let own: String = (0..20).map(|i| format!("<rule>{i}</rule>\n")).collect();
        let flood = own.repeat((1 << 20) / own.len());
        let text = own.replacen("<rule>0<", &format!("<rule>{flood}<"), 1);
        let m = t.matcher(Trim::AsRendered).unwrap();
        let r = m.matches(&text).unwrap().unwrap();
        // Ambiguous: each slot takes the least text that lets the rest match.
        let literal = 20 * "<rule></rule>\n".len();
        assert_eq!(r.slots.iter().map(|(_, v)| v.len()).sum::<usize>(), text.len() - literal);
        assert_eq!(r.slots[0].1, "<rule>0");
        let tight = t.matcher(Trim::AsRendered).unwrap().with_step_budget(1 << 20);
        assert_eq!(tight.matches(&text), Err(Unsplit::OverBudget));
        assert_eq!(tight.is_match(&text[..1000]), Ok(false));
    }

    #[test]
    fn where_a_text_departs_from_every_rendering_is_found() {
        let t = Template { pieces: vec![lit("Hello "), slot("name"), lit(", welcome to the lab.")] };
        let m = t.matcher(Trim::AsRendered).unwrap();
        let text = "Hello Ada, welcome in the lab.";
        // The slot may take "Ada, welcome in the lab.": only from the end is it seen, at "in".
        let (ahead, back) = m.departs_at(text).unwrap();
        assert_eq!((ahead, &text[..back]), (text.len(), "Hello Ada, welcome in"));
        assert_eq!(m.departs_at("Hello Ada, welcome to the lab.").unwrap(), (30, 0));
        assert_eq!(m.departs_at("Hi, welcome to the lab.").unwrap().0, 1);
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
        assert!(!m.accepts(&text));
        assert!(m.accepts(&(text.clone() + "c")));
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
    }
}
