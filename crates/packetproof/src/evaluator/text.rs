//! Small value helpers shared by the rules: JavaScript's notions of white space and
//! truthiness (the reference evaluator is JavaScript, and its verdicts depend on them),
//! and walks that visit every string, key or named array of a value.

use crate::report::{walk, JsonPath, Trail};
use serde_json::Value;

/// JavaScript `WhiteSpace` and `LineTerminator` (what `String.prototype.trim` removes):
/// tab, VT, FF, space, NBSP, BOM, the Zs category, LF, CR, LS and PS. Not U+0085 or U+200B,
/// which Rust's `char::is_whitespace` disagrees on, hence a hand-written set.
pub(crate) fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{A}' | '\u{B}' | '\u{C}' | '\u{D}' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// `text.trim()` as JavaScript does it.
pub(crate) fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_space)
}

/// A string with something other than JavaScript white space in it.
pub(crate) fn is_text(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).is_some_and(|s| !js_trim(s).is_empty())
}

/// JavaScript truthiness of a JSON value: not null, false, 0, -0 or "".
pub(crate) fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// Where a visited value is: a trail below a root the rules hold as text (their
/// messages carry the path; they report no typed location).
pub(crate) struct At<'t, 'a> {
    root: &'a str,
    trail: &'t Trail<'a>,
}

impl At<'_, '_> {
    pub(crate) fn render(&self) -> String {
        self.trail.render_under(self.root)
    }
}

/// Every string value under `value` (root included), with its JSONPath.
pub(crate) fn strings<'a>(value: &'a Value, root: &'a str, visit: &mut impl FnMut(&'a str, &At<'_, 'a>)) {
    let mut trail = Trail::new(JsonPath::root());
    if let Value::String(s) = value {
        visit(s, &At { root, trail: &trail });
    }
    walk(value, &mut trail, &mut |v, _, trail| {
        if let Value::String(s) = v {
            visit(s, &At { root, trail });
        }
    });
}

/// Every object key under `value` (root included).
pub(crate) fn keys<'a>(value: &'a Value, visit: &mut impl FnMut(&'a str, &Trail<'a>)) {
    let mut trail = Trail::new(JsonPath::root());
    if let Value::Object(map) = value {
        for key in map.keys() {
            visit(key, &trail);
        }
    }
    walk(value, &mut trail, &mut |v, _, trail| {
        if let Value::Object(map) = v {
            for key in map.keys() {
                visit(key, trail);
            }
        }
    });
}

/// The sum of the lengths of every array-valued member named `name` anywhere under
/// `value`: the reference counts data mappings and asset intents this way, so a list
/// moved elsewhere in the block still counts.
pub(crate) fn count_named_arrays(value: &Value, name: &str) -> usize {
    let mut count = 0;
    let mut add = |v: &Value| {
        if let Some(Value::Array(items)) = v.as_object().and_then(|m| m.get(name)) {
            count += items.len();
        }
    };
    add(value);
    walk(value, &mut Trail::new(JsonPath::root()), &mut |v, _, _| add(v));
    count
}

/// Whether any array-valued member named `name` anywhere under `value` is non-empty.
pub(crate) fn any_named_array_filled(value: &Value, name: &str) -> bool {
    count_named_arrays(value, name) > 0
}

/// Every object anywhere under `value` (root excluded), with its path.
pub(crate) fn objects<'a>(
    value: &'a Value,
    root: &'a str,
    visit: &mut impl FnMut(&'a serde_json::Map<String, Value>, &At<'_, 'a>),
) {
    walk(value, &mut Trail::new(JsonPath::root()), &mut |v, _, trail| {
        if let Value::Object(map) = v {
            visit(map, &At { root, trail });
        }
    });
}

/// How a value reads in a message: JSON, shortened.
pub(crate) fn shown(value: Option<&Value>) -> String {
    crate::packet::describe(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn trims_like_javascript() {
        assert_eq!(js_trim("\u{FEFF}\u{A0} x \u{2028}\u{3000}"), "x");
        assert_eq!(js_trim("\u{200B}x"), "\u{200B}x", "zero-width space is not white space");
        assert_eq!(js_trim("\u{85}x"), "\u{85}x", "NEL is not JavaScript white space");
        assert!(!is_text(Some(&json!("\u{A0}"))));
        assert!(is_text(Some(&json!("\u{200B}"))));
    }

    #[test]
    fn truthiness_is_javascripts() {
        for falsy in [json!(null), json!(false), json!(0), json!(-0.0), json!("")] {
            assert!(!truthy(Some(&falsy)), "{falsy}");
        }
        for t in [json!(1), json!("0"), json!([]), json!({})] {
            assert!(truthy(Some(&t)), "{t}");
        }
        assert!(!truthy(None));
    }

    #[test]
    fn named_arrays_are_counted_anywhere() {
        let v = json!({"dataMapping": [1, 2], "a": {"b": [{"dataMapping": [3]}], "dataMapping": "x"}});
        assert_eq!(count_named_arrays(&v, "dataMapping"), 3);
        assert!(!any_named_array_filled(&json!({"dataMapping": []}), "dataMapping"));
    }
}
