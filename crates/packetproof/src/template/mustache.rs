//! Mustache templates read into the [`Template`] shape, as the mustache spec
//! (github.com/mustache/spec, its required modules) and mustache.js render them:
//!
//! - `{{name}}`, `{{{name}}}` and `{{&name}}` are slots; `{{name}}` is HTML-escaped
//!   unless the app turns escaping off ([`Settings`]), and an escaped slot takes only
//!   what the escape can produce: no `<`, `>` or `"`, and `&` only as the entity an
//!   engine writes (the spec's four, mustache.js's `&#39;`, `&#x2F;`, `&#x60;`,
//!   `&#x3D;`, Python chevron's and pystache's `&#x27;`, `&#34;`);
//! - a section `{{#name}}…{{/name}}` is a branch of its body repeated (a list renders it
//!   once per item, a true value once) or nothing; an inverted section
//!   `{{^name}}…{{/name}}` is its body or nothing;
//! - comments `{{! … }}` render nothing;
//! - `{{=<% %>=}}` changes the delimiters for the rest of the template (a partial starts
//!   again with `{{ }}`);
//! - a partial `{{> name}}` is the template `name` (else `name` with the including
//!   template's extension) from the same folder, inline; a partial the folder does not
//!   hold, or one that includes itself, is refused by name;
//! - standalone lines: a line holding section, inverted, closing, comment, partial or
//!   delimiter tags and only whitespace otherwise is dropped whole, its newline
//!   included, and a standalone partial's lines are indented by the line's indentation
//!   (its non-empty lines, as mustache.js does).
//!
//! Refused, naming the template: unclosed or unmatched tags and sections, empty tags,
//! the optional modules (inheritance `{{<…}}`/`{{$…}}`, dynamic partials `{{>*…}}`),
//! and a partial used inline after other text on its line when it spans lines
//! (mustache.js indents its later lines there, the spec does not).

use super::{Piece, Template};
use std::collections::BTreeMap;

/// The mustache engine's settings (`[agents.NAME.templates.mustache]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// `{{name}}` is HTML-escaped (mustache.js's and the spec's default; an app that
    /// sets `Mustache.escape = (t) => t` turns it off).
    pub escape_html: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { escape_html: true }
    }
}

/// What an HTML-escaped slot can hold.
const ESCAPED: &str = r#"(?:[^<>"&]|&(?:amp|lt|gt|quot|#39|#x27|#34|#x2F|#x60|#x3D);)*"#;

/// How deep partials may nest.
const MAX_DEPTH: usize = 16;

/// The template `name` of `files` (name → text, the templates folder), partials
/// resolved among `files`.
pub fn read(name: &str, files: &BTreeMap<String, String>) -> Result<Template, String> {
    read_with(name, files, Settings::default())
}

/// The template `name` of `files` under `settings`.
pub fn read_with(name: &str, files: &BTreeMap<String, String>, settings: Settings) -> Result<Template, String> {
    let Some(text) = files.get(name) else { return Err(format!("no template {name:?}")) };
    let mut reader = Reader { files, settings, stack: vec![name.to_owned()] };
    let pieces = reader.template(name, text).map_err(|e| format!("{name}: {e}"))?;
    Ok(Template { pieces })
}

struct Reader<'a> {
    files: &'a BTreeMap<String, String>,
    settings: Settings,
    /// The templates being read, outermost first.
    stack: Vec<String>,
}

#[derive(Debug)]
enum Token {
    Text(char),
    /// A slot, and whether the engine escapes it.
    Var(String, bool),
    Open(String, bool),
    Close(String),
    /// A partial: its name, and the indentation it takes when it is first on a
    /// standalone line (`None` inline; with the text before it on its line).
    Partial {
        name: String,
        standalone: Option<String>,
        first: bool,
        before: String,
    },
}

/// Whitespace as JavaScript's `\s`, which mustache.js finds standalone lines by.
fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

