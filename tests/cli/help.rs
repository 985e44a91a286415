//! `packetproof --help`: where the settings come from, the environment and the
//! exit codes; `--google-suffix-file` only on the commands that accept it; each
//! command's `--format` values.

use crate::support::run;
use libtest_mimic::Trial;

fn help_names_the_settings_file_the_environment_and_exit_codes() {
    let output = run(["--help"]);
    assert_eq!(output.code, 0);
    let help = output.stdout.clone();
    assert!(help.contains("harness.toml"), "{help}");
    // Every variable the program reads and every exit status, from the library's tables.
    assert_eq!(help_section(&help, "Environment:"), variables(), "{help}");
    let start = help.find("Exit status").unwrap();
    let lines = help[start..].lines().skip(1).take_while(|l| l.starts_with("  "));
    let codes: Vec<String> =
        lines.map(|l| l.trim().replacen("  ", " ", 1).split(':').next().unwrap().to_owned()).collect();
    let expected: Vec<String> = packetproof::EXIT_STATUSES.iter().map(|(c, m, _)| format!("{c} {m}")).collect();
    assert_eq!(codes, expected, "{help}");
    assert!(help.contains("a packetproof bug"), "{help}");
}

/// The first word of each line of `help`'s section that starts with `heading`.
fn help_section(help: &str, heading: &str) -> Vec<String> {
    let start = help.find(heading).unwrap_or_else(|| panic!("no {heading:?} in --help:\n{help}"));
    let lines = help[start..].lines().skip(1).take_while(|l| l.starts_with("  "));
    lines.map(|l| l.trim().split("  ").next().unwrap().to_owned()).collect()
}

fn variables() -> Vec<String> {
    packetproof::env::VARIABLES.iter().map(|(name, _)| (*name).to_owned()).collect()
}

/// Every command, as `packetproof --help` lists them (clap's definition).
fn commands() -> Vec<String> {
    help_section(&run(["--help"]).stdout.clone(), "Commands:").into_iter().filter(|c| c != "help").collect()
}

/// The commands whose `--help` offers `--google-suffix-file`.
pub(crate) fn suffix_takers() -> Vec<String> {
    commands()
        .into_iter()
        .filter(|c| run([c.as_str(), "--help"]).stdout.clone().contains("--google-suffix-file"))
        .collect()
}

