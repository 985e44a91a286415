//! Python `str.format` templates read into the [`Template`] shape, by the grammar of
//! Python's format strings (the `string` module's "Format String Syntax"):
//!
//! ```text
//! replacement_field ::= "{" [field_name] ["!" conversion] [":" format_spec] "}"
//! field_name        ::= arg_name ("." attribute_name | "[" element_index "]")*
//! conversion        ::= "r" | "s" | "a"
//! ```
//!
//! Each replacement field is one slot, named by its field name (`order.id`,
//! `items[0]`; `{}` fields by their automatic number, `0`, `1`, …): its conversion
//! and format spec hold the text the slot takes to what Python can render under them
//! ([`format_spec`]); a plain field, or one whose spec holds fields
//! (`{total:>{width}}`, whose width is a value too), takes any text. `{{` and
//! `}}` are braces. What Python refuses to format is refused here, naming the field:
//! a single brace, an unclosed field, an empty attribute or index, text after `]`,
//! a conversion other than `r`, `s`, `a`, fields nested two deep in a spec, and
//! automatic numbering mixed with numbered fields.

use super::{format_spec, Piece, Template};

/// The template `text` is, or why Python would not format it.
pub fn read(text: &str) -> Result<Template, String> {
    let mut reader = Reader { text, at: 0, auto: None };
    let mut pieces = Vec::new();
    let mut literal = String::new();
    while let Some(c) = reader.peek() {
        match c {
            '{' if reader.rest().starts_with("{{") => {
                literal.push('{');
                reader.at += 2;
            }
            '}' if reader.rest().starts_with("}}") => {
                literal.push('}');
                reader.at += 2;
            }
            '}' => return Err(format!("a single '}}' at byte {} (write '}}}}' for a brace)", reader.at)),
            '{' => {
                let start = reader.at;
                reader.at += 1;
                let (name, conversion, spec) =
                    reader.field(true).map_err(|e| format!("the field at byte {start}: {e}"))?;
                if !literal.is_empty() {
                    pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                }
                pieces.push(match format_spec::pattern(conversion, spec) {
                    Some(pattern) => Piece::Held { name, pattern },
                    None => Piece::Slot(name),
                });
            }
            _ => {
                literal.push(c);
                reader.at += c.len_utf8();
            }
        }
    }
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    Ok(Template { pieces })
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
    /// Whether fields are numbered automatically (`{}`), once the first says so.
    auto: Option<(bool, usize)>,
}

