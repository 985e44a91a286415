//! Findings (what a check found wrong), the outcome of checking one target, and
//! the verdict a command reports. Rendering to text or JSON lives here; writing
//! it to the terminal is the CLI's job (`cli::print`).

use serde::{Serialize, Serializer};
use std::fmt;

pub use crate::jsonpath::{child, index, walk, walk_map, Trail};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// What a command reports back: the exit status follows from it (0 holds, 1 failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Holds,
    Failed,
}

impl Status {
    /// `Holds` exactly when `ok`.
    pub fn from_ok(ok: bool) -> Status {
        if ok {
            Status::Holds
        } else {
            Status::Failed
        }
    }
}

/// The result of checking one file or directory. Whether it holds is derived from
/// its findings, never stored, so adding a finding cannot leave a stale verdict.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub target: String,
    pub findings: Vec<Finding>,
    pub notes: Vec<String>,
}

impl Serialize for Outcome {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Field order is the report format: target, ok, findings, notes (when any).
        #[derive(Serialize)]
        struct Shown<'a> {
            target: &'a str,
            ok: bool,
            findings: &'a [Finding],
            #[serde(skip_serializing_if = "<[String]>::is_empty")]
            notes: &'a [String],
        }
        Shown { target: &self.target, ok: self.ok(), findings: &self.findings, notes: &self.notes }
            .serialize(serializer)
    }
}

impl Outcome {
    pub fn new(target: impl Into<String>, findings: Vec<Finding>) -> Self {
        Outcome { target: target.into(), findings, notes: Vec::new() }
    }

    /// The target holds: nothing was found.
    pub fn ok(&self) -> bool {
        self.findings.is_empty()
    }

    /// Whether every outcome holds.
    pub fn all_ok(outcomes: &[Outcome]) -> bool {
        outcomes.iter().all(Outcome::ok)
    }

    pub fn render(outcomes: &[Outcome], format: Format) -> String {
        match format {
            Format::Json => {
                let doc = serde_json::json!({ "ok": Outcome::all_ok(outcomes), "results": outcomes });
                crate::canonical::to_pretty(&doc)
            }
            Format::Text => outcomes.iter().map(Outcome::to_text).collect(),
        }
    }

    fn to_text(&self) -> String {
        let mut text = String::new();
        let verdict = if self.ok() { "ok" } else { "FAILED" };
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
