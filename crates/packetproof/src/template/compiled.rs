//! A template compiled for matching: each piece's pattern (literal text escaped, a
//! slot's shape, a branch's bodies, a loop's body), and the automata
//! [`split`](super::split) needs to cut a conforming text at each piece's end.

use super::split::{forward, starts, Automaton, Budget, Unsplit};
use super::{Piece, Rendering};

/// A run of pieces.
#[derive(Debug)]
pub(super) struct Seq {
    nodes: Vec<Node>,
    /// Each node's pattern: a run of nodes matches their patterns concatenated.
    patterns: Vec<String>,
    /// The whole run, forward.
    whole: Automaton,
    /// The whole run, backward: built only to say where a text departs from its end.
    whole_back: Automaton,
    /// Per node: where the nodes after it can start (a reverse DFA), when one of them
    /// is not literal text.
    rests: Vec<Automaton>,
    /// Per node: the length of the nodes after it, when all of them are literal text.
    tails: Vec<Option<usize>>,
    /// How deeply runs nest in this one (1: no branch or loop).
    pub(super) depth: usize,
}

#[derive(Debug)]
enum Node {
    Literal(String),
    /// A slot; `shaped`: its values are held to a pattern (else any text).
    Slot {
        name: String,
        shaped: bool,
        shape: Automaton,
        pattern: String,
    },
    /// One of several bodies; `labelled`: a branch whose label is reported.
    Alt {
        labelled: bool,
        arms: Vec<(String, Seq)>,
    },
    /// A body any number of times: `star` and `star_back` match the whole loop.
    Repeat {
        body: Box<Seq>,
        star: Automaton,
        star_back: Automaton,
    },
}

/// What a slot's value is held to: a pattern of the whole value, or any text.
pub(super) type ShapeOf<'a> = &'a dyn Fn(&str) -> Option<String>;

const ANY_TEXT: &str = "(?s:.*)";

impl Seq {
    pub(super) fn compile(pieces: &[Piece], shape_of: ShapeOf) -> Seq {
        let nodes: Vec<Node> = pieces.iter().map(|p| Node::compile(p, shape_of)).collect();
        let patterns: Vec<String> = nodes.iter().map(Node::pattern).collect();
        let tails = (0..nodes.len())
            .map(|i| {
                nodes[i + 1..].iter().try_fold(0, |sum, node| match node {
                    Node::Literal(text) => Some(sum + text.len()),
                    _ => None,
                })
            })
            .collect();
        let rests = nodes.iter().map(|_| Automaton::default()).collect();
        let depth = 1 + nodes.iter().map(Node::depth).max().unwrap_or(0);
        Seq { nodes, patterns, whole: Automaton::default(), whole_back: Automaton::default(), rests, tails, depth }
    }

    pub(super) fn pattern(&self) -> String {
        self.patterns.concat()
    }

    /// Whether all of `text` matches (anchored at both ends).
    pub(super) fn is_match(&self, text: &[u8], budget: &mut Budget) -> Result<bool, Unsplit> {
        let mut whole = false;
        forward(
            &self.whole,
            || self.pattern(),
            text,
            (0, text.len()),
            budget,
            |x| {
                whole = x == text.len();
                whole
            },
        )?;
        Ok(whole)
    }

    /// How far into `text` some match of the whole run still reaches.
    pub(super) fn reach(&self, text: &[u8], budget: &mut Budget) -> Result<usize, Unsplit> {
        super::split::reach(&self.whole, || self.pattern(), text, budget)
    }

    /// Where the longest suffix of `text` that ends some match of the whole run starts.
    pub(super) fn reach_back(&self, text: &[u8], budget: &mut Budget) -> Result<usize, Unsplit> {
        super::split::reach_back(&self.whole_back, || self.pattern(), text, budget)
    }

    /// Build the whole run's automaton now (a template too large is refused when read).
    pub(super) fn prepare(&self) -> Result<(), String> {
        self.whole.prepare(|| self.pattern())
    }

    /// Record the pieces of `text[s..e]`, which matches this run.
    pub(super) fn split(
        &self,
        text: &[u8],
        (s, e): (usize, usize),
        budget: &mut Budget,
        out: &mut Rendering,
    ) -> Result<(), Unsplit> {
        let mut at = s;
        for (i, node) in self.nodes.iter().enumerate() {
            let (end, arm) = match (node, self.tails[i]) {
                (Node::Literal(literal), _) => (at + literal.len(), 0),
                (_, Some(tail)) => {
                    (e.checked_sub(tail).ok_or_else(lost)?, self.arm_to(node, text, (at, e - tail), budget)?)
                }
                _ => {
                    let rest = || self.patterns[i + 1..].concat();
                    let marks = starts(&self.rests[i], rest, text, (at, e), budget)?;
                    node.end(text, (at, e), &marks, budget)?.ok_or_else(lost)?
                }
            };
            node.split(text, (at, end), arm, budget, out)?;
            at = end;
        }
        if at != e {
            return Err(lost());
        }
        Ok(())
    }

    /// The arm of an alternative that matches exactly `text[s..x]` (0 for other nodes).
    fn arm_to(&self, node: &Node, text: &[u8], (s, x): (usize, usize), budget: &mut Budget) -> Result<usize, Unsplit> {
        let mut marks = vec![false; x - s + 1];
        marks[x - s] = true;
        match node {
            Node::Alt { .. } => node.end(text, (s, x), &marks, budget)?.map(|(_, arm)| arm).ok_or_else(lost),
            _ => Ok(0),
        }
    }
}

/// A split that finds no end where the whole matched: a defect, never a verdict.
fn lost() -> Unsplit {
    Unsplit::Engine("the text matched but could not be split into the template's pieces".into())
}

