//! What the binary carries so that it works in a folder with no harness.toml: the
//! project's own settings, Google suffix, schema files and prompt templates,
//! embedded from the committed files with `include_str!`, so they cannot drift
//! from them. `packetproof init` writes the same bytes into a new suite.

/// The project's harness.toml: the built-in policy (its `[paths]` are dropped: the
/// built-in resources below stand in for the files it names).
pub(crate) const HARNESS_TOML: &str = include_str!("../../../harness.toml");
/// The project's Google text-JSON suffix.
pub(crate) const GOOGLE_SUFFIX: &str = include_str!("../../../references/gemini-json-suffix.txt");
/// The schema snapshot packets carry (generated from the Builder schema).
pub(crate) const SCHEMA_SNAPSHOT: &str = include_str!("../../../references/block-screen-output-schema.json");
/// The vendored Builder schema and its provenance.
pub(crate) const BUILDER_SCHEMA: &str = include_str!("../../../references/builder/block-screen-output-schema.json");
pub(crate) const BUILDER_PROVENANCE: &str = include_str!("../../../references/builder/PROVENANCE.md");

/// Where each resource lives in the project (and in a suite `init` writes).
pub(crate) const SUFFIX_PATH: &str = "references/gemini-json-suffix.txt";
pub(crate) const SNAPSHOT_PATH: &str = "references/block-screen-output-schema.json";
pub(crate) const BUILDER_PATH: &str = "references/builder/block-screen-output-schema.json";
pub(crate) const PROVENANCE_PATH: &str = "references/builder/PROVENANCE.md";
pub(crate) const PROMPTS_PATH: &str = "references/prompts";

/// `(name, text)` of one template: the name is written once, so it cannot
/// disagree with the file embedded.
macro_rules! template {
    ($name:literal) => {
        ($name, include_str!(concat!("../../../references/prompts/", $name)))
    };
}

/// The prompt templates, by name relative to the prompts folder (a test checks
/// that this list is exactly the files of `references/prompts`).
pub(crate) const PROMPTS: &[(&str, &str)] = &[
    template!("branches/assets/intents.md.j2"),
    template!("branches/assets/none.md.j2"),
    template!("branches/evidence/no-evidence.md.j2"),
    template!("branches/evidence/selected-only.md.j2"),
    template!("branches/evidence/strategy-default.md.j2"),
    template!("branches/insertion/immediate.md.j2"),
    template!("branches/insertion/staged.md.j2"),
    template!("branches/neighbours/both.md.j2"),
    template!("branches/neighbours/none.md.j2"),
    template!("branches/neighbours/predecessor-only.md.j2"),
    template!("branches/neighbours/successor-only.md.j2"),
    template!("branches/operator/absent.md.j2"),
    template!("branches/operator/present.md.j2"),
    template!("branches/source/project.md.j2"),
    template!("branches/source/system.md.j2"),
    template!("branches/theme/absent.md.j2"),
    template!("branches/theme/present.md.j2"),
    template!("branches/variables/compatible.md.j2"),
    template!("branches/variables/conflicts.md.j2"),
    template!("system.md.j2"),
    template!("user.md.j2"),
];

/// The built-in template called `name`.
pub(crate) fn prompt(name: &str) -> Option<&'static str> {
    PROMPTS.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every value of every branch value set has its partial (`branches/<field>/<value>.md.j2`),
    /// so a value added to an enum in `crate::branch` cannot render nothing.
    #[test]
    fn every_branch_value_has_its_partial() {
        use crate::branch::{EvidenceMode, InsertionMode, Neighbours, SourceScope};
        let sets = [
            ("insertion", InsertionMode::NAMES),
            ("source", SourceScope::NAMES),
            ("evidence", EvidenceMode::NAMES),
            ("neighbours", Neighbours::NAMES),
        ];
        for (folder, names) in sets {
            for name in names {
                let partial = format!("branches/{folder}/{name}.md.j2");
                assert!(prompt(&partial).is_some(), "no built-in partial {partial}");
            }
        }
        assert!(prompt("branches/neighbours/neither.md.j2").is_none());
    }

    /// A template added to the project must be added here too, or the built-in
    /// compiler and `init` would lack it.
    #[test]
    fn the_built_in_prompts_are_exactly_the_project_templates() {
        let root = Path::new(crate::PROJECT_ROOT).join(PROMPTS_PATH);
        let mut files: Vec<String> = walkdir::WalkDir::new(&root)
            .into_iter()
            .map(Result::unwrap)
            .filter(|e| e.file_type().is_file())
            .map(|e| e.path().strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/"))
            .collect();
        files.sort();
        let embedded: Vec<&str> = PROMPTS.iter().map(|(name, _)| *name).collect();
        assert_eq!(files, embedded);
    }
}
