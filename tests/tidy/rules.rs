//! The architecture rules, each a function from a source tree to the places that
//! break it (empty: the rule holds). `tests/tidy.rs` runs them on this crate and on
//! small trees built to break each one.

use super::layers::Layers;
use super::resolve::{self, Reference, SourceFile, Target};
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// A source file may have this many lines; test files (tables of cases) twice as many.
pub const MAX_LINES: usize = 600;

/// The only files that may start processes, and what each one starts.
pub const SPAWNERS: [(&str, &str); 2] = [
    ("crates/packetproof/src/git.rs", "git"),
    ("crates/packetproof/src/process.rs", "the [exporter] and [evaluator] commands"),
];

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
        // The layer map lives in the architecture page (README.md is the front page).
        let readme = std::fs::read_to_string(root.join(LAYER_MAP)).map_err(|e| format!("{LAYER_MAP}: {e}"))?;
        let references = resolve::references(&files)?;
        Ok(Tree { files, readme, references })
    }
}

/// The page whose "Where things are" table is the layer map.
pub const LAYER_MAP: &str = "docs/architecture.md";

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
        found.push(format!("module {module} is in no layer of docs/architecture.md's \"Where things are\" table"));
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

/// The registry of commands and the command line resolved from it, which import every
/// command module: a command module importing them closes a circle.
const REGISTRY: [&str; 2] = ["args", "hiargs"];

/// The command modules (`src/cmd/`, `src/serve/`) take their shared flags from `flags`
/// and their settings from `settings`, never from [`REGISTRY`].
pub fn commands_stay_below_the_registry(tree: &Tree) -> Vec<String> {
    let command_module = |file: &str| file.starts_with("src/cmd/") || file.starts_with("src/serve/");
    tree.references
        .iter()
        .filter(|r| command_module(&r.file))
        .filter(|r| match &r.target {
            // The command line's modules are paths below its root, `main`.
            Target::Crate(t) => {
                t.first().is_some_and(|m| m == "main") && t.get(1).is_some_and(|m| REGISTRY.contains(&m.as_str()))
            }
            Target::External(_) => false,
        })
        .map(|r| format!("{}: a command module imports the registry of commands", r.at()))
        .collect()
}

/// `packetproof test` from its command line down to its runner and reporters.
pub const GATE_PATH: [&str; 3] =
    ["src/cmd/test.rs", "crates/packetproof/src/conformance/", "crates/packetproof/src/reporter/"];

/// [`GATE_PATH`] is one code path on every platform: no `target_os` condition and no
/// `/proc` path (outside doc comments), so what Linux runs is what macOS and Windows run.
pub fn one_gate_for_every_platform(tree: &Tree) -> Vec<String> {
    let mut found = Vec::new();
    for file in tree.files.iter().filter(|f| GATE_PATH.iter().any(|p| f.path.starts_with(p))) {
        match file.text.parse::<TokenStream>() {
            Ok(tokens) => platform_tokens(tokens, &mut |what| found.push(format!("{}: {what}", file.path))),
            Err(e) => found.push(format!("{}: does not parse: {e}", file.path)),
        }
    }
    found
}

fn platform_tokens(tokens: TokenStream, found: &mut dyn FnMut(&str)) {
    for tree in tokens {
        match tree {
            TokenTree::Ident(ident) if ident == "target_os" => found("a target_os condition"),
            TokenTree::Literal(literal) if literal.to_string().contains("/proc") => found("a /proc path"),
            TokenTree::Group(group) => {
                let doc = group.delimiter() == Delimiter::Bracket
                    && matches!(group.stream().into_iter().next(), Some(TokenTree::Ident(i)) if i == "doc");
                if !doc {
                    platform_tokens(group.stream(), found);
                }
            }
            _ => {}
        }
    }
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

/// The one test that reads the repository's golden files: the conformance gate, whose
/// job is to fail (once, with the bless hint) when they are no longer current.
pub const GATE: &str = "tests/conformance.rs";

/// Tests other than [`GATE`] never name the repository's golden folder: they compile
/// the packets they use (`support::compiled_packet`, `support::Project::suite`), so a
/// template edit fails the gate alone. Found on the tokens, statement by statement: a
/// statement that names the crate root (`root()` or `crate_root()` called as a
/// function, `ROOT`, `CARGO_MANIFEST_DIR`, `Project::with`, which copies from it, or a
/// function of the same file whose body names it) and a string naming a `golden`
/// folder (`"golden"`, `"golden/…"`, `"…/golden/…"`). A block is a statement of its
/// own. Not a compiler: a path built in one statement and joined in another is not seen.
pub fn tests_own_their_packets(tree: &Tree) -> Vec<String> {
    let mut found = Vec::new();
    for file in tree.files.iter().filter(|f| f.path.starts_with("tests/") && f.path != GATE) {
        match file.text.parse::<TokenStream>() {
            Ok(tokens) => {
                let helpers = root_helpers(tokens.clone());
                statements(tokens, &mut |statement| {
                    if names_the_crate_root(statement, &helpers) && names_a_golden_folder(statement) {
                        let text = statement.iter().cloned().collect::<TokenStream>().to_string();
                        let excerpt: String = text.chars().take(160).collect();
                        found.push(format!("{}: `{excerpt}` reads the repository's golden files", file.path));
                    }
                })
            }
            Err(e) => found.push(format!("{}: does not parse: {e}", file.path)),
        }
    }
    found
}

/// Calls `each` with every statement of `tokens` (split at `;` and after blocks; each
/// block's own statements too). Attributes, doc comments included, are left out.
fn statements(tokens: TokenStream, each: &mut dyn FnMut(&[TokenTree])) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut statement = Vec::new();
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                let bang = matches!(trees.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!');
                let at = i + 1 + usize::from(bang);
                if matches!(trees.get(at), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket) {
                    i = at;
                } else {
                    statement.push(trees[i].clone());
                }
            }
            TokenTree::Punct(p) if p.as_char() == ';' => each(&std::mem::take(&mut statement)),
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                statement.push(trees[i].clone());
                each(&std::mem::take(&mut statement));
                statements(g.stream(), each);
            }
            tree => {
                blocks_inside(tree, each);
                statement.push(tree.clone());
            }
        }
        i += 1;
    }
    each(&statement);
}

