//! `packetproof.lock`: the digests of the files a suite's packets depend on (its
//! schema snapshot, its Builder schema, its prompt templates, and the files
//! `[exporter] files` declares: the exporter, the app's own code wherever in the
//! repository it is), as the last `bless` saw them, each named from the suite's
//! folder (`../../src/calls.js` for a file outside it). packetproof never rewrites a file a user edited; it pins what it
//! checked instead, so an edit is a reviewed change: `corpus::lock` fails until
//! `bless` pins the new digests, and `release-check` shows the lock's diff.
//!
//! JSON files are pinned by the digest of their canonical form, so a checkout that
//! turned line endings into CRLF pins the same schema; every other file by its bytes
//! (read in pieces: a declared exporter may be a compiled program of any size).

use crate::report::{Finding, Location};
use crate::{canonical, digest, fsutil, Config, CorpusCheck, Error, JsonPath, Result};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub(crate) const FILE_NAME: &str = "packetproof.lock";
const FORMAT_VERSION: u64 = 1;
const CHECK: CorpusCheck = CorpusCheck::Lock;

/// `bytes` with every CRLF turned into LF (a Windows checkout of an LF file).
pub(crate) fn without_crlf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for (i, byte) in bytes.iter().enumerate() {
        if !(*byte == b'\r' && bytes.get(i + 1) == Some(&b'\n')) {
            out.push(*byte);
        }
    }
    out
}

fn lock_path(config: &Config) -> PathBuf {
    config.root.join(FILE_NAME)
}

/// Whether `corpus::lock` can apply: `Err(why not)` before the first bless.
pub(crate) fn applies(config: &Config) -> std::result::Result<(), String> {
    match lock_path(config).symlink_metadata() {
        Ok(_) => Ok(()),
        Err(_) => Err(format!("the suite has no {FILE_NAME} yet: `packetproof bless` writes it")),
    }
}

/// The files the lock pins, by their name relative to the suite's root.
fn pinned_files(config: &Config) -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    let agent_schemas = config.agents.all().iter().map(|agent| &agent.schema);
    for path in [&config.paths.schema_snapshot, &config.paths.builder_schema].into_iter().chain(agent_schemas).flatten()
    {
        files.push((relative(config, path), path.clone()));
    }
    if let Some(prompts) = &config.paths.prompts {
        for entry in walkdir::WalkDir::new(prompts).sort_by_file_name().into_iter().flatten() {
            if entry.file_type().is_file() {
                files.push((relative(config, entry.path()), entry.path().to_path_buf()));
            }
        }
    }
    for file in config.exporter.iter().flat_map(|e| &e.resolved.files) {
        files.push((file.name.clone(), file.path.clone()));
    }
    // The app's config files that hold templates at key paths (`FILE#KEY.PATH`).
    let templates = config.agents.all().iter().filter_map(|agent| agent.templates.as_ref());
    for name in templates.flat_map(|t| t.system.iter().chain(&t.user).chain(t.fills.values())) {
        if let Some((file, _)) = crate::template::located::reference(name) {
            let path = config.root.join(file);
            files.push((relative(config, &path), path));
        }
    }
    files.sort();
    files.dedup_by(|a, b| a.0 == b.0);
    files
}

fn relative(config: &Config, path: &Path) -> String {
    crate::config::exporter_files::name_from(&config.root, path)
}

/// The digest a file is pinned by (see the module docs).
fn digest_of(name: &str, bytes: &[u8]) -> String {
    if name.ends_with(".json") {
        if let Ok(value) = canonical::parse(bytes) {
            return digest::sha256(&canonical::to_vec(&value));
        }
    }
    digest::sha256(bytes)
}

/// The digests the suite's files have now; a pinned file that is missing is `None`.
fn current(config: &Config) -> Result<BTreeMap<String, Option<String>>> {
    let mut out = BTreeMap::new();
    for (name, path) in pinned_files(config) {
        let digest = match name.ends_with(".json") {
            true => fsutil::read_optional(&path, config.limits.max_file_bytes)?.map(|b| digest_of(&name, &b)),
            false => match digest::sha256_of_file(&path) {
                Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
                other => Some(other?),
            },
        };
        out.insert(name, digest);
    }
    Ok(out)
}

/// The digests the lock holds (`None`: there is no lock).
fn read(config: &Config) -> Result<Option<BTreeMap<String, String>>> {
    let path = lock_path(config);
    let Some(bytes) = fsutil::read_optional(&path, config.limits.max_file_bytes)? else { return Ok(None) };
    parse(&bytes, &path.display().to_string()).map(Some)
}

/// One file whose pin differs between two locks: its digest in each (`None`: not pinned).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct PinChange {
    pub(crate) file: String,
    pub(crate) before: Option<String>,
    pub(crate) after: Option<String>,
}

