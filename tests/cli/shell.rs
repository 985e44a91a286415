//! `packetproof completions SHELL` and `packetproof man [COMMAND]`: generated from the
//! clap structures, so every command appears; unknown shells and commands are usage errors.

use crate::support::{self, exec};
use libtest_mimic::Trial;

const COMMANDS: [&str; 6] = ["verify", "validate", "release-check", "test", "wire", "completions"];

fn completions_name_every_command_in_each_shell() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = exec(support::bin().args(["completions", shell]));
        assert_eq!(out.code, 0, "{shell}: {}", out.describe());
        for command in COMMANDS {
            assert!(out.stdout.contains(command), "{shell}: {command} missing:\n{}", out.stdout);
        }
        assert!(out.stdout.contains("--partition"), "{shell}: test's options missing");
    }
    // The bash script is valid bash (where bash is installed).
    if let Ok(status) = std::process::Command::new("bash")
        .arg("-n")
        .arg("-c")
        .arg(exec(support::bin().args(["completions", "bash"])).stdout)
        .status()
    {
        assert!(status.success(), "bash -n refused the bash completion script");
    }
    let out = exec(support::bin().args(["completions", "tcsh"]));
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains("invalid value 'tcsh'"), "{}", out.stderr);
}

fn man_prints_the_main_page_and_each_command_page() {
    let out = exec(support::bin().arg("man"));
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(out.stdout.starts_with(".ie") && out.stdout.contains(".TH packetproof 1"), "{}", out.stdout);
    for command in COMMANDS {
        assert!(out.stdout.contains(&command.replace('-', "\\-")), "{command} missing from the main page");
    }
    let verify = exec(support::bin().args(["man", "verify"]));
    assert_eq!(verify.code, 0, "{}", verify.describe());
    assert!(
        verify.stdout.contains(".TH packetproof-verify 1") && verify.stdout.contains("trusted\\-key"),
        "{}",
        verify.stdout
    );
    let unknown = exec(support::bin().args(["man", "verfy"]));
    assert_eq!(unknown.code, 2, "{}", unknown.describe());
    assert!(unknown.stderr.contains("no command \"verfy\"") && unknown.stderr.contains("verify"), "{}", unknown.stderr);
}

pub fn trials() -> Vec<Trial> {
    trials![completions_name_every_command_in_each_shell, man_prints_the_main_page_and_each_command_page]
}