impl Reader<'_> {
    /// The pieces of the template `name` whose text (indented, for a partial) is `text`.
    fn template(&mut self, name: &str, text: &str) -> Result<Vec<Piece>, String> {
        let tokens = scan(text)?;
        let mut stack: Vec<(String, bool, Vec<Piece>)> = Vec::new();
        let mut pieces = Vec::new();
        for token in tokens {
            match token {
                Token::Text(c) => match pieces.last_mut() {
                    Some(Piece::Literal(last)) => last.push(c),
                    _ => pieces.push(Piece::Literal(c.to_string())),
                },
                Token::Var(name, true) if self.settings.escape_html => {
                    pieces.push(Piece::Held { name, pattern: ESCAPED.to_owned() })
                }
                Token::Var(name, _) => pieces.push(Piece::Slot(name)),
                Token::Open(open, inverted) => stack.push((open, inverted, std::mem::take(&mut pieces))),
                Token::Close(close) => {
                    let Some((open, inverted, outer)) = stack.pop() else {
                        return Err(format!("{{{{/{close}}}}} closes no open section"));
                    };
                    if open != close {
                        return Err(format!("{{{{/{close}}}}} closes the section {open}"));
                    }
                    let body = Template { pieces: std::mem::replace(&mut pieces, outer) };
                    let (label, body) = match inverted {
                        false => (format!("#{open}"), Template { pieces: vec![Piece::Repeat(body)] }),
                        true => (format!("^{open}"), body),
                    };
                    pieces.push(Piece::Branch(vec![(label, body), (format!("no {open}"), Template::default())]));
                }
                Token::Partial { name: partial, standalone, first, before } => {
                    pieces.push(self.partial(name, &partial, standalone, first, &before)?)
                }
            }
        }
        if let Some((open, ..)) = stack.pop() {
            return Err(format!("the section {open} is never closed"));
        }
        Ok(pieces)
    }

    fn partial(
        &mut self,
        from: &str,
        partial: &str,
        standalone: Option<String>,
        first: bool,
        before: &str,
    ) -> Result<Piece, String> {
        if partial.starts_with('*') {
            return Err(format!("{{{{>{partial}}}}}: dynamic partial names (an optional module) are not read"));
        }
        let dir = from.rfind('/').map_or("", |i| &from[..=i]);
        let ext = from.rsplit('/').next().and_then(|file| file.rfind('.').map(|i| &file[i..])).unwrap_or("");
        let candidates = [format!("{dir}{partial}"), format!("{dir}{partial}{ext}")];
        let Some((file, text)) = candidates.iter().find_map(|c| self.files.get_key_value(c.as_str())) else {
            return Err(format!(
                "{{{{>{partial}}}}}: no such partial in the templates folder (looked for {})",
                candidates.join(" and ")
            ));
        };
        if self.stack.iter().any(|n| n == file) || self.stack.len() >= MAX_DEPTH {
            return Err(format!(
                "{{{{>{partial}}}}}: partials nest in a cycle or too deep ({} → {file}); recursive partials are \
                 not read",
                self.stack.join(" → ")
            ));
        }
        let spans_lines = text.trim_end_matches('\n').contains('\n');
        if standalone.is_none() && first && !before.is_empty() && spans_lines {
            return Err(format!(
                "{{{{>{partial}}}}}: a partial of several lines after other text on its line (mustache.js indents its \
                 later lines, the mustache spec does not); put it on a line of its own"
            ));
        }
        let text = match standalone {
            Some(indent) if !indent.is_empty() => text
                .split('\n')
                .map(|line| if line.is_empty() { line.to_owned() } else { format!("{indent}{line}") })
                .collect::<Vec<_>>()
                .join("\n"),
            _ => text.clone(),
        };
        self.stack.push(file.clone());
        let pieces = self.template(file, &text).map_err(|e| format!("in the partial {file}: {e}"))?;
        self.stack.pop();
        Ok(Piece::Branch(vec![(file.clone(), Template { pieces })]))
    }
}

