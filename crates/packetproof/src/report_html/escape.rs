//! The one escaping function of the HTML reports. Every value a template prints
//! goes through it (it is the template engine's formatter, see `super::environment`),
//! so a fixture name or a prompt line can never open a tag, end an attribute, or
//! reorder the text around it.

use minijinja::{Output, State, Value};
use std::fmt::Write;

/// Text as HTML: the five characters that mean something in markup become
/// entities, and characters that would act on the page instead of showing (control
/// characters, a newline inside a name, bidirectional overrides such as U+202E,
/// zero-width characters) are shown as `\u{…}`, as the text output writes them.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' => out.push(c),
            c if acts_instead_of_showing(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Controls (C0, DEL, C1), the bidirectional formatting characters the text reports
/// escape too ([`crate::report::is_bidi_control`]), and what a page would also hide:
/// zero-width characters, line and paragraph separators, invisible operators and the
/// byte-order mark.
fn acts_instead_of_showing(c: char) -> bool {
    c.is_control()
        || crate::report::is_bidi_control(c)
        || matches!(c, '\u{200B}'..='\u{200D}' | '\u{2028}' | '\u{2029}' | '\u{2060}'..='\u{2065}' | '\u{FEFF}')
}

/// The template engine's formatter: markup the report builds itself (marked safe)
/// passes as is, every other value is escaped.
pub(super) fn formatter(out: &mut Output<'_>, _state: &State<'_, '_>, value: &Value) -> Result<(), minijinja::Error> {
    let text = if value.is_safe() { value.to_string() } else { escape(&value.to_string()) };
    out.write_str(&text).map_err(|_| minijinja::Error::new(minijinja::ErrorKind::WriteFailure, "write failed"))
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_quotes_and_invisible_characters_are_neutralised() {
        assert_eq!(escape("<script>alert('x')</script>"), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
        assert_eq!(escape("a\" onmouseover=\"x&y"), "a&quot; onmouseover=&quot;x&amp;y");
        assert_eq!(escape("gnp.\u{202E}exe"), "gnp.\\u{202e}exe");
        assert_eq!(escape("two\nlines\r"), "two\\u{a}lines\\u{d}");
        assert_eq!(
            escape("\u{2066}iso\u{2069} \u{200B}\u{FEFF}\u{1b}[31m"),
            "\\u{2066}iso\\u{2069} \\u{200b}\\u{feff}\\u{1b}[31m"
        );
        assert_eq!(escape("tab\tand ünïcode ✓"), "tab\tand ünïcode ✓");
    }
}
