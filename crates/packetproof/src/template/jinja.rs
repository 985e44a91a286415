//! minijinja templates read into the [`Template`] shape, under the settings the
//! project renders its prompts with (`environment`, which `compile::prompts` renders
//! with): `trim_blocks`, `lstrip_blocks`, `keep_trailing_newline`, and `-`/`+`
//! whitespace control.
//!
//! `{{ expr }}` is a slot named by its expression; `{% if %}…{% elif %}…{% else %}`
//! a branch (without `else`, the branch that renders nothing); `{% for %}` a repeat;
//! `{% include %}` the included template inline, and when its name is computed
//! (`"branches/x/" ~ value ~ ".md.j2"`) a branch over every template whose name fits
//! the literal parts; `{% set x = … %}` and comments render nothing. Any other tag is
//! refused with its name: a template this reader cannot follow is never matched.

use super::{Piece, Template};
use std::collections::BTreeMap;

/// A minijinja environment with the settings prompts are rendered with, and read by
/// here (no loader yet): strict undefined values, no escaping, the whitespace rules
/// above.
pub(crate) fn environment() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_keep_trailing_newline(true);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env
}

/// How deep includes may nest (a cycle is refused before that).
const MAX_DEPTH: usize = 16;

/// The template `name` of `files` (name → text), includes resolved among `files`.
pub fn read(name: &str, files: &BTreeMap<String, String>) -> Result<Template, String> {
    Reader { files, stack: Vec::new() }.template(name)
}

struct Reader<'a> {
    files: &'a BTreeMap<String, String>,
    stack: Vec<String>,
}

#[derive(Debug, PartialEq)]
enum Token {
    Text(String),
    Var(String),
    Tag(String),
}

