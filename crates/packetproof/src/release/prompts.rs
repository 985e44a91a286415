//! The packets' `promptVersions` held to the templates they name, as the suite's
//! `[release] prompt_versions` reads them: each value the digest of its template's
//! bytes (packetproof's compiler), or a label the maintainers give a version of the
//! template, which must change exactly when the template's text does.
//!
//! A key is a template of the suite's prompts folder (or the built-in ones), else a
//! file under the suite's directory (an exporter's own templates). A key that names
//! neither is not a template release-check knows, so nothing is said about it.

use super::{Violation, ViolationKind};
use crate::config::PromptVersions;
use crate::git::Git;
use crate::Invocation;
use crate::{digest, Result};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// One golden packet at the base and in the tree.
pub(super) struct Golden<'a> {
    pub(super) case: &'a str,
    pub(super) tree: Option<&'a Value>,
    pub(super) base: Option<&'a Value>,
    /// Whether a change other than a template's may have changed its prompts (the
    /// exporter's or compiler's code, a schema or reference file, its own fixture).
    pub(super) explained_otherwise: bool,
}

/// The violations of the suite's reading of `promptVersions`.
pub(super) fn violations(config: &Invocation, git: &Git, base: &str, goldens: &[Golden]) -> Result<Vec<Violation>> {
    match config.settings().release.prompt_versions {
        PromptVersions::Digest => Ok(digests(config, goldens)),
        PromptVersions::Label => labels(config, git, base, goldens),
    }
}

fn versions(packet: Option<&Value>) -> impl Iterator<Item = (&String, &Value)> {
    packet.and_then(|p| p.get("promptVersions")).and_then(Value::as_object).into_iter().flatten()
}

/// The file a `promptVersions` key names under the suite's directory, when it is a
/// plain relative path (never `..` or absolute: keys come from packets).
fn suite_file(config: &Invocation, key: &str) -> Option<PathBuf> {
    let plain = !key.is_empty() && Path::new(key).components().all(|c| matches!(c, Component::Normal(_)));
    plain.then(|| config.settings().root.join(key))
}

/// The template a key names now: the prompts folder's, else the suite's file.
fn template_now(config: &Invocation, key: &str) -> Option<Vec<u8>> {
    config.prompt_template(key).or_else(|| {
        let file = suite_file(config, key)?;
        crate::fsutil::read_bytes(&file, config.settings().limits.max_file_bytes).ok()
    })
}

/// Each entry of a golden packet must be the digest of its template's bytes: one
/// violation per template, naming every case that disagrees.
fn digests(config: &Invocation, goldens: &[Golden]) -> Vec<Violation> {
    let mut stale: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut known: BTreeMap<String, Option<String>> = BTreeMap::new();
    for golden in goldens {
        for (key, version) in versions(golden.tree) {
            let actual =
                known.entry(key.clone()).or_insert_with(|| template_now(config, key).map(|b| digest::sha256(&b)));
            if actual.as_ref().is_some_and(|actual| Some(actual.as_str()) != version.as_str()) {
                stale.entry(key.clone()).or_default().push(golden.case);
            }
        }
    }
    stale
        .into_iter()
        .map(|(key, cases)| Violation {
            kind: ViolationKind::PromptVersionMismatch,
            message: format!(
                "promptVersions[{key:?}] does not match the template's bytes in {} golden packet(s)",
                cases.len()
            ),
            paths: vec![shown(config, &key)],
            cases: cases.into_iter().map(str::to_owned).collect(),
        })
        .collect()
}

fn shown(config: &Invocation, key: &str) -> String {
    match (&config.settings().paths.prompts, config.prompt_template(key)) {
        (Some(prompts), Some(_)) => prompts.join(key).display().to_string(),
        _ => suite_file(config, key).map_or_else(|| key.to_owned(), |f| f.display().to_string()),
    }
}

