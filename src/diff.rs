//! Differences between two JSON values or two texts, as reviewers read them:
//! leaf-level `path = value` changes and unified diffs of the prompt texts.

use crate::canonical;
use serde::Serialize;
use serde_json::Value;

/// One leaf that differs, with both values shortened for a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// A unified diff of two texts with two lines of context; empty when they are equal.
pub fn unified(before: &str, after: &str, labels: (&str, &str)) -> String {
    if before == after {
        return String::new();
    }
    similar::TextDiff::from_lines(before, after).unified_diff().context_radius(2).header(labels.0, labels.1).to_string()
}

/// The +/- lines of a unified diff: what a group has in common across cases.
pub fn changed_lines(diff: &str) -> String {
    diff.lines()
        .filter(|l| (l.starts_with('+') || l.starts_with('-')) && !l.starts_with("+++") && !l.starts_with("---"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The prompt texts, shown as unified diffs rather than as changed fields.
pub const DIFFED_TEXTS: [&str; 2] = ["systemPrompt", "effectiveUserMessage"];

/// Leaf-level differences, leaving out the top-level fields in `skip`.
pub fn field_changes(before: &Value, after: &Value, skip: &[&str]) -> Vec<FieldChange> {
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
        (Some(b), Some(a)) if b == a => {}
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
        _ => out.push(FieldChange { path: path.to_owned(), before: before.map(short), after: after.map(short) }),
    }
}

fn short(value: &Value) -> String {
    let text = String::from_utf8(canonical::to_vec(value)).unwrap_or_default();
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
}
