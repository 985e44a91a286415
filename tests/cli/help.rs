//! `packetproof --help`: where the settings come from, the environment and the
//! exit codes; `--google-suffix-file` only on the commands that accept it; each
//! command's `--format` values.

use crate::support::run;
use libtest_mimic::Trial;

fn help_names_the_settings_file_the_environment_and_exit_codes() {
    let output = run(["--help"]);
    assert_eq!(output.code, 0);
    let help = output.stdout.clone();
    for needle in [
        "harness.toml",
        "PACKETPROOF_ROOT",
        "CI",
        "PACKETPROOF_BLESS",
        "NO_COLOR",
        "Exit status: 0",
        "1 a check failed",
        "2 bad usage",
        "a git or [exporter] failure",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
}

/// `--google-suffix-file` is offered only by the commands that read packets made elsewhere:
/// the others do not list it, refuse it after the command (clap) and before it (with the reason).
fn the_suffix_option_is_offered_only_where_it_means_something() {
    let refusing: [&[&str]; 6] =
        [&["canon"], &["schema", "--check"], &["release-check"], &["init"], &["bless"], &["bless", "x"]];
    for command in refusing {
        let help = run([command[0], "--help"]).stdout.clone();
        assert!(!help.contains("--google-suffix-file"), "{command:?} offers it:\n{help}");
        let after = run([command, &["--google-suffix-file", "x"][..]].concat());
        assert_eq!(after.code, 2, "{command:?}");
        assert!(after.stderr.clone().contains("unexpected argument '--google-suffix-file'"), "{command:?}");
        let before = run([&["--google-suffix-file", "x"][..], command].concat());
        assert_eq!(before.code, 2, "{command:?}");
        let why = before.stderr.clone();
        assert!(
            why.contains("does not take it") || why.contains("--google-suffix-file is refused"),
            "{command:?}: {why}"
        );
    }
    for command in ["validate", "export", "prepare", "evaluate", "complete", "verify", "test", "wire", "attest"] {
        let help = run([command, "--help"]).stdout.clone();
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

pub fn trials() -> Vec<Trial> {
    trials![
        help_names_the_settings_file_the_environment_and_exit_codes,
        the_suffix_option_is_offered_only_where_it_means_something,
        each_command_offers_its_formats_and_refuses_the_others
    ]
}
