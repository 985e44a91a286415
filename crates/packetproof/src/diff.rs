//! Differences between two JSON values or two texts, as reviewers read them:
//! leaf-level `path = value` changes, unified diffs of the prompt texts, and
//! groups of cases whose packets changed the same way (one template edit that
//! touches 20 packets reads as one change). The release check and the
//! conformance gate both show changes through [`group`].

use crate::canonical;
use serde::Serialize;
use serde_json::Value;

/// One leaf that differs: its JSONPath and both values (absent on one side when
/// the leaf was added or removed). [`FieldChange::shown`] shortens them for text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct FieldChange {
    pub(crate) path: String,
    pub(crate) before: Option<Value>,
    pub(crate) after: Option<Value>,
}

impl FieldChange {
    /// A value as one short line of canonical JSON, or `(absent)`.
    pub(crate) fn shown(value: &Option<Value>) -> String {
        value.as_ref().map_or_else(|| "(absent)".to_owned(), short)
    }
}

/// Cases whose packets changed in the same way, shown once.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeGroup {
    pub cases: Vec<String>,
    pub(crate) system_prompt_diff: String,
    pub(crate) effective_user_message_diff: String,
    pub(crate) field_changes: Vec<FieldChange>,
}

/// Group `(case, before, after)` packets by change: each hunk of a prompt diff
/// and each changed field is one piece of a change, and the pieces that touch the
/// same cases form one change, shown once. Two template edits read as two changes
/// (each with its cases), even where a case has both; `labels` name the two sides
/// in the diffs. Largest group first.
pub fn group(changes: Vec<(String, Value, Value)>, labels: (&str, &str)) -> Vec<ChangeGroup> {
    // Each piece, keyed by what it changes (not by its context or line numbers),
    // with the cases it touches; in first-seen order.
    let mut pieces: Vec<(String, Piece, Vec<String>)> = Vec::new();
    for (case, before, after) in changes {
        for (key, piece) in case_pieces(&before, &after, labels) {
            match pieces.iter_mut().find(|(k, ..)| *k == key) {
                Some((.., cases)) => cases.push(case.clone()),
                None => pieces.push((key, piece, vec![case.clone()])),
            }
        }
    }
    let mut groups: Vec<ChangeGroup> = Vec::new();
    for (_, piece, cases) in pieces {
        let index = match groups.iter().position(|g| g.cases == cases) {
            Some(index) => index,
            None => {
                groups.push(ChangeGroup {
                    cases,
                    system_prompt_diff: String::new(),
                    effective_user_message_diff: String::new(),
                    field_changes: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let group = &mut groups[index];
        match piece {
            Piece::Hunk { text: "systemPrompt", header, hunk } => {
                add_hunk(&mut group.system_prompt_diff, &header, &hunk)
            }
            Piece::Hunk { header, hunk, .. } => add_hunk(&mut group.effective_user_message_diff, &header, &hunk),
            Piece::Field(change) => group.field_changes.push(change),
        }
    }
    groups.sort_by(|a, b| b.cases.len().cmp(&a.cases.len()).then_with(|| a.cases.cmp(&b.cases)));
    groups
}

/// One piece of a case's change: a hunk of a prompt diff, or one changed field.
enum Piece {
    Hunk { text: &'static str, header: String, hunk: String },
    Field(FieldChange),
}

/// The pieces of one case's change, each with the key that identifies it across cases.
fn case_pieces(before: &Value, after: &Value, labels: (&str, &str)) -> Vec<(String, Piece)> {
    let mut pieces = Vec::new();
    for text in DIFFED_TEXTS {
        let value = |v: &Value| v.get(text).and_then(Value::as_str).unwrap_or("").to_owned();
        let diff = unified(&value(before), &value(after), labels);
        let header: String = diff.lines().take_while(|l| !l.starts_with("@@")).map(|l| format!("{l}\n")).collect();
        for hunk in hunks(&diff) {
            let key = format!("{text}\u{0}{}", changed_lines(&hunk));
            pieces.push((key, Piece::Hunk { text, header: header.clone(), hunk }));
        }
    }
    // The hashes follow from everything else, and userMessage is shown by the
    // effectiveUserMessage diff; listing them would only repeat what is shown.
    let skip = ["systemPrompt", "effectiveUserMessage", "userMessage", "exactInputHash", "checksum"];
    for change in field_changes(before, after, &skip) {
        // Values too: two cases whose maxTokens changed differently are two changes.
        let key = format!("field\u{0}{}={:?}>{:?}", change.path, change.before, change.after);
        pieces.push((key, Piece::Field(change)));
    }
    pieces
}

/// The hunks of a unified diff (from each `@@` line to the next).
fn hunks(diff: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in diff.lines().skip_while(|l| !l.starts_with("@@")) {
        if line.starts_with("@@") {
            out.push(String::new());
        }
        if let Some(hunk) = out.last_mut() {
            hunk.push_str(line);
            hunk.push('\n');
        }
    }
    out
}

fn add_hunk(diff: &mut String, header: &str, hunk: &str) {
    if diff.is_empty() {
        diff.push_str(header);
    }
    diff.push_str(hunk);
}

impl ChangeGroup {
    /// The group as plain text: the prompt diffs, then one line per other field.
    /// The case list is the caller's to print (it prints each list once).
    pub fn body_text(&self, labels: (&str, &str)) -> String {
        let mut text = String::new();
        for (title, diff) in
            [("systemPrompt", &self.system_prompt_diff), ("effectiveUserMessage", &self.effective_user_message_diff)]
        {
            if !diff.is_empty() {
                text.push_str(&format!("  {title}:\n"));
                text.extend(diff.lines().map(|l| format!("    {l}\n")));
            }
        }
        if !self.field_changes.is_empty() {
            text.push_str(&format!("  other fields ({} → {}):\n", labels.0, labels.1));
            for f in &self.field_changes {
                text.push_str(&format!(
                    "    {}: {} → {}\n",
                    f.path,
                    FieldChange::shown(&f.before),
                    FieldChange::shown(&f.after)
                ));
            }
        }
        text
    }
}

/// A unified diff of two texts with two lines of context; empty when they are equal.
pub(crate) fn unified(before: &str, after: &str, labels: (&str, &str)) -> String {
    if before == after {
        return String::new();
    }
    similar::TextDiff::from_lines(before, after).unified_diff().context_radius(2).header(labels.0, labels.1).to_string()
}

/// The +/- lines of a unified diff: what a group has in common across cases.
pub(crate) fn changed_lines(diff: &str) -> String {
    diff.lines()
        .filter(|l| (l.starts_with('+') || l.starts_with('-')) && !l.starts_with("+++") && !l.starts_with("---"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The prompt texts, shown as unified diffs rather than as changed fields.
pub(crate) const DIFFED_TEXTS: [&str; 2] = ["systemPrompt", "effectiveUserMessage"];

/// Leaf-level differences, leaving out the top-level fields in `skip`.
pub(crate) fn field_changes(before: &Value, after: &Value, skip: &[&str]) -> Vec<FieldChange> {
    let mut out = Vec::new();
    let (Some(b), Some(a)) = (before.as_object(), after.as_object()) else {
        diff_values("$", Some(before), Some(after), &mut out);
        return out;
    };
    let keys: std::collections::BTreeSet<&String> = b.keys().chain(a.keys()).collect();
    for key in keys.into_iter().filter(|k| !skip.contains(&k.as_str())) {
        diff_values(&crate::report::child("$", key), b.get(key), a.get(key), &mut out);
    }
    out
}

fn diff_values(path: &str, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<FieldChange>) {
    match (before, after) {
        (Some(b), Some(a)) if crate::numbers::same(b, a) => {}
        (Some(Value::Object(b)), Some(Value::Object(a))) => {
            let keys: std::collections::BTreeSet<&String> = b.keys().chain(a.keys()).collect();
            for key in keys {
                diff_values(&crate::report::child(path, key), b.get(key), a.get(key), out);
            }
        }
        (Some(Value::Array(b)), Some(Value::Array(a))) if b.len() == a.len() => {
            for (i, (x, y)) in b.iter().zip(a).enumerate() {
                diff_values(&crate::report::index(path, i), Some(x), Some(y), out);
            }
        }
        _ => out.push(FieldChange { path: path.to_owned(), before: before.cloned(), after: after.cloned() }),
    }
}

fn short(value: &Value) -> String {
    let text = String::from_utf8(canonical::to_vec(value)).unwrap_or_default();
    if crate::report::looks_like_a_key(&text) {
        return crate::report::excerpt(&text);
    }
    if text.chars().count() > 120 {
        format!("{}… ({} bytes)", text.chars().take(117).collect::<String>(), text.len())
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_changes_name_leaf_paths() {
        let before = json!({"maxTokens": 10, "renderInput": {"a": [1, 2], "b": "x"}, "systemPrompt": "s"});
        let after = json!({"maxTokens": 10, "renderInput": {"a": [1, 3], "c": true}, "systemPrompt": "t"});
        let paths: Vec<String> = field_changes(&before, &after, &DIFFED_TEXTS).into_iter().map(|f| f.path).collect();
        assert_eq!(paths, ["$.renderInput.a[1]", "$.renderInput.b", "$.renderInput.c"]);
    }

    /// `64000.0` and `6.4e4` are 64000: only values are changes.
    #[test]
    fn field_changes_compare_numbers_by_value() {
        let before = json!({"maxTokens": 64000, "renderInput": {"a": [1, 2]}});
        let after = crate::canonical::parse(br#"{"maxTokens": 6.4e4, "renderInput": {"a": [1.0, 3]}}"#).unwrap();
        let paths: Vec<String> = field_changes(&before, &after, &[]).into_iter().map(|f| f.path).collect();
        assert_eq!(paths, ["$.renderInput.a[1]"]);
    }

    #[test]
    fn same_template_edit_groups_cases() {
        let packet = |user: &str| json!({"systemPrompt": "one\ntwo\n", "effectiveUserMessage": user});
        let edited = |user: &str| json!({"systemPrompt": "one\n2\n", "effectiveUserMessage": user});
        let changes = vec![
            ("a".into(), packet("alpha\n"), edited("alpha\n")),
            ("b".into(), packet("beta\n"), edited("beta\n")),
            ("c".into(), packet("gamma\n"), packet("GAMMA\n")),
        ];
        let groups = group(changes, ("base", "tree"));
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].cases, ["a", "b"]);
        assert!(groups[0].system_prompt_diff.contains("-two\n+2\n"), "{}", groups[0].system_prompt_diff);
        assert_eq!(groups[1].cases, ["c"]);
    }

    /// Two edits, one touching a and b, the other b and c: two changes, each diff
    /// shown once, not three groups (a, b, c) with the first diff repeated.
    #[test]
    fn two_edits_are_two_changes_even_where_a_case_has_both() {
        let text = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n";
        let packet = |system: &str| json!({"systemPrompt": system, "maxTokens": 10});
        let first = |t: &str| t.replace("two\n", "2\n");
        let second = |t: &str| t.replace("eight\n", "8\n");
        let changes = vec![
            ("a".into(), packet(text), packet(&first(text))),
            ("b".into(), packet(text), packet(&second(&first(text)))),
            ("c".into(), packet(text), packet(&second(text))),
        ];
        let groups = group(changes, ("base", "tree"));
        assert_eq!(groups.iter().map(|g| g.cases.clone()).collect::<Vec<_>>(), [vec!["a", "b"], vec!["b", "c"]]);
        assert!(groups[0].system_prompt_diff.contains("-two\n+2\n"), "{}", groups[0].system_prompt_diff);
        assert!(!groups[0].system_prompt_diff.contains("eight"), "{}", groups[0].system_prompt_diff);
        assert!(groups[1].system_prompt_diff.contains("-eight\n+8\n"), "{}", groups[1].system_prompt_diff);
        assert!(groups[1].system_prompt_diff.starts_with("--- base\n+++ tree\n"), "{}", groups[1].system_prompt_diff);
    }
}