impl Node {
    fn compile(piece: &Piece, shape_of: ShapeOf) -> Node {
        match piece {
            Piece::Literal(text) => Node::Literal(text.clone()),
            Piece::Held { name, pattern } => {
                let shape = shape_of(name).unwrap_or_else(|| pattern.clone());
                Node::Slot {
                    name: name.clone(),
                    shaped: true,
                    shape: Automaton::default(),
                    pattern: format!("(?:{shape})"),
                }
            }
            Piece::Slot(name) => {
                let shape = shape_of(name);
                Node::Slot {
                    name: name.clone(),
                    shaped: shape.is_some(),
                    shape: Automaton::default(),
                    pattern: shape.map_or_else(|| ANY_TEXT.to_owned(), |p| format!("(?:{p})")),
                }
            }
            Piece::Branch(bodies) => Node::Alt {
                labelled: true,
                arms: bodies.iter().map(|(label, t)| (label.clone(), Seq::compile(&t.pieces, shape_of))).collect(),
            },
            Piece::Choice(bodies) => Node::Alt {
                labelled: false,
                arms: bodies.iter().map(|t| (String::new(), Seq::compile(&t.pieces, shape_of))).collect(),
            },
            Piece::Repeat(body) => Node::Repeat {
                body: Box::new(Seq::compile(&body.pieces, shape_of)),
                star: Automaton::default(),
                star_back: Automaton::default(),
            },
        }
    }

    fn depth(&self) -> usize {
        match self {
            Node::Literal(_) | Node::Slot { .. } => 0,
            Node::Alt { arms, .. } => arms.iter().map(|(_, seq)| seq.depth).max().unwrap_or(0),
            Node::Repeat { body, .. } => body.depth,
        }
    }

    fn pattern(&self) -> String {
        match self {
            Node::Literal(text) => regex::escape(text),
            Node::Slot { pattern, .. } => pattern.clone(),
            // No body: nothing matches (an include that names no template there is).
            Node::Alt { arms, .. } if arms.is_empty() => r"[^\s\S]".to_owned(),
            Node::Alt { arms, .. } => {
                let bodies: Vec<String> = arms.iter().map(|(_, seq)| seq.pattern()).collect();
                format!("(?:{})", bodies.join("|"))
            }
            Node::Repeat { body, .. } => format!("(?:{})*", body.pattern()),
        }
    }

    /// Where this node ends, starting at `s`, given `marks[x - s]`: whether the nodes
    /// after it match from `x` to `e`; and for an alternative, which arm. A slot takes
    /// the least text, a loop the most, an alternative its first arm that fits.
    fn end(
        &self,
        text: &[u8],
        (s, e): (usize, usize),
        marks: &[bool],
        budget: &mut Budget,
    ) -> Result<Option<(usize, usize)>, Unsplit> {
        let marked = |x: usize| marks[x - s];
        let mut found = None;
        match self {
            Node::Literal(literal) => return Ok(Some((s + literal.len(), 0))),
            Node::Slot { shaped: false, .. } => return Ok(marks.iter().position(|m| *m).map(|j| (s + j, 0))),
            Node::Slot { shape, pattern, .. } => {
                forward(
                    shape,
                    || pattern.clone(),
                    text,
                    (s, e),
                    budget,
                    |x| {
                        found = marked(x).then_some((x, 0));
                        found.is_some()
                    },
                )?;
            }
            Node::Alt { arms, .. } => {
                for (k, (_, arm)) in arms.iter().enumerate() {
                    forward(
                        &arm.whole,
                        || arm.pattern(),
                        text,
                        (s, e),
                        budget,
                        |x| {
                            found = marked(x).then_some((x, k));
                            found.is_some()
                        },
                    )?;
                    if found.is_some() {
                        break;
                    }
                }
            }
            Node::Repeat { star, .. } => {
                forward(
                    star,
                    || self.pattern(),
                    text,
                    (s, e),
                    budget,
                    |x| {
                        if marked(x) {
                            found = Some((x, 0));
                        }
                        false
                    },
                )?;
            }
        }
        Ok(found)
    }

    /// Record this node's part of a rendering: `text[s..x]`, which it matches.
    fn split(
        &self,
        text: &[u8],
        (s, x): (usize, usize),
        arm: usize,
        budget: &mut Budget,
        out: &mut Rendering,
    ) -> Result<(), Unsplit> {
        match self {
            Node::Literal(_) => Ok(()),
            Node::Slot { name, .. } => {
                let value = std::str::from_utf8(&text[s..x]).map_err(|_| lost())?;
                out.slots.push((name.clone(), value.to_owned()));
                Ok(())
            }
            Node::Alt { labelled, arms } => {
                let (label, seq) = arms.get(arm).ok_or_else(lost)?;
                if *labelled {
                    out.branches.push(label.clone());
                }
                seq.split(text, (s, x), budget, out)
            }
            Node::Repeat { body, star_back, .. } => {
                if s == x {
                    return Ok(());
                }
                let marks = starts(star_back, || self.pattern(), text, (s, x), budget)?;
                let mut at = s;
                while at < x {
                    // The first non-empty time round after which the loop can still end at `x`.
                    let mut next = None;
                    forward(
                        &body.whole,
                        || body.pattern(),
                        text,
                        (at, x),
                        budget,
                        |y| {
                            next = (y > at && marks[y - s]).then_some(y);
                            next.is_some()
                        },
                    )?;
                    let y = next.ok_or_else(lost)?;
                    body.split(text, (at, y), budget, out)?;
                    at = y;
                }
                Ok(())
            }
        }
    }
}
