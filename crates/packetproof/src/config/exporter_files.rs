//! `[exporter] files`: the files a suite's packets depend on besides what packetproof
//! reads itself (the exporter, the app's own code such as `../../src/calls.js`, its
//! templates and inputs), as paths or globs from the suite's folder (`config::glob`).
//! They may lie anywhere in the git repository that holds the suite (the nearest
//! folder up from it with a `.git`; in no repository, the suite's folder), never
//! outside it, and each pattern must match at least one regular file (symbolic links
//! are not followed). Both are settings errors, said when harness.toml loads. The
//! patterns and the files they match are resolved then, once: `release-check` matches
//! changed paths against the patterns (a deleted file still matches), the lock and the
//! gate statement digest the files, all naming a file the same way ([`name_from`]).

use super::{glob, Exporter};
use std::path::{Component, Path, PathBuf};

/// `[exporter] files`, resolved.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resolved {
    /// Where the patterns may reach: the top of the suite's git repository, else the suite's folder.
    pub(crate) top: PathBuf,
    /// Each pattern from `top`, `/`-separated, its `.` and `..` resolved (a trailing `/` kept).
    pub(crate) patterns: Vec<String>,
    /// Every regular file a pattern matches, once each, sorted by name.
    pub(crate) files: Vec<DeclaredFile>,
}

/// A file `[exporter] files` matches.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct DeclaredFile {
    /// Its name from the suite's folder ([`name_from`]): `export.js`, `../../src/calls.js`.
    pub(crate) name: String,
    pub(crate) path: PathBuf,
}

/// `exporter` with its `files` resolved from the suite's folder `root`; `Err(message)`,
/// naming the setting and the pattern, when a pattern leads outside the repository or
/// matches nothing.
pub(super) fn resolve(root: &Path, exporter: Option<Exporter>) -> Result<Option<Exporter>, String> {
    let Some(mut exporter) = exporter else { return Ok(None) };
    if exporter.files.is_empty() {
        return Ok(Some(exporter));
    }
    let root = lexical(&std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf()));
    let repository = root.ancestors().find(|dir| dir.join(".git").symlink_metadata().is_ok());
    let top = repository.unwrap_or(&root).to_path_buf();
    let from_top: Vec<String> = root
        .strip_prefix(&top)
        .unwrap_or(Path::new(""))
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let mut resolved = Resolved { top: top.clone(), patterns: Vec::new(), files: Vec::new() };
    for pattern in &exporter.files {
        let from_top = normalize(pattern, &from_top).map_err(|why| {
            let outside = match repository {
                Some(top) => format!("the git repository that holds the suite ({})", top.display()),
                None => format!("the suite's folder ({}), which no git repository holds", root.display()),
            };
            match why {
                Refused::Absolute => format!(
                    "exporter.files: {pattern:?} is an absolute path; declare files from the suite's folder, \
                     inside {outside}"
                ),
                Refused::Blank => "exporter.files: a pattern is blank".to_owned(),
                Refused::Outside => format!(
                    "exporter.files: {pattern:?} leads outside {outside}; a suite declares only the repository's files"
                ),
            }
        })?;
        let found = matching(&top, &from_top);
        if found.is_empty() {
            let folder = !from_top.ends_with('/') && top.join(&from_top).is_dir();
            return Err(format!(
                "exporter.files: {pattern:?} matches no file (patterns are paths or globs from the suite's folder, {}){}",
                root.display(),
                if folder { "; it names a folder: end it with `/` for every file under it" } else { "" }
            ));
        }
        resolved.files.extend(found.into_iter().map(|path| DeclaredFile { name: name_from(&root, &path), path }));
        resolved.patterns.push(from_top);
    }
    resolved.files.sort();
    resolved.files.dedup_by(|a, b| a.name == b.name);
    exporter.resolved = resolved;
    Ok(Some(exporter))
}

enum Refused {
    Absolute,
    Blank,
    Outside,
}

/// `pattern` as a path from the top (the suite's folder being `from_top` there), `.`
/// and `..` resolved, a trailing `/` kept.
fn normalize(pattern: &str, from_top: &[String]) -> Result<String, Refused> {
    if pattern.trim().is_empty() {
        return Err(Refused::Blank);
    }
    if pattern.starts_with('/') || pattern.starts_with('\\') || Path::new(pattern).is_absolute() {
        return Err(Refused::Absolute);
    }
    if Path::new(pattern).components().any(|c| matches!(c, Component::Prefix(_))) {
        return Err(Refused::Absolute);
    }
    let mut segments: Vec<&str> = from_top.iter().map(String::as_str).collect();
    for segment in pattern.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop().ok_or(Refused::Outside)?;
            }
            other => segments.push(other),
        }
    }
    let mut out = segments.join("/");
    if pattern.ends_with('/') && !out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// The regular files under `top` that `pattern` (from the top) matches, sorted. Only
