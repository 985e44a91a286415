//! The release policy: every golden change is explained by a template, schema,
//! reference, compiler, exporter or fixture change, and every prompt change is
//! re-blessed (`prompt_versions` holds the packets' `promptVersions` to the templates).

use super::{CaseReport, ChangeKind, ChangedFile, Violation, ViolationKind};

/// A changed golden file must belong to a case (a deleted fixture leaves its golden
/// files to nobody; an edit there is unexplained by construction).
pub(super) fn orphaned_golden_changes(changed: &[ChangedFile], cases: &[CaseReport], golden: &str) -> Vec<Violation> {
    let paths: Vec<String> = changed
        .iter()
        .filter(|f| f.kind == ChangeKind::Golden)
        .filter(|f| !cases.iter().any(|c| f.path.starts_with(&format!("{golden}/{}/", c.case))))
        .map(|f| f.path.clone())
        .collect();
    if paths.is_empty() {
        return Vec::new();
    }
    vec![Violation {
        kind: ViolationKind::OrphanedGoldenChange,
        message: format!("{} golden file(s) changed but belong to no fixture", paths.len()),
        cases: Vec::new(),
        paths,
    }]
}

/// The policy, each violation a sentence a reviewer can act on; `packetproof` is the
/// command the team runs packetproof by (`npx packetproof` with the npm package).
pub(super) fn policy(
    changed: &[ChangedFile],
    cases: &[CaseReport],
    fixtures: &str,
    packetproof: &str,
) -> Vec<Violation> {
    let mut violations = Vec::new();
    let stale: Vec<&str> = cases.iter().filter(|c| c.stale_in_tree).map(|c| c.case.as_str()).collect();
    if !stale.is_empty() {
        let causes = kinds_present(
            changed,
            &[ChangeKind::Template, ChangeKind::Schema, ChangeKind::Reference, ChangeKind::Code, ChangeKind::Exporter],
        );
        violations.push(Violation {
            kind: ViolationKind::NotReblessed,
            message: format!(
                "golden packets are not re-blessed for {} case(s){}; run `{packetproof} bless` and commit the result",
                stale.len(),
                if causes.is_empty() { String::new() } else { format!(" after changes to {}", causes.join(", ")) }
            ),
            cases: stale.iter().map(|c| c.to_string()).collect(),
            paths: Vec::new(),
        });
    }
    let explained_by_references = changed.iter().any(|f| {
        matches!(
            f.kind,
            ChangeKind::Template | ChangeKind::Schema | ChangeKind::Reference | ChangeKind::Code | ChangeKind::Exporter
        )
    });
    let unexplained: Vec<String> = cases
        .iter()
        .filter(|c| c.golden_changed)
        .filter(|case| {
            !explained_by_references
                && !changed
                    .iter()
                    .any(|f| f.kind == ChangeKind::Fixture && f.path.starts_with(&format!("{fixtures}/{}/", case.case)))
        })
        .map(|c| c.case.clone())
        .collect();
    if !unexplained.is_empty() {
        // A changed file the suite does not know may be what makes its packets: say how to
        // let it explain them.
        let others: Vec<&str> =
            changed.iter().filter(|f| f.kind == ChangeKind::Other).map(|f| f.path.as_str()).take(3).collect();
        let hint = match others.as_slice() {
            [] => String::new(),
            some => format!(
                "; if {} makes these packets, list it in harness.toml's [exporter] files and its change explains them",
                some.join(", ")
            ),
        };
        violations.push(Violation {
            kind: ViolationKind::UnexplainedGoldenChange,
            message: format!(
                "golden files of {} case(s) changed with no template, schema, compiler, exporter or fixture change to explain them{hint}",
                unexplained.len()
            ),
            cases: unexplained,
            paths: Vec::new(),
        });
    }
    violations
}

fn kinds_present(changed: &[ChangedFile], kinds: &[ChangeKind]) -> Vec<String> {
    let mut present: Vec<String> = kinds
        .iter()
        .filter(|k| changed.iter().any(|f| f.kind == **k))
        .map(|k| format!("{k:?}").to_lowercase() + "s")
        .collect();
    present.dedup();
    present
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unexplained_golden_change_is_a_violation() {
        let case = |name: &str, golden_changed| CaseReport {
            case: name.into(),
            changed_from_base: false,
            stale_in_tree: false,
            golden_changed,
            new: false,
            hash_before: None,
            hash_after: None,
            compile_error: None,
        };
        let golden_only = vec![ChangedFile { path: "golden/a/runtime-packet.json".into(), kind: ChangeKind::Golden }];
        assert_eq!(policy(&golden_only, &[case("a", true)], "fixtures", "packetproof").len(), 1);
        let with_fixture = vec![ChangedFile { path: "fixtures/a/request.json".into(), kind: ChangeKind::Fixture }];
        assert!(policy(&with_fixture, &[case("a", true)], "fixtures", "packetproof").is_empty());
        assert_eq!(
            policy(&with_fixture, &[case("b", true)], "fixtures", "packetproof").len(),
            1,
            "a fixture explains only its own case"
        );
        let code = vec![ChangedFile { path: "src/compile/prompts.rs".into(), kind: ChangeKind::Code }];
        assert!(
            policy(&code, &[case("a", true)], "fixtures", "packetproof").is_empty(),
            "a compiler change explains new packets"
        );
        let exporter = vec![ChangedFile { path: "app/prompts.py".into(), kind: ChangeKind::Exporter }];
        assert!(
            policy(&exporter, &[case("a", true)], "fixtures", "packetproof").is_empty(),
            "an exporter change explains new packets"
        );
        let other = vec![ChangedFile { path: "app/prompts.py".into(), kind: ChangeKind::Other }];
        let found = policy(&other, &[case("a", true)], "fixtures", "packetproof");
        assert_eq!(found.len(), 1, "an undeclared file explains nothing");
        assert!(
            found[0].message.ends_with("if app/prompts.py makes these packets, list it in harness.toml's [exporter] files and its change explains them"),
            "{}",
            found[0].message
        );
        let nested = vec![ChangedFile { path: "fixtures/group/a/request.json".into(), kind: ChangeKind::Fixture }];
        assert!(policy(&nested, &[case("group/a", true)], "fixtures", "packetproof").is_empty(), "nested case names");
        assert_eq!(
            policy(&nested, &[case("a", true)], "fixtures", "packetproof").len(),
            1,
            "a path segment is not a case"
        );
    }
}
