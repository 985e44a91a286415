//! Where `verify` looks: a walk of each path given that names every packet, run
//! directory and golden case folder in it, each with the path it really is.

use crate::run::paths::{AGENT_REQUEST, MANIFEST};
use crate::{fsutil, Config, Error, Result};
use std::path::{Path, PathBuf};

/// One thing to verify.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Target {
    Packet(PathBuf),
    /// A JSON file not named like a packet: it is one if it holds an object with
    /// `packetVersion`. Read once, by the worker that verifies it.
    MaybePacket(PathBuf),
    Run(PathBuf),
    /// A golden case folder: agent-request.json beside the packet it must be the view of.
    AgentView(PathBuf),
    /// A `*.json` that is not a regular file (a FIFO, a device): named, never opened.
    Skipped(PathBuf, &'static str),
}

/// Every target under `path`, each with the path it really is (for checking
/// each once). Every folder is entered, hidden ones and `target/` included (as
/// `complete`'s task-id scan): verify checks everything it is given.
///
/// One path resolution per walk: the real path of the walk's root is resolved once and
/// every entry's is that joined with its path below the root (the walk does not
/// follow symlinks below it), and a folder's kind is read from the entries the
/// walk lists in it. Resolving each folder's path (O(depth) lookups of O(depth)
/// each) made nested folders cubic.
pub(super) fn discover(path: &Path, config: &Config) -> Result<Vec<(Target, PathBuf)>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_dir() {
        return Ok(vec![(Target::Packet(path.to_path_buf()), real(path))]);
    }
    let (root_real, golden_real) = (real(path), real(&config.paths.golden));
    // `verify LINK` to a run directory: the walk starts at the directory itself.
    let is_dir =
        |entry: &walkdir::DirEntry| entry.file_type().is_dir() || (entry.depth() == 0 && entry.path().is_dir());
    let mut found: Vec<Walked> = Vec::new();
    // The folders being walked, by depth: the last one at depth d-1 is the parent of an entry at depth d.
    let mut open: Vec<usize> = Vec::new();
    for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
        let entry = entry.map_err(|e| Error::walk(e, path))?;
        let p = entry.path();
        let real = root_real.join(p.strip_prefix(path).unwrap_or(p));
        open.truncate(entry.depth());
        if let Some(&parent) = open.last() {
            if let Walked::Folder { holds, .. } = &mut found[parent] {
                holds.note(&entry);
            }
        }
        if is_dir(&entry) {
            open.push(found.len());
            let golden = p.starts_with(&config.paths.golden) || real.starts_with(&golden_real);
            found.push(Walked::Folder { dir: p.to_path_buf(), real, golden, holds: Holds::default() });
        } else if let Some(kind) = non_regular_json(p) {
            found.push(Walked::Target(Target::Skipped(p.to_path_buf(), kind), real));
        } else if let Some(target) = json_target(p) {
            found.push(Walked::Target(target, real));
        }
    }
    let found: Vec<(Target, PathBuf)> = found.into_iter().filter_map(Walked::target).collect();
    // A run's raw-output.json is the agent's answer as it came (plain text, for a
    // plain-text contract), judged with its run by run::evaluation, never as a packet.
    let runs: std::collections::HashSet<PathBuf> =
        found.iter().filter_map(|(t, _)| if let Target::Run(dir) = t { Some(dir.clone()) } else { None }).collect();
    let is_answer = |file: &Path| {
        file.file_name().is_some_and(|n| n == crate::run::paths::RAW_OUTPUT)
            && file.parent().is_some_and(|dir| runs.contains(dir))
    };
    Ok(found.into_iter().filter(|(t, _)| !matches!(t, Target::MaybePacket(file) if is_answer(file))).collect())
}

/// An entry of the walk, a folder's kind decided once its entries are listed.
enum Walked {
    Folder { dir: PathBuf, real: PathBuf, golden: bool, holds: Holds },
    Target(Target, PathBuf),
}

impl Walked {
    fn target(self) -> Option<(Target, PathBuf)> {
        match self {
            Walked::Target(target, real) => Some((target, real)),
            Walked::Folder { dir, real, golden, holds } => {
                // A golden folder that lost its packet is still a golden folder, not a run.
                if holds.manifest || (holds.agent_request && !holds.packet && !golden) {
                    Some((Target::Run(dir), real))
                } else if holds.agent_request {
                    Some((Target::AgentView(dir), real))
                } else {
                    None
                }
            }
        }
    }
}

