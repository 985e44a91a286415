//! JSON numbers as the contract means them: values, not spellings. `1e0`, `1.0`
//! and `1` are the same number (JavaScript parses them to the same double, and
//! canonical JSON prints them alike), so wherever the contract compares values
//! they compare equal. Messages still quote a number as the file wrote it: the
//! parsed value has forgotten its spelling, so [`quote_as_written`] finds it again
//! in the file's text, and only when a finding needs it.

use crate::report::{Finding, JsonPath, Location, Segment};
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::BTreeMap;

/// Deep equality with numbers compared by value.
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64().is_some_and(|x| Some(x) == y.as_f64()),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => same_map(x, y),
        _ => a == b,
    }
}

/// [`same`] for two objects.
pub(crate) fn same_map(x: &serde_json::Map<String, Value>, y: &serde_json::Map<String, Value>) -> bool {
    x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
}

/// [`same`] for an optional value (a missing field is never equal).
pub(crate) fn same_opt(a: Option<&Value>, b: &Value) -> bool {
    a.is_some_and(|a| same(a, b))
}

/// Rewrite each finding whose JSON path names a number in `text` (the file the
/// findings are about) so that its message shows the number as written there:
/// "found 2.0" becomes "found 2e0" when the file says `2e0`.
pub(crate) fn quote_as_written(findings: &mut [Finding], text: &[u8]) {
    let Ok(text) = std::str::from_utf8(text) else { return };
    for finding in findings.iter_mut().filter(|f| shows_a_number(f)) {
        if let Location::Value(path) = &finding.path {
            finding.message = as_written(&finding.message, text, path);
        }
    }
}

/// `message` with the number at `path` in `text` shown as `text` writes it.
fn as_written(message: &str, text: &str, path: &JsonPath) -> String {
    let Some(written) = raw_at(text, path) else { return message.to_owned() };
    let Ok(Value::Number(parsed)) = serde_json::from_str::<Value>(written) else { return message.to_owned() };
    let shown = parsed.to_string();
    match shown == written {
        true => message.to_owned(),
        false => replace_token(message, &shown, written),
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
pub(crate) fn quote_as_written_in(findings: &mut [Finding], file: &std::path::Path, max_bytes: u64) {
    if !findings.iter().any(shows_a_number) {
        return;
    }
    if let Ok(bytes) = crate::fsutil::read_bytes(file, max_bytes) {
        quote_as_written(findings, &bytes);
    }
}

/// [`quote_as_written`] for findings about the files of a run directory (located
/// [`Location::InFile`], the run checks' form), each file read once.
pub(crate) fn quote_as_written_under(findings: &mut [Finding], dir: &std::path::Path, max_bytes: u64) {
    let mut texts: BTreeMap<String, Option<String>> = BTreeMap::new();
    for finding in findings.iter_mut().filter(|f| shows_a_number(f)) {
        let Location::InFile { file, path } = &finding.path else { continue };
        let text = texts.entry(file.clone()).or_insert_with(|| {
            let bytes = crate::fsutil::read_bytes(&dir.join(file), max_bytes).ok()?;
            String::from_utf8(bytes).ok()
        });
        if let Some(text) = text {
            finding.message = as_written(&finding.message, text, path);
        }
    }
}

/// The raw text of the value at a JSON path, if any.
fn raw_at<'t>(text: &'t str, path: &JsonPath) -> Option<&'t str> {
    let mut raw = text;
    for segment in path.segments() {
        raw = match segment {
            Segment::Key(key) => member(raw, key)?,
            Segment::Index(i) => {
                let items: Vec<&RawValue> = serde_json::from_str(raw).ok()?;
                items.get(*i)?.get()
            }
        };
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
        let at = JsonPath::root;
        let mut findings = vec![
            Finding::new(crate::PacketCheck::Contract, at().key("attempt"), "expected 1, found 2.0"),
            Finding::new(crate::PacketCheck::Contract, at().key("deep").key("odd key").index(1), "1.5 is not 21.5"),
            Finding::new(crate::PacketCheck::Contract, at().key("ok"), "found 3"),
            Finding::new(crate::PacketCheck::Contract, at().key("missing"), "found 2.0"),
        ];
        quote_as_written(&mut findings, text);
        let messages: Vec<&str> = findings.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(messages, ["expected 1, found 2e0", "1.50 is not 21.5", "found 3", "found 2.0"]);
    }

    #[test]
    fn run_findings_quote_the_file_and_key_they_name_whatever_the_names_hold() {
        let dir = tempfile::tempdir().unwrap();
        // As text, `copy $1.json $["a $.b\"]"]` splits at the first " $" into the
        // wrong file, and its key reads as a path of its own.
        std::fs::write(dir.path().join("copy $1.json"), br#"{"a $.b\"]": [7, 2e0], "n": 5.0}"#).unwrap();
        std::fs::write(dir.path().join("copy"), br#"{"n": 4e0}"#).unwrap();
        // Nor is the packet rebuilt from a run a file, whatever the run holds.
        std::fs::write(dir.path().join("packet"), br#"{"n": 6e0}"#).unwrap();
        let path = JsonPath::root().key("a $.b\"]").index(1);
        let mut findings = vec![
            Finding::new(crate::RunCheck::Evaluation, Location::in_file("copy $1.json", path.clone()), "found 2.0"),
            Finding::new(
                crate::RunCheck::Evaluation,
                Location::in_file("copy", JsonPath::root().key("n")),
                "found 4.0",
            ),
            Finding::new(crate::RunCheck::Evaluation, Location::named("copy $1.json"), "found 5.0"),
            Finding::new(crate::RunCheck::AgentRequest, Location::RebuiltPacket(JsonPath::field("n")), "found 6.0"),
        ];
        quote_as_written_under(&mut findings, dir.path(), 1 << 20);
        let messages: Vec<&str> = findings.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(messages, ["found 2e0", "found 4e0", "found 5.0", "found 6.0"]);
        assert_eq!(findings[0].path.to_string(), r#"copy $1.json $["a $.b\"]"][1]"#);
    }
}
