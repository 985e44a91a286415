//! in-toto Statement v1: `{_type, subject: [{name, digest: {sha256: hex}}],
//! predicateType, predicate}`, one serde type written by `attest` and read by
//! `verify`. Subjects are matched by name (a run's files have fixed names); digests
//! are lowercase hex, as the in-toto DigestSet says.

use super::predicate::{Predicate, PREDICATE_TYPE};
use super::ShapeProblem;
use crate::canonical;
use crate::report::JsonPath;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub(crate) const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";

/// Fields in written order. Read, unknown fields (and digests of other algorithms)
/// are ignored, as they were when statements were read as maps; the predicate keeps
/// its own (see [`Predicate`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Statement {
    #[serde(rename = "_type")]
    pub(crate) statement_type: String,
    pub(crate) subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    pub(crate) predicate_type: String,
    pub(crate) predicate: Predicate,
}

/// One subject: a name and its digests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Subject {
    pub(crate) name: String,
    pub(crate) digest: DigestSet,
}

/// The one digest a receipt records: sha256 as lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DigestSet {
    pub(crate) sha256: String,
}

impl Subject {
    pub(crate) fn new(name: impl Into<String>, sha256: impl Into<String>) -> Subject {
        Subject { name: name.into(), digest: DigestSet { sha256: sha256.into() } }
    }
}

/// Everything wrong with a statement's shape.
pub(crate) type ShapeProblems = Vec<ShapeProblem>;

impl Statement {
    /// A run receipt: the statement and predicate types are fixed.
    pub(crate) fn new(subject: Vec<Subject>, predicate: Predicate) -> Statement {
        Statement {
            statement_type: STATEMENT_TYPE.to_owned(),
            subject,
            predicate_type: PREDICATE_TYPE.to_owned(),
            predicate,
        }
    }

    /// The payload `attest` signs: pretty JSON, fields in written order.
    pub(crate) fn to_pretty(&self) -> String {
        canonical::to_pretty(&serde_json::to_value(self).expect("a statement of JSON values serializes"))
    }

    /// A statement read from a payload, or every problem of its shape. The JSON is
    /// checked before it is read into the type: serde stops at the first problem
    /// and names no path.
    pub(crate) fn from_json(value: Value) -> Result<Statement, ShapeProblems> {
        let problems = shape_problems(&value);
        if !problems.is_empty() {
            return Err(problems);
        }
        serde_json::from_value(value).map_err(|e| vec![(JsonPath::root(), format!("an in-toto Statement: {e}"))])
    }
}

fn shape_problems(value: &Value) -> ShapeProblems {
    let mut problems = Vec::new();
    let mut expect = |path: JsonPath, what: &str| problems.push((path, what.to_owned()));
    if value.get("_type").and_then(Value::as_str) != Some(STATEMENT_TYPE) {
        expect(JsonPath::field("_type"), &format!("{STATEMENT_TYPE:?}"));
    }
    if value.get("predicateType").and_then(Value::as_str) != Some(PREDICATE_TYPE) {
        expect(JsonPath::field("predicateType"), &format!("{PREDICATE_TYPE:?}"));
    }
    if !value.get("predicate").is_some_and(Value::is_object) {
        expect(JsonPath::field("predicate"), "an object");
    }
    match value.get("subject").and_then(Value::as_array) {
        None => expect(JsonPath::field("subject"), "an array of subjects"),
        Some(items) => {
            for (i, _) in items.iter().enumerate().filter(|(_, item)| !is_subject(item)) {
                expect(JsonPath::field("subject").index(i), "{name, digest: {sha256: 64 lowercase hex}}");
            }
        }
    }
    problems
}

fn is_subject(item: &Value) -> bool {
    let sha256 = item.get("digest").and_then(|d| d.get("sha256")).and_then(Value::as_str);
    item.get("name").is_some_and(Value::is_string) && sha256.is_some_and(is_hex64)
}

fn is_hex64(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn receipt() -> Statement {
        let predicate = Predicate { run_id: Some(json!("r")), ..Predicate::default() };
        Statement::new(vec![Subject::new("a.json", "0".repeat(64))], predicate)
    }

    #[test]
    fn a_statement_reads_back() {
        let written = receipt();
        let read = Statement::from_json(canonical::parse(written.to_pretty().as_bytes()).unwrap()).unwrap();
        assert_eq!(read, written);
    }

    /// As when statements were read as maps: only the predicate's own unknown fields
    /// are kept (for `verify` to name), the rest is ignored.
    #[test]
    fn unknown_fields_outside_the_predicate_are_ignored() {
        let mut value = serde_json::to_value(receipt()).unwrap();
        value["comment"] = json!("x");
        value["subject"][0]["uri"] = json!("file:a.json");
        value["subject"][0]["digest"]["sha512"] = json!("ff");
        value["predicate"]["extra"] = json!(1);
        let read = Statement::from_json(value).unwrap();
        assert_eq!(read.subject, receipt().subject);
        assert_eq!(read.predicate.unknown["extra"], 1);
    }

    #[test]
    fn a_wrong_shape_names_each_path() {
        let value = json!({"_type": "x", "subject": [{"name": "a", "digest": {"sha256": "ABC"}}], "predicateType": PREDICATE_TYPE});
        let problems = Statement::from_json(value).unwrap_err();
        let paths: Vec<String> = problems.iter().map(|(p, _)| p.to_string()).collect();
        assert_eq!(paths, ["$._type", "$.predicate", "$.subject[0]"]);
    }
}
