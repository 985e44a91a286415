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

/// The commands that read no packet made elsewhere refuse the suffix option, each with the reason.
fn the_suffix_option_is_refused_where_it_means_nothing() {
    for command in [&["canon"][..], &["schema", "--check"], &["release-check"], &["init"]] {
        let output = run([&["--google-suffix-file", "x"][..], command].concat());
        assert_eq!(output.status.code(), Some(2), "{command:?}");
        assert!(text(&output.stderr).contains("this one does not take it"), "{command:?}: {}", text(&output.stderr));
    }
    let output = run(["bless", "--google-suffix-file", "x"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("--google-suffix-file is refused"), "{}", text(&output.stderr));
    let help = text(&run(["--help"]).stdout);
    assert!(help.contains("refused by the others"), "{help}");
}

pub fn trials() -> Vec<Trial> {
    trials![
        help_names_the_settings_file_the_environment_and_exit_codes,
        the_suffix_option_is_refused_where_it_means_nothing
    ]
}