/// The pins that differ between the lock at a base revision and the lock in the tree
/// (`None`: no lock there), by file name; `release-check` shows them.
pub(crate) fn diff(config: &Config, at_base: Option<&[u8]>) -> Result<Vec<PinChange>> {
    let shown = format!("{FILE_NAME} at the base");
    let before = at_base.map(|bytes| parse(bytes, &shown)).transpose()?.unwrap_or_default();
    let after = read(config)?.unwrap_or_default();
    let names: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    Ok(names
        .into_iter()
        .filter(|name| before.get(*name) != after.get(*name))
        .map(|name| PinChange {
            file: name.clone(),
            before: before.get(name).cloned(),
            after: after.get(name).cloned(),
        })
        .collect())
}

/// The digests a lock's bytes hold; `shown` names it in errors.
fn parse(bytes: &[u8], shown: &str) -> Result<BTreeMap<String, String>> {
    let shown = shown.to_owned();
    let value = canonical::parse(bytes).map_err(|e| e.in_file(shown.clone()))?;
    if value.get("formatVersion").and_then(Value::as_u64) != Some(FORMAT_VERSION) {
        return Err(Error::shape(&shown, JsonPath::field("formatVersion"), format!("{FORMAT_VERSION}")));
    }
    let Some(files) = value.get("files").and_then(Value::as_object) else {
        return Err(Error::shape(&shown, JsonPath::field("files"), "an object of file name to sha256 digest"));
    };
    let mut out = BTreeMap::new();
    for (name, pinned) in files {
        match pinned.as_str().filter(|d| digest::is_digest(d)) {
            Some(pinned) => out.insert(name.clone(), pinned.to_owned()),
            None => return Err(Error::shape(&shown, JsonPath::field("files").key(name), "sha256:<64 hex>")),
        };
    }
    Ok(out)
}

/// Every difference between the lock and the suite's files now.
pub(crate) fn check(config: &Config) -> Result<Vec<Finding>> {
    let Some(locked) = read(config)? else { return Ok(Vec::new()) };
    let now = current(config)?;
    let at = |name: &str| Location::named(name);
    let mut out = Vec::new();
    let packetproof = crate::distribution::command_in(&config.root);
    for (name, pinned) in &locked {
        match now.get(name) {
            Some(Some(digest)) if digest == pinned => {}
            Some(Some(digest)) => out.push(Finding::new(
                CHECK,
                at(name),
                format!(
                    "changed since the last bless ({FILE_NAME} pins {pinned}, the file has {digest}): review the \
                     change, then `{packetproof} bless` pins it"
                ),
            )),
            Some(None) | None => out.push(Finding::new(
                CHECK,
                at(name),
                format!(
                    "{FILE_NAME} pins it, but the suite no longer has it: `{packetproof} bless` pins the suite as \
                     it is"
                ),
            )),
        }
    }
    for (name, digest) in &now {
        if digest.is_some() && !locked.contains_key(name) {
            out.push(Finding::new(
                CHECK,
                at(name),
                format!("new since the last bless ({FILE_NAME} does not pin it): `{packetproof} bless` pins it"),
            ));
        }
    }
    Ok(out)
}

/// Whether the lock pins `path` with the digest of `bytes` (a file unedited since the last bless).
pub(crate) fn pins(config: &Config, path: &Path, bytes: &[u8]) -> Result<bool> {
    let name = relative(config, path);
    Ok(read(config)?.is_some_and(|locked| locked.get(&name) == Some(&digest_of(&name, bytes))))
}

/// Pin the suite's files as they are now (`bless`); returns whether the lock changed.
pub(crate) fn write(config: &Config) -> Result<bool> {
    let files: Map<String, Value> =
        current(config)?.into_iter().filter_map(|(name, digest)| Some((name, Value::from(digest?)))).collect();
    let text = canonical::to_pretty(&json!({"formatVersion": FORMAT_VERSION, "files": files}));
    let path = lock_path(config);
    if fsutil::read_optional(&path, config.limits.max_file_bytes)?.is_some_and(|old| old == text.as_bytes()) {
        return Ok(false);
    }
    fsutil::write_atomic(&path, text.as_bytes())?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_is_the_same_json_but_not_the_same_text() {
        let lf = b"{\n  \"a\": 1\n}\n";
        let crlf = b"{\r\n  \"a\": 1\r\n}\r\n";
        assert_eq!(without_crlf(crlf), lf);
        assert_eq!(digest_of("s.json", lf), digest_of("s.json", crlf));
        assert_ne!(digest_of("t.txt", lf), digest_of("t.txt", crlf));
        assert_eq!(without_crlf(b"a\rb"), b"a\rb");
    }
}
