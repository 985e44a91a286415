//! The rule book's own tests: names, proofs, and the README's table.

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
