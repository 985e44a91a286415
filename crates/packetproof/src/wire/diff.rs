//! Path-by-path comparison of a captured request body with the expected one.
//! Hand-written because what counts is specific: numbers compare by value, a key
//! outside the expected body is named by its dotted path, and a long prompt that
//! differs should say where.

use crate::report::JsonPath;
use serde_json::Value;

/// One difference: where, what, and the captured value there (if any).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Difference<'a> {
    pub(crate) path: JsonPath,
    pub(crate) message: String,
    pub(crate) captured: Option<&'a Value>,
}

/// Every difference between `expected` and `captured`; a member of `captured` outside
/// `expected` is one, named by its dotted path (`generationConfig.temperature`).
pub(crate) fn compare<'a>(expected: &Value, captured: &'a Value) -> Vec<Difference<'a>> {
    let mut out = Vec::new();
    walk(expected, captured, &JsonPath::root(), &[], &mut out);
    out
}

fn walk<'a>(expected: &Value, captured: &'a Value, path: &JsonPath, keys: &[&str], out: &mut Vec<Difference<'a>>) {
    let differ = |message: String| Difference { path: path.clone(), message, captured: Some(captured) };
    match (expected, captured) {
        (Value::Object(want), Value::Object(got)) => {
            for (key, value) in want {
                let p = path.clone().key(key);
                match got.get(key) {
                    Some(item) => walk(value, item, &p, &[keys, &[key.as_str()]].concat(), out),
                    None => out.push(Difference {
                        path: p,
                        message: format!("missing; expected {}", show(value)),
                        captured: None,
                    }),
                }
            }
            for (key, value) in got.iter().filter(|(key, _)| !want.contains_key(*key)) {
                let d = dotted(&[keys, &[key.as_str()]].concat());
                out.push(Difference {
                    path: path.clone().key(key),
                    message: format!(
                        "{} is not part of the packet's request: `{d}` is sent, and the packet's call does not send it",
                        show(value)
                    ),
                    captured: Some(value),
                });
            }
        }
        (Value::Array(want), Value::Array(got)) => {
            for (i, (w, g)) in want.iter().zip(got).enumerate() {
                walk(w, g, &path.clone().index(i), keys, out);
            }
            for (i, w) in want.iter().enumerate().skip(got.len()) {
                out.push(Difference {
                    path: path.clone().index(i),
                    message: format!("missing; expected {}", show(w)),
                    captured: None,
                });
            }
            for (i, g) in got.iter().enumerate().skip(want.len()) {
                out.push(Difference {
                    path: path.clone().index(i),
                    message: format!("an extra item the packet does not imply ({} expected): {}", want.len(), show(g)),
                    captured: Some(g),
                });
            }
        }
        (Value::String(want), Value::String(got)) if want != got => out.push(differ(text_difference(want, got))),
        // Numbers compare by value: 64000 and 64000.0 are one token limit on the wire.
        (Value::Number(want), Value::Number(got)) if want.as_f64() == got.as_f64() => {}
        _ if expected != captured => out.push(differ(format!("is {}; expected {}", show(captured), show(expected)))),
        _ => {}
    }
}

/// A setting's dotted path; a key that itself holds a dot is quoted, since no
/// allowed setting can name it.
fn dotted(keys: &[&str]) -> String {
    let parts: Vec<String> =
        keys.iter().map(|k| if k.contains('.') { format!("{k:?}") } else { (*k).to_owned() }).collect();
    parts.join(".")
}

/// Where two texts part: the byte offset and a little context, not two 50 KB prompts.
fn text_difference(want: &str, got: &str) -> String {
    let at = want.bytes().zip(got.bytes()).take_while(|(a, b)| a == b).count();
    let at = (0..=at).rev().find(|i| want.is_char_boundary(*i) && got.is_char_boundary(*i)).unwrap_or(0);
    if want.len() < 80 && got.len() < 80 {
        return format!("is {got:?}; expected {want:?}");
    }
    format!(
        "differs from the packet's text at byte {at} (captured {} bytes, expected {}): captured {:?}, expected {:?}",
        got.len(),
        want.len(),
        excerpt(got, at),
        excerpt(want, at)
    )
}

fn excerpt(text: &str, at: usize) -> String {
    text[at..].chars().take(40).collect()
}

/// A value for a message: JSON, cut after 80 characters.
pub(crate) fn show(value: &Value) -> String {
    let text = value.to_string();
    if crate::report::looks_like_a_key(&text) {
        return crate::report::excerpt(&text);
    }
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(expected: Value, captured: Value) -> Vec<String> {
        compare(&expected, &captured).into_iter().map(|d| format!("{} {}", d.path, d.message)).collect()
    }

    #[test]
    fn equal_bodies_have_no_difference() {
        let body = json!({"a": [1, {"b": "x"}], "n": 64000});
        assert!(paths(body.clone(), body).is_empty());
        assert!(paths(json!({"n": 64000}), json!({"n": 64000.0})).is_empty());
    }

    #[test]
    fn every_kind_of_difference_has_its_path() {
        let got = paths(
            json!({"a": "x", "m": [1, 2], "c": {"k": true}}),
            json!({"a": "y", "m": [1, 2, 3], "c": {}, "t": 0.5, "g": {"temperature": 1}}),
        );
        assert_eq!(got.len(), 5, "{got:#?}");
        assert!(got[0].starts_with("$.a is \"y\"; expected \"x\""), "{got:#?}");
        assert!(got[1].starts_with("$.m[2] an extra item"), "{got:#?}");
        assert!(got[2].starts_with("$.c.k missing"), "{got:#?}");
        assert!(got[3].starts_with("$.t 0.5 is not part") && got[3].contains("`t`"), "{got:#?}");
        assert!(got[4].starts_with("$.g {\"temperature\":1} is not part"), "{got:#?}");
        let nested = paths(json!({"g": {}}), json!({"g": {"temperature": 1}}));
        assert!(nested[0].contains("`g.temperature` is sent"), "{nested:#?}");
    }

    #[test]
    fn a_literal_dotted_key_is_quoted() {
        let got = paths(json!({"g": {}}), json!({"g": {}, "g.temperature": 1}));
        assert_eq!(got.len(), 1, "{got:#?}");
        assert!(got[0].contains("`\"g.temperature\"` is sent"), "{got:#?}");
    }

    #[test]
    fn long_texts_say_where_they_part() {
        let want = format!("{}tail", "p".repeat(100));
        let got = format!("{}TAIL", "p".repeat(100));
        let d = paths(json!(want), json!(got));
        assert!(d[0].contains("at byte 100") && d[0].contains("\"TAIL\""), "{d:?}");
    }
}
