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

fn the_suffix_option_is_offered_only_where_accepted() {
    for (command, offered) in [
        ("validate", true),
        ("verify", true),
        ("export", true),
        ("bless", false),
        ("canon", false),
        ("schema", false),
        ("release-check", false),
    ] {
        let help = text(&run([command, "--help"]).stdout);
        assert_eq!(help.contains("--google-suffix-file"), offered, "{command} --help:\n{help}");
    }
    // Where it is not offered it is refused, bless with the reason.
    let output = run(["canon", "--google-suffix-file", "x"]);
    assert_eq!(output.status.code(), Some(2));
    let output = run(["bless", "--google-suffix-file", "x"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("--google-suffix-file is refused"), "{}", text(&output.stderr));
}

pub fn trials() -> Vec<Trial> {
    trials![
        help_names_the_settings_file_the_environment_and_exit_codes,
        the_suffix_option_is_offered_only_where_accepted
    ]
}
