//! Architecture rules the compiler does not enforce, checked on the source tree:
//! modules use only their own layer and the layers below it (so nothing imports the
//! CLI), nothing outside `src/cli` prints, only `src/git.rs` spawns git, no source
//! file grows past 600 lines, and no comment cites a document outside the repository.

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 600;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, as (path relative to the crate root, text).
fn sources(dir: &str) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = walkdir::WalkDir::new(root().join(dir))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| {
            let relative = e.path().strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
            (relative, std::fs::read_to_string(e.path()).unwrap())
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no sources under {dir}");
    files
}

/// The lines of `text` that are code (not comments), before its unit tests.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let end = text.find("#[cfg(test)]").unwrap_or(text.len());
    text[..end].lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim_start().starts_with("//"))
}

fn in_cli(path: &str) -> bool {
    path.starts_with("src/cli/") || path == "src/main.rs"
}

/// `(file:line: text)` for each code line outside `allowed` files that contains any of `needles`.
fn offending(allowed: impl Fn(&str) -> bool, needles: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in sources("src").iter().filter(|(p, _)| !allowed(p)) {
        for (n, line) in code_lines(text) {
            if needles.iter().any(|needle| line.contains(needle)) {
                out.push(format!("{path}:{n}: {}", line.trim()));
            }
        }
    }
    out
}

/// The layers, bottom up (README.md, "Where things are").
const LAYERS: [&[&str]; 8] = [
    &["error", "canonical", "rules", "report", "jsonpath", "builtin", "parallel"],
    &["env", "config", "digest", "fsutil", "numbers", "diff", "git"],
    &["packet", "provider", "schema", "schema_refs"],
    &["wire", "attest"],
    &["compile", "evaluator", "run", "exporter"],
    &["corpus", "check", "judge"],
    &["verify", "bless", "mutation", "release", "conformance", "init", "trace", "report_html"],
    &["cli"],
];

/// The module a crate-root name belongs to (`Config` is `config`'s, and so on).
fn module_of(name: &str) -> &str {
    match name {
        "Config" => "config",
        "Error" | "Result" => "error",
        "Check" | "PacketCheck" | "RunCheck" | "CorpusCheck" | "Skipped" => "rules",
        "Finding" | "Findings" | "Format" | "Outcome" | "Status" => "report",
        other => other,
    }
}

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// The top-level names `code` takes from the crate root: `crate::a::b` gives `a`,
/// `use crate::{a, b::{c, d}, E}` (over any number of lines) gives `a`, `b` and `E`.
fn crate_names(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            names.push(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
            continue;
        };
        let (mut depth, mut item) = (0, String::new());
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    names.extend(head(&item));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    names.extend(head(&item));
                    item.clear();
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
    }
    names
}

/// `b` of an import item `b::{c, d}`; nothing for `self` or an empty item.
fn head(item: &str) -> Option<String> {
    let head = item.trim().split("::").next().unwrap_or("").trim();
    (!head.is_empty() && head != "self").then(|| head.to_owned())
}

#[test]
fn modules_use_only_their_layer_and_those_below() {
    let mut found = Vec::new();
    for (path, text) in sources("src") {
        let Some(module) = path.strip_prefix("src/").map(|p| p.split(['/', '.']).next().unwrap_or("")) else {
            continue;
        };
        if module == "lib" || module == "main" {
            continue;
        }
        let own = layer(module).unwrap_or_else(|| panic!("{path}: module {module:?} is in no layer of LAYERS"));
        let code: String = code_lines(&text).map(|(_, line)| format!("{line}\n")).collect();
        for name in crate_names(&code) {
            let used = module_of(&name);
            match layer(used) {
                Some(l) if l <= own => {}
                Some(_) => found.push(format!("{path}: {module} uses {used}, a higher layer")),
                None => found.push(format!("{path}: {used:?} is in no layer")),
            }
        }
    }
    assert!(found.is_empty(), "dependencies must point down:\n{}", found.join("\n"));
}

#[test]
fn the_layer_scan_reads_use_groups() {
    assert_eq!(crate_names("use crate::{canonical, run::{self, X},\n    Config};"), ["canonical", "run", "Config"]);
    assert_eq!(crate_names("let x = crate::cli::main();"), ["cli"]);
}

#[test]
fn nothing_outside_the_cli_imports_it() {
    let found = offending(in_cli, &["crate::cli", "super::cli", "packetproof::cli"]);
    assert!(found.is_empty(), "modules outside src/cli import the CLI:\n{}", found.join("\n"));
}

#[test]
fn only_the_cli_prints() {
    let found =
        offending(in_cli, &["println!", "print!(", "eprintln!", "eprint!(", "std::io::stdout", "std::io::stderr"]);
    assert!(found.is_empty(), "printing outside src/cli/print.rs:\n{}", found.join("\n"));
}

#[test]
fn only_git_rs_spawns_git() {
    let found = offending(|p| p == "src/git.rs", &["Command::new(\"git\")"]);
    assert!(found.is_empty(), "git spawned outside src/git.rs:\n{}", found.join("\n"));
}

#[test]
fn no_source_file_exceeds_the_line_budget() {
    let mut long: Vec<String> = Vec::new();
    for dir in ["src", "tests", "benches"] {
        for (path, text) in sources(dir) {
            let lines = text.lines().count();
            // The conformance and CLI test tables are data, not logic; they are held to twice the budget.
            let budget = if dir == "src" { MAX_LINES } else { 2 * MAX_LINES };
            if lines > budget {
                long.push(format!("{path}: {lines} lines (budget {budget})"));
            }
        }
    }
    assert!(long.is_empty(), "split these files by concern:\n{}", long.join("\n"));
}

#[test]
fn comments_cite_only_files_in_the_repository() {
    let mut found = Vec::new();
    for (path, text) in sources("src").into_iter().chain(sources("tests")) {
        for (n, line) in text.lines().enumerate() {
            if line.contains(concat!("DESIGN", " §")) {
                found.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "move what these cite into README.md or module docs:\n{}", found.join("\n"));
}

#[test]
fn the_rules_see_the_whole_tree() {
    // A walk that silently found nothing would pass every rule above.
    let paths: Vec<PathBuf> = sources("src").into_iter().map(|(p, _)| PathBuf::from(p)).collect();
    assert!(paths.contains(&PathBuf::from("src/cli/print.rs")) && paths.contains(&PathBuf::from("src/lib.rs")));
}
