//! in-toto Statement v1: `{_type, subject: [{name, digest: {sha256: hex}}],
//! predicateType, predicate}`. Subjects are matched by name here (a run's files
//! have fixed names); digests are lowercase hex, as the in-toto DigestSet says.

use serde_json::{json, Map, Value};

pub(crate) const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";

/// The predicate of a packetproof run receipt. A URN: versioned, and claiming no
/// web address we do not own. A change of its fields is a new major version.
pub(crate) const PREDICATE_TYPE: &str = "urn:packetproof:predicate:run-receipt:v1";

/// One subject: a name and its sha256 as lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subject {
    pub(crate) name: String,
    pub(crate) sha256: String,
}

pub(crate) fn statement(subjects: &[Subject], predicate: Value) -> Value {
    let subject: Vec<Value> =
        subjects.iter().map(|s| json!({"name": s.name, "digest": {"sha256": s.sha256}})).collect();
    json!({
        "_type": STATEMENT_TYPE,
        "subject": subject,
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    })
}

/// What is wrong with a statement's shape: `(JSON path, expected)` pairs.
pub(crate) type ShapeProblems = Vec<(String, String)>;

/// A parsed statement: its subjects and predicate, or what is wrong with its shape.
pub(crate) fn parse(value: &Value) -> Result<(Vec<Subject>, &Map<String, Value>), ShapeProblems> {
    let mut problems = Vec::new();
    let mut expect = |path: &str, what: &str| problems.push((path.to_owned(), what.to_owned()));
    if value.get("_type").and_then(Value::as_str) != Some(STATEMENT_TYPE) {
        expect("$._type", &format!("{STATEMENT_TYPE:?}"));
    }
    if value.get("predicateType").and_then(Value::as_str) != Some(PREDICATE_TYPE) {
        expect("$.predicateType", &format!("{PREDICATE_TYPE:?}"));
    }
    let predicate = value.get("predicate").and_then(Value::as_object);
    if predicate.is_none() {
        expect("$.predicate", "an object");
    }
    let mut subjects = Vec::new();
    match value.get("subject").and_then(Value::as_array) {
        None => expect("$.subject", "an array of subjects"),
        Some(items) => {
            for (i, item) in items.iter().enumerate() {
                let name = item.get("name").and_then(Value::as_str);
                let sha256 = item.get("digest").and_then(|d| d.get("sha256")).and_then(Value::as_str);
                match (name, sha256) {
                    (Some(name), Some(sha256)) if is_hex64(sha256) => {
                        subjects.push(Subject { name: name.to_owned(), sha256: sha256.to_owned() })
                    }
                    _ => expect(&format!("$.subject[{i}]"), "{name, digest: {sha256: 64 lowercase hex}}"),
                }
            }
        }
    }
    match (problems.is_empty(), predicate) {
        (true, Some(predicate)) => Ok((subjects, predicate)),
        _ => Err(problems),
    }
}

pub(crate) fn is_hex64(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_parses_back() {
        let subjects = vec![Subject { name: "a.json".into(), sha256: "0".repeat(64) }];
        let value = statement(&subjects, json!({"runId": "r"}));
        let (parsed, predicate) = parse(&value).unwrap();
        assert_eq!(parsed, subjects);
        assert_eq!(predicate["runId"], "r");
    }

    #[test]
    fn a_wrong_shape_names_each_path() {
        let value = json!({"_type": "x", "subject": [{"name": "a", "digest": {"sha256": "ABC"}}], "predicateType": PREDICATE_TYPE});
        let problems = parse(&value).unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["$._type", "$.predicate", "$.subject[0]"]);
    }
}
