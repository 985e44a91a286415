//! The app a suite gates, as its own files declare it: a Node project (package.json) or
//! a Python project (requirements*.txt, pyproject.toml), the nearest one from the suite up
//! to the repository's root. `init --agent` writes the exporter in its language, and the
//! workflow installs the app's own packages as the project declares them, since the
//! exporter imports them (jinja2, a template package, the app's own modules).

use std::path::{Path, PathBuf};

/// The app's language and the folder whose manifest declares its packages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Project {
    /// package.json in `dir`; `locked` when a package-lock.json (or npm-shrinkwrap.json)
    /// pins the tree, which `npm ci` installs exactly.
    Node { dir: PathBuf, locked: bool },
    /// requirements*.txt or pyproject.toml in `dir`: `install` is pip's arguments.
    Python { dir: PathBuf, install: Vec<String> },
    /// Neither: packetproof alone.
    Other,
}

/// The requirement files pip installs, in this order, when present.
const REQUIREMENTS: [&str; 2] = ["requirements.txt", "requirements-dev.txt"];

impl Project {
    /// The nearest project at `dir` (or its nearest existing ancestor) or above it, up to
    /// `top`; `dir` alone when `top` is None (outside a repository).
    pub(crate) fn find(dir: &Path, top: Option<&Path>) -> Project {
        let start = dir.ancestors().find(|d| d.is_dir()).unwrap_or(dir);
        let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
        let top = top.map(|t| t.canonicalize().unwrap_or_else(|_| t.to_path_buf()));
        for folder in start.ancestors() {
            if let Some(project) = Project::at(folder) {
                return project;
            }
            if top.as_deref().is_none_or(|top| folder == top) {
                break;
            }
        }
        Project::Other
    }

    fn at(folder: &Path) -> Option<Project> {
        if folder.join("package.json").is_file() {
            let locked = ["package-lock.json", "npm-shrinkwrap.json"].iter().any(|f| folder.join(f).is_file());
            return Some(Project::Node { dir: folder.to_path_buf(), locked });
        }
        let mut install: Vec<String> = Vec::new();
        for file in REQUIREMENTS.iter().filter(|f| folder.join(f).is_file()) {
            install.extend(["-r".to_owned(), (*file).to_owned()]);
        }
        let pyproject = folder.join("pyproject.toml");
        if install.is_empty() && pyproject.is_file() {
            // A pyproject.toml that only configures tools (ruff, black) declares no
            // package: pip could not install it.
            let text = std::fs::read_to_string(&pyproject).unwrap_or_default();
            if text.lines().any(|l| matches!(l.trim(), "[project]" | "[build-system]" | "[tool.poetry]")) {
                install.push(".".to_owned());
            }
        }
        let other_requirements = std::fs::read_dir(folder).into_iter().flatten().filter_map(Result::ok).any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("requirements") && name.ends_with(".txt")
        });
        (!install.is_empty() || pyproject.is_file() || other_requirements)
            .then(|| Project::Python { dir: folder.to_path_buf(), install })
    }

    /// Whether the app is written in JavaScript (its exporter is too).
    pub(crate) fn is_node(&self) -> bool {
        matches!(self, Project::Node { .. })
    }

    /// The project's folder, relative to `top` (`.` at `top`).
    pub(crate) fn relative_to(&self, top: &Path) -> Option<String> {
        let dir = match self {
            Project::Node { dir, .. } | Project::Python { dir, .. } => dir,
            Project::Other => return None,
        };
        let top = top.canonicalize().unwrap_or_else(|_| top.to_path_buf());
        let relative = dir.strip_prefix(&top).unwrap_or(dir);
        let text = relative.to_string_lossy().replace('\\', "/");
        Some(if text.is_empty() { ".".to_owned() } else { text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repository() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(top.join("llm/gate")).unwrap();
        (dir, top)
    }

    #[test]
    fn a_node_project_is_found_above_the_suite() {
        let (_dir, top) = repository();
        let gate = top.join("llm/gate");
        assert_eq!(Project::find(&gate, Some(&top)), Project::Other);
        std::fs::write(top.join("package.json"), "{}").unwrap();
        assert_eq!(Project::find(&gate, Some(&top)), Project::Node { dir: top.clone(), locked: false });
        std::fs::write(top.join("package-lock.json"), "{}").unwrap();
        let found = Project::find(&gate.join("not/yet"), Some(&top));
        assert_eq!(found, Project::Node { dir: top.clone(), locked: true });
        assert_eq!(found.relative_to(&top).as_deref(), Some("."));
        // Outside a repository only the suite's own folder counts.
        assert_eq!(Project::find(&gate, None), Project::Other);
    }

    #[test]
    fn a_python_project_installs_what_it_declares() {
        let (_dir, top) = repository();
        let gate = top.join("llm/gate");
        let install = |found: Project| match found {
            Project::Python { install, .. } => install.join(" "),
            other => panic!("{other:?}"),
        };
        std::fs::write(top.join("pyproject.toml"), "[tool.ruff]\nline-length = 100\n").unwrap();
        assert_eq!(install(Project::find(&gate, Some(&top))), "", "a tools-only pyproject installs nothing");
        std::fs::write(top.join("pyproject.toml"), "[project]\nname = \"app\"\n").unwrap();
        assert_eq!(install(Project::find(&gate, Some(&top))), ".");
        std::fs::write(top.join("requirements.txt"), "jinja2\n").unwrap();
        std::fs::write(top.join("requirements-dev.txt"), "pytest\n").unwrap();
        assert_eq!(install(Project::find(&gate, Some(&top))), "-r requirements.txt -r requirements-dev.txt");
        // The nearest project wins: a Node app in the suite's folder is the suite's.
        std::fs::write(top.join("llm/package.json"), "{}").unwrap();
        assert!(Project::find(&gate, Some(&top)).is_node());
    }
}
