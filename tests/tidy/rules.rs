//! The architecture rules, each a function from a source tree to the places that
//! break it (empty: the rule holds). `tests/tidy.rs` runs them on this crate and on
//! small trees built to break each one.

use super::layers::Layers;
use super::resolve::{self, Reference, SourceFile, Target};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// A source file may have this many lines; test files (tables of cases) twice as many.
pub const MAX_LINES: usize = 600;

/// The only files that may start processes, and what each one starts.
pub const SPAWNERS: [(&str, &str); 2] =
    [("crates/packetproof/src/git.rs", "git"), ("crates/packetproof/src/exporter.rs", "the [exporter] command")];

/// Macros that write to the terminal.
const PRINT_MACROS: [&str; 5] = ["println", "print", "eprintln", "eprint", "dbg"];

/// Standard-library items that reach the terminal.
const TERMINAL: [&str; 5] = ["stdout", "stderr", "Stdout", "Stderr", "_print"];

/// The project's sources (both crates, `tests/`, `benches/`), its README, and every
/// path the crates' sources name, resolved.
pub struct Tree {
    pub files: Vec<SourceFile>,
    pub readme: String,
    pub references: Vec<Reference>,
}

impl Tree {
    /// The tree under `root`; a file that does not parse is an error naming it.
    pub fn load(root: &Path) -> Result<Tree, String> {
        let mut files = Vec::new();
        for dir in [resolve::LIB_SRC, resolve::CLI_SRC, "tests/", "benches/"] {
            for entry in walkdir::WalkDir::new(root.join(dir)).into_iter().filter_map(Result::ok) {
                if entry.file_type().is_file() && entry.path().extension().is_some_and(|x| x == "rs") {
                    let path = entry.path().strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                    let text = std::fs::read_to_string(entry.path()).map_err(|e| format!("{path}: {e}"))?;
                    files.push(SourceFile { path, text });
                }
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let readme = std::fs::read_to_string(root.join("README.md")).map_err(|e| format!("README.md: {e}"))?;
        let references = resolve::references(&files)?;
        Ok(Tree { files, readme, references })
    }
}

fn in_cli(file: &str) -> bool {
    file.starts_with(resolve::CLI_SRC)
}

/// The top-level module a module path belongs to; the binary's root is the CLI's.
fn top(module: &[String]) -> Option<&str> {
    match module.first().map(String::as_str) {
        Some("main") => Some("cli"),
        other => other,
    }
}

/// The top-level modules each module of either crate uses, outside test code: (from, to) → first reference.
fn module_edges(tree: &Tree) -> BTreeMap<(String, String), &Reference> {
    let mut edges = BTreeMap::new();
    for reference in tree.references.iter().filter(|r| !r.in_test) {
        let Target::Crate(target) = &reference.target else { continue };
        let (Some(from), Some(to)) = (top(&reference.module), top(target)) else { continue };
        if from != to {
            edges.entry((from.to_owned(), to.to_owned())).or_insert(reference);
        }
    }
    edges
}

/// Modules use only their own layer and the layers below it (README's table); every
/// module is in a layer.
pub fn layering(tree: &Tree) -> Vec<String> {
    let layers = match Layers::from_readme(&tree.readme) {
        Ok(layers) => layers,
        Err(e) => return vec![e],
    };
    let mut found = Vec::new();
    let modules: BTreeSet<String> = (tree.files.iter())
        .filter_map(|f| resolve::module_of_file(&f.path))
        .filter_map(|m| top(&m).map(str::to_owned))
        .collect();
    for module in modules.iter().filter(|m| layers.layer_of(m).is_none()) {
        found.push(format!("module {module} is in no layer of README.md's \"Where things are\" table"));
    }
    for ((from, to), reference) in module_edges(tree) {
        let (Some(own), Some(used)) = (layers.layer_of(&from), layers.layer_of(&to)) else { continue };
        if used > own {
            found.push(format!(
                "{}: {from} ({}) uses {to} ({}), a higher layer",
                reference.at(),
                layers.name(own),
                layers.name(used)
            ));
        }
    }
    found
}

/// Nothing outside the command line's crate prints: no print macro, no handle on stdout or stderr.
pub fn only_the_cli_prints(tree: &Tree) -> Vec<String> {
    tree.references
        .iter()
        .filter(|r| !in_cli(&r.file))
        .filter(|r| match &r.target {
            Target::External(path) if r.is_macro => path.last().is_some_and(|m| PRINT_MACROS.contains(&m.as_str())),
            Target::External(path) => {
                path.len() >= 3 && path[..2] == ["std", "io"] && TERMINAL.contains(&path[2].as_str())
            }
            Target::Crate(_) => false,
        })
        .map(|r| format!("{}: prints", r.at()))
        .collect()
}

/// Only [`SPAWNERS`] name `std::process::Command`.
pub fn only_spawners_spawn(tree: &Tree) -> Vec<String> {
    tree.references
        .iter()
        .filter(|r| resolve::is_source(&r.file) && !SPAWNERS.iter().any(|(file, _)| *file == r.file))
        .filter(|r| matches!(&r.target, Target::External(p) if p.starts_with(&["std".into(), "process".into(), "Command".into()])))
        .map(|r| format!("{}: starts a process", r.at()))
        .collect()
}

/// No cycle among modules: within a layer (across layers the layering rule already forbids one).
pub fn no_cycles(tree: &Tree) -> Vec<String> {
    let edges = module_edges(tree);
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut found = Vec::new();
    for &start in next.keys() {
        if seen.contains(start) {
            continue;
        }
        if let Some(cycle) = shortest_cycle(&next, start) {
            seen.extend(cycle.iter().copied());
            let names: Vec<&str> = cycle.iter().copied().chain([start]).collect();
            let why: Vec<String> =
                names.windows(2).map(|pair| edges[&(pair[0].to_owned(), pair[1].to_owned())].at()).collect();
            found.push(format!("import cycle {}:\n    {}", names.join(" → "), why.join("\n    ")));
        }
    }
    found
}

/// The shortest path from `start` back to itself, without the closing `start`.
fn shortest_cycle<'a>(next: &BTreeMap<&'a str, Vec<&'a str>>, start: &'a str) -> Option<Vec<&'a str>> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(at) = queue.pop_front() {
        for &to in next.get(at).into_iter().flatten() {
            if to == start {
                let mut cycle = vec![at];
                while let Some(&before) = came_from.get(cycle.last().unwrap()) {
                    cycle.push(before);
                }
                cycle.reverse();
                return Some(cycle);
            }
            if to != start && !came_from.contains_key(to) {
                came_from.insert(to, at);
                queue.push_back(to);
            }
        }
    }
    None
}