/// The tokens of `text`, standalone lines dropped.
fn scan(text: &str) -> Result<Vec<Token>, String> {
    let mut line = Line::default();
    let mut tokens: Vec<Option<Token>> = Vec::new();
    let (mut open, mut close) = ("{{".to_owned(), "}}".to_owned());
    let mut pos = 0;
    loop {
        let next = text[pos..].find(open.as_str()).map(|i| pos + i);
        for c in text[pos..next.unwrap_or(text.len())].chars() {
            if js_space(c) {
                line.spaces.push(tokens.len());
            } else {
                line.non_space = true;
            }
            tokens.push(Some(Token::Text(c)));
            if c == '\n' {
                line.end(&mut tokens);
            }
        }
        let Some(start) = next else { break };
        line.has_tag = true;
        let at = start + open.len();
        let sigil = text[at..].chars().next().filter(|c| "#^/>{&=!".contains(*c));
        let inner = at + sigil.map_or(0, char::len_utf8);
        let (value, end) = if sigil == Some('=') {
            let eq = text[inner..].find('=').map(|i| inner + i);
            let end = eq.and_then(|eq| text[eq..].find(close.as_str()).map(|i| eq + i + close.len()));
            let (Some(eq), Some(end)) = (eq, end) else {
                return Err(format!("an unclosed delimiter change at byte {start}"));
            };
            (&text[inner..eq], end)
        } else {
            let closing = if sigil == Some('{') { format!("}}{close}") } else { close.clone() };
            let Some(i) = text[inner..].find(closing.as_str()) else {
                return Err(format!("an unclosed tag {open}… at byte {start}"));
            };
            (&text[inner..inner + i], inner + i + closing.len())
        };
        let value = value.trim_matches(js_space);
        let tag = &text[start..end];
        pos = end;
        if sigil != Some('!') && sigil != Some('=') {
            if value.is_empty() {
                return Err(format!("an empty tag {tag} at byte {start}"));
            }
            if value.starts_with(['<', '$']) {
                return Err(format!("{tag}: template inheritance (an optional module) is not read"));
            }
        }
        let first = line.tags == 0;
        line.tags += 1;
        match sigil {
            None | Some('{' | '&') => {
                line.non_space = true;
                tokens.push(Some(Token::Var(value.to_owned(), sigil.is_none())));
            }
            Some('#') => tokens.push(Some(Token::Open(value.to_owned(), false))),
            Some('^') => tokens.push(Some(Token::Open(value.to_owned(), true))),
            Some('/') => tokens.push(Some(Token::Close(value.to_owned()))),
            Some('>') => {
                let before = tokens[line.start..].iter().flatten().filter_map(|t| match t {
                    Token::Text(c) => Some(*c),
                    _ => None,
                });
                let before = before.collect();
                line.partials.push(tokens.len());
                tokens.push(Some(Token::Partial { name: value.to_owned(), standalone: None, first, before }));
            }
            Some('=') => {
                let parts: Vec<&str> = value.split(js_space).filter(|p| !p.is_empty()).collect();
                let [o, c] = parts[..] else {
                    return Err(format!("{tag}: a delimiter change names two delimiters, opening and closing"));
                };
                (open, close) = (o.to_owned(), c.to_owned());
            }
            _ => {}
        }
    }
    line.end(&mut tokens);
    Ok(tokens.into_iter().flatten().collect())
}

/// The line being scanned, as mustache.js tracks it.
#[derive(Default)]
struct Line {
    /// The index of its first token.
    start: usize,
    /// Its whitespace text tokens.
    spaces: Vec<usize>,
    /// Its partials.
    partials: Vec<usize>,
    has_tag: bool,
    non_space: bool,
    tags: usize,
}

impl Line {
    /// At a newline or the end: a line of tags and whitespace only (not a slot among
    /// them) loses its whitespace, newline included.
    fn end(&mut self, tokens: &mut [Option<Token>]) {
        if self.has_tag && !self.non_space {
            for &i in &self.partials {
                let indent: String = tokens[self.start..i]
                    .iter()
                    .filter_map(|t| match t {
                        Some(Token::Text(c @ (' ' | '\t'))) => Some(*c),
                        _ => None,
                    })
                    .collect();
                if let Some(Token::Partial { standalone, first, .. }) = &mut tokens[i] {
                    *standalone = Some(if *first { indent } else { String::new() });
                }
            }
            for &i in &self.spaces {
                tokens[i] = None;
            }
        }
        *self = Line { start: tokens.len(), ..Line::default() };
    }
}

#[cfg(test)]
mod tests;
