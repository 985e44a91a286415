//! `test --attest`: after a green run of the whole gate, sign what it vouches for
//! (the statement's types are `attest::gate`'s): every positive fixture's golden
//! packet by the sha256 of its bytes, the suite's identity, the files the verdict
//! depended on, the checks that ran and the trials that did not, with why.

use super::runner::Record;
use crate::attest::dsse::{self, IN_TOTO_PAYLOAD_TYPE};
use crate::attest::gate::{
    DigestSet, GatePredicate, GateStatement, GateSubject, Material, SkippedTrial, SubjectAnnotations, SuiteIdentity,
    Tool, GATE_PREDICATE_TYPE, STATEMENT_TYPE,
};
use crate::Invocation;
use crate::{canonical, corpus, digest, fsutil, Error, Result};
use ed25519_dalek::SigningKey;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What `test --attest` wrote.
#[derive(Debug)]
pub struct Signed {
    pub file: PathBuf,
    pub subjects: usize,
    pub key_id: String,
}

/// Before any trial runs: the statement file must be new (a gate statement is
/// never overwritten, as `attest` never overwrites a receipt).
pub fn refuse_existing(out: &Path) -> Result<()> {
    if out.symlink_metadata().is_ok() {
        return Err(Error::refused(
            out.display(),
            "already exists; a gate statement is never overwritten (move it away, or name a new file)",
        ));
    }
    Ok(())
}

/// What a statement names, read before the trials run and again before signing: a
/// golden packet or template that changed while the gate ran is not what it judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    subject: Vec<GateSubject>,
    materials: Vec<Material>,
    suite: SuiteIdentity,
}

/// The golden packets (every positive fixture's: a negative fixture's packet is one the
/// gate expects to fail, never vouched for), the materials and the suite, as they are now.
pub fn inputs(config: &Invocation) -> Result<Inputs> {
    let mut subject = Vec::new();
    for case in corpus::cases(config)?.into_iter().filter(|c| !c.has_own_packet() && c.expect.is_none()) {
        let file = case.golden_packet();
        let bytes = fsutil::read_bytes(&file, config.settings().limits.max_file_bytes)?;
        let packet = canonical::parse(&bytes).map_err(|e| e.in_file(file.display().to_string()))?;
        let exact_input_hash = packet.get("exactInputHash").and_then(|v| v.as_str()).unwrap_or_default().to_owned();
        subject.push(GateSubject {
            name: relative(config, &file),
            digest: DigestSet { sha256: hex(&bytes) },
            annotations: SubjectAnnotations { exact_input_hash },
        });
    }
    Ok(Inputs { subject, materials: materials(config)?, suite: suite_identity(config)? })
}

/// Sign the gate of `config`'s suite after its trials ran: `before` is what [`inputs`]
/// read before they ran, `records` their outcomes and `total` how many trials the suite
/// has. Refused (nothing written) unless every trial of the suite ran, none failed, and
/// nothing the statement names changed meanwhile.
pub fn sign(
    config: &Invocation,
    before: &Inputs,
    records: &[Record],
    total: usize,
    key: &SigningKey,
    out: &Path,
    allow_dirty: bool,
) -> Result<Signed> {
    let failed: Vec<&str> = records.iter().filter(|r| r.failure.is_some()).map(|r| r.name.as_str()).collect();
    if !failed.is_empty() {
        return Err(Error::refused(
            out.display(),
            format!(
                "not written: {} trial(s) failed ({}); a failing gate signs nothing",
                failed.len(),
                failed.join(", ")
            ),
        ));
    }
    if records.len() != total {
        return Err(Error::refused(
            out.display(),
            format!("not written: {} of the suite's {total} trials ran; only a whole gate is signed", records.len()),
        ));
    }
    let after = inputs(config)?;
    if after != *before {
        let changed: Vec<&str> = (after.subject.iter().map(|s| (&s.name, s.sha256())))
            .chain(after.materials.iter().map(|m| (&m.name, m.sha256())))
            .filter(|(name, sha256)| {
                !(before.subject.iter().map(|s| (&s.name, s.sha256())))
                    .chain(before.materials.iter().map(|m| (&m.name, m.sha256())))
                    .any(|(n, d)| n == *name && d == *sha256)
            })
            .map(|(name, _)| name.as_str())
            .collect();
        return Err(Error::refused(
            out.display(),
            format!(
                "not written: files the statement names changed while the gate ran ({}); run it again",
                if changed.is_empty() { "the suite's settings or fixtures".to_owned() } else { changed.join(", ") }
            ),
        ));
    }
    let tree_clean = match uncommitted(config, &after.materials) {
        Some(changes) if !changes.is_empty() && !allow_dirty => {
            return Err(Error::refused(
                out.display(),
                format!(
                    "not written: the checkout has uncommitted changes ({}), and the statement names its commit; \
                     commit them, or sign with --allow-dirty (the statement then says treeClean: false)",
                    shown_changes(&changes)
                ),
            ))
        }
        Some(changes) => Some(changes.is_empty()),
        None => None,
    };
    let statement = statement(config, after, records, tree_clean);
    let body = canonical::to_pretty(&serde_json::to_value(&statement).expect("a statement serializes"));
    let envelope = dsse::sign(IN_TOTO_PAYLOAD_TYPE, body.as_bytes(), key);
    let text = canonical::to_pretty(&serde_json::to_value(&envelope).expect("an envelope serializes"));
    fsutil::write_new(out, text.as_bytes())?;
    Ok(Signed {
        file: out.to_path_buf(),
        subjects: statement.subject.len(),
        key_id: crate::attest::keys::key_id(&key.verifying_key()),
    })
}