impl Reader<'_> {
    fn template(&mut self, name: &str) -> Result<Template, String> {
        let Some(text) = self.files.get(name) else { return Err(format!("no template {name:?}")) };
        if self.stack.iter().any(|n| n == name) || self.stack.len() >= MAX_DEPTH {
            return Err(format!("{name}: includes nest too deep or in a cycle ({})", self.stack.join(" → ")));
        }
        self.stack.push(name.to_owned());
        let tokens = lex(text).map_err(|e| format!("{name}: {e}"))?;
        let mut tokens = tokens.into_iter().peekable();
        let (body, end) = self.body(&mut tokens, &[]).map_err(|e| format!("{name}: {e}"))?;
        self.stack.pop();
        match end {
            None => Ok(body),
            Some(tag) => Err(format!("{name}: {{% {tag} %}} closes nothing")),
        }
    }

    /// Pieces up to one of the tags `ends` (returned) or the end of the template.
    fn body(
        &mut self,
        tokens: &mut std::iter::Peekable<std::vec::IntoIter<Token>>,
        ends: &[&str],
    ) -> Result<(Template, Option<String>), String> {
        let mut pieces = Vec::new();
        while let Some(token) = tokens.next() {
            match token {
                Token::Text(text) => push_literal(&mut pieces, &text),
                Token::Var(expr) => pieces.push(Piece::Slot(expr)),
                Token::Tag(tag) => {
                    let (word, rest) = tag.split_once(char::is_whitespace).unwrap_or((tag.as_str(), ""));
                    let rest = rest.trim();
                    if ends.contains(&word) {
                        return Ok((Template { pieces }, Some(tag.clone())));
                    }
                    match word {
                        "if" => pieces.push(self.conditional(tokens, rest)?),
                        "for" => pieces.push(self.repeat(tokens, rest)?),
                        "include" => pieces.push(self.include(rest)?),
                        "set" if rest.contains('=') => {}
                        _ => return Err(format!("{{% {word} %}} is not supported by the template matcher")),
                    }
                }
            }
        }
        match ends {
            [] => Ok((Template { pieces }, None)),
            _ => Err(format!("a block is not closed (expected {{% {} %}})", ends.join(" %} or {% "))),
        }
    }

    fn conditional(
        &mut self,
        tokens: &mut std::iter::Peekable<std::vec::IntoIter<Token>>,
        condition: &str,
    ) -> Result<Piece, String> {
        let mut bodies = Vec::new();
        let mut label = format!("if {condition}");
        loop {
            let (body, end) = self.body(tokens, &["elif", "else", "endif"])?;
            bodies.push((label, body));
            let end = end.unwrap_or_default();
            match end.split_once(char::is_whitespace).map_or(end.as_str(), |(w, _)| w) {
                "endif" => break,
                "else" => label = "else".to_owned(),
                _ => label = end.clone(),
            }
        }
        if bodies.last().is_none_or(|(label, _)| label != "else") {
            bodies.push(("else (nothing)".to_owned(), Template::default()));
        }
        Ok(Piece::Branch(bodies))
    }

    fn repeat(
        &mut self,
        tokens: &mut std::iter::Peekable<std::vec::IntoIter<Token>>,
        head: &str,
    ) -> Result<Piece, String> {
        let (body, end) = self.body(tokens, &["else", "endfor"])?;
        if end.as_deref() != Some("else") {
            return Ok(Piece::Repeat(body));
        }
        let (otherwise, _) = self.body(tokens, &["endfor"])?;
        let looped = Template { pieces: vec![Piece::Repeat(body)] };
        Ok(Piece::Branch(vec![(format!("for {head}"), looped), ("else".to_owned(), otherwise)]))
    }

    /// An include: the template inline, or a branch over the templates a computed
    /// name can select (each part of a `~` chain a string literal or anything).
    fn include(&mut self, expr: &str) -> Result<Piece, String> {
        let mut expr = expr.trim();
        let mut optional = false;
        for suffix in ["with context", "without context", "ignore missing"] {
            if let Some(rest) = expr.strip_suffix(suffix) {
                optional |= suffix == "ignore missing";
                expr = rest.trim_end();
            }
        }
        let parts: Vec<Option<String>> = split_concat(expr).into_iter().map(|p| string_literal(p.trim())).collect();
        let names: Vec<String> = self.files.keys().filter(|name| fits(name, &parts)).cloned().collect();
        let mut bodies = Vec::new();
        for name in names {
            bodies.push((name.clone(), self.template(&name)?));
        }
        if optional {
            bodies.push(("(missing)".to_owned(), Template::default()));
        }
        Ok(Piece::Branch(bodies))
    }
}

fn push_literal(pieces: &mut Vec<Piece>, text: &str) {
    if text.is_empty() {
        return;
    }
    match pieces.last_mut() {
        Some(Piece::Literal(last)) => last.push_str(text),
        _ => pieces.push(Piece::Literal(text.to_owned())),
    }
}

