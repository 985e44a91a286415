//! Findings (what a check found wrong), the outcome of checking one target, and
//! the verdict a command reports, with the output formats (`format`). Rendering
//! them is the reporters' job (`crate::reporter`); writing the result to the
//! terminal is the CLI's (`print` in the command line's crate).

mod format;

use serde::Serialize;
use std::fmt;

pub use format::{Format, JSON_FORMAT_VERSION};

pub(crate) use crate::rules::{Check, PacketCheck, Skipped};

pub(crate) use crate::jsonpath::{child, index};
pub use crate::jsonpath::{walk, Trail};
pub use crate::jsonpath::{JsonPath, Location, Segment};

/// One failed rule: which check, where (a JSON path such as `$.resolvedBranch.agentId`,
/// one in a named file, or a file name), and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub check: Check,
    pub path: Location,
    pub message: String,
    /// Why, when the tools could tell (a hash's forensics: which known exporter
    /// mistake reproduces the stored value). The message says it in words too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

impl Finding {
    pub(crate) fn new(check: impl Into<Check>, path: impl Into<Location>, message: impl Into<String>) -> Self {
        Finding { check: check.into(), path: path.into(), message: message.into(), cause: None }
    }

    pub(crate) fn with_cause(mut self, cause: impl Into<String>) -> Self {
        self.cause = Some(cause.into());
        self
    }
}

/// The findings of one check, collected while it walks: every finding carries the
/// check's name, so a check cannot mislabel one.
#[derive(Debug)]
pub struct Findings {
    check: Check,
    found: Vec<Finding>,
}

impl Findings {
    pub(crate) fn new(check: impl Into<Check>) -> Findings {
        Findings { check: check.into(), found: Vec::new() }
    }

    /// Record that the rule failed at `path`.
    pub(crate) fn fail(&mut self, path: impl Into<Location>, message: impl Into<String>) {
        self.found.push(Finding::new(self.check, path, message));
    }

    /// Add findings another function collected (of this check or another).
    pub(crate) fn extend(&mut self, findings: impl IntoIterator<Item = Finding>) {
        self.found.extend(findings);
    }

    pub(crate) fn into_vec(self) -> Vec<Finding> {
        self.found
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}: {}", self.check, self.path, self.message)
    }
}

/// What a command reports back: the exit status follows from it (0 holds, 1 failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a verdict decides the exit status"]
pub enum Status {
    Holds,
    Failed,
}

/// The exit statuses of every command but `test` (which exits as `cargo test` does: 0
/// passed, 101 a trial failed, 2 could not run).
pub const HOLDS: u8 = 0;
pub const FAILED: u8 = 1;
pub const COULD_NOT_RUN: u8 = 2;

/// Each exit status with what it means and what it covers: the one text `packetproof
/// --help` prints, which the README is checked against.
pub const EXIT_STATUSES: &[(u8, &str, &str)] = &[
    (HOLDS, "everything holds", ""),
    (FAILED, "a check failed", ""),
    (
        COULD_NOT_RUN,
        "the command could not run",
        "bad usage, an unreadable or invalid input, a settings error, a refusal that protects data, git or \
         the suite's [exporter] failing, or a packetproof bug",
    ),
];

impl Status {
    /// The process's exit status for this verdict (see [`EXIT_STATUSES`]).
    pub fn exit_status(self) -> u8 {
        match self {
            Status::Holds => HOLDS,
            Status::Failed => FAILED,
        }
    }

    /// `Holds` exactly when `ok`.
    pub fn from_ok(ok: bool) -> Status {
        if ok {
            Status::Holds
        } else {
            Status::Failed
        }
    }
}

/// Findings shown per check and outcome; the rest are counted in a note.
pub(crate) const MAX_FINDINGS_PER_CHECK: usize = 100;

/// The result of checking one file or directory. Whether it holds is derived from
/// its findings, never stored, so adding a finding cannot leave a stale verdict.
/// `ran` and `skipped` say which rules applied and which could not, with why: a
/// rule that did not run is never a silent pass. The reporters render it (text
/// and JSON each in one place: `crate::reporter`).
#[derive(Debug, Clone, Default)]
#[must_use = "an outcome dropped is a failure nobody sees"]
pub struct Outcome {
    pub target: String,
    pub findings: Vec<Finding>,
    pub notes: Vec<String>,
    pub(crate) ran: Vec<Check>,
    pub skipped: Vec<Skipped>,
}