/// Labels: per template, the labels the golden packets give it at the base and in
/// the tree, against whether its text changed between the two. A label changed
/// without its text, or text changed without its label, is a violation naming the
/// template, both labels and the cases.
fn labels(config: &Invocation, git: &Git, base: &str, goldens: &[Golden]) -> Result<Vec<Violation>> {
    type Seen<'a> = BTreeMap<&'a String, (BTreeSet<String>, BTreeSet<String>, BTreeSet<&'a str>)>;
    let mut seen: Seen = BTreeMap::new();
    for golden in goldens {
        for (at_base, packet) in [(true, golden.base), (false, golden.tree)] {
            for (key, label) in versions(packet) {
                let entry = seen.entry(key).or_default();
                let label = label.as_str().map_or_else(|| label.to_string(), str::to_owned);
                if at_base {
                    entry.0.insert(label)
                } else {
                    entry.1.insert(label)
                };
                entry.2.insert(golden.case);
            }
        }
    }
    let texts = Texts { config, git, base, known: Default::default() };
    let mut out: Vec<Violation> = unseen_prompt_changes(&texts, goldens)?.into_iter().collect();
    out.extend(prompts_without_their_templates(&texts, goldens)?);
    for (key, (before, after, cases)) in seen {
        // A template new in this release, or gone from it, has no label to compare.
        if before.is_empty() || after.is_empty() {
            continue;
        }
        let Some(text_changed) = texts.changed(key)? else { continue };
        let label_changed = before != after;
        let (kind, what) = match (label_changed, text_changed) {
            (true, false) => (ViolationKind::LabelWithoutText, "changed, but the template's text did not"),
            (false, true) => (ViolationKind::TextWithoutLabel, "did not change, but the template's text did"),
            _ => continue,
        };
        let list = |labels: &BTreeSet<String>| labels.iter().map(|l| format!("{l:?}")).collect::<Vec<_>>().join(", ");
        let labels = if label_changed { format!("{} to {}", list(&before), list(&after)) } else { list(&after) };
        out.push(Violation {
            kind,
            message: format!("the label promptVersions[{key:?}] ({labels}) {what}"),
            cases: cases.into_iter().map(str::to_owned).collect(),
            paths: vec![shown(config, key)],
        });
    }
    Ok(out)
}

/// A golden packet whose prompts changed with the same renderInput and the same
/// labels changed because a template did; when the labels stand for templates
/// release-check cannot see (not files of the suite: prompts kept in an app's
/// code), nothing explains it, and it fails, naming the setting that shows them.
fn unseen_prompt_changes(texts: &Texts, goldens: &[Golden]) -> Result<Option<Violation>> {
    let mut cases = Vec::new();
    let mut unseen: BTreeSet<String> = BTreeSet::new();
    for golden in goldens {
        let (Some(then), Some(now)) = (golden.base, golden.tree) else { continue };
        let same = |key: &str| match (then.get(key), now.get(key)) {
            (Some(a), Some(b)) => crate::numbers::same(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        if !same("promptVersions") || !same("renderInput") || (same("systemPrompt") && same("userMessage")) {
            continue;
        }
        let mut blind = Vec::new();
        for (key, _) in versions(Some(now)) {
            if texts.changed(key)?.is_none() {
                blind.push(key.clone());
            }
        }
        if !blind.is_empty() {
            unseen.extend(blind);
            cases.push(golden.case.to_owned());
        }
    }
    if cases.is_empty() {
        return Ok(None);
    }
    let keys = unseen.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", ");
    Ok(Some(Violation {
        kind: ViolationKind::UnexplainedPromptChange,
        message: format!(
            "the prompts changed with the same renderInput and the same promptVersions labels, and release-check \
             cannot see the templates the labels stand for ({keys}: not files of the suite at the base and now), \
             so nothing explains the change: change the label, or name the templates' folder with `paths.prompts` \
             in {} so their text is compared",
            texts.config.settings().file_name()
        ),
        cases,
        paths: unseen.into_iter().collect(),
    }))
}

/// Which prompt a template renders, as the packet's agent declares its templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prompt {
    System,
    User,
}

/// The prompt the template `key` renders for `agent`: `None` when the agent does not say
/// (a partial, or another exporter's template), which may be behind either.
fn prompt_of(agent: &crate::profile::Profile, key: &str) -> Option<Prompt> {
    let (system, user): (Vec<&str>, Vec<&str>) = match &agent.templates {
        Some(t) if !agent.is_block_builder() => {
            (t.system.iter().map(String::as_str).collect(), t.user.iter().map(String::as_str).collect())
        }
        _ => {
            let (system, user) = agent.entries();
            (vec![system], vec![user])
        }
    };
    match (system.contains(&key), user.contains(&key)) {
        (true, false) => Some(Prompt::System),
        (false, true) => Some(Prompt::User),
        _ => None,
    }
}

/// A golden packet whose renderInput stayed while a prompt's text changed must have a
/// changed template behind that prompt (its label, or its text where release-check sees
/// it): a label bumped for the system prompt explains the system prompt, not a rewording
/// of the user message beside it. Cases with no changed template are
/// [`unseen_prompt_changes`]'s; cases another change may explain are left to the policy.
fn prompts_without_their_templates(texts: &Texts, goldens: &[Golden]) -> Result<Vec<Violation>> {
    let mut found: BTreeMap<&str, (Vec<String>, BTreeSet<String>)> = BTreeMap::new();
    for golden in goldens.iter().filter(|g| !g.explained_otherwise) {
        let (Some(then), Some(now)) = (golden.base, golden.tree) else { continue };
        let same = |key: &str| match (then.get(key), now.get(key)) {
            (Some(a), Some(b)) => crate::numbers::same(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        if !same("renderInput") {
            continue;
        }
        let before: BTreeMap<&String, &Value> = versions(Some(then)).collect();
        let mut changed = Vec::new();
        for (key, label) in versions(Some(now)) {
            if before.get(key) != Some(&label) || texts.changed(key)? == Some(true) {
                changed.push(key.clone());
            }
        }
        if changed.is_empty() {
            continue;
        }
        let agent = texts.config.settings().agent(now.as_object().unwrap_or(&serde_json::Map::new()));
        for (prompt, field) in [(Prompt::System, "systemPrompt"), (Prompt::User, "userMessage")] {
            let behind = changed.iter().any(|key| prompt_of(agent, key).is_none_or(|p| p == prompt));
            if !same(field) && !behind {
                let entry = found.entry(field).or_default();
                entry.0.push(golden.case.to_owned());
                entry.1.extend(changed.iter().cloned());
            }
        }
    }
    Ok(found
        .into_iter()
        .map(|(field, (cases, keys))| {
            let keys = keys.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", ");
            Violation {
                kind: ViolationKind::UnexplainedPromptChange,
                message: format!(
                    "{field} changed with the same renderInput, but no template behind it did: the templates that \
                     changed ({keys}) render the other prompt, and a label explains only its own template's text"
                ),
                cases,
                paths: Vec::new(),
            }
        })
        .collect())
}

/// The templates' texts at the base and in the tree, each compared once however many
/// golden packets name it.
struct Texts<'a> {
    config: &'a Invocation,
    git: &'a Git,
    base: &'a str,
    known: std::cell::RefCell<BTreeMap<String, Option<bool>>>,
}

impl Texts<'_> {
    /// Whether the template `key` names differs between the base and the tree; `None`
    /// when it is not a file of the suite in both.
    fn changed(&self, key: &str) -> Result<Option<bool>> {
        if let Some(known) = self.known.borrow().get(key) {
            return Ok(*known);
        }
        let config = self.config;
        let in_prompts = config.settings().paths.prompts.as_ref().map(|p| p.join(key)).filter(|f| f.is_file());
        let changed = match in_prompts.or_else(|| suite_file(config, key).filter(|f| f.is_file())) {
            None => None,
            Some(file) => {
                let now = crate::fsutil::read_bytes(&file, config.settings().limits.max_file_bytes)?;
                self.git.show_bytes(self.base, &file)?.map(|then| then != now)
            }
        };
        self.known.borrow_mut().insert(key.to_owned(), changed);
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A suite in a git repository: `prompts/system.txt` ("one") committed as the base.
    struct Repo {
        dir: tempfile::TempDir,
        base: String,
    }

    impl Repo {
        fn new() -> Repo {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("prompts")).unwrap();
            std::fs::write(dir.path().join("prompts/system.txt"), "one").unwrap();
            std::fs::write(dir.path().join("harness.toml"), "").unwrap();
            let git = |args: &[&str]| crate::git::for_tests(dir.path(), args);
            git(&["init", "-q"]);
            git(&["add", "-A"]);
            git(&["commit", "-q", "-m", "base"]);
            let base = git(&["rev-parse", "HEAD"]);
            Repo { dir, base }
        }

        fn config(&self, mode: &str) -> crate::Invocation {
            let file = self.dir.path().join("harness.toml");
            let text = format!("[paths]\nprompts = \"prompts\"\n[release]\nprompt_versions = \"{mode}\"\n");
            crate::Invocation::from(crate::Config::from_toml(self.dir.path(), Some(&file), &text, None).unwrap())
        }

        fn edit(&self, text: &str) {
            std::fs::write(self.dir.path().join("prompts/system.txt"), text).unwrap();
        }

        /// The violations' kinds, with `base` and `tree` as a case's golden packets' promptVersions.
        fn check(&self, mode: &str, base: Value, tree: Value) -> Vec<(ViolationKind, String)> {
            let config = self.config(mode);
            let git = Git::open(self.dir.path()).unwrap();
            let (base, tree) = (json!({"promptVersions": base}), json!({"promptVersions": tree}));
            let goldens = [Golden { case: "a", tree: Some(&tree), base: Some(&base), explained_otherwise: false }];
            let found = violations(&config, &git, &self.base, &goldens).unwrap();
            found.into_iter().map(|v| (v.kind, v.message)).collect()
        }
    }

    #[test]
    fn a_label_must_change_exactly_when_its_template_text_does() {
        let repo = Repo::new();
        let labels = |base: &str, tree: &str| (json!({"system.txt": base}), json!({"system.txt": tree}));
        let (v1, v2) = labels("v1", "v2");
        let found = repo.check("label", v1, v2);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, ViolationKind::LabelWithoutText);
        assert!(found[0]
            .1
            .contains(r#"promptVersions["system.txt"] ("v1" to "v2") changed, but the template's text did not"#));
        let (v1, same) = labels("v1", "v1");
        assert!(repo.check("label", v1, same).is_empty(), "nothing changed");
        repo.edit("two");
        let (v1, same) = labels("v1", "v1");
        let found = repo.check("label", v1, same);
        assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), [ViolationKind::TextWithoutLabel], "{found:?}");
        let (v1, v2) = labels("v1", "v2");
        assert!(repo.check("label", v1, v2).is_empty(), "text and label changed together");
        // A key that is no file of the suite has no text to compare.
        let gone = (json!({"elsewhere.txt": "v1"}), json!({"elsewhere.txt": "v2"}));
        assert!(repo.check("label", gone.0, gone.1).is_empty());
    }

    /// Labels standing for templates outside the suite (prompts in an app's code): a
    /// prompt rewording under the same label and renderInput fails, naming the
    /// setting that shows the templates; a renderInput change or a label change explains it.
    #[test]
    fn a_prompt_change_under_labels_for_unseen_templates_fails_naming_the_setting() {
        let repo = Repo::new();
        let config = repo.config("label");
        let git = Git::open(repo.dir.path()).unwrap();
        let packet = |label: &str, system: &str, input: u8| {
            json!({"promptVersions": {"cli/system": label}, "systemPrompt": system, "userMessage": "u",
                   "renderInput": {"n": input}})
        };
        let check = |base: Value, tree: Value| {
            let goldens = [Golden { case: "a", tree: Some(&tree), base: Some(&base), explained_otherwise: false }];
            violations(&config, &git, &repo.base, &goldens).unwrap()
        };
        let found = check(packet("v1", "Be brief.", 1), packet("v1", "Be very brief.", 1));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, ViolationKind::UnexplainedPromptChange);
        assert!(found[0].message.contains("cannot see the templates the labels stand for (\"cli/system\""));
        assert!(found[0].message.contains("`paths.prompts`"), "{}", found[0].message);
        assert_eq!(found[0].cases, ["a"]);
        assert!(check(packet("v1", "Be brief.", 1), packet("v2", "Be very brief.", 1)).is_empty(), "a new label");
        assert!(check(packet("v1", "Be brief.", 1), packet("v1", "Be very brief.", 2)).is_empty(), "new input");
        assert!(check(packet("v1", "Be brief.", 1), packet("v1", "Be brief.", 1)).is_empty(), "nothing changed");
    }

    #[test]
    fn digests_are_held_to_templates_that_exist_and_no_others() {
        let repo = Repo::new();
        let right = json!({"system.txt": digest::sha256(b"one")});
        assert!(repo.check("digest", right.clone(), right.clone()).is_empty());
        let wrong = json!({"system.txt": digest::sha256(b"other")});
        let found = repo.check("digest", right.clone(), wrong);
        assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), [ViolationKind::PromptVersionMismatch], "{found:?}");
        // A template that does not exist is nothing release-check can compare, not a mismatch.
        let unknown = json!({"app/prompts/missing.txt": "sha256:0"});
        assert!(repo.check("digest", unknown.clone(), unknown).is_empty());
        // A key naming a file of the suite (an exporter's own template) is compared.
        std::fs::create_dir_all(repo.dir.path().join("app")).unwrap();
        std::fs::write(repo.dir.path().join("app/user.txt"), "hello").unwrap();
        let stale = json!({"app/user.txt": digest::sha256(b"bye")});
        assert_eq!(repo.check("digest", stale.clone(), stale).len(), 1);
        let current = json!({"app/user.txt": digest::sha256(b"hello")});
        assert!(repo.check("digest", current.clone(), current).is_empty());
    }

    /// A label bumped for the system prompt's template explains the system prompt only:
    /// the user message reworded beside it, under its own unchanged label, is a violation,
    /// unless another change (the exporter's code, the case's fixture) may explain it.
    #[test]
    fn a_label_explains_only_the_prompt_its_template_renders() {
        let repo = Repo::new();
        std::fs::write(repo.dir.path().join("prompts/user.txt"), "u").unwrap();
        let file = repo.dir.path().join("harness.toml");
        let text = "[paths]\nprompts = \"prompts\"\n[release]\nprompt_versions = \"label\"\n[contract]\n\
                    profile = \"custom\"\nagent_ids = [\"a\"]\ntask_types = [\"t\"]\nprompt_modes = [\"m\"]\n\
                    output = \"text\"\nrender_input_keys = [\"n\"]\n[contract.templates]\nstyle = \"format\"\n\
                    system = [\"system.txt\"]\nuser = [\"user.txt\"]\n";
        let config =
            crate::Invocation::from(crate::Config::from_toml(repo.dir.path(), Some(&file), text, None).unwrap());
        let git = Git::open(repo.dir.path()).unwrap();
        let packet = |system_label: &str, system: &str, user: &str| {
            json!({"agentId": "a", "promptVersions": {"system.txt": system_label, "user.txt": "u1"},
                   "systemPrompt": system, "userMessage": user, "renderInput": {"n": 1}})
        };
        let check = |tree: Value, explained_otherwise: bool| {
            let base = packet("s1", "one", "Hello.");
            let goldens = [Golden { case: "a", tree: Some(&tree), base: Some(&base), explained_otherwise }];
            violations(&config, &git, &repo.base, &goldens).unwrap()
        };
        repo.edit("two");
        assert!(check(packet("s2", "two", "Hello."), false).is_empty(), "the system prompt's own change");
        let found = check(packet("s2", "two", "Hello, world."), false);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, ViolationKind::UnexplainedPromptChange);
        assert!(found[0].message.starts_with("userMessage changed with the same renderInput"), "{}", found[0].message);
        assert!(found[0].message.contains("(\"system.txt\")"), "{}", found[0].message);
        assert!(check(packet("s2", "two", "Hello, world."), true).is_empty(), "the exporter changed too");
    }
}
