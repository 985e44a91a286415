//! Jinja templates read into the [`Template`] shape, under the engine's settings as
//! the app configures them ([`Settings`]: `trim_blocks`, `lstrip_blocks`,
//! `keep_trailing_newline`, whose defaults are Jinja2's and minijinja's own, all off),
//! and `-`/`+` whitespace control, exactly as minijinja's lexer applies them (Jinja2's
//! agrees; it also turns a template's newlines into `newline_sequence`, `"\n"` by
//! default, which a template of `\n` newlines never notices). The project's own
//! prompts are rendered with every setting on ([`Settings::PROJECT`], `environment`).
//!
//! `{{ expr }}` is a slot named by its expression; `{% if %}…{% elif %}…{% else %}`
//! a branch (without `else`, the branch that renders nothing); `{% for %}` a repeat;
//! `{% include %}` the included template inline, and when its name is computed
//! (`"branches/x/" ~ value ~ ".md.j2"`) a branch over every template whose name fits
//! the literal parts; `{% set x = … %}` and comments render nothing. Any other tag is
//! refused with its name: a template this reader cannot follow is never matched.

use super::{Piece, Template};
use std::collections::BTreeMap;

/// The jinja engine's whitespace settings (`[agents.NAME.templates.jinja]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// The first newline after a block tag or comment is removed.
    pub trim_blocks: bool,
    /// Spaces and tabs from the start of a line to a block tag or comment are removed.
    pub lstrip_blocks: bool,
    /// The template's final newline is kept (else one is dropped).
    pub keep_trailing_newline: bool,
}

impl Settings {
    /// What the project's own prompts (the block builder's) are rendered with.
    pub const PROJECT: Settings = Settings { trim_blocks: true, lstrip_blocks: true, keep_trailing_newline: true };
}

/// A minijinja environment with the settings the project's prompts are rendered with.
pub(crate) fn environment() -> minijinja::Environment<'static> {
    environment_with(Settings::PROJECT)
}

/// A minijinja environment under `settings` (no loader yet): strict undefined values,
/// no escaping.
pub(crate) fn environment_with(settings: Settings) -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_keep_trailing_newline(settings.keep_trailing_newline);
    env.set_trim_blocks(settings.trim_blocks);
    env.set_lstrip_blocks(settings.lstrip_blocks);
    env
}

/// How deep includes may nest (a cycle is refused before that).
const MAX_DEPTH: usize = 16;

/// The template `name` of `files` (name → text), includes resolved among `files`, under
/// the project's settings.
pub fn read(name: &str, files: &BTreeMap<String, String>) -> Result<Template, String> {
    read_with(name, files, Settings::PROJECT)
}

/// The template `name` of `files` under `settings`.
pub fn read_with(name: &str, files: &BTreeMap<String, String>, settings: Settings) -> Result<Template, String> {
    Reader { files, settings, stack: Vec::new() }.template(name)
}

struct Reader<'a> {
    files: &'a BTreeMap<String, String>,
    settings: Settings,
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
        let tokens = lex(text, self.settings).map_err(|e| format!("{name}: {e}"))?;
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

/// Text, expressions and tags, with whitespace control applied as minijinja's lexer
/// applies it under `settings`.
fn lex(source: &str, settings: Settings) -> Result<Vec<Token>, String> {
    let source = without_final_newline(source, settings);
    let mut tokens = Vec::new();
    let mut pos = 0;
    // What the previous tag's end does to the text after it.
    let mut after = After::Nothing;
    while pos < source.len() {
        pos += after.skipped(&source[pos..]);
        let next = ["{{", "{%", "{#"].iter().filter_map(|open| source[pos..].find(open).map(|at| pos + at)).min();
        let Some(start) = next else {
            push_text(&mut tokens, &source[pos..]);
            break;
        };
        let kind = match &source[start..start + 2] {
            "{{" => Kind::Var,
            "{%" => Kind::Block,
            _ => Kind::Comment,
        };
        let modifier = source[start + 2..].chars().next();
        let raw = &source[pos..start];
        let text = match modifier {
            Some('-') => raw.trim_end(),
            Some('+') => raw,
            _ if kind != Kind::Var && settings.lstrip_blocks && at_line_start(&source[..start]) => lstripped(raw),
            _ => raw,
        };
        push_text(&mut tokens, text);
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
        after = match end_modifier {
            Some('-') => After::AllWhitespace,
            Some(_) => After::Nothing,
            None if kind != Kind::Var && settings.trim_blocks => After::OneNewline,
            None => After::Nothing,
        };
        match kind {
            Kind::Var => tokens.push(Token::Var(inner.trim().to_owned())),
            Kind::Block => tokens.push(Token::Tag(inner.trim().to_owned())),
            Kind::Comment => {}
        }
        pos = close_at + 2;
    }
    Ok(tokens)
}

/// What a tag's end removes from the text after it.
#[derive(Clone, Copy)]
enum After {
    Nothing,
    /// `-}}`, `-%}`, `-#}`: all whitespace.
    AllWhitespace,
    /// trim_blocks, after a block tag or comment: a `\r`, then a `\n`.
    OneNewline,
}

impl After {
    /// How many bytes at the start of `text` this removes.
    fn skipped(self, text: &str) -> usize {
        match self {
            After::Nothing => 0,
            After::AllWhitespace => text.len() - text.trim_start().len(),
            After::OneNewline => {
                let cr = usize::from(text.starts_with('\r'));
                cr + usize::from(text[cr..].starts_with('\n'))
            }
        }
    }
}

/// The source less one final `\n` and then one `\r`, unless it keeps them.
fn without_final_newline(source: &str, settings: Settings) -> &str {
    if settings.keep_trailing_newline {
        return source;
    }
    let source = source.strip_suffix('\n').unwrap_or(source);
    source.strip_suffix('\r').unwrap_or(source)
}

fn is_newline(c: char) -> bool {
    c == '\r' || c == '\n'
}

/// Whether only whitespace stands between the start of the line (or template) and the
/// end of `before`, where a tag starts.
fn at_line_start(before: &str) -> bool {
    before.chars().rev().find(|c| is_newline(*c) || !c.is_whitespace()).is_none_or(is_newline)
}

/// `text` without the blanks (whitespace but newlines) at its end, when a newline or
/// nothing is left before them (lstrip_blocks).
fn lstripped(text: &str) -> &str {
    let trimmed = text.trim_end_matches(|c: char| c.is_whitespace() && !is_newline(c));
    if trimmed.is_empty() || trimmed.ends_with('\n') {
        trimmed
    } else {
        text
    }
}

fn push_text(tokens: &mut Vec<Token>, text: &str) {
    if !text.is_empty() {
        tokens.push(Token::Text(text.to_owned()));
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod engines;
