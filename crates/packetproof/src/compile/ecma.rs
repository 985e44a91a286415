//! The few ECMAScript semantics the reference compile-input validator relies on
//! (the Node runtime's own), written out because no crate gives them
//! exactly: `String.prototype.trim`'s whitespace set (Rust's `str::trim` strips
//! U+0085 and keeps U+FEFF), `String(value)`, strict equality `===` of parsed JSON
//! values, and the "same value" comparison of key-sorted serialisations.

use serde_json::Value;

/// ECMAScript WhiteSpace and LineTerminator code points (not U+0085).
pub(crate) fn is_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\u{b}'
            | '\u{c}'
            | ' '
            | '\u{a0}'
            | '\u{feff}'
            | '\n'
            | '\r'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
    )
}

/// `text.trim()` as JavaScript trims it.
pub(crate) fn trim(text: &str) -> &str {
    text.trim_matches(is_whitespace)
}

/// A string that is not empty once trimmed the ECMAScript way. The value itself
/// is returned untrimmed: the reference never uses the trimmed form afterwards.
pub(crate) fn non_blank(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !trim(s).is_empty())
}

/// `String(value)` for a parsed JSON value; `None` (an absent key) is `undefined`.
pub(crate) fn string_of(value: Option<&Value>) -> String {
    match value {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(n @ Value::Number(_)) => String::from_utf8_lossy(&crate::canonical::to_vec(n)).into_owned(),
        Some(Value::String(s)) => s.clone(),
        // Array.prototype.join: null and undefined items print as nothing.
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| if item.is_null() { String::new() } else { string_of(Some(item)) })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
    }
}

/// `a === b` for parsed JSON values: objects and arrays are never equal (they
/// would be distinct objects), `undefined === undefined` holds.
pub(crate) fn strict_equal(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Value::Null), Some(Value::Null)) => true,
        (Some(Value::Bool(x)), Some(Value::Bool(y))) => x == y,
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        (Some(Value::String(x)), Some(Value::String(y))) => x == y,
        _ => false,
    }
}

/// Same parsed value: objects as unordered maps, arrays in order, numbers as
/// doubles (`1`, `1.0` and `1e0` are equal; `-0` equals `0`).
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// `source.checksum`'s form: `String(checksum ?? "")` is `fnv1a:` and exactly
/// eight lowercase hex digits, nothing before or after (only the form is
/// checked; the value is defined over data a compile input does not carry).
pub(crate) fn is_checksum_form(value: Option<&Value>) -> bool {
    let text = match value {
        None | Some(Value::Null) => String::new(),
        other => string_of(other),
    };
    text.strip_prefix("fnv1a:")
        .is_some_and(|hex| hex.len() == 8 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whitespace_is_ecmascript_not_rust() {
        assert!(non_blank(Some(&json!("\u{feff}"))).is_none());
        assert!(non_blank(Some(&json!(" \u{3000}\u{2028}\t"))).is_none());
        assert_eq!(non_blank(Some(&json!("\u{85}"))), Some("\u{85}"));
        assert_eq!(non_blank(Some(&json!(" id "))), Some(" id "));
        assert!(non_blank(Some(&json!(7))).is_none() && non_blank(None).is_none());
    }

    #[test]
    fn checksum_form_follows_string_coercion() {
        assert!(is_checksum_form(Some(&json!("fnv1a:1234abcd"))));
        assert!(is_checksum_form(Some(&json!(["fnv1a:1234abcd"]))));
        for bad in [
            json!("fnv1a:1234ABCD"),
            json!("fnv1a:1234abcd\n"),
            json!("fnv1a:1234abc"),
            json!(null),
            json!(["fnv1a:1234abcd", null]),
        ] {
            assert!(!is_checksum_form(Some(&bad)), "{bad}");
        }
        assert!(!is_checksum_form(None));
    }

    #[test]
    fn equality_flavours() {
        assert!(same_value(&json!({"a": [1, {"b": -0.0}], "c": "x"}), &json!({"c": "x", "a": [1.0, {"b": 0}]})));
        assert!(!same_value(&json!([1, 2]), &json!([2, 1])));
        assert!(!same_value(&json!({"a": 1}), &json!({"a": 1, "b": null})));
        assert!(strict_equal(None, None) && strict_equal(Some(&json!(1)), Some(&json!(1.0))));
        assert!(!strict_equal(Some(&json!([])), Some(&json!([]))) && !strict_equal(Some(&json!(null)), None));
        assert_eq!(string_of(Some(&json!([1, null, "a"]))), "1,,a");
        assert_eq!(string_of(Some(&json!({"a": 1}))), "[object Object]");
    }
}