/// No file passes its line budget.
pub fn line_budget(tree: &Tree) -> Vec<String> {
    tree.files
        .iter()
        .filter_map(|file| {
            let lines = file.text.lines().count();
            let budget = if resolve::is_source(&file.path) { MAX_LINES } else { 2 * MAX_LINES };
            (lines > budget).then(|| format!("{}: {lines} lines (budget {budget})", file.path))
        })
        .collect()
}

/// Comments cite nothing outside the repository: no design notes, issue numbers or
/// documents of `../shared` (tests may name the interop data they read).
pub fn self_contained_comments(tree: &Tree) -> Vec<String> {
    let mut found = Vec::new();
    for file in &tree.files {
        for (n, line) in file.text.lines().enumerate() {
            let Some(at) = line.find("//") else { continue };
            if let Some(cited) = citation(&line[at..], resolve::is_source(&file.path)) {
                found.push(format!("{}:{}: cites {cited}: {}", file.path, n + 1, line.trim()));
            }
        }
    }
    found
}

/// Public standards a comment may cite by section (`RFC 8785 §3.2.3`).
const STANDARDS: [&str; 3] = ["RFC", "I-JSON", "ECMA"];

/// What `comment` cites outside the repository, if anything.
fn citation(comment: &str, library: bool) -> Option<&'static str> {
    let words: Vec<&str> = comment.split_whitespace().collect();
    let issue = words.windows(2).any(|w| {
        w[0].trim_start_matches('(').eq_ignore_ascii_case("issue")
            && w[1].trim_start_matches('#').starts_with(|c: char| c.is_ascii_digit())
    });
    let shared_doc = comment
        .match_indices("../shared/")
        .any(|(at, _)| library || !["interop", "vectors"].iter().any(|d| comment[at + 10..].starts_with(d)));
    // A section sign cites a document; only public standards may be cited by section.
    let unnamed_section = comment.match_indices('§').any(|(at, _)| {
        let before: Vec<&str> = comment[..at].split_whitespace().rev().take(2).collect();
        !before.iter().any(|w| STANDARDS.iter().any(|s| w.trim_start_matches(['(', '`']).starts_with(s)))
    });
    if comment.contains("NODE-") {
        Some("a Node design document")
    } else if comment.contains("DESIGN") || comment.contains("PROVIDERS.md") {
        Some("a design document")
    } else if unnamed_section {
        Some("a section of a document it does not name")
    } else if issue {
        Some("an issue")
    } else if shared_doc {
        Some("a file of ../shared")
    } else {
        None
    }
}