/// The parts of `a ~ "b" ~ (c if d else "e")` at the top level.
fn split_concat(expr: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut quote, mut start) = (Vec::new(), 0i32, None, 0);
    for (i, c) in expr.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, '~') if depth == 0 => {
                parts.push(&expr[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&expr[start..]);
    parts
}

/// The text of a plain string literal (`"x"` or `'x'`, no escapes), else `None`.
fn string_literal(part: &str) -> Option<String> {
    let quote = part.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = part.strip_prefix(quote)?.strip_suffix(quote)?;
    (!inner.contains(quote) && !inner.contains('\\')).then(|| inner.to_owned())
}

/// Whether `name` is literal parts (`Some`) in order with any text where `None` is.
/// Greedy leftmost search: correct for literals separated by wildcards.
fn fits(name: &str, parts: &[Option<String>]) -> bool {
    let mut rest = name;
    let mut free = false;
    for (i, part) in parts.iter().enumerate() {
        let Some(literal) = part else {
            free = true;
            continue;
        };
        let last = parts[i + 1..].iter().all(Option::is_none) && i + 1 == parts.len();
        if !free {
            let Some(after) = rest.strip_prefix(literal.as_str()) else { return false };
            rest = after;
        } else if last {
            return rest.ends_with(literal.as_str());
        } else {
            let Some(at) = rest.find(literal.as_str()) else { return false };
            rest = &rest[at + literal.len()..];
        }
        free = false;
    }
    free || rest.is_empty()
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Var,
    Block,
    Comment,
}

/// Text, expressions and tags, with whitespace control applied as minijinja
/// applies it under `trim_blocks` and `lstrip_blocks`.
fn lex(source: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut pos = 0;
    // After the previous tag: strip all leading whitespace (`-`), or one newline (trim_blocks).
    let (mut strip_all, mut strip_newline) = (false, false);
    while pos < source.len() {
        let next = ["{{", "{%", "{#"].iter().filter_map(|open| source[pos..].find(open).map(|at| pos + at)).min();
        let Some(start) = next else {
            tokens.push(Token::Text(lead(&source[pos..], strip_all, strip_newline).to_owned()));
            break;
        };
        let kind = match &source[start..start + 2] {
            "{{" => Kind::Var,
            "{%" => Kind::Block,
            _ => Kind::Comment,
        };
        let modifier = source[start + 2..].chars().next();
        let raw = &source[pos..start];
        let mut end_cut = 0;
        if modifier == Some('-') {
            end_cut = raw.len() - raw.trim_end().len();
        } else if kind != Kind::Var && modifier != Some('+') {
            // lstrip_blocks: spaces and tabs from the start of the line to the tag.
            let blank = raw.len() - raw.trim_end_matches([' ', '\t']).len();
            let at_line_start = start - blank == 0 || source.as_bytes()[start - blank - 1] == b'\n';
            if at_line_start {
                end_cut = blank;
            }
        }
        let text = lead(&raw[..raw.len() - end_cut], strip_all, strip_newline);
        if !text.is_empty() {
            tokens.push(Token::Text(text.to_owned()));
        }
        let close = match kind {
            Kind::Var => "}}",
            Kind::Block => "%}",
            Kind::Comment => "#}",
        };
        let inner_start = start + 2 + usize::from(matches!(modifier, Some('-' | '+')));
        let Some(close_at) = source[inner_start..].find(close).map(|at| inner_start + at) else {
            return Err(format!("an unclosed {} at byte {start}", &source[start..start + 2]));
        };
        let mut inner = &source[inner_start..close_at];
        let end_modifier = inner.chars().last().filter(|c| *c == '-' || *c == '+');
        if end_modifier.is_some() {
            inner = &inner[..inner.len() - 1];
        }
        strip_all = end_modifier == Some('-');
        strip_newline = kind != Kind::Var && end_modifier.is_none();
        match kind {
            Kind::Var => tokens.push(Token::Var(inner.trim().to_owned())),
            Kind::Block => tokens.push(Token::Tag(inner.trim().to_owned())),
            Kind::Comment => {}
        }
        pos = close_at + 2;
    }
    Ok(tokens)
}

/// `text` with its leading whitespace stripped (`-`), or one leading newline (trim_blocks).
fn lead(text: &str, strip_all: bool, strip_newline: bool) -> &str {
    if strip_all {
        return text.trim_start();
    }
    if strip_newline {
        return text.strip_prefix("\r\n").or_else(|| text.strip_prefix('\n')).unwrap_or(text);
    }
    text
}

#[cfg(test)]
mod tests;

/// Placeholder until the engine settings land (jinja-settings branch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    pub trim_blocks: bool,
    pub lstrip_blocks: bool,
    pub keep_trailing_newline: bool,
}

impl Settings {
    pub const PROJECT: Settings = Settings { trim_blocks: true, lstrip_blocks: true, keep_trailing_newline: true };
}

pub fn read_with(name: &str, files: &BTreeMap<String, String>, _settings: Settings) -> Result<Template, String> {
    read(name, files)
}
