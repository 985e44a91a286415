//! Differences between two JSON values or two texts, as reviewers read them:
//! leaf-level `path = value` changes, unified diffs of the prompt texts, and
//! groups of cases whose packets changed the same way (one template edit that
//! touches 20 packets reads as one change). The release check and the
//! conformance gate both show changes through [`group`].

use crate::canonical;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One leaf that differs: its JSONPath and both values (absent on one side when
/// the leaf was added or removed). [`FieldChange::shown`] shortens them for text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    pub path: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

impl FieldChange {
    /// A value as one short line of canonical JSON, or `(absent)`.
    pub fn shown(value: &Option<Value>) -> String {
        value.as_ref().map_or_else(|| "(absent)".to_owned(), short)
    }
}

/// Cases whose packets changed in the same way, shown once.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeGroup {
    pub cases: Vec<String>,
    pub system_prompt_diff: String,
    pub effective_user_message_diff: String,
    pub field_changes: Vec<FieldChange>,
    /// The first case's prompts on both sides, for side-by-side views (the HTML
    /// report); not in JSON, where the diffs above say the same.
    #[serde(skip)]
    pub prompts: PromptTexts,
}

/// `systemPrompt` and `effectiveUserMessage`, each as (before, after).
#[derive(Debug, Clone, Default)]
pub struct PromptTexts {
    pub system_prompt: (String, String),
    pub effective_user_message: (String, String),
}

/// Group `(case, before, after)` packets whose changes read the same; `labels`
/// name the two sides in the diffs. Largest group first.
pub fn group(changes: Vec<(String, Value, Value)>, labels: (&str, &str)) -> Vec<ChangeGroup> {
    let mut groups: BTreeMap<String, ChangeGroup> = BTreeMap::new();
    for (case, before, after) in changes {
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
        let system = unified(&text(&before, "systemPrompt"), &text(&after, "systemPrompt"), labels);
        let user = unified(&text(&before, "effectiveUserMessage"), &text(&after, "effectiveUserMessage"), labels);
        // The hashes follow from everything else, and userMessage is shown by the
        // effectiveUserMessage diff; listing them would only repeat what is shown.
        let skip = ["systemPrompt", "effectiveUserMessage", "userMessage", "exactInputHash", "checksum"];
        let fields = field_changes(&before, &after, &skip);
        let key = format!(
            "{}\u{0}{}\u{0}{}",
            changed_lines(&system),
            changed_lines(&user),
            // Values too: two cases whose maxTokens changed differently are two changes.
            fields.iter().map(|f| format!("{}={:?}>{:?}", f.path, f.before, f.after)).collect::<Vec<_>>().join(",")
        );
        groups
            .entry(key)
            .or_insert_with(|| ChangeGroup {
                cases: Vec::new(),
                system_prompt_diff: system,
                effective_user_message_diff: user,
                field_changes: fields,
                prompts: PromptTexts {
                    system_prompt: (text(&before, "systemPrompt"), text(&after, "systemPrompt")),
                    effective_user_message: (
                        text(&before, "effectiveUserMessage"),
                        text(&after, "effectiveUserMessage"),
                    ),
                },
            })
            .cases
            .push(case);
    }
    let mut groups: Vec<ChangeGroup> = groups.into_values().collect();
    groups.sort_by(|a, b| b.cases.len().cmp(&a.cases.len()).then_with(|| a.cases.cmp(&b.cases)));
    groups
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
        _ => out.push(FieldChange { path: path.to_owned(), before: before.cloned(), after: after.cloned() }),
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
}
