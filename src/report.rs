//! Findings (what a check found wrong) and how they are printed.

use serde::Serialize;
use std::fmt;

/// One failed rule: which check, where (a JSONPath such as `$.resolvedBranch.agentId`,
/// or a file name), and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub path: String,
    pub message: String,
}

impl Finding {
    pub fn new(check: &'static str, path: impl Into<String>, message: impl Into<String>) -> Self {
        Finding { check, path: path.into(), message: message.into() }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}: {}", self.check, self.path, self.message)
    }
}

/// Output format of every command that prints a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// The result of checking one file or directory.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub target: String,
    pub ok: bool,
    pub findings: Vec<Finding>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Outcome {
    pub fn new(target: impl Into<String>, findings: Vec<Finding>) -> Self {
        Outcome { target: target.into(), ok: findings.is_empty(), findings, notes: Vec::new() }
    }

    pub fn render(outcomes: &[Outcome], format: Format) -> String {
        match format {
            Format::Json => {
                let all_ok = outcomes.iter().all(|o| o.ok);
                let doc = serde_json::json!({ "ok": all_ok, "results": outcomes });
                crate::canonical::to_pretty(&doc)
            }
            Format::Text => outcomes.iter().map(Outcome::to_text).collect(),
        }
    }

    fn to_text(&self) -> String {
        let mut text = String::new();
        let verdict = if self.ok { "ok" } else { "FAILED" };
        text.push_str(&format!("{}: {verdict} ({} finding(s))\n", self.target, self.findings.len()));
        for finding in &self.findings {
            text.push_str(&format!("  {finding}\n"));
        }
        for note in &self.notes {
            text.push_str(&format!("  note: {note}\n"));
        }
        text
    }
}

/// JSONPath text of a child member, quoting keys that are not plain identifiers.
pub fn child(path: &str, key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", serde_json::Value::from(key))
    }
}

pub fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// A JSON path built while walking a value, rendered only when something is found
/// (walks of large packets then allocate nothing on the happy path).
#[derive(Debug, Clone)]
pub struct Trail<'a> {
    root: &'a str,
    steps: Vec<Step<'a>>,
}

#[derive(Debug, Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

impl<'a> Trail<'a> {
    pub fn new(root: &'a str) -> Self {
        Trail { root, steps: Vec::new() }
    }
    pub fn push_key(&mut self, key: &'a str) {
        self.steps.push(Step::Key(key));
    }
    pub fn push_index(&mut self, i: usize) {
        self.steps.push(Step::Index(i));
    }
    pub fn pop(&mut self) {
        self.steps.pop();
    }
    pub fn render(&self) -> String {
        self.steps.iter().fold(self.root.to_owned(), |path, step| match step {
            Step::Key(key) => child(&path, key),
            Step::Index(i) => index(&path, *i),
        })
    }
}

/// Visit every value under an object's members with its trail, depth first.
pub fn walk_map<'a>(
    map: &'a serde_json::Map<String, serde_json::Value>,
    trail: &mut Trail<'a>,
    visit: &mut impl FnMut(&'a serde_json::Value, Option<&'a str>, &Trail<'a>),
) {
    for (key, item) in map {
        trail.push_key(key);
        visit(item, Some(key), trail);
        walk(item, trail, visit);
        trail.pop();
    }
}

/// Visit every value under `value` with its trail, depth first.
pub fn walk<'a>(
    value: &'a serde_json::Value,
    trail: &mut Trail<'a>,
    visit: &mut impl FnMut(&'a serde_json::Value, Option<&'a str>, &Trail<'a>),
) {
    match value {
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                trail.push_index(i);
                visit(item, None, trail);
                walk(item, trail, visit);
                trail.pop();
            }
        }
        serde_json::Value::Object(map) => walk_map(map, trail, visit),
        _ => {}
    }
}