/// The blocks inside a parenthesised or bracketed group (closure bodies, `json!({…})`),
/// each read as statements of its own.
fn blocks_inside(tree: &TokenTree, each: &mut dyn FnMut(&[TokenTree])) {
    let TokenTree::Group(group) = tree else { return };
    for inner in group.stream() {
        match &inner {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => statements(g.stream(), each),
            other => blocks_inside(other, each),
        }
    }
}

/// The tokens of a statement, its parenthesised and bracketed groups opened (not its blocks).
fn flat(statement: &[TokenTree]) -> Vec<TokenTree> {
    let mut out = Vec::new();
    for tree in statement {
        match tree {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {}
            TokenTree::Group(g) => {
                out.push(tree.clone());
                out.extend(flat(&g.stream().into_iter().collect::<Vec<_>>()));
            }
            other => out.push(other.clone()),
        }
    }
    out
}

/// The functions in `tokens` whose bodies name the crate root (`fn project(relative:
/// &str) { root().join(relative) }`): a call of one names it too.
fn root_helpers(tokens: TokenStream) -> BTreeSet<String> {
    let mut helpers = BTreeSet::new();
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        match (tree, trees.get(i + 1)) {
            (TokenTree::Ident(f), Some(TokenTree::Ident(name))) if f == "fn" => {
                let body = trees[i..].iter().find_map(|t| match t {
                    TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => Some(g.stream()),
                    _ => None,
                });
                let mut names = false;
                statements(body.unwrap_or_default(), &mut |s| names |= names_the_crate_root(s, &BTreeSet::new()));
                if names {
                    helpers.insert(name.to_string());
                }
            }
            (TokenTree::Group(g), _) => helpers.extend(root_helpers(g.stream())),
            _ => {}
        }
    }
    helpers
}

fn names_the_crate_root(statement: &[TokenTree], helpers: &BTreeSet<String>) -> bool {
    let tokens = flat(statement);
    let ident = |at: usize, name: &str| matches!(tokens.get(at), Some(TokenTree::Ident(i)) if i == name);
    let punct = |at: usize, c: char| matches!(tokens.get(at), Some(TokenTree::Punct(p)) if p.as_char() == c);
    (0..tokens.len()).any(|i| {
        // A function called, not a method: `root()` or `support::root()` is the crate's,
        // `project.root()` a temporary project's.
        let called = |with_args: bool| {
            matches!(tokens.get(i + 1), Some(TokenTree::Group(g))
                if g.delimiter() == Delimiter::Parenthesis && (with_args || g.stream().is_empty()))
                && !(i > 0 && punct(i - 1, '.'))
        };
        let root = (ident(i, "root") || ident(i, "crate_root")) && called(false);
        let helper =
            matches!(&tokens[i], TokenTree::Ident(name) if helpers.contains(&name.to_string())) && called(true);
        let project_with = ident(i, "Project") && punct(i + 1, ':') && punct(i + 2, ':') && ident(i + 3, "with");
        let manifest = matches!(&tokens[i], TokenTree::Literal(l) if l.to_string() == "\"CARGO_MANIFEST_DIR\"");
        root || helper || project_with || manifest || ident(i, "ROOT") || ident(i, "CARGO_MANIFEST_DIR")
    })
}

fn names_a_golden_folder(statement: &[TokenTree]) -> bool {
    flat(statement).iter().any(|tree| {
        let TokenTree::Literal(literal) = tree else { return false };
        // A string or raw string (`r#"…"#`); other literals name no folder.
        let text = literal.to_string();
        let text = text.strip_prefix('r').unwrap_or(&text).trim_matches('#');
        let Some(text) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else { return false };
        text.split('/').any(|part| part == "golden")
    })
}