impl Outcome {
    pub fn new(target: impl Into<String>, findings: Vec<Finding>) -> Self {
        Outcome { target: target.into(), findings, ..Outcome::default() }
    }

    /// Record that `check` ran (once).
    pub(crate) fn ran(&mut self, check: impl Into<Check>) {
        let check = check.into();
        self.skipped.retain(|s| s.check != check);
        if !self.ran.contains(&check) {
            self.ran.push(check);
        }
    }

    /// Record that `check` could not apply here, and why (once per check).
    pub(crate) fn skip(&mut self, check: impl Into<Check>, reason: impl Into<String>) {
        let check = check.into();
        if !self.skipped.iter().any(|s| s.check == check) && !self.ran.contains(&check) {
            self.skipped.push(Skipped { check, reason: reason.into() });
        }
    }

    /// The target holds: nothing was found.
    pub fn ok(&self) -> bool {
        self.findings.is_empty()
    }

    /// Whether every outcome holds.
    pub fn all_ok(outcomes: &[Outcome]) -> bool {
        outcomes.iter().all(Outcome::ok)
    }

    /// At most `MAX_FINDINGS_PER_CHECK` findings of each check, and a note
    /// counting the rest, each message and path at most `MAX_MESSAGE_CHARS`:
    /// a hostile input cannot flood the report.
    pub fn capped(&self) -> Outcome {
        let mut seen: std::collections::BTreeMap<Check, usize> = Default::default();
        let mut findings = Vec::new();
        for finding in &self.findings {
            let count = seen.entry(finding.check).or_default();
            *count += 1;
            if *count <= MAX_FINDINGS_PER_CHECK {
                let mut shown = finding.clone();
                shown.message = bounded(&shown.message, MAX_MESSAGE_CHARS);
                shown.path = bounded_location(shown.path);
                findings.push(shown);
            }
        }
        let mut notes = self.notes.clone();
        for (check, count) in seen.into_iter().filter(|(_, n)| *n > MAX_FINDINGS_PER_CHECK) {
            notes.push(format!(
                "{} more [{check}] finding(s) not listed (at most {MAX_FINDINGS_PER_CHECK} per check are shown)",
                count - MAX_FINDINGS_PER_CHECK
            ));
        }
        Outcome { target: self.target.clone(), findings, notes, ran: self.ran.clone(), skipped: self.skipped.clone() }
    }
}

/// Control characters other than newline and tab, as `\u{1b}`: a hostile file
/// name or id printed in a report cannot drive the terminal.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    escape_where(text, |c| (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c))
}

/// A name (a fixture, a case, a path) on one line of a report: every control
/// character, newlines and tabs included, and every bidirectional override is
/// escaped, so a name can neither start a line of its own nor reorder the text
/// around it (U+202E).
pub fn escape_name(text: &str) -> std::borrow::Cow<'_, str> {
    escape_where(text, |c| c.is_control() || is_bidi_control(c))
}

/// The Unicode bidirectional formatting characters (embeddings, overrides,
/// isolates and marks): invisible, and able to make a line read differently.
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape_where(text: &str, is_bad: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(&is_bad) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_bad(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A finding's message (or path) is shown up to so many characters; a value a
/// message quotes whole (a hostile 10 MB string) cannot make the report huge.
pub(crate) const MAX_MESSAGE_CHARS: usize = 4000;

/// `text` cut at `max` characters, with a count of the rest.
fn bounded(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}… ({} more characters not shown)", &text[..cut], text[cut..].chars().count()),
        None => text.to_owned(),
    }
}

/// A location whose text passes [`MAX_MESSAGE_CHARS`], as that text cut short.
fn bounded_location(location: Location) -> Location {
    let text = location.to_string();
    match text.chars().nth(MAX_MESSAGE_CHARS) {
        Some(_) => Location::named(bounded(&text, MAX_MESSAGE_CHARS)),
        None => location,
    }
}

/// At most so many characters of a file's text are quoted in a message.
pub(crate) const MAX_EXCERPT_CHARS: usize = 120;