/// The statement of a green gate over `inputs`.
fn statement(config: &Invocation, inputs: Inputs, records: &[Record], tree_clean: Option<bool>) -> GateStatement {
    let checks_ran: BTreeSet<String> = records
        .iter()
        .filter(|r| r.skipped.is_none())
        .filter_map(|r| {
            // `<fixture>::<check>`, or a corpus check's own name; check names hold `::` too.
            crate::Check::names().into_iter().find(|c| r.name == *c || r.name.ends_with(&format!("::{c}")))
        })
        .map(str::to_owned)
        .collect();
    let checks_skipped = records
        .iter()
        .filter_map(|r| Some(SkippedTrial { trial: r.name.clone(), reason: r.skipped.clone()? }))
        .collect();
    GateStatement {
        statement_type: STATEMENT_TYPE.to_owned(),
        subject: inputs.subject,
        predicate_type: GATE_PREDICATE_TYPE.to_owned(),
        predicate: GatePredicate {
            packetproof: Tool { version: env!("CARGO_PKG_VERSION").to_owned() },
            commit: commit(config),
            signed_at: Some(crate::run::now_rfc3339()),
            tree_clean,
            suite: inputs.suite,
            materials: inputs.materials,
            checks_ran: checks_ran.into_iter().collect(),
            checks_skipped,
        },
    }
}

/// The identity of `config`'s suite: its `[suite] name` (else the name of the folder
/// harness.toml is in) and the digest of its settings file.
pub fn suite_identity(config: &Invocation) -> Result<SuiteIdentity> {
    config.settings().require_suite("a gate statement")?;
    // The settings as read for this run: what the gate judged under.
    Ok(SuiteIdentity { name: config.settings().suite_name(), settings: config.settings().settings_sha256.clone() })
}

fn commit(config: &Invocation) -> Option<String> {
    crate::git::Git::open(&config.settings().root).and_then(|git| git.run(&["rev-parse", "HEAD"])).ok()
}

/// The checkout's uncommitted changes (tracked files changed, files not ignored and not
/// tracked), as `git status --porcelain` lists them, and every material file the commit
/// does not hold (an ignored or generated template is signed, but no commit has it);
/// in a repository with no commit yet, every file. `None` outside a git checkout.
fn uncommitted(config: &Invocation, materials: &[Material]) -> Option<Vec<String>> {
    let git = crate::git::Git::open(&config.settings().root).ok()?;
    let status = git.run(&["status", "--porcelain", "--untracked-files=normal"]).ok()?;
    let mut changes: Vec<String> = status.lines().map(|line| line.get(3..).unwrap_or(line).to_owned()).collect();
    let committed = git.run(&["ls-tree", "-r", "--name-only", "--full-tree", "HEAD"]).unwrap_or_default();
    let committed: BTreeSet<&str> = committed.lines().collect();
    for material in materials {
        // A template at a key path is the file that holds it.
        let file = config.settings().root.join(material.name.split('#').next().unwrap_or_default());
        if !file.is_file() {
            continue;
        }
        let in_repository = git.relative(&file);
        if !committed.contains(in_repository.as_str()) && !changes.contains(&in_repository) {
            changes.push(in_repository);
        }
    }
    Some(changes)
}

fn shown_changes(changes: &[String]) -> String {
    let shown: Vec<String> = changes.iter().take(5).map(|c| crate::report::excerpt(c)).collect();
    match changes.len() {
        n if n > 5 => format!("{}, and {} more", shown.join(", "), n - 5),
        _ => shown.join(", "),
    }
}

