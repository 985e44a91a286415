//! Architecture rules the compiler does not enforce, checked on the parsed source
//! tree (`syn`, paths resolved through `use`, `super` and re-exports): modules use
//! only their own layer and the layers below it (docs/architecture.md's "Where things are"
//! table), with no import cycle inside a layer; nothing outside the command line's
//! crate (`src/`) prints; only the library's `git.rs` and `process.rs` start
//! processes; no source file grows past its line budget; no comment cites a
//! document outside the repository; no test but the conformance gate reads the
//! repository's golden files; every test of tests/cli is registered in a `trials![…]`
//! list (that binary has no libtest harness to find it); no test declares a `Project`
//! or `Output` of its own (tests/support has the one of each); `packetproof test`'s code
//! path names no platform (no `target_os`, no `/proc`); no cache of the library lives
//! in a `static` (the run's context holds them). Each rule is also run on a
//! small tree built to break it, so a rule that stopped seeing anything would fail here.

#[path = "tidy/layers.rs"]
mod layers;
#[path = "tidy/registered.rs"]
mod registered;
#[path = "tidy/resolve.rs"]
mod resolve;
#[path = "tidy/rules.rs"]
mod rules;
#[path = "tidy/statics.rs"]
mod statics;
#[path = "tidy/test_types.rs"]
mod test_types;

use rules::Tree;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[track_caller]
fn holds(rule: fn(&Tree) -> Vec<String>, tree: &Tree, what: &str) {
    let found = rule(tree);
    assert!(found.is_empty(), "{what}:\n{}", found.join("\n"));
}

