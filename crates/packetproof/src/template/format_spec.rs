//! What a `str.format` replacement field can render, as a pattern of its whole text:
//! the conversion (`!r`, `!a`) and the format-spec mini-language of Python's `string`
//! module ("Format Specification Mini-Language"):
//!
//! ```text
//! format_spec ::= [[fill]align][sign]["z"]["#"]["0"][width][grouping]["." precision][type]
//! ```
//!
//! A precision bounds a string's length, a width is the least length of the result, a
//! number type admits only that type's digits (with its sign, grouping and padding), and
//! `!r`/`!a` only a repr (no raw control character or line terminator; `!a` only
//! printable ASCII). A spec whose width or precision is itself a field
//! (`{total:>{width}}`), or one Python would refuse, holds nothing here: the slot takes
//! any text. Hand-written: no crate parses Python's format specs.
//!
//! One bound is not kept: a number's least width (a regular expression cannot hold a
//! number's shape and a least length at once): `{n:>8d}` takes `42` as well as `      42`.

/// The pattern of every text a field with `conversion` and `spec` renders, or `None`
/// when it may render any text.
pub fn pattern(conversion: Option<char>, spec: &str) -> Option<String> {
    if spec.contains('{') {
        return None;
    }
    let spec = Spec::parse(spec)?;
    if spec == Spec::default() {
        match conversion {
            Some('r') => return Some(repr(REPR)),
            Some('a') => return Some(repr(ASCII_REPR)),
            _ => {}
        }
    }
    if spec == Spec::default() && conversion.is_none_or(|c| c == 's') {
        return None;
    }
    let core = match conversion {
        Some('r') => Core::Text { chars: REPR, max: spec.precision },
        Some('a') => Core::Text { chars: ASCII_REPR, max: spec.precision },
        _ => spec.core()?,
    };
    Some(spec.padded(&core))
}

/// The characters of a repr: Python escapes every character that is not printable.
const REPR: &str = r"[^\x00-\x1f\x7f-\x9f\x{2028}\x{2029}]";
/// The characters of an ascii(): printable ASCII only.
const ASCII_REPR: &str = r"[\x20-\x7e]";
/// A whole repr of `chars`: a quoted string (Python quotes with `'` unless the text
/// holds `'` and no `"`), or an unquoted word (a number, `None`, `True`), or a
/// bracketed one (a list, a tuple, a dict, `<object at …>`).
fn repr(chars: &str) -> String {
    let quoted = |q: char| format!(r"{q}(?:[{chars}&&[^{q}\\]]|\\{chars})*{q}");
    format!(r"{}|{}|[-+0-9A-Za-z_.]*|[\[({{<]{chars}*[\])}}>]", quoted('\''), quoted('"'))
}

/// Any character.
const ANY: &str = r"(?s:.)";

/// Infinity and not-a-number, as each number type writes them.
const NON_FINITE: &str = "inf|nan|INF|NAN";

/// A format spec, parsed.
#[derive(Debug, Default, PartialEq, Eq)]
struct Spec {
    fill: Option<char>,
    align: Option<char>,
    sign: bool,
    alternate: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
    kind: Option<char>,
}

/// The formatted value before padding.
enum Core {
    /// Characters of a class, at most `max` of them.
    Text { chars: &'static str, max: Option<usize> },
    /// A number's text (a pattern), or a text of at most `max` characters: the value
    /// is either.
    Either { number: String, max: Option<usize> },
    /// A number's text.
    Number(String),
}

impl Spec {
    fn parse(spec: &str) -> Option<Spec> {
        let chars: Vec<char> = spec.chars().collect();
        let mut parsed = Spec::default();
        let mut at = 0;
        let is_align = |c: &char| matches!(c, '<' | '>' | '=' | '^');
        if chars.get(1).is_some_and(is_align) {
            (parsed.fill, parsed.align, at) = (Some(chars[0]), Some(chars[1]), 2);
        } else if chars.first().is_some_and(is_align) {
            (parsed.align, at) = (Some(chars[0]), 1);
        }
        if let Some('+' | '-' | ' ') = chars.get(at) {
            (parsed.sign, at) = (true, at + 1);
        }
        if chars.get(at) == Some(&'z') {
            at += 1;
        }
        if chars.get(at) == Some(&'#') {
            (parsed.alternate, at) = (true, at + 1);
        }
        if chars.get(at) == Some(&'0') {
            (parsed.zero, at) = (true, at + 1);
        }
        let (width, next) = digits(&chars, at);
        (parsed.width, at) = (width.unwrap_or(0), next);
        if let Some(',' | '_') = chars.get(at) {
            at += 1;
        }
        if chars.get(at) == Some(&'.') {
            let (precision, next) = digits(&chars, at + 1);
            (parsed.precision, at) = (Some(precision?), next);
        }
        if let Some(kind) = chars.get(at) {
            if !"bcdeEfFgGnosxX%".contains(*kind) {
                return None;
            }
            (parsed.kind, at) = (Some(*kind), at + 1);
        }
        (at == chars.len()).then_some(parsed)
    }

