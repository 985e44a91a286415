//! The rule book's own tests: names, proofs, and the table in docs/rules.md.

use super::*;

#[test]
fn every_check_has_one_distinct_name_and_is_found_by_it() {
    let names = Check::names();
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "two checks share a name: {names:?}");
    for check in Check::ALL {
        assert_eq!(Check::from_name(check.name()), Some(check));
    }
    assert_eq!(Check::from_name("packet::nope"), None);
}

/// A registered check has a negative fixture (expect.toml names it), or names
/// the test that proves it can fail, and that test exists. The mutation self-test
/// is the proof of the packet and run checks; its own failure is proven by
/// `crate::mutation`'s baseline rule only (a gap, said in the README).
#[test]
fn rules_are_proven() {
    let root = std::path::Path::new(crate::PROJECT_ROOT);
    let mut declared = String::new();
    for entry in walkdir::WalkDir::new(root.join("fixtures")).into_iter().filter_map(Result::ok) {
        if entry.file_name() == "expect.toml" {
            declared.push_str(&std::fs::read_to_string(entry.path()).unwrap());
        }
    }
    let mut unproven = Vec::new();
    for check in Check::ALL {
        let fixture = declared.contains(&format!("check = \"{}\"", check.name()));
        let test = check.rule().tested_by.is_some_and(|test| {
            let (file, function) = test.split_once("::").unwrap();
            std::fs::read_to_string(root.join(file)).is_ok_and(|text| text.contains(&format!("fn {function}(")))
        });
        if !fixture && !test && check != Check::Corpus(CorpusCheck::MutationSelfTest) {
            unproven.push(check.name());
        }
    }
    assert!(unproven.is_empty(), "registered checks with no negative fixture and no existing test: {unproven:?}");
}

/// README.md's table of rules, as this rule book makes it.
fn readme_table() -> String {
    let mut table = String::from(
        "| rule | reads | needs | a suite may skip it | not yet due at | proves |\n|---|---|---|---|---|---|\n",
    );
    for check in Check::ALL {
        let rule = check.rule();
        let needs: Vec<String> = rule.needs.iter().map(|n| format!("`{n}`")).collect();
        let needs = if needs.is_empty() { "nothing".to_owned() } else { needs.join(", ") };
        let skip = match rule.skip {
            Skip::Allowed => "yes".to_owned(),
            Skip::Never(why) => format!("never: {why}"),
        };
        let due = if rule.not_due_at.is_empty() { "—".to_owned() } else { stages(rule.not_due_at) };
        table.push_str(&format!("| `{}` | {} | {needs} | {skip} | {due} | {} |\n", rule.name, rule.reads, rule.proves));
    }
    table
}

/// The README's rule table is this book, row for row: a rule added, renamed or
/// re-declared without its row fails here, printing the table to paste.
#[test]
fn the_readme_table_is_the_rule_book() {
    const START: &str =
        "<!-- the rule book: generated from crates/packetproof/src/rules.rs (rules::tests checks it) -->\n";
    const END: &str = "<!-- end of the rule book -->";
    let readme = std::fs::read_to_string(std::path::Path::new(crate::PROJECT_ROOT).join("docs/rules.md")).unwrap();
    let found = readme.split_once(START).and_then(|(_, rest)| rest.split_once(END)).map(|(table, _)| table);
    let expected = readme_table();
    assert_eq!(
        found,
        Some(expected.as_str()),
        "docs/rules.md's rule table differs from the rule book; paste:\n{START}{expected}{END}"
    );
}