/// How a message quotes text read from a file (a suffix, an exporter's stderr, a
/// value from an envelope): never text that looks like a key (PEM armour or
/// "PRIVATE KEY"), at most [`MAX_EXCERPT_CHARS`] characters, quoted and escaped
/// as Rust's `{:?}` escapes (controls, newlines) plus bidirectional overrides,
/// with a count of the rest.
pub(crate) fn excerpt(text: &str) -> String {
    if looks_like_a_key(text) {
        return format!("<{} bytes that look like a key (PEM); never shown>", text.len());
    }
    let shown: String = text.chars().take(MAX_EXCERPT_CHARS).collect();
    let quoted = escape_name(&format!("{shown:?}")).into_owned();
    let rest = text.chars().count() - shown.chars().count();
    match rest {
        0 => quoted,
        _ => format!("{quoted}… ({rest} more characters)"),
    }
}

/// A parser's message about `text` (a TOML error quotes the line it failed on):
/// never quoting a file that looks like a key, and each line of the message
/// at most 200 characters (the rest counted).
pub(crate) fn parse_error_of(text: &str, message: &str) -> String {
    if looks_like_a_key(text) {
        return "not parsed: the file looks like a key (PEM) and is never quoted".into();
    }
    let bounded = |line: &str| match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}… ({} more characters)", &line[..cut], line[cut..].chars().count()),
        None => line.to_owned(),
    };
    message.lines().map(bounded).collect::<Vec<_>>().join("\n")
}

/// PEM armour (`-----BEGIN`) or the words of a private key, anywhere in `text`.
/// Text read from an input shown as part of one line of a report (a span's name or
/// id, a reason quoting one): never key material, at most [`MAX_EXCERPT_CHARS`]
/// characters, every control character and bidirectional override escaped, so it
/// cannot end its line and fake the next (a verdict, a summary).
pub(crate) fn one_line(text: &str) -> String {
    if looks_like_a_key(text) {
        return format!("<{} bytes that look like a key (PEM); never shown>", text.len());
    }
    escape_name(&bounded(text, MAX_EXCERPT_CHARS)).into_owned()
}

pub(crate) fn looks_like_a_key(text: &str) -> bool {
    text.contains("-----BEGIN") || text.contains("PRIVATE KEY")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_findings_message_is_shown_bounded() {
        let outcome = Outcome::new(
            "x.json",
            vec![Finding::new(crate::PacketCheck::Contract, Location::root(), format!("is {:?}", "v".repeat(1 << 20)))],
        );
        let shown = outcome.capped();
        assert!(shown.findings[0].message.len() < MAX_MESSAGE_CHARS + 100, "{}", shown.findings[0].message.len());
        assert!(shown.findings[0].message.ends_with("more characters not shown)"));
        assert_eq!(
            Outcome::new("y", vec![Finding::new(crate::PacketCheck::Contract, Location::root(), "short")])
                .capped()
                .findings[0]
                .message,
            "short"
        );
    }

    #[test]
    fn names_cannot_start_a_line_or_reverse_one() {
        assert_eq!(escape_name("case\nok      fake"), "case\\u{a}ok      fake");
        assert_eq!(escape_name("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(escape_name("plain-name"), "plain-name");
        // Multi-line messages keep their newlines; the bidi override is escaped there too.
        assert_eq!(escape_controls("a\nb\u{2066}"), "a\nb\\u{2066}");
    }

    #[test]
    fn excerpts_are_bounded_escaped_and_never_a_key() {
        let key = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA\n-----END PRIVATE KEY-----\n";
        let shown = excerpt(key);
        assert!(!shown.contains("MC4CAQ") && shown.contains("look like a key"), "{shown}");
        let long = "x".repeat(10_000);
        let shown = excerpt(&long);
        assert!(shown.len() < MAX_EXCERPT_CHARS + 60 && shown.ends_with("(9880 more characters)"), "{shown}");
        assert_eq!(excerpt("a\nb\u{202e}"), "\"a\\nb\\u{202e}\"");
    }

    #[test]
    fn control_characters_are_escaped_but_lines_kept() {
        assert_eq!(escape_controls("a\u{1b}[2Jb\r\u{7}\u{9b}\n\tc"), "a\\u{1b}[2Jb\\u{d}\\u{7}\\u{9b}\n\tc");
        assert!(matches!(escape_controls("plain\n"), std::borrow::Cow::Borrowed(_)));
    }
}
