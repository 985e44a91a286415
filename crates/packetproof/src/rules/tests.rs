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

/// The JSON schema of `checks` and the npm package's types restate the vocabulary's
/// names (what a rule reads, needs, and the steps it is not due at): each list is the
/// vocabulary's, so a word added on one side only fails here. `run-file:*` stands for
/// a run file's need, whatever the file.
#[test]
fn the_schema_and_the_typescript_types_name_the_vocabulary() {
    use std::collections::BTreeSet;
    let root = std::path::Path::new(crate::PROJECT_ROOT);
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
    let reads: BTreeSet<String> = <Reads as strum::VariantArray>::VARIANTS.iter().map(Reads::to_string).collect();
    let needs: BTreeSet<String> =
        <Need as strum::VariantNames>::VARIANTS.iter().map(|n| n.replace("{0}", "*")).collect();
    let stages: BTreeSet<String> = <Stage as strum::VariantNames>::VARIANTS.iter().map(|s| (*s).to_owned()).collect();
    assert!(needs.contains("run-file:*") && needs.contains("golden-verdict"), "{needs:?}");

    let schema: serde_json::Value = serde_json::from_str(&read("schemas/checks.schema.json")).unwrap();
    let rule = &schema["properties"]["checks"]["items"]["properties"];
    let strings = |list: &serde_json::Value| -> BTreeSet<String> {
        list.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(strings(&rule["reads"]["enum"]), reads, "checks.schema.json: reads");
    assert_eq!(strings(&rule["notDueAt"]["items"]["enum"]), stages, "checks.schema.json: notDueAt");
    let pattern = rule["needs"]["items"]["pattern"].as_str().unwrap();
    let alternatives = pattern.strip_prefix("^(").and_then(|p| p.strip_suffix(")$")).expect("^(a|b|…)$");
    let schema_needs: BTreeSet<String> = alternatives.split('|').map(|a| a.replace("[A-Za-z0-9._-]+", "*")).collect();
    assert_eq!(schema_needs, needs, "checks.schema.json: needs");

    let types = read("npm/packetproof/index.d.ts");
    let rule = types.split("export interface Rule {").nth(1).and_then(|r| r.split("\n}").next()).unwrap();
    let union = |field: &str| -> BTreeSet<String> {
        // The field's type, to the `;` that ends it (a long union spans lines).
        let declared = rule.split(&format!("\n  {field}:")).nth(1).and_then(|t| t.split(';').next()).unwrap();
        // 'name' and `prefix:${string}`.
        let mut names = BTreeSet::new();
        let mut rest = declared;
        while let Some(at) = rest.find(['\'', '`']) {
            let quote = rest[at..].chars().next().unwrap();
            let (name, after) = rest[at + 1..].split_once(quote).unwrap();
            names.insert(name.replace("${string}", "*"));
            rest = after;
        }
        names
    };
    assert_eq!(union("reads"), reads, "index.d.ts: Rule.reads");
    assert_eq!(union("needs"), needs, "index.d.ts: Rule.needs");
    assert_eq!(union("notDueAt"), stages, "index.d.ts: Rule.notDueAt");
}