    /// Whether only a number can be formatted under this spec (a string would raise).
    fn numeric_only(&self) -> bool {
        self.sign || self.alternate || self.zero || self.align == Some('=')
    }

    fn core(&self) -> Option<Core> {
        let digits = r"[0-9][0-9,_]*";
        let sign = r"[-+ ]?";
        let number = |body: String| format!("{sign}(?:{body}|{NON_FINITE})");
        Some(match self.kind {
            Some('s') => Core::Text { chars: ANY, max: self.precision },
            Some('c') => Core::Text { chars: ANY, max: Some(1) },
            Some('d' | 'n') => Core::Number(format!("{sign}{digits}")),
            Some('b' | 'o' | 'x' | 'X') => Core::Number(format!("{sign}(?:0[bBoOxX])?[0-9a-fA-F][0-9a-fA-F,_]*")),
            Some(kind @ ('f' | 'F' | '%')) => {
                let places = self.precision.unwrap_or(6);
                let fraction = if places == 0 { r"\.?".to_owned() } else { format!(r"\.[0-9]{{{places}}}") };
                let percent = if kind == '%' { "%" } else { "" };
                Core::Number(format!("{}{percent}", number(format!("{digits}{fraction}"))))
            }
            Some('e' | 'E') => Core::Number(number(r"[0-9](?:\.[0-9]*)?[eE][-+][0-9]{2,}".to_owned())),
            Some('g' | 'G') => Core::Number(number(general(self.precision))),
            None if self.numeric_only() => Core::Number(number(general(self.precision))),
            None => Core::Either { number: number(general(self.precision)), max: self.precision },
            Some(_) => return None,
        })
    }

    /// `core` padded to the width: a text to a least length, a number with its fill
    /// on the side its alignment leaves.
    fn padded(&self, core: &Core) -> String {
        let numeric = matches!(core, Core::Number(_));
        let fill = regex::escape(&self.fill.unwrap_or(if self.zero && numeric { '0' } else { ' ' }).to_string());
        let text = |chars: &str, max: Option<usize>| {
            let least = self.width;
            match max {
                Some(max) => format!("{chars}{{{least},{}}}", max.max(least)),
                None => format!("{chars}{{{least},}}"),
            }
        };
        let number = |pattern: &str| {
            if self.width == 0 {
                return format!("(?:{pattern})");
            }
            match self.align {
                Some('<') => format!("(?:{pattern})(?:{fill})*"),
                Some('^') => format!("(?:{fill})*(?:{pattern})(?:{fill})*"),
                Some('=') => format!("[-+ ]?(?:{fill})*(?:{pattern})"),
                _ if self.zero => format!("[-+ ]?(?:{fill})*(?:{pattern})"),
                _ => format!("(?:{fill})*(?:{pattern})"),
            }
        };
        match core {
            Core::Text { chars, max } => text(chars, *max),
            Core::Number(pattern) => number(pattern),
            Core::Either { number: pattern, max } => format!("{}|{}", text(ANY, *max), number(pattern)),
        }
    }
}

/// Python's general number format: fixed or exponent notation, at most `precision`
/// significant digits when it is given.
fn general(precision: Option<usize>) -> String {
    match precision {
        Some(p) => {
            let p = p.max(1);
            format!(
                r"[0-9]{{1,{p}}}(?:\.[0-9]{{0,{p}}})?|0\.0{{0,4}}[0-9]{{1,{p}}}|[0-9](?:\.[0-9]{{0,{}}})?[eE][-+][0-9]{{2,3}}",
                p - 1
            )
        }
        None => r"[0-9][0-9,_]*(?:\.[0-9]*)?(?:[eE][-+][0-9]+)?".to_owned(),
    }
}

/// The decimal number at `chars[at..]`, and where it ends.
fn digits(chars: &[char], at: usize) -> (Option<usize>, usize) {
    let end = chars[at.min(chars.len())..].iter().take_while(|c| c.is_ascii_digit()).count() + at;
    let number: String = chars[at.min(chars.len())..end.min(chars.len())].iter().collect();
    (number.parse().ok(), end)
}

#[cfg(test)]
mod tests;
