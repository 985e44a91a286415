//! Round trips through each reader: a generated template of literal text and slots,
//! written in a style and rendered with generated slot values, conforms to what the
//! style's reader makes of it, and splitting the rendering gives back the slot values
//! in order; with any one literal character changed it does not conform.
//!
//! The split is unique by construction: each slot is followed by a literal that starts
//! with a character no value holds, so a value ends where the next literal begins.
//! What this catches: a reader that drops, doubles or unescapes literal text wrongly
//! (`{{` in a format string, a triple mustache), a slot read under another name or not
//! at all, a matcher that takes a slot's value greedily into the next literal, and
//! literal text matched loosely (any changed character conforming).

use super::{format, jinja, mustache, Check as _, Trim};
use proptest::prelude::*;
use std::collections::BTreeMap;

const NAMES: [&str; 3] = ["a", "b", "c"];

/// Each starts with a character no value holds, and none begins or ends a tag.
const LITERALS: [&str; 7] = [": ", "\n", "|", ". The end.\n", ":\n\n", "|x{y}z|", ".\t"];

/// What values are made of: any text without the literals' first characters.
const VALUE_PARTS: [&str; 10] = ["x", "Y", " ", "{", "}", "{{", "é", "-", "0", "\t"];

/// A template: an optional leading literal, then slots each followed by a literal,
/// then an optional last slot; the slots as indices into [`NAMES`].
#[derive(Debug, Clone)]
struct Generated {
    lead: Option<&'static str>,
    body: Vec<(usize, &'static str)>,
    last: Option<usize>,
    /// Each name's value, and how each slot is written (a style's variants).
    values: [String; 3],
    forms: Vec<usize>,
}

fn generated() -> impl Strategy<Value = Generated> {
    let literal = || prop::sample::select(&LITERALS[..]);
    let value = prop::collection::vec(prop::sample::select(&VALUE_PARTS[..]), 0..4).prop_map(|p| p.concat());
    (
        prop::option::of(literal()),
        prop::collection::vec((0..NAMES.len(), literal()), 0..5),
        prop::option::of(0..NAMES.len()),
        [value.clone(), value.clone(), value],
        prop::collection::vec(0..3usize, 6),
    )
        .prop_map(|(lead, body, last, values, forms)| Generated { lead, body, last, values, forms })
}

/// How a style writes a slot (`form` picks among its spellings) and a literal.
struct Style {
    name: &'static str,
    slot: fn(&str, usize) -> String,
    literal: fn(&str) -> String,
}

const STYLES: [Style; 3] = [
    Style { name: "jinja", slot: jinja_slot, literal: str::to_owned },
    Style { name: "mustache", slot: mustache_slot, literal: str::to_owned },
    Style { name: "format", slot: format_slot, literal: |l| l.replace('{', "{{").replace('}', "}}") },
];

fn jinja_slot(name: &str, form: usize) -> String {
    [format!("{{{{ {name} }}}}"), format!("{{{{{name}}}}}"), format!("{{{{  {name}\n}}}}")][form].clone()
}

/// Escaped, triple and ampersand tags: the values hold nothing mustache escapes.
fn mustache_slot(name: &str, form: usize) -> String {
    [format!("{{{{{name}}}}}"), format!("{{{{{{{name}}}}}}}"), format!("{{{{& {name} }}}}")][form].clone()
}

/// A conversion and an empty format spec leave a string as it is.
fn format_slot(name: &str, form: usize) -> String {
    [format!("{{{name}}}"), format!("{{{name}!s}}"), format!("{{{name}:}}")][form].clone()
}

impl Generated {
    /// The slots in order, each with the form its style writes it in.
    fn slots(&self) -> Vec<(usize, usize)> {
        let names = self.body.iter().map(|(n, _)| *n).chain(self.last);
        names.enumerate().map(|(i, n)| (n, self.forms[i % self.forms.len()])).collect()
    }

    /// The template's source in `style`.
    fn source(&self, style: &Style) -> String {
        let mut out = self.lead.map_or(String::new(), |l| (style.literal)(l));
        let slots = self.slots();
        for (i, (_, literal)) in self.body.iter().enumerate() {
            out += &(style.slot)(NAMES[slots[i].0], slots[i].1);
            out += &(style.literal)(literal);
        }
        if let Some(&(name, form)) = slots.get(self.body.len()) {
            out += &(style.slot)(NAMES[name], form);
        }
        out
    }

    /// The rendering (each slot replaced by its value), with where each literal lies in
    /// it, and the slot values in order.
    fn rendering(&self) -> (String, Vec<std::ops::Range<usize>>, Vec<(String, String)>) {
        let (mut text, mut literals, mut slots) = (String::new(), Vec::new(), Vec::new());
        let mut push_literal = |text: &mut String, literal: &str| {
            literals.push(text.len()..text.len() + literal.len());
            text.push_str(literal);
        };
        if let Some(lead) = self.lead {
            push_literal(&mut text, lead);
        }
        for (name, literal) in &self.body {
            text += &self.values[*name];
            slots.push((NAMES[*name].to_owned(), self.values[*name].clone()));
            push_literal(&mut text, literal);
        }
        if let Some(name) = self.last {
            text += &self.values[name];
            slots.push((NAMES[name].to_owned(), self.values[name].clone()));
        }
        (text, literals, slots)
    }

    fn context(&self) -> serde_json::Value {
        NAMES.iter().zip(&self.values).map(|(n, v)| ((*n).to_owned(), serde_json::json!(v))).collect()
    }
}

/// The template `source` read by `style`'s reader.
fn read(style: &Style, source: &str) -> Result<super::Template, String> {
    let files: BTreeMap<String, String> = [("t".to_owned(), source.to_owned())].into();
    match style.name {
        "jinja" => jinja::read("t", &files),
        "mustache" => mustache::read("t", &files),
        _ => format::read(source),
    }
}

fn round_trip(generated: &Generated, style: &Style) -> Result<(), TestCaseError> {
    let source = generated.source(style);
    let (text, literals, slots) = generated.rendering();
    if style.name == "jinja" {
        // The engine itself renders jinja: the rendering above is its output.
        let env = jinja::environment();
        let rendered = env.render_str(&source, generated.context()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&rendered, &text, "minijinja's rendering of {:?}", source);
    }
    let template = read(style, &source).map_err(|e| TestCaseError::fail(format!("{source:?}: {e}")))?;
    let matcher = template.matcher(Trim::AsRendered).map_err(TestCaseError::fail)?;
    let found = matcher.found(&text);
    prop_assert!(found.is_some(), "{}: {:?} is no rendering of {:?}", style.name, text, source);
    prop_assert_eq!(found.unwrap().slots, slots, "{}: the values of {:?} in {:?}", style.name, source, text);
    for at in literals.into_iter().flatten().filter(|at| text.is_char_boundary(*at)) {
        let c = text[at..].chars().next().unwrap();
        let changed = format!("{}§{}", &text[..at], &text[at + c.len_utf8()..]);
        prop_assert!(!matcher.accepts(&changed), "{}: {:?} conforms to {:?}", style.name, changed, source);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_jinja_rendering_gives_back_its_values_and_no_changed_literal_conforms(g in generated()) {
        round_trip(&g, &STYLES[0])?;
    }

    #[test]
    fn a_mustache_rendering_gives_back_its_values_and_no_changed_literal_conforms(g in generated()) {
        round_trip(&g, &STYLES[1])?;
    }

    #[test]
    fn a_format_rendering_gives_back_its_values_and_no_changed_literal_conforms(g in generated()) {
        round_trip(&g, &STYLES[2])?;
    }
}