/// The project's sources, parsed once for every rule.
fn this_crate() -> &'static Tree {
    static TREE: std::sync::OnceLock<Tree> = std::sync::OnceLock::new();
    // syn parses nested expressions recursively: a test thread's default stack is too
    // small for the larger sources, so the parse runs on a thread with room for it.
    TREE.get_or_init(|| {
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(|| Tree::load(root()).unwrap_or_else(|e| panic!("{e}")))
            .expect("a parsing thread")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

#[test]
fn modules_use_only_their_layer_and_those_below() {
    holds(rules::layering, this_crate(), "dependencies must point down (docs/architecture.md, \"Where things are\")");
}

#[test]
fn no_import_cycle_within_a_layer() {
    holds(rules::no_cycles, this_crate(), "modules must not depend on each other in a circle");
}

#[test]
fn only_the_cli_prints() {
    holds(rules::only_the_cli_prints, this_crate(), "printing outside the command line's crate");
}

#[test]
fn no_command_module_imports_the_registry_of_commands() {
    holds(
        rules::commands_stay_below_the_registry,
        this_crate(),
        "the registry of commands (src/args.rs) imports the command modules",
    );
}

#[test]
fn only_git_rs_and_the_suite_process_runner_start_processes() {
    holds(rules::only_spawners_spawn, this_crate(), "processes started outside the library's git.rs and process.rs");
}

#[test]
fn no_source_file_exceeds_the_line_budget() {
    holds(rules::line_budget, this_crate(), "split these files by concern");
}

#[test]
fn comments_cite_only_files_in_the_repository() {
    holds(rules::self_contained_comments, this_crate(), "say what these cite in the comment itself");
}

#[test]
fn no_cache_lives_in_a_static() {
    holds(
        statics::no_cache_in_a_static,
        this_crate(),
        "a cache belongs to the run (docs/architecture.md, \"A cache\")",
    );
}

#[test]
fn only_the_conformance_gate_reads_the_golden_files() {
    holds(
        rules::tests_own_their_packets,
        this_crate(),
        "compile the packets a test uses (support::compiled_packet, support::Project::suite): \
         a template edit must fail only tests/conformance.rs",
    );
}

#[test]
fn packetproof_test_is_one_code_path_on_every_platform() {
    holds(
        rules::one_gate_for_every_platform,
        this_crate(),
        "the gate's runner and reporters must not depend on the platform (no /proc relay, no target_os paths)",
    );
}

#[test]
fn every_cli_test_is_registered() {
    holds(
        registered::every_test_is_registered,
        this_crate(),
        "name each test in its file's trials![…] list (tests/cli runs without libtest's harness)",
    );
}

#[test]
fn one_project_and_one_output_type_serve_every_test() {
    holds(test_types::one_project_and_output, this_crate(), "extend tests/support's Project and Output instead");
}

#[test]
fn the_readme_table_names_files_that_exist() {
    let tree = this_crate();
    let section = tree.readme.split("\n## Where things are").nth(1).expect("the section").split("\n## ").next();
    let mut missing = Vec::new();
    for row in section.unwrap_or("").lines().filter(|l| l.starts_with('|')) {
        let last = row.trim_end_matches('|').rsplit('|').next().unwrap_or("");
        for path in last.split('`').skip(1).step_by(2).filter(|p| p.contains('/')) {
            if !root().join(path).exists() {
                missing.push(path.to_owned());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/architecture.md's \"Where things are\" names files that do not exist: {missing:?}"
    );
}

/// docs/architecture.md's "Making a change" walks through files: each exists. A path is
/// a backticked span with a `/` and no space or placeholder (`tests/cli/<command>.rs`).
#[test]
fn the_walks_name_files_that_exist() {
    let section = this_crate().readme.split("\n## Making a change").nth(1).expect("the section");
    let section = section.split("\n## ").next().unwrap_or("");
    let paths: Vec<&str> = section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| span.contains('/') && !span.contains([' ', '<', '…']))
        .collect();
    assert!(paths.len() > 20, "the walks name only {paths:?}");
    let missing: Vec<&str> = paths.iter().copied().filter(|path| !root().join(path).exists()).collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md's \"Making a change\" names files that do not exist: {missing:?}"
    );
}

#[test]
fn the_rules_see_the_whole_tree() {
    // A walk or a parse that silently found nothing would pass every rule above.
    let tree = this_crate();
    let files: Vec<&str> = tree.files.iter().map(|f| f.path.as_str()).collect();
    for file in ["src/print.rs", "crates/packetproof/src/lib.rs", "tests/tidy.rs"] {
        assert!(files.contains(&file), "{file} is not in the tree");
    }
    let names = |r: &&resolve::Reference, module: &str| matches!(&r.target, resolve::Target::Crate(t) if t.first().is_some_and(|m| m == module));
    assert!(
        tree.references.iter().any(|r| r.file == "src/cmd/verify.rs" && names(&r, "verify")),
        "the CLI runs the library's verify"
    );
    assert!(
        tree.references.iter().any(|r| r.file == "src/cmd/bless/review.rs" && names(&r, "main")),
        "the CLI's crate:: is its own root"
    );
}

/// The negative cases: a small crate that keeps every rule, and one change per rule
/// that each must catch.
mod broken {
    use super::rules::{self, Tree};

    const README: &str = "# t\n\n## Where things are\n\n| layer | concern | module |\n|---|---|---|\n\
        | leaves | errors | `crates/packetproof/src/error.rs` |\n| | findings | `crates/packetproof/src/report.rs` |\n\
        | | bytes | `crates/packetproof/src/canonical.rs` |\n| infrastructure | git | `crates/packetproof/src/git.rs` |\n\
        | | files | `crates/packetproof/src/fsutil.rs` |\n| | process | `crates/packetproof/src/process.rs` |\n\
        | producers | runs | `crates/packetproof/src/run/` |\n| applications | verify | `crates/packetproof/src/verify.rs` |\n\
        | shell | the CLI | `src/main.rs` |\n| tests | rules | `tests/tidy.rs` |\n\n## Next\n";

    const CLEAN: [(&str, &str); 12] = [
        (
            "crates/packetproof/src/lib.rs",
            "pub mod canonical; pub mod error; pub mod fsutil; pub mod git; pub mod process;\n\
             pub mod report; pub mod run; pub mod verify;\npub use error::Error;\n",
        ),
        ("crates/packetproof/src/error.rs", "pub struct Error;\n"),
        (
            "crates/packetproof/src/report.rs",
            "use crate::Error;\npub fn f() -> Option<Error> { crate::canonical::g(); None }\n",
        ),
        ("crates/packetproof/src/canonical.rs", "pub fn g() {}\n"),
        (
            "crates/packetproof/src/git.rs",
            "use std::process::Command;\npub fn git() { let _ = Command::new(\"git\"); }\n",
        ),
        ("crates/packetproof/src/process.rs", "pub fn run() { let _ = std::process::Command::new(\"x\"); }\n"),
        ("crates/packetproof/src/fsutil.rs", "pub fn read() {}\n"),
        ("crates/packetproof/src/run/mod.rs", "pub mod evaluate;\n"),
        (
            "crates/packetproof/src/run/evaluate.rs",
            "use crate::fsutil;\npub fn run() { fsutil::read(); super::super::report::f(); }\n",
        ),
        ("crates/packetproof/src/verify.rs", "pub fn verify() { crate::run::evaluate::run(); }\n"),
        ("src/main.rs", "mod print;\nfn main() { print::out(); packetproof::verify::verify(); }\n"),
        (
            "src/print.rs",
            "use std::io::Write;\npub fn out() { println!(\"{}\", 1); let _ = writeln!(std::io::stdout()); }\n",
        ),
    ];

    /// The clean crate with `changes` (path, text) written over it.
    fn tree(changes: &[(&str, &str)]) -> Tree {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join(rules::LAYER_MAP), README).unwrap();
        for (path, text) in CLEAN.iter().chain(changes) {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        Tree::load(dir.path()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `rule` finds something in the changed tree, and the first finding contains `expected`.
    #[track_caller]
    fn caught(rule: fn(&Tree) -> Vec<String>, changes: &[(&str, &str)], expected: &str) {
        let found = rule(&tree(changes));
        assert!(found.iter().any(|f| f.contains(expected)), "expected a finding with {expected:?}, got {found:#?}");
    }

    const ALL_RULES: [fn(&Tree) -> Vec<String>; 12] = [
        rules::commands_stay_below_the_registry,
        rules::layering,
        rules::no_cycles,
        rules::only_the_cli_prints,
        rules::only_spawners_spawn,
        rules::line_budget,
        rules::self_contained_comments,
        rules::tests_own_their_packets,
        super::registered::every_test_is_registered,
        super::test_types::one_project_and_output,
        rules::one_gate_for_every_platform,
        super::statics::no_cache_in_a_static,
    ];

    #[test]
    fn the_clean_tree_keeps_every_rule() {
        let tree = tree(&[("tests/data.rs", "// reads ../shared/interop/runtime-packet.json\n")]);
        for rule in ALL_RULES {
            assert_eq!(rule(&tree), Vec::<String>::new());
        }
    }

    #[test]
    fn an_upward_path_through_super_chains_is_caught() {
        let evaluate = "pub fn run() { super::super::verify::verify(); }\n";
        caught(
            rules::layering,
            &[("crates/packetproof/src/run/evaluate.rs", evaluate)],
            "run (producers) uses verify (applications)",
        );
    }

    #[test]
    fn an_upward_path_through_a_crate_alias_is_caught() {
        let evaluate = "use crate as pp;\npub fn run() { pp::verify::verify(); }\n";
        caught(rules::layering, &[("crates/packetproof/src/run/evaluate.rs", evaluate)], "pp::verify::verify");
        let evaluate = "extern crate self as pp;\nuse pp::verify as v;\npub fn run() { v::verify(); }\n";
        caught(rules::layering, &[("crates/packetproof/src/run/evaluate.rs", evaluate)], "uses verify");
    }

    #[test]
    fn a_test_item_near_the_top_hides_nothing_after_it() {
        let evaluate = "#[cfg(test)]\nfn helper() {}\npub fn run() { crate::verify::verify(); }\n";
        caught(
            rules::layering,
            &[("crates/packetproof/src/run/evaluate.rs", evaluate)],
            "(fn run): crate::verify::verify",
        );
    }

    #[test]
    fn a_module_missing_from_the_readme_table_is_caught() {
        let lib = "pub mod canonical; pub mod error; pub mod fsutil; pub mod git; pub mod process;\n\
                   pub mod report; pub mod run; pub mod verify; pub mod extra;\n";
        caught(
            rules::layering,
            &[("crates/packetproof/src/lib.rs", lib), ("crates/packetproof/src/extra.rs", "pub fn x() {}\n")],
            "module extra is in no layer",
        );
    }

    #[test]
    fn a_cycle_inside_the_leaves_is_caught() {
        let changes = [
            ("crates/packetproof/src/error.rs", "pub struct Error;\npub fn e() { let _ = crate::report::f(); }\n"),
            ("crates/packetproof/src/canonical.rs", "pub fn g() -> Option<crate::Error> { None }\n"),
        ];
        caught(rules::no_cycles, &changes, "import cycle canonical → error → report → canonical");
    }

    #[test]
    fn a_cache_in_a_static_is_caught() {
        let rule = super::statics::no_cache_in_a_static;
        let canonical = |text: &str| [("crates/packetproof/src/canonical.rs", text.to_owned())];
        let in_a_function = "pub fn g() -> &'static str { static SEEN: std::sync::Mutex<Vec<u8>> = \
                             std::sync::Mutex::new(Vec::new()); \"x\" }\n";
        let thread_local = "thread_local! { static MEMO: RefCell<HashMap<u8, u8>> = RefCell::default(); }\n";
        for (text, expected) in [(in_a_function, "static SEEN"), (thread_local, "static MEMO")] {
            let changes = canonical(text);
            caught(rule, &[(changes[0].0, &changes[0].1)], expected);
        }
        // A constant listed with why is no finding; the same static under another name is.
        let constant = "pub fn g() { static ROOT: std::sync::OnceLock<u8> = std::sync::OnceLock::new(); }\n";
        assert_eq!(rule(&tree(&[("crates/packetproof/src/canonical.rs", constant)])), Vec::<String>::new());
        caught(rule, &[("crates/packetproof/src/canonical.rs", &constant.replace("ROOT", "CACHE"))], "static CACHE");
    }

    #[test]
    fn printing_through_stdout_or_dbg_is_caught() {
        let stdout = "use std::io::{self, Write};\npub fn g() { let _ = writeln!(io::stdout(), \"x\"); }\n";
        caught(rules::only_the_cli_prints, &[("crates/packetproof/src/canonical.rs", stdout)], "(fn g): io::stdout");
        caught(
            rules::only_the_cli_prints,
            &[("crates/packetproof/src/canonical.rs", "pub fn g() { dbg!(1); }\n")],
            "(fn g): dbg",
        );
        let aliased = "use std::eprintln as say;\npub fn g() { say!(\"x\"); }\n";
        caught(rules::only_the_cli_prints, &[("crates/packetproof/src/canonical.rs", aliased)], "(fn g): say");
    }

    #[test]
    fn a_platform_path_in_the_gate_is_caught() {
        let main = "mod print;\nmod test;\nfn main() { print::out(); packetproof::verify::verify(); test::run(); }\n";
        let relay = "/// Elsewhere there is no /proc.\n#[cfg(target_os = \"linux\")]\npub fn run() {}\n";
        caught(
            rules::one_gate_for_every_platform,
            &[("src/main.rs", main), ("src/cmd/test.rs", relay)],
            "src/cmd/test.rs: a target_os",
        );
        let proc = "pub fn run() { let _ = std::path::Path::new(\"/proc/self/fd/3\"); }\n";
        caught(
            rules::one_gate_for_every_platform,
            &[("src/main.rs", main), ("src/cmd/test.rs", proc)],
            "src/cmd/test.rs: a /proc path",
        );
        let documented = "/// No /proc relay here.\npub fn run() {}\n";
        assert!(rules::one_gate_for_every_platform(&tree(&[("src/main.rs", main), ("src/cmd/test.rs", documented)]))
            .is_empty());
    }

    #[test]
    fn a_command_module_importing_the_registry_is_caught() {
        let main = "mod args;\nmod cmd;\nmod flags;\nfn main() {}\n";
        let cmd = "pub mod verify;\n";
        let verify = "use crate::args::SuffixArg;\npub fn run(_: SuffixArg) {}\n";
        caught(
            rules::commands_stay_below_the_registry,
            &[
                ("src/main.rs", main),
                ("src/args.rs", "pub struct SuffixArg;\n"),
                ("src/cmd/mod.rs", cmd),
                ("src/cmd/verify.rs", verify),
            ],
            "src/cmd/verify.rs",
        );
        let below = "use crate::flags::SuffixArg;\npub fn run(_: SuffixArg) {}\n";
        let files = [
            ("src/main.rs", main),
            ("src/flags.rs", "pub struct SuffixArg;\n"),
            ("src/cmd/mod.rs", cmd),
            ("src/cmd/verify.rs", below),
        ];
        assert!(rules::commands_stay_below_the_registry(&tree(&files)).is_empty());
    }

    #[test]
    fn a_process_started_outside_the_spawners_is_caught() {
        let verify =
            "use std::process::Command;\nconst GIT: &str = \"git\";\npub fn verify() { let _ = Command::new(GIT); }\n";
        caught(
            rules::only_spawners_spawn,
            &[("crates/packetproof/src/verify.rs", verify)],
            "crates/packetproof/src/verify.rs (fn verify): Command::new",
        );
        let renamed = "use std::process as p;\npub fn verify() { let _ = p::Command::new(\"sh\"); }\n";
        caught(rules::only_spawners_spawn, &[("crates/packetproof/src/verify.rs", renamed)], "p::Command::new");
        // The command line's crate is held to it too.
        let main = "mod print;\nfn main() { let _ = std::process::Command::new(\"git\"); }\n";
        caught(
            rules::only_spawners_spawn,
            &[("src/main.rs", main)],
            "src/main.rs (fn main): std::process::Command::new",
        );
    }

    #[test]
    fn a_long_file_is_caught() {
        let long = "// line\n".repeat(rules::MAX_LINES + 1);
        caught(
            rules::line_budget,
            &[("crates/packetproof/src/fsutil.rs", &long)],
            "crates/packetproof/src/fsutil.rs: 601 lines (budget 600)",
        );
    }

    #[test]
    fn a_comment_citing_an_outside_document_is_caught() {
        // Split so that this file does not cite them itself.
        let comments = [
            concat!("//! As NODE", "-EVALUATOR says"),
            concat!("/// See DESI", "GN.md"),
            concat!("// (iss", "ue 12)"),
            concat!("// ../sha", "red/interop/x"),
            "// as \u{a7}3.6 says",
        ];
        for comment in comments {
            let file = format!("{comment}\npub fn read() {{}}\n");
            caught(
                rules::self_contained_comments,
                &[("crates/packetproof/src/fsutil.rs", &file)],
                "crates/packetproof/src/fsutil.rs:1: cites",
            );
        }
        let test = concat!("// ../sha", "red/seed/CONTRACT.md");
        caught(rules::self_contained_comments, &[("tests/data.rs", test)], "tests/data.rs:1");
        let standard = "/// RFC 8785 §3.2.3 and (I-JSON §2.2)\npub fn read() {}\n";
        assert_eq!(
            rules::self_contained_comments(&tree(&[("crates/packetproof/src/fsutil.rs", standard)])),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_cli_test_no_list_registers_is_caught() {
        let registered = "pub fn trials() -> Vec<Trial> { crate::trials![listed] }\n\
                          fn listed() { helper(); }\nfn helper() {}\nfn takes(x: u8) {}\n";
        assert_eq!(
            super::registered::every_test_is_registered(&tree(&[("tests/cli/x.rs", registered)])),
            Vec::<String>::new()
        );
        let forgotten = format!("{registered}fn forgotten() {{ helper(); }}\n");
        caught(
            super::registered::every_test_is_registered,
            &[("tests/cli/x.rs", &forgotten)],
            "tests/cli/x.rs: fn forgotten is in no trials![…] list",
        );
        let nested = format!("{registered}mod more {{ fn forgotten() {{}} }}\n");
        caught(super::registered::every_test_is_registered, &[("tests/cli/x.rs", &nested)], "fn forgotten");
        let attribute = format!("{registered}#[test]\nfn listed_too() {{}}\nfn f() {{ let _ = listed_too; }}\n");
        caught(
            super::registered::every_test_is_registered,
            &[("tests/cli/x.rs", &attribute)],
            "fn listed_too is a #[test], which this harness never runs",
        );
    }

    #[test]
    fn a_test_declaring_its_own_project_or_output_is_caught() {
        let rule = super::test_types::one_project_and_output;
        let shared = "pub struct Project { dir: u8 }\npub struct Output { pub code: i32 }\n";
        let users = "impl Project { fn f() {} }\nfn g(_: &Output) { struct Projects; }\n";
        let fine = [(super::test_types::SHARED, shared), ("tests/support/lifecycle.rs", users)];
        assert_eq!(rule(&tree(&fine)), Vec::<String>::new());
        caught(
            rule,
            &[("tests/cli/x/mod.rs", "struct Project {\n    dir: u8,\n}\n")],
            "tests/cli/x/mod.rs: struct Project",
        );
        let nested = "mod inner {\n    fn f() {\n        enum Output { A }\n    }\n}\n";
        caught(rule, &[("tests/cli/y.rs", nested)], "tests/cli/y.rs: enum Output");
        caught(rule, &[("tests/node_eval.rs", "type Output = (i32, String);\n")], "type Output");
    }

    #[test]
    fn a_test_reading_the_repositorys_golden_files_is_caught() {
        let reads = [
            "fn f() { let _ = std::fs::read(root().join(\"golden\").join(\"case\")); }",
            "fn f() { let _ = support::root().join(format!(\"golden/{CASE}/runtime-packet.json\")); }",
            "fn f() { let _ = Path::new(ROOT).join(\"golden/case/runtime-packet.json\"); }",
            "fn f() { let _ = crate_root().join(\"golden/case\"); }",
            "fn f() { let _ = Repo { dir: support::Project::with(&[\"harness.toml\", \"golden\"]) }; }",
            "const P: &str = concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/golden/case/runtime-packet.json\");",
            "fn f() { let _ = run(|| { let p = root().join(r#\"golden\"#); p }); }",
            // Through a helper of the file that joins the crate root with what it is given.
            "fn file(relative: &str) -> PathBuf { support::root().join(relative) }\n\
             fn f() { let _ = file(\"golden/case/runtime-packet.json\"); }",
        ];
        for text in reads {
            caught(rules::tests_own_their_packets, &[("tests/cli/wire.rs", text)], "tests/cli/wire.rs: `");
        }
        // The gate itself, temporary projects' golden folders, a block's own statements
        // and comments are not the repository's golden files.
        let allowed = [
            ("tests/conformance.rs", "fn f() { let _ = root().join(\"golden\"); }"),
            (
                "tests/cli/wire.rs",
                "/// not `root().join(\"golden\")`\nfn f(project: &Project, dir: &Path) {\n\
                 let _ = project.root().join(\"golden\");\nlet root = dir;\nlet _ = root.join(\"golden/case\");\n\
                 let _ = suite.join(format!(\"golden/{CASE}/runtime-packet.json\"));\n\
                 for folder in [\"fixtures\", \"golden\"] { make(folder) }\nlet _ = support::root();\n}",
            ),
        ];
        assert_eq!(rules::tests_own_their_packets(&tree(&allowed)), Vec::<String>::new());
    }
}

/// No page of the documentation sends a reader to files outside the repository (the
/// reference's shared folder is this project's test data, not a user's).
#[test]
fn no_doc_points_outside_the_repository() {
    let mut pages = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let outside: Vec<String> = pages
        .iter()
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("../shared"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(outside.is_empty(), "these pages name ../shared: {outside:?}");
}

/// CI runs the README's test command, and runs it last (its checks before it each fail
/// on a warning).
#[test]
fn ci_runs_the_readmes_test_command_last() {
    let read = |path: &str| std::fs::read_to_string(root().join(path)).unwrap();
    let readme = read("README.md");
    let block = readme.split("```sh\n").nth(1).expect("README.md opens with a sh block");
    let command = block.lines().next().unwrap().split('#').next().unwrap().trim();
    let ci = read(".ci/run");
    let last = ci.lines().map(str::trim).rfind(|l| !l.is_empty() && !l.starts_with('#'));
    assert_eq!(last, Some(command), ".ci/run must end with README.md's test command");
    assert!(ci.contains("-D warnings"), ".ci/run must deny warnings");
}
