//! A text a forbidden value pattern matches, for the self-test to plant: the
//! pattern's shortest reading (each repetition its least, each alternation its
//! first branch, each class a letter or digit when it has one). Hand-written over
//! regex-syntax's parse because the crates that sample a regex (rand_regex,
//! proptest's string_regex) pick at random: the self-test needs one readable text that
//! is the same on every run, so that a report names what it planted.

use regex_syntax::hir::{Class, Hir, HirKind};

/// A text `pattern` matches (checked by `matches`), or `None` when its shortest reading
/// is none (a pattern of anchors or boundaries the reading does not meet).
pub(crate) fn of(pattern: &str, matches: impl Fn(&str) -> bool) -> Option<String> {
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    let mut text = String::new();
    shortest(&hir, &mut text);
    matches(&text).then_some(text)
}

fn shortest(hir: &Hir, out: &mut String) {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(literal) => out.push_str(&String::from_utf8_lossy(&literal.0)),
        HirKind::Class(class) => out.extend(member(class)),
        HirKind::Repetition(repetition) => {
            for _ in 0..repetition.min {
                shortest(&repetition.sub, out);
            }
        }
        HirKind::Capture(capture) => shortest(&capture.sub, out),
        HirKind::Concat(parts) => parts.iter().for_each(|part| shortest(part, out)),
        HirKind::Alternation(branches) => {
            if let Some(first) = branches.first() {
                shortest(first, out);
            }
        }
    }
}

/// A member of the class: a lowercase letter, else a digit, else its first character.
fn member(class: &Class) -> Option<char> {
    let ranges: Vec<(char, char)> = match class {
        Class::Unicode(set) => set.ranges().iter().map(|r| (r.start(), r.end())).collect(),
        Class::Bytes(set) => set.ranges().iter().map(|r| (char::from(r.start()), char::from(r.end()))).collect(),
    };
    let within = |wanted: char| ranges.iter().any(|&(start, end)| start <= wanted && wanted <= end);
    ('a'..='z').chain('0'..='9').find(|&c| within(c)).or_else(|| ranges.first().map(|&(start, _)| start))
}

#[cfg(test)]
mod tests {
    use super::of;
    use regex::Regex;

    fn witness(pattern: &str) -> Option<String> {
        let re = Regex::new(pattern).unwrap();
        of(pattern, |text| re.is_match(text))
    }

    #[test]
    fn each_pattern_gets_a_text_it_matches() {
        assert_eq!(witness(r"https?://[^\s]+\.(png|jpe?g|webp)").as_deref(), Some("http://a.png"));
        assert_eq!(witness(r"(?i)\bsk-[A-Z0-9]{4}\b").as_deref(), Some("sk-aaaa"));
        assert_eq!(witness(r"gs://\S+").as_deref(), Some("gs://a"));
        assert_eq!(witness(r"[\[\]]").as_deref(), Some("["));
    }

    #[test]
    fn a_pattern_whose_shortest_reading_it_refuses_has_none() {
        // `\b` between two non-word characters: the reading is "--", which no boundary splits.
        assert_eq!(witness(r"-\b-"), None);
        assert_eq!(of("(unclosed", |_| true), None);
    }
}