impl Reader<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        Some(c)
    }

    /// A replacement field after its `{`, through its `}`: the slot's name, its
    /// conversion and its format spec. In a format spec (`outer` false) a field holds
    /// no further fields.
    fn field(&mut self, outer: bool) -> Result<(String, Option<char>, &str), String> {
        let name = self.field_name()?;
        let mut conversion = None;
        if self.peek() == Some('!') {
            self.at += 1;
            match self.bump() {
                Some(c @ ('r' | 's' | 'a')) => conversion = Some(c),
                Some(c @ (':' | '}')) => return Err(format!("'!{c}': a conversion is r, s or a")),
                Some(c) => return Err(format!("unknown conversion '!{c}' (r, s or a)")),
                None => return Err("the field is never closed with '}'".to_owned()),
            }
            if !matches!(self.peek(), Some(':' | '}')) {
                return Err("expected ':' or '}' after the conversion".to_owned());
            }
        }
        let mut spec = "";
        if self.peek() == Some(':') {
            self.at += 1;
            let start = self.at;
            self.spec(outer)?;
            spec = &self.text[start..self.at];
        }
        match self.bump() {
            Some('}') => Ok((name, conversion, spec)),
            _ => Err("the field is never closed with '}'".to_owned()),
        }
    }

    /// `arg_name ("." attribute | "[" index "]")*`, checked as Python checks it.
    fn field_name(&mut self) -> Result<String, String> {
        let start = self.at;
        while let Some(c) = self.peek() {
            match c {
                '!' | ':' | '}' => break,
                '{' => return Err("'{' in a field name".to_owned()),
                '[' => match self.rest().find(']') {
                    Some(end) => self.at += end + 1,
                    None => return Err("a '[' in the field name is never closed with ']'".to_owned()),
                },
                _ => self.at += c.len_utf8(),
            }
        }
        let name = &self.text[start..self.at];
        let arg_end = name.find(['.', '[']).unwrap_or(name.len());
        let mut rest = &name[arg_end..];
        while !rest.is_empty() {
            let (part, after) = if let Some(attr) = rest.strip_prefix('.') {
                let end = attr.find(['.', '[']).unwrap_or(attr.len());
                (&attr[..end], &attr[end..])
            } else if let Some(index) = rest.strip_prefix('[') {
                let end = index.find(']').unwrap_or(index.len());
                (&index[..end], &index[(end + 1).min(index.len())..])
            } else {
                return Err(format!("{{{name}}}: only '.' or '[' may follow ']'"));
            };
            if part.is_empty() {
                return Err(format!("{{{name}}}: an empty attribute or index"));
            }
            rest = after;
        }
        let arg = &name[..arg_end];
        let auto = arg.is_empty();
        match self.auto {
            Some((was, _)) if was != auto => {
                return Err("automatic field numbering ('{}') mixed with numbered or named fields".to_owned())
            }
            _ => {}
        }
        let (_, count) = self.auto.get_or_insert((auto, 0));
        if auto {
            *count += 1;
            return Ok(format!("{}{name}", *count - 1));
        }
        Ok(name.to_owned())
    }

    /// A format spec through (not including) the field's `}`; in an outer field it may
    /// hold replacement fields (values that shape this one), themselves without any.
    fn spec(&mut self, outer: bool) -> Result<(), String> {
        while let Some(c) = self.peek() {
            match c {
                '}' => return Ok(()),
                '{' if outer => {
                    self.at += 1;
                    self.field(false).map_err(|e| format!("in its format spec: {e}"))?;
                }
                '{' => return Err("a field nested in a nested field's format spec (Python's limit)".to_owned()),
                _ => self.at += c.len_utf8(),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::Check as _;
    use crate::template::Trim;

    #[test]
    fn slots_are_named_fields_and_doubled_braces_are_literal() {
        let template = read("Hi {name}, {{literal}} {order.id!r:>8}.\n").unwrap();
        let matcher = template.matcher(Trim::AsRendered).unwrap();
        let found = matcher.found("Hi Ada Byron, {literal}   'A-17'.\n").unwrap();
        assert_eq!(found.slots, [("name".into(), "Ada Byron".into()), ("order.id".into(), "  'A-17'".into())]);
        assert!(matcher.found("Hello Ada, {literal}   'A-17'.\n").is_none(), "a changed literal word");
        assert!(matcher.found("Hi Ada, {literal}}   'A-17'.\n").is_none(), "a brace more");
        assert!(matcher.found("Hi Ada, {literal} A-17.\n").is_none(), "no repr, nor 8 wide");
    }

    /// Renderings Python 3.11 gave (`template.format(**values)`), with values other
    /// than any fixture's: newlines, braces and template-looking text in the values.
    #[test]
    fn pythons_renderings_conform_and_a_changed_character_does_not() {
        let cases: &[(&str, &str)] = &[
            // '{total:>{width}}|{who!r:^{width}}'.format(total=42, width=6, who='a{b}')
            ("{total:>{width}}|{who!r:^{width}}", "    42|'a{b}'"),
            // 'Items {{n}}: {items[0]} and {items[1].name!s}; {ratio:.{p}f}%\n'
            ("Items {{n}}: {items[0]} and {items[1].name!s}; {ratio:.{p}f}%\n", "Items {n}: x\ny and {{z}}; 0.50%\n"),
            // '{}-{}: {!a}'.format('a', '\n', 'é')
            ("{}-{}: {!a}", "a-\n: '\\xe9'"),
            // '{a b}{c[x:y]}' with keys 'a b' and c={'x:y': '!'}
            ("{a b}{c[x:y]}", "1!"),
        ];
        for (template, rendered) in cases {
            let matcher = read(template).unwrap().matcher(Trim::AsRendered).unwrap();
            assert!(matcher.accepts(rendered), "{template:?} ← {rendered:?}");
            let changed = rendered.replacen(['|', '{', ';', ':', '!'], "#", 1);
            if changed != *rendered && !template.starts_with("{a b}") {
                assert!(!matcher.accepts(&changed), "{template:?} ← {changed:?}");
            }
        }
        let names = |t: &str| {
            read(t).unwrap().pieces.into_iter().filter_map(|p| match p {
                Piece::Slot(name) => Some(name),
                _ => None,
            })
        };
        assert_eq!(names("{}{}{!r:{}}").collect::<Vec<_>>(), ["0", "1", "2"]);
        assert_eq!(names("{a[0]}{b.c}").collect::<Vec<_>>(), ["a[0]", "b.c"]);
    }

    /// What Python refuses to format (3.11, `ValueError`) is refused.
    #[test]
    fn what_python_refuses_is_refused() {
        for (bad, says) in [
            ("a } b", "single '}'"),
            ("a { b", "never closed"),
            ("{a:}}", "single '}'"),
            ("{a.}", "empty attribute"),
            ("{a[]}", "empty attribute"),
            ("{a[0]x}", "only '.' or '['"),
            ("{a!}", "conversion"),
            ("{a!x}", "unknown conversion"),
            ("{a!rr}", "expected ':'"),
            ("{a:{b:{c}}}", "nested"),
            ("{0}{}", "mixed"),
            ("{a[0}", "never closed"),
        ] {
            let err = read(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
