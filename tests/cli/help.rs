//! `packetproof --help`: where the settings come from, the environment and the
//! exit codes; `--google-suffix-file` only on the commands that accept it.

use crate::{run, text};
use libtest_mimic::Trial;

fn help_names_the_settings_file_the_environment_and_exit_codes() {
    let output = run(["--help"]);
    assert_eq!(output.status.code(), Some(0));
    let help = text(&output.stdout);
    for needle in [
        "harness.toml",
        "PACKETPROOF_ROOT",
        "CI",
        "PACKETPROOF_BLESS",
        "NO_COLOR",
        "Exit status: 0",
        "1 a check failed",
        "2 bad usage",
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
        let help = text(&run([command[0], "--help"]).stdout);
        assert!(!help.contains("--google-suffix-file"), "{command:?} offers it:\n{help}");
        let after = run([command, &["--google-suffix-file", "x"][..]].concat());
        assert_eq!(after.status.code(), Some(2), "{command:?}");
        assert!(text(&after.stderr).contains("unexpected argument '--google-suffix-file'"), "{command:?}");
        let before = run([&["--google-suffix-file", "x"][..], command].concat());
        assert_eq!(before.status.code(), Some(2), "{command:?}");
        let why = text(&before.stderr);
        assert!(
            why.contains("does not take it") || why.contains("--google-suffix-file is refused"),
            "{command:?}: {why}"
        );
    }
    for command in ["validate", "export", "prepare", "evaluate", "complete", "verify", "test", "wire", "attest"] {
        let help = text(&run([command, "--help"]).stdout);
        assert!(help.contains("--google-suffix-file <FILE>"), "{command} does not offer it:\n{help}");
    }
    assert!(!text(&run(["--help"]).stdout).contains("--google-suffix-file"), "listed as if every command took it");
}

pub fn trials() -> Vec<Trial> {
    trials![
        help_names_the_settings_file_the_environment_and_exit_codes,
        the_suffix_option_is_offered_only_where_it_means_something
    ]
}
