//! Which packetproof a team has: the npm package (a Node project naming it), the pip
//! wheel (a Python project), or a cargo build. The commands hints name follow it, so a
//! Node team is never told to run cargo or a `packetproof` that its install did not put
//! on PATH.

use std::path::{Path, PathBuf};

/// The packetproof the team installed.
#[derive(Debug, Clone, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Distribution {
    /// The npm package, a dependency of the Node project whose package.json is in `package_dir`.
    Npm { package_dir: PathBuf },
    /// The pip wheel (maturin's `bin` bindings): a Python project.
    Pip,
    /// A cargo build (`cargo install`, or the GitHub Action's build).
    Cargo,
}

/// A package.json is read for its dependencies only; a larger one is no manifest of ours.
const MAX_MANIFEST_BYTES: u64 = 4 << 20;

impl Distribution {
    /// The team's distribution for the suite in `dir`: the nearest Node project naming
    /// packetproof (in package.json's dependencies, or installed in node_modules/.bin),
    /// else a Python project (pyproject.toml, requirements*.txt), else cargo. Folders are
    /// looked at from `dir` up to the top of its git repository (`dir` alone outside one).
    pub fn of(dir: &Path) -> Distribution {
        let folders = project_folders(dir);
        if let Some(package_dir) = folders.iter().find(|d| names_packetproof(d)) {
            return Distribution::Npm { package_dir: package_dir.clone() };
        }
        if folders.iter().any(|d| is_python_project(d)) {
            return Distribution::Pip;
        }
        Distribution::Cargo
    }

    /// The team's distribution for the suite of `config` (see [`Distribution::of`]).
    pub fn of_suite(config: &crate::Config) -> Distribution {
        Distribution::of(&config.root)
    }

    /// The command a person types to run packetproof: `npx packetproof` for the npm
    /// package (its binary is not on PATH), `packetproof` otherwise.
    pub fn command(&self) -> &'static str {
        match self {
            Distribution::Npm { .. } => "npx packetproof",
            Distribution::Pip | Distribution::Cargo => "packetproof",
        }
    }

    /// The distribution's name, as messages give it.
    pub fn name(&self) -> &'static str {
        self.into()
    }
}

/// The command a person types to run packetproof for the suite in `dir` (see [`Distribution::command`]).
pub(crate) fn command_in(dir: &Path) -> &'static str {
    Distribution::of(dir).command()
}

/// `dir` (or its nearest existing ancestor) and its ancestors up to the top of the git
/// repository it is in, nearest first; `dir` alone outside a repository.
fn project_folders(dir: &Path) -> Vec<PathBuf> {
    let start = dir.ancestors().find(|d| d.is_dir()).unwrap_or(dir);
    let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
    let mut folders = Vec::new();
    for folder in start.ancestors() {
        folders.push(folder.to_path_buf());
        if folder.join(".git").symlink_metadata().is_ok() {
            return folders;
        }
    }
    vec![start]
}

/// Whether `dir` is a Node project with packetproof: a dependency in its package.json, or
/// the npm package's binary in its node_modules/.bin.
fn names_packetproof(dir: &Path) -> bool {
    let manifest = dir.join("package.json");
    if !manifest.is_file() {
        return false;
    }
    if dir.join("node_modules/.bin/packetproof").symlink_metadata().is_ok() {
        return true;
    }
    let Ok(bytes) = crate::fsutil::read_bytes(&manifest, MAX_MANIFEST_BYTES) else { return false };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else { return false };
    ["dependencies", "devDependencies", "optionalDependencies"]
        .iter()
        .any(|key| value.get(key).and_then(|deps| deps.get("packetproof")).is_some())
}

fn is_python_project(dir: &Path) -> bool {
    if dir.join("pyproject.toml").is_file() {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.filter_map(Result::ok).any(|entry| {
        let name = entry.file_name().to_string_lossy().into_owned();
        name.starts_with("requirements") && name.ends_with(".txt") && entry.path().is_file()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repository() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("llm/gate")).unwrap();
        dir
    }

    #[test]
    fn a_node_project_naming_packetproof_has_the_npm_package() {
        let repo = repository();
        let manifest = repo.path().join("package.json");
        std::fs::write(&manifest, r#"{"devDependencies": {"packetproof": "^0.1.0"}}"#).unwrap();
        let found = Distribution::of(&repo.path().join("llm/gate"));
        let top = repo.path().canonicalize().unwrap();
        assert_eq!(found, Distribution::Npm { package_dir: top });
        assert_eq!(found.command(), "npx packetproof");
        // A Node project without packetproof did not install it with npm.
        std::fs::write(&manifest, r#"{"devDependencies": {"mocha": "^10"}}"#).unwrap();
        assert_eq!(Distribution::of(&repo.path().join("llm/gate")), Distribution::Cargo);
        // Installed, though not named (a global link, a workspace's hoisting): still npm's.
        std::fs::create_dir_all(repo.path().join("node_modules/.bin")).unwrap();
        std::fs::write(repo.path().join("node_modules/.bin/packetproof"), "").unwrap();
        assert_eq!(Distribution::of(&repo.path().join("llm/gate")).name(), "npm");
    }

    #[test]
    fn a_python_project_has_the_wheel() {
        let repo = repository();
        assert_eq!(Distribution::of(&repo.path().join("llm/gate")), Distribution::Cargo);
        std::fs::write(repo.path().join("requirements-dev.txt"), "packetproof==0.1.0\n").unwrap();
        assert_eq!(Distribution::of(&repo.path().join("llm/gate")), Distribution::Pip);
        assert_eq!(Distribution::Pip.command(), "packetproof");
    }

    #[test]
    fn folders_above_the_repository_are_not_the_teams() {
        let outer = tempfile::tempdir().unwrap();
        std::fs::write(outer.path().join("pyproject.toml"), "").unwrap();
        let repo = outer.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        assert_eq!(Distribution::of(&repo), Distribution::Cargo);
        assert_eq!(Distribution::of(outer.path()), Distribution::Pip, "outside a repository: the folder itself");
    }
}