/// Which of the files that decide a folder's kind it holds (regular files,
/// symlinks to them included).
#[derive(Default)]
struct Holds {
    manifest: bool,
    agent_request: bool,
    packet: bool,
}

impl Holds {
    fn note(&mut self, entry: &walkdir::DirEntry) {
        let name = entry.file_name();
        let flag = match () {
            _ if name == MANIFEST => &mut self.manifest,
            _ if name == AGENT_REQUEST => &mut self.agent_request,
            _ if name == crate::corpus::PACKET_FILE => &mut self.packet,
            _ => return,
        };
        *flag = entry.file_type().is_file() || (entry.path_is_symlink() && entry.path().is_file());
    }
}

/// A `*.json` entry that is not (a symlink to) a regular file: what it is.
fn non_regular_json(path: &Path) -> Option<&'static str> {
    if !path.file_name().is_some_and(|n| n.to_string_lossy().ends_with(".json")) {
        return None;
    }
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => Some(fsutil::kind(&meta.file_type())),
        _ => None,
    }
}

pub(super) fn real(path: &Path) -> PathBuf {
    #[cfg(test)]
    tests::RESOLVED.with(|n| n.set(n.get() + 1));
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// A `runtime-packet*.json` is a packet; any other `*.json` may be one.
fn json_target(path: &Path) -> Option<Target> {
    let name = path.file_name()?.to_string_lossy();
    if !name.ends_with(".json") {
        return None;
    }
    Some(match name.starts_with("runtime-packet") {
        true => Target::Packet(path.to_path_buf()),
        false => Target::MaybePacket(path.to_path_buf()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// How many paths [`real`] resolved on this thread.
        pub(super) static RESOLVED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Discovery resolves a constant number of paths
    /// however deep the folders (it resolved every folder's, which made depth
    /// cubic), and it enters hidden folders and `target/`.
    #[test]
    fn discovery_resolves_a_constant_number_of_paths_and_skips_no_folder() {
        let config = Config::load(Path::new(crate::PROJECT_ROOT), None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut deep = dir.path().to_path_buf();
        for i in 0..200 {
            deep.push(["d", ".hidden", "target"][i % 3]);
            std::fs::create_dir(&deep).unwrap();
            std::fs::write(deep.join("notes.json"), b"{}").unwrap();
        }
        std::fs::write(deep.join(MANIFEST), b"{}").unwrap();
        RESOLVED.with(|n| n.set(0));
        let found = discover(dir.path(), &config).unwrap();
        let resolved = RESOLVED.with(|n| n.get());
        assert!(resolved <= 2, "{resolved} paths resolved for 200 nested folders");
        // Every folder's notes.json, the run at the bottom and its manifest (a JSON file that may be a packet).
        assert_eq!(found.len(), 202);
        let runs: Vec<&(Target, PathBuf)> = found.iter().filter(|(t, _)| matches!(t, Target::Run(_))).collect();
        assert_eq!(runs, [&(Target::Run(deep.clone()), deep.canonicalize().unwrap())]);
    }

    /// A run's answer is its run's (plain text is no unreadable packet); the same name
    /// in a folder that is no run may still be a packet.
    #[test]
    fn a_runs_raw_output_is_no_packet_candidate_but_the_same_name_elsewhere_is() {
        let config = Config::load(Path::new(crate::PROJECT_ROOT), None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for folder in ["run", "loose"] {
            std::fs::create_dir(dir.path().join(folder)).unwrap();
            std::fs::write(dir.path().join(folder).join(crate::run::paths::RAW_OUTPUT), b"Thanks!\n").unwrap();
        }
        std::fs::write(dir.path().join("run").join(MANIFEST), b"{}").unwrap();
        let found: Vec<Target> = discover(dir.path(), &config).unwrap().into_iter().map(|(t, _)| t).collect();
        let loose = dir.path().join("loose").join(crate::run::paths::RAW_OUTPUT);
        let run = dir.path().join("run");
        assert_eq!(
            found,
            [Target::MaybePacket(loose), Target::Run(run.clone()), Target::MaybePacket(run.join(MANIFEST))]
        );
    }
}