/// The files the verdict depended on, by digest: settings, every prompt template (and
/// the text of each at a key path), the schemas, the Google suffix, the files the
/// exporter's commands name and those
/// `[exporter] files` declares (the app's own code among them, wherever in the
/// repository it is), each named once, from the suite's folder.
fn materials(config: &Invocation) -> Result<Vec<Material>> {
    let mut out = Vec::new();
    let mut add = |name: String, bytes: &[u8]| out.push(Material { name, digest: DigestSet { sha256: hex(bytes) } });
    if let Some(file) = &config.settings().file {
        add(relative(config, file), &fsutil::read_bytes(file, config.settings().limits.max_file_bytes)?);
    }
    let prompts = config
        .settings()
        .paths
        .prompts
        .as_ref()
        .map_or_else(|| format!("builtin:{}", crate::builtin::PROMPTS_PATH), |dir| relative(config, dir));
    for (name, bytes) in config.settings().walk_prompt_templates() {
        add(format!("{prompts}/{name}"), &bytes);
    }
    // A template at a key path of the app's config is the text there (production holds
    // calls to that text, not to the file around it). One that cannot be read is
    // refused before anything is signed (`templates_followed`).
    for name in crate::conform::located_names(config) {
        if let Ok(text) = crate::conform::located(config, &name) {
            add(name, text.as_bytes());
        }
    }
    let (name, bytes) = config.snapshot_bytes()?;
    add(shown_resource(config, &name), &bytes);
    for schema in config.settings().agents.all().iter().filter_map(|agent| agent.schema.as_ref()) {
        add(relative(config, schema), &fsutil::read_bytes(schema, config.settings().limits.max_file_bytes)?);
    }
    // A slot's schema is reviewed material: production holds slot values to it.
    let slot_schemas: std::collections::BTreeSet<&String> = config
        .settings()
        .agents
        .all()
        .iter()
        .flat_map(|agent| agent.slots.values())
        .filter_map(|c| c.schema.as_ref())
        .collect();
    for file in slot_schemas {
        let path = config.settings().root.join(file);
        add(relative(config, &path), &fsutil::read_bytes(&path, config.settings().limits.max_file_bytes)?);
    }
    let (name, bytes) = config.builder_schema_bytes()?;
    add(shown_resource(config, &name), &bytes);
    add("google-suffix".to_owned(), config.settings().google_suffix.as_bytes());
    // The suite's own files the exporter command names (a script, a program built
    // beside it); an interpreter or a program elsewhere is not the suite's material.
    for arg in config.settings().exporter.iter().flat_map(|e| e.command.iter().chain(&e.templates)) {
        let file = config.settings().root.join(arg);
        let named = relative(config, &file);
        if file.is_file() && file.starts_with(&config.settings().root) && !out.iter().any(|m| m.name == named) {
            out.push(Material { name: named, digest: DigestSet { sha256: streamed_hex(&file)? } });
        }
    }
    for file in config.settings().exporter.iter().flat_map(|e| &e.resolved.files) {
        if !out.iter().any(|m| m.name == file.name) {
            out.push(Material { name: file.name.clone(), digest: DigestSet { sha256: streamed_hex(&file.path)? } });
        }
    }
    Ok(out)
}

/// A resource's name as `Config` reports it, relative to the suite when it is a path there.
fn shown_resource(config: &Invocation, name: &str) -> String {
    let path = Path::new(name);
    if path.is_absolute() {
        relative(config, path)
    } else {
        name.to_owned()
    }
}

/// `file` from the suite's root, `/`-separated (with `..` when it is outside it), as
/// the lock names it.
fn relative(config: &Invocation, file: &Path) -> String {
    crate::config::exporter_files::name_from(&config.settings().root, file)
}

/// The sha256 of a file read in pieces, as lowercase hex.
fn streamed_hex(path: &Path) -> Result<String> {
    Ok(digest::sha256_of_file(path)?.trim_start_matches(digest::PREFIX).to_owned())
}

fn hex(bytes: &[u8]) -> String {
    digest::sha256(bytes).trim_start_matches("sha256:").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A golden packet that changed between the trials' start and the signature is
    /// named, and nothing is written.
    #[test]
    fn a_statement_is_refused_when_what_it_names_changed_while_the_gate_ran() {
        let config = crate::Invocation::from(crate::Config::load(Path::new(crate::PROJECT_ROOT), None).unwrap());
        let mut before = inputs(&config).unwrap();
        assert!(before.subject.len() > 5 && before.materials.iter().any(|m| m.name.ends_with("user.md.j2")));
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("gate.json");
        let key = SigningKey::from_bytes(&[7; 32]);
        before.subject[0].digest.sha256 = "0".repeat(64);
        let err = sign(&config, &before, &[], 0, &key, &out, true).unwrap_err().to_string();
        assert!(err.contains("changed while the gate ran") && err.contains(&before.subject[0].name), "{err}");
        assert!(!out.exists());
        // Unchanged, the same call signs.
        let now = inputs(&config).unwrap();
        assert_eq!(sign(&config, &now, &[], 0, &key, &out, true).unwrap().subjects, now.subject.len());
    }
}
