//! Grouping of changed packets whose changes read the same.

use super::ChangeGroup;
use crate::diff::{changed_lines, field_changes, unified};
use serde_json::Value;
use std::collections::BTreeMap;

/// Group changed packets whose changes read the same, so one template edit that
/// touches 20 packets is one entry with 20 cases.
pub(super) fn group(changes: Vec<(String, Value, Value)>) -> Vec<ChangeGroup> {
    let mut groups: BTreeMap<String, ChangeGroup> = BTreeMap::new();
    for (case, before, after) in changes {
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
        let system = unified(&text(&before, "systemPrompt"), &text(&after, "systemPrompt"), ("base", "tree"));
        let user =
            unified(&text(&before, "effectiveUserMessage"), &text(&after, "effectiveUserMessage"), ("base", "tree"));
        // The hashes are in the per-case table, and userMessage is shown by the
        // effectiveUserMessage diff; here they would only repeat what is shown.
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
            })
            .cases
            .push(case);
    }
    let mut groups: Vec<ChangeGroup> = groups.into_values().collect();
    groups.sort_by(|a, b| b.cases.len().cmp(&a.cases.len()).then_with(|| a.cases.cmp(&b.cases)));
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn same_template_edit_groups_cases() {
        let packet = |user: &str| json!({"systemPrompt": "one\ntwo\n", "effectiveUserMessage": user});
        let edited = |user: &str| json!({"systemPrompt": "one\n2\n", "effectiveUserMessage": user});
        let changes = vec![
            ("a".into(), packet("alpha\n"), edited("alpha\n")),
            ("b".into(), packet("beta\n"), edited("beta\n")),
            ("c".into(), packet("gamma\n"), packet("GAMMA\n")),
        ];
        let groups = group(changes);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].cases, ["a", "b"]);
        assert!(groups[0].system_prompt_diff.contains("-two\n+2\n"), "{}", groups[0].system_prompt_diff);
        assert_eq!(groups[1].cases, ["c"]);
    }
}