/// the folder its literal segments name is walked, and no `.git` folder in it.
fn matching(top: &Path, pattern: &str) -> Vec<PathBuf> {
    let wild = |s: &str| s.contains(['*', '?']);
    let literal: Vec<&str> =
        pattern.trim_end_matches('/').split('/').filter(|s| !s.is_empty()).take_while(|s| !wild(s)).collect();
    let start = literal.iter().fold(top.to_path_buf(), |path, segment| path.join(segment));
    if !pattern.ends_with('/') && !pattern.split('/').any(wild) {
        let file = start.symlink_metadata().is_ok_and(|m| m.file_type().is_file());
        return if file { vec![start] } else { Vec::new() };
    }
    if !start.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return Vec::new();
    }
    walkdir::WalkDir::new(&start)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| !(entry.file_type().is_dir() && entry.file_name() == ".git"))
        .flatten()
        .filter(|entry| entry.file_type().is_file())
        .filter(|entry| {
            let from_top = entry.path().strip_prefix(top).unwrap_or(entry.path());
            glob::matches(pattern, &from_top.to_string_lossy().replace('\\', "/"))
        })
        .map(walkdir::DirEntry::into_path)
        .collect()
}

/// `path` with `.` and `..` resolved by their names, not through the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A file's name as the suite's files are named (the lock, the gate statement): its
/// path from the suite's folder `root`, `/`-separated, with `..` when it is outside
/// that folder (`../../src/calls.js`); a path with nothing in common with `root` as it is.
pub(crate) fn name_from(root: &Path, file: &Path) -> String {
    let (root, file) = (lexical(root), lexical(file));
    let (root_parts, file_parts): (Vec<Component>, Vec<Component>) =
        (root.components().collect(), file.components().collect());
    let common = root_parts.iter().zip(&file_parts).take_while(|(a, b)| a == b).count();
    if common == 0 && !root_parts.is_empty() {
        return file.to_string_lossy().replace('\\', "/");
    }
    let up = std::iter::repeat_n("..".to_owned(), root_parts.len() - common);
    let down = file_parts[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned());
    up.chain(down).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_resolve_from_the_suite_and_stop_at_the_top() {
        let suite = ["llm".to_owned(), "gate".to_owned()];
        assert_eq!(normalize("../../src/calls.js", &suite).ok(), Some("src/calls.js".into()));
        assert_eq!(normalize("./export.js", &suite).ok(), Some("llm/gate/export.js".into()));
        assert_eq!(normalize("../../src/**/*.js", &suite).ok(), Some("src/**/*.js".into()));
        assert_eq!(normalize("../shared/", &suite).ok(), Some("llm/shared/".into()));
        assert!(matches!(normalize("../../../etc/passwd", &suite), Err(Refused::Outside)));
        assert!(matches!(normalize("a/../../../../x", &suite), Err(Refused::Outside)));
        assert!(matches!(normalize("/etc/passwd", &suite), Err(Refused::Absolute)));
        assert!(matches!(normalize(" ", &suite), Err(Refused::Blank)));
        assert!(matches!(normalize("../x", &[]), Err(Refused::Outside)));
    }

    #[test]
    fn a_file_is_named_from_the_suite_folder() {
        let root = Path::new("/repo/llm/gate");
        assert_eq!(name_from(root, Path::new("/repo/llm/gate/export.js")), "export.js");
        assert_eq!(name_from(root, Path::new("/repo/src/calls.js")), "../../src/calls.js");
        assert_eq!(name_from(root, Path::new("/repo/llm/gate/../../src/calls.js")), "../../src/calls.js");
        assert_eq!(name_from(root, Path::new("/repo/llm/gate/./t/a.j2")), "t/a.j2");
        assert_eq!(name_from(Path::new("."), Path::new("./t/a.j2")), "t/a.j2");
    }

    #[test]
    fn files_are_found_in_the_repository_and_named_from_the_suite() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        for file in ["src/calls.js", "src/lib/util.js", "src/lib/notes.md", "llm/gate/export.js", ".git/HEAD"] {
            std::fs::create_dir_all(top.join(file).parent().unwrap()).unwrap();
            std::fs::write(top.join(file), "x").unwrap();
        }
        let root = top.join("llm/gate");
        let exporter = |files: &[&str]| Exporter {
            command: vec!["node".into()],
            timeout_seconds: 1,
            files: files.iter().map(|f| f.to_string()).collect(),
            templates: Vec::new(),
            resolved: Resolved::default(),
        };
        let resolved = |files: &[&str]| resolve(&root, Some(exporter(files))).map(|e| e.unwrap().resolved);
        let names = |r: &Resolved| r.files.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
        let found = resolved(&["export.js", "../../src/**/*.js"]).unwrap();
        assert_eq!(names(&found), ["../../src/calls.js", "../../src/lib/util.js", "export.js"]);
        assert_eq!(found.patterns, ["llm/gate/export.js", "src/**/*.js"]);
        assert_eq!(names(&resolved(&["../../src/"]).unwrap()).len(), 3);
        let none = resolved(&["../../src/calls.ts"]).unwrap_err();
        assert!(none.contains("\"../../src/calls.ts\" matches no file"), "{none}");
        let folder = resolved(&["../../src"]).unwrap_err();
        assert!(folder.contains("end it with `/`"), "{folder}");
        let outside = resolved(&["../../../elsewhere.js"]).unwrap_err();
        assert!(outside.contains("leads outside the git repository"), "{outside}");
        assert!(resolved(&["../../.git/HEAD"]).is_ok(), "a literal path is read as named");
        assert!(resolved(&["../../**/HEAD"]).is_err(), "a glob does not walk into .git");
    }
}
