//! `packetproof --help`: where the settings come from, the environment and the
//! exit codes; `--google-suffix-file` only on the commands that accept it.

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

pub fn trials() -> Vec<Trial> {
    trials![
        help_names_the_settings_file_the_environment_and_exit_codes,
        the_suffix_option_is_offered_only_where_it_means_something
    ]
}
