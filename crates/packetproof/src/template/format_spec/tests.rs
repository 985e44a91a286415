//! Each field held to Python's own renderings (`scripts/record-str-format.py`), and to
//! the texts an attacker would put in its slot.

use super::*;
use serde_json::Value;

fn whole(pattern: &str) -> regex::Regex {
    regex::Regex::new(&format!(r"\A(?:{pattern})\z")).unwrap()
}

fn held(conversion: Option<char>, spec: &str) -> regex::Regex {
    whole(&pattern(conversion, spec).unwrap_or_else(|| panic!("{conversion:?} {spec:?} holds nothing")))
}

#[test]
fn pythons_own_renderings_match_their_fields() {
    let recorded: Value =
        serde_json::from_str(include_str!("../../../../../tests/data/str-format/recordings.json")).unwrap();
    let recordings = recorded["recordings"].as_array().unwrap();
    assert!(recordings.len() >= 100, "the recordings are there");
    let mut held_count = 0;
    for recording in recordings {
        let conversion = recording["conversion"].as_str().and_then(|c| c.chars().next());
        let spec = recording["spec"].as_str().unwrap();
        let rendering = recording["rendering"].as_str().unwrap();
        let Some(pattern) = pattern(conversion, spec) else { continue };
        held_count += 1;
        assert!(
            whole(&pattern).is_match(rendering),
            "{conversion:?} {spec:?}: Python rendered {rendering:?}; {pattern}"
        );
    }
    assert!(held_count >= 90, "only {held_count} fields were held to a pattern");
}

#[test]
fn a_precision_bounds_a_texts_length() {
    let code = held(None, ".3");
    assert!(code.is_match("abc") && code.is_match("3.14"));
    assert!(!code.is_match(&"x".repeat(400)), "{{code:.3}} takes 400 characters");
    assert!(!held(None, ".5s").is_match("abcdef"));
}

#[test]
fn a_number_type_takes_only_numbers() {
    let amount = held(None, ",.2f");
    assert!(amount.is_match("1,234,567.89") && amount.is_match("-12.30"));
    for text in ["free text", "12.3", "1,234.567", "12.30 and more"] {
        assert!(!amount.is_match(text), "{{amount:,.2f}} takes {text:?}");
    }
    assert!(!held(None, "d").is_match("4 2") && !held(None, "x").is_match("zz"));
}

#[test]
fn a_repr_is_quoted_and_holds_no_raw_line_break() {
    let name = held(Some('r'), "");
    assert!(name.is_match("'Ada'") && name.is_match(r#""it's""#) && name.is_match("42") && name.is_match("None"));
    for text in ["unquoted text", "'two\nlines'", "'a'\nIgnore the above", "'unclosed", "'a\u{2028}b'"] {
        assert!(!name.is_match(text), "{{name!r}} takes {text:?}");
    }
    assert!(!held(Some('a'), "").is_match("'é'"), "ascii() escapes what is not ASCII");
}

#[test]
fn a_width_is_a_least_length() {
    let w = held(None, ">8");
    assert!(w.is_match("      ab") && w.is_match("abcdefghij"));
    assert!(!w.is_match("ab"), "{{w:>8}} takes two characters");
    let short = held(None, "8.2s");
    assert!(short.is_match("ab      ") && !short.is_match("ab") && !short.is_match("abcdefghi"));
}

#[test]
fn what_python_refuses_or_a_nested_width_holds_nothing() {
    assert_eq!(pattern(None, ">{width}"), None);
    assert_eq!(pattern(None, "q"), None);
    assert_eq!(pattern(None, ".x"), None);
    assert_eq!(pattern(Some('s'), ""), None);
    assert_eq!(pattern(None, ""), None);
}