/// The backticked words of `text`.
fn quoted(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// README.md and every page under docs/, as one text (the facts checked may be on any page).
fn documentation() -> String {
    let root = crate::support::root();
    let mut pages: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    let mut text = std::fs::read_to_string(root.join("README.md")).unwrap();
    for page in pages {
        text.push_str("\n\n");
        text.push_str(&std::fs::read_to_string(page).unwrap());
    }
    text
}

/// What the documentation says about the CLI is what clap defines: which commands take
/// `--google-suffix-file` and which refuse it (every other), every variable
/// (its Environment section, bullet by bullet) and every exit status.
fn the_readme_says_what_clap_defines() {
    let readme = documentation();
    let problems = readme_problems(&readme);
    assert_eq!(problems, Vec::<String>::new());
    // The check catches a command missing from a list, a variable left out, a code renamed.
    let missing = readme.replacen("and `serve`\ntake", "\ntake", 1);
    assert_ne!(missing, readme, "the list of commands taking the option is where the test looks");
    assert!(readme_problems(&missing).iter().any(|p| p.contains("take --google-suffix-file")), "{missing:.0}");
    let env = readme.replacen("- `PACKETPROOF_ROOT`", "- PACKETPROOF_ROOT", 1);
    assert!(readme_problems(&env).iter().any(|p| p.contains("Environment")));
    let code = readme.replace("1 a check failed", "1 a check broke");
    assert!(readme_problems(&code).iter().any(|p| p.contains("exit status 1")));
}

fn readme_problems(readme: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let commands = commands();
    let anchor = "\ntake `--google-suffix-file FILE`";
    let Some(at) = readme.find(anchor) else { return vec![format!("README lacks {anchor:?}")] };
    let start = readme[..at].rfind("\n\n").unwrap_or(0);
    let end = at + readme[at..].find("Every command takes").unwrap_or(0);
    let mut takers = quoted(&readme[start..at]);
    takers.sort();
    let mut defined = suffix_takers();
    defined.sort();
    if takers != defined {
        problems.push(format!("README: {takers:?} take --google-suffix-file; clap: {defined:?}"));
    }
    let refusers: Vec<String> = quoted(&readme[at..end]).into_iter().filter(|w| commands.contains(w)).collect();
    let mut named: Vec<String> = takers.into_iter().chain(refusers).collect();
    named.sort();
    let mut all = commands.clone();
    all.sort();
    if named != all {
        problems.push(format!("README's --google-suffix-file paragraph names {named:?}; the commands are {all:?}"));
    }
    let section = readme.split("\n### Environment\n").nth(1).and_then(|s| s.split("\n#").next()).unwrap_or("");
    // A bullet names its variables in backticks before its colon.
    let heads = section.lines().filter(|l| l.starts_with("- `")).filter_map(|l| l.split(':').next());
    let mut bullets: Vec<String> = heads.flat_map(quoted).collect();
    bullets.sort();
    let mut known = variables();
    known.sort();
    if bullets != known {
        problems.push(format!("README's Environment section lists {bullets:?}; packetproof reads {known:?}"));
    }
    let flowing = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    for (code, meaning, _) in packetproof::EXIT_STATUSES {
        if !flowing.contains(&format!("{code} {meaning}")) {
            problems.push(format!("README does not say exit status {code} is {meaning:?}"));
        }
    }
    problems
}

/// `--google-suffix-file` is offered only by the commands that read packets made elsewhere:
/// the others do not list it, refuse it after the command (clap) and before it (naming those that take it).
fn the_suffix_option_is_offered_only_where_it_means_something() {
    let takers = suffix_takers();
    // The packet readers take it; the corpus writers and the commands that read no packet do not.
    for command in
        ["validate", "export", "prepare", "evaluate", "complete", "verify", "test", "wire", "attest", "trace"]
    {
        assert!(takers.iter().any(|t| t == command), "{command} does not offer it: {takers:?}");
    }
    let usage: std::collections::HashMap<&str, &[&str]> =
        [("schema", &["schema", "--check"][..]), ("completions", &["completions", "bash"][..])].into();
    for name in commands().iter().filter(|c| !takers.contains(c)) {
        let alone = [name.as_str()];
        let command = usage.get(name.as_str()).copied().unwrap_or(&alone);
        let help = run([command[0], "--help"]).stdout.clone();
        assert!(!help.contains("--google-suffix-file"), "{command:?} offers it:\n{help}");
        let after = run([command, &["--google-suffix-file", "x"][..]].concat());
        assert_eq!(after.code, 2, "{command:?}");
        assert!(after.stderr.clone().contains("unexpected argument '--google-suffix-file'"), "{command:?}");
        let before = run([&["--google-suffix-file", "x"][..], command].concat());
        assert_eq!(before.code, 2, "{command:?}");
        let why = before.stderr.clone();
        let named = format!("({}); this one does not take it", takers.join(", "));
        assert!(why.contains(&named) || why.contains("--google-suffix-file is refused"), "{command:?}: {why}");
    }
    for command in &takers {
        let help = run([command.as_str(), "--help"]).stdout.clone();
        assert!(help.contains("--google-suffix-file <FILE>"), "{command} does not offer it:\n{help}");
    }
    assert!(!run(["--help"]).stdout.clone().contains("--google-suffix-file"), "listed as if every command took it");
}

/// Each command's `--format` offers exactly the formats its report renders in (the
/// library's `reporter::Kind::formats`; `test`: libtest's), the first by default, and
/// refuses every other format of `Format::ALL` as a usage error naming its own.
fn each_command_offers_its_formats_and_refuses_the_others() {
    use packetproof::reporter::Kind;
    use packetproof::Format;
    let names = |formats: &[Format]| formats.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ");
    let libtest = names(&[Format::Pretty, Format::Terse, Format::Json]);
    let commands: [(&[&str], String); 9] = [
        (&["validate", "--packet", "p.json"], names(Kind::Outcomes.formats())),
        (&["schema", "--check"], names(Kind::Outcomes.formats())),
        (&["wire", "--packet", "p.json", "--api", "anthropic", "--check", "c.json"], names(Kind::Outcomes.formats())),
        (&["verify", "p.json"], names(Kind::Verification.formats())),
        (&["checks"], names(Kind::RuleBook.formats())),
        (&["evaluate", "--run-dir", "run"], names(Kind::Evaluation.formats())),
        (&["trace", "t.jsonl", "--packets", "p.json"], names(Kind::Trace.formats())),
        (&["release-check"], names(Kind::Release.formats())),
        (&["test"], libtest),
    ];
    for (command, offered) in commands {
        let help = run([command[0], "--help"]).stdout.clone();
        let default = offered.split(", ").next().unwrap();
        let listed = format!("[default: {default}] [possible values: {offered}]");
        assert!(help.contains(&listed), "{} --help does not say {listed}:\n{help}", command[0]);
        for format in Format::ALL.iter().filter(|f| !offered.split(", ").any(|o| o == f.name())) {
            let out = run([command, &["--format", format.name()]].concat());
            let said = out.stderr.clone();
            assert_eq!(out.code, 2, "{command:?} --format {format}: {said}");
            let refusal = format!("invalid value '{format}' for '--format <FORMAT>'\n  [possible values: {offered}]");
            assert!(said.contains(&refusal), "{command:?} --format {format}: {said}");
        }
    }
}

const REFERENCE_START: &str = "<!-- generated from `packetproof <command> --help`: tests/cli/help.rs checks it -->";
const REFERENCE_END: &str = "<!-- end of the generated reference -->";

/// The reference of every command, as `--help` prints it (markdown).
fn generated_reference() -> String {
    let mut out = String::new();
    for command in commands() {
        let help = run([command.as_str(), "--help"]);
        assert_eq!(help.code, 0, "{}", help.describe());
        out.push_str(&format!("### `packetproof {command}`\n\n```text\n{}\n```\n\n", help.stdout.trim_end()));
    }
    out
}

/// docs/commands.md ends with every command's `--help`, generated from clap: a new
/// option or a changed description that the page does not show fails here, with the
/// block to paste.
fn the_command_reference_is_what_clap_defines() {
    let file = crate::support::root().join("docs/commands.md");
    let page = std::fs::read_to_string(&file).unwrap();
    let expected = generated_reference();
    let found = page.split_once(REFERENCE_START).and_then(|(_, rest)| rest.split_once(REFERENCE_END)).map(|(b, _)| b);
    let found = found.map(|b| b.trim_start_matches('\n'));
    assert!(
        found == Some(expected.as_str()),
        "{} is not what clap defines; paste between its markers:\n{REFERENCE_START}\n{expected}{REFERENCE_END}",
        file.display()
    );
}

pub fn trials() -> Vec<Trial> {
    trials![
        the_command_reference_is_what_clap_defines,
        help_names_the_settings_file_the_environment_and_exit_codes,
        the_readme_says_what_clap_defines,
        the_suffix_option_is_offered_only_where_it_means_something,
        each_command_offers_its_formats_and_refuses_the_others
    ]
}
