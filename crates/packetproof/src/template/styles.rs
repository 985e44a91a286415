//! Readers of the template styles a contract profile may declare besides
//! minijinja: Python's `str.format` and mustache. Each turns a template's text into
//! the one shape [`super::Template`] matches against. Hand-written: each is a few
//! lines of tokenising, and no crate reads a template into literal text and slots
//! (the renderers only render).

use super::{Piece, Template};

/// Python `str.format`: `{name}` (or `{name.attr}`, `{name[0]}`, `{name!r}`,
/// `{name:>10}`) is a slot named by its field, `{{` and `}}` are braces. A single
/// brace left unmatched is an error, as Python raises one.
pub fn read_format(text: &str) -> Result<Template, String> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(['{', '}']) {
        literal.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            literal.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if tail.starts_with('}') {
            return Err(format!("a single '}}' at byte {}", text.len() - tail.len()));
        }
        let end = tail.find('}').ok_or_else(|| format!("an unclosed '{{' at byte {}", text.len() - tail.len()))?;
        let field = &tail[1..end];
        let name = field.split(['.', '[', '!', ':']).next().unwrap_or_default();
        if name.is_empty() || name.contains('{') {
            return Err(format!("a replacement field without a name ({{{field}}}): fields must be named"));
        }
        flush(&mut literal, &mut pieces);
        pieces.push(Piece::Slot(name.to_owned()));
        rest = &tail[end + 1..];
    }
    literal.push_str(rest);
    flush(&mut literal, &mut pieces);
    Ok(Template { pieces })
}

/// Mustache: `{{name}}` and `{{{name}}}` (or `{{&name}}`) are slots; a section
/// `{{#name}}…{{/name}}` is a branch of its body repeated (a list renders it once per
/// item, a true value once) or nothing; an inverted section `{{^name}}…{{/name}}` is
/// its body or nothing; comments `{{! … }}` render nothing. Partials and changed
/// delimiters are refused, never matched loosely. (HTML escaping of `{{name}}` is
/// in the slot: a slot takes any text.)
pub fn read_mustache(text: &str) -> Result<Template, String> {
    let mut stack: Vec<(String, bool, Vec<Piece>)> = Vec::new();
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("{{") {
        literal.push_str(&rest[..i]);
        let tail = &rest[i..];
        let (close, inner_start) = if tail.starts_with("{{{") { ("}}}", 3) } else { ("}}", 2) };
        let end = tail.find(close).ok_or_else(|| format!("an unclosed tag at byte {}", text.len() - tail.len()))?;
        let tag = tail[inner_start..end].trim();
        rest = &tail[end + close.len()..];
        let (sigil, name) = match tag.chars().next() {
            Some(c @ ('#' | '^' | '/' | '!' | '&' | '>' | '=')) => (Some(c), tag[1..].trim()),
            _ => (None, tag),
        };
        match sigil {
            Some('!') => continue,
            Some('>') | Some('=') => return Err(format!("{{{{{tag}}}}}: partials and delimiter changes are not read")),
            _ if name.is_empty() => return Err("an empty tag {{}}".to_owned()),
            _ => {}
        }
        flush(&mut literal, &mut pieces);
        match sigil {
            Some('#') | Some('^') => stack.push((name.to_owned(), sigil == Some('#'), std::mem::take(&mut pieces))),
            Some('/') => {
                let Some((open, repeated, outer)) = stack.pop().filter(|(open, ..)| open == name) else {
                    return Err(format!("{{{{/{name}}}}} closes no open section"));
                };
                let body = Template { pieces: std::mem::replace(&mut pieces, outer) };
                let body = if repeated { Template { pieces: vec![Piece::Repeat(body)] } } else { body };
                let label = if repeated { format!("#{open}") } else { format!("^{open}") };
                pieces.push(Piece::Branch(vec![(label, body), (format!("no {open}"), Template::default())]));
            }
            _ => pieces.push(Piece::Slot(name.to_owned())),
        }
    }
    literal.push_str(rest);
    flush(&mut literal, &mut pieces);
    if let Some((open, ..)) = stack.pop() {
        return Err(format!("the section {open} is never closed"));
    }
    Ok(Template { pieces })
}

fn flush(literal: &mut String, pieces: &mut Vec<Piece>) {
    if !literal.is_empty() {
        pieces.push(Piece::Literal(std::mem::take(literal)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_format_slots_are_named_fields_and_doubled_braces_are_literal() {
        let template = read_format("Hi {name}, {{literal}} {order.id!r:>8}.\n").unwrap();
        let matcher = template.matcher().unwrap();
        let found = matcher.matches("Hi Ada Byron, {literal} A-17.\n").unwrap();
        assert_eq!(found.slots, [("name".into(), "Ada Byron".into()), ("order".into(), "A-17".into())]);
        assert!(matcher.matches("Hello Ada, {literal} A-17.\n").is_none(), "a changed literal word");
        for bad in ["a } b", "a { b", "{}"] {
            assert!(read_format(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn mustache_sections_are_branches_and_partials_are_refused() {
        let template =
            read_mustache("Dear {{name}},{{! note }}\n{{#items}}- {{{title}}}\n{{/items}}{{^items}}none\n{{/items}}")
                .unwrap();
        let matcher = template.matcher().unwrap();
        assert!(matcher.matches("Dear Ada,\n- one\n- two\n").is_some());
        assert!(matcher.matches("Dear Ada,\nnone\n").is_some());
        assert!(matcher.matches("Dear Ada,\nnothing\n").is_none());
        assert!(read_mustache("{{> header}}").is_err());
        assert!(read_mustache("{{#a}}x").is_err());
        assert!(read_mustache("{{#a}}x{{/b}}").is_err());
    }
}
