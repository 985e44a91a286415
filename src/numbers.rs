//! JSON numbers as the contract means them: values, not spellings. `1e0`, `1.0`
//! and `1` are the same number (JavaScript parses them to the same double, and
//! canonical JSON prints them alike), so wherever the contract compares values
//! they compare equal. Messages still quote a number as the file wrote it: the
//! parsed value has forgotten its spelling, so [`quote_as_written`] finds it again
//! in the file's text, and only when a finding needs it.

use crate::report::Finding;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::BTreeMap;

/// Deep equality with numbers compared by value.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64().is_some_and(|x| Some(x) == y.as_f64()),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// [`same`] for an optional value (a missing field is never equal).
pub fn same_opt(a: Option<&Value>, b: &Value) -> bool {
    a.is_some_and(|a| same(a, b))
}

/// Rewrite each finding whose JSON path names a number in `text` (the file the
/// findings are about) so that its message shows the number as written there:
/// "found 2.0" becomes "found 2e0" when the file says `2e0`.
pub fn quote_as_written(findings: &mut [Finding], text: &[u8]) {
    let Ok(text) = std::str::from_utf8(text) else { return };
    for finding in findings.iter_mut().filter(|f| shows_a_number(f)) {
        let Some(written) = raw_at(text, &finding.path.to_string()) else { continue };
        let Ok(Value::Number(parsed)) = serde_json::from_str::<Value>(written) else { continue };
        let shown = parsed.to_string();
        if shown != written {
            finding.message = replace_token(&finding.message, &shown, written);
        }
    }
}

/// Whether a finding's message can show a number (every number prints with a digit).
/// Finding a path's text parses the file around it, so findings that cannot change
/// are not looked up: a verify of 1,000 packets with two such findings each spent a
/// quarter of its CPU time here.
fn shows_a_number(finding: &Finding) -> bool {
    finding.message.bytes().any(|b| b.is_ascii_digit())
}

/// [`quote_as_written`] for findings about `file`, read again only when one may show a number.
pub fn quote_as_written_in(findings: &mut [Finding], file: &std::path::Path, max_bytes: u64) {
    if !findings.iter().any(shows_a_number) {
        return;
    }
    if let Ok(bytes) = crate::fsutil::read_bytes(file, max_bytes) {
        quote_as_written(findings, &bytes);
    }
}

/// [`quote_as_written`] for findings about the files of a run directory, whose
/// paths read `<file> $.json.path` (the run checks' form).
pub fn quote_as_written_under(findings: &mut [Finding], dir: &std::path::Path, max_bytes: u64) {
    let mut texts: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
    for finding in findings.iter_mut() {
        let shown = finding.path.to_string();
        let Some((file, path)) = shown.split_once(" $") else { continue };
        let text =
            texts.entry(file.to_owned()).or_insert_with(|| crate::fsutil::read_bytes(&dir.join(file), max_bytes).ok());
        if let Some(text) = text {
            let mut inner = [Finding { path: crate::report::Location::named(format!("${path}")), ..finding.clone() }];
            quote_as_written(&mut inner, text);
            finding.message = std::mem::take(&mut inner[0].message);
        }
    }
}

/// The raw text of the value at a JSON path (`$.a.b[0]["odd key"]`), if any.
fn raw_at<'t>(text: &'t str, path: &str) -> Option<&'t str> {
    let mut rest = path.strip_prefix('$')?;
    let mut raw = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            raw = member(raw, &after[..end])?;
            rest = &after[end..];
        } else if rest.starts_with("[\"") {
            // A quoted key: read one JSON string from the opening quote.
            let quoted = &rest[1..];
            let mut stream = serde_json::Deserializer::from_str(quoted).into_iter::<String>();
            let key = stream.next()?.ok()?;
            let consumed = stream.byte_offset();
            raw = member(raw, &key)?;
            rest = quoted[consumed..].strip_prefix(']')?;
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let i: usize = after[..end].parse().ok()?;
            let items: Vec<&RawValue> = serde_json::from_str(raw).ok()?;
            raw = items.get(i)?.get();
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(raw.trim())
}

fn member<'t>(raw: &'t str, key: &str) -> Option<&'t str> {
    let members: BTreeMap<String, &RawValue> = serde_json::from_str(raw).ok()?;
    members.get(key).map(|v| v.get())
}

/// `message` with each standalone occurrence of the number `shown` replaced.
fn replace_token(message: &str, shown: &str, written: &str) -> String {
    let number_char = |c: char| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-');
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(shown) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + shown.len()..].chars().next();
        out.push_str(&rest[..at]);
        let standalone = !before.is_some_and(number_char) && !after.is_some_and(number_char);
        out.push_str(if standalone { written } else { shown });
        rest = &rest[at + shown.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_everywhere() {
        let parse = |t: &str| crate::canonical::parse(t.as_bytes()).unwrap();
        assert!(same(&parse("1e0"), &json!(1)));
        assert!(same(&parse(r#"{"a":[1.0,{"b":64e3}]}"#), &json!({"a": [1, {"b": 64000}]})));
        assert!(!same(&parse("2e0"), &json!(1)));
        assert!(!same(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!same(&json!("1"), &json!(1)));
    }

    #[test]
    fn messages_quote_numbers_as_the_file_wrote_them() {
        let text = br#"{"attempt": 2e0, "deep": {"odd key": [0, 1.50]}, "ok": 3}"#;
        let mut findings = vec![
            Finding::new(
                crate::PacketCheck::Contract,
                crate::report::JsonPath::field("attempt"),
                "expected 1, found 2.0",
            ),
            Finding::new(
                crate::PacketCheck::Contract,
                crate::report::JsonPath::field("deep").key("odd key").index(1),
                "1.5 is not 21.5",
            ),
            Finding::new(crate::PacketCheck::Contract, crate::report::JsonPath::field("ok"), "found 3"),
            Finding::new(crate::PacketCheck::Contract, crate::report::JsonPath::field("missing"), "found 2.0"),
        ];
        quote_as_written(&mut findings, text);
        let messages: Vec<&str> = findings.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(messages, ["expected 1, found 2e0", "1.50 is not 21.5", "found 3", "found 2.0"]);
    }
}
