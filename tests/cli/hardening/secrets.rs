//! Secrets and quoted text: a file's text is quoted
//! only as a bounded, escaped excerpt and never when it looks like a key; a
//! private key others can read is refused.

use super::*;
use libtest_mimic::Trial;
use std::os::unix::fs::PermissionsExt;

pub fn trials() -> Vec<Trial> {
    trials![
        a_private_key_given_as_a_text_file_is_never_printed,
        a_settings_resource_is_quoted_only_as_a_bounded_excerpt,
        a_private_key_others_can_read_is_refused,
        a_key_given_as_the_settings_file_is_never_quoted
    ]
}

fn key_copy(root: &Path, mode: u32) -> PathBuf {
    let key = root.join("key.pem");
    std::fs::copy(support::root().join("tests/keys/test-ed25519.pem"), &key).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
    key
}

fn a_private_key_given_as_a_text_file_is_never_printed() {
    let project = Project::lifecycle().under_timeout();
    let key = key_copy(project.root(), 0o600);
    let body = std::fs::read_to_string(&key).unwrap();
    let secret = body.lines().nth(1).unwrap();
    let packet = project.packet("google", "a");
    let out = project.run(&["--google-suffix-file", s(&key), "validate", "--packet", s(&packet)]);
    out.clean();
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(!out.describe().contains(secret), "the key was printed: {}", out.describe());
    assert_output_snapshot!("a_key_as_the_google_suffix", out, project.root());
}

fn a_settings_resource_is_quoted_only_as_a_bounded_excerpt() {
    let project = Project::lifecycle().under_timeout();
    let secret = project.root().join("secret.txt");
    std::fs::write(&secret, format!("root:x:0:0\n{}\nSECRET-LINE-3\n", "y".repeat(300))).unwrap();
    let settings = std::fs::read_to_string(project.root().join("harness.toml")).unwrap();
    let line = "google_suffix = \"references/gemini-json-suffix.txt\"";
    assert!(settings.contains(line), "harness.toml names the suffix");
    let settings = settings.replace(line, &format!("google_suffix = {:?}", s(&secret)));
    std::fs::write(project.root().join("harness.toml"), settings).unwrap();
    let packet = project.packet("google", "a");
    let out = project.run(&["validate", "--packet", s(&packet)]);
    out.clean();
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(!out.describe().contains("SECRET-LINE-3"), "quoted past the excerpt: {}", out.describe());
    assert_output_snapshot!("a_settings_resource_quoted_as_an_excerpt", out, project.root());
}

fn a_private_key_others_can_read_is_refused() {
    let project = Project::lifecycle().under_timeout();
    let run = project.completed("run", "T1");
    for mode in [0o644, 0o640, 0o604] {
        let key = key_copy(project.root(), mode);
        let out = project.run(&["attest", s(&run), "--key", s(&key)]);
        out.clean();
        assert_eq!(out.code, 2, "mode {mode:o}: {}", out.describe());
        assert_output_snapshot!(format!("a_key_of_mode_{mode:o}"), out, project.root());
        assert!(!run.join("attestation.json").exists(), "signed with mode {mode:o}");
    }
    let key = key_copy(project.root(), 0o600);
    let out = project.run(&["attest", s(&run), "--key", s(&key)]);
    assert_eq!(out.code, 0, "{}", out.describe());
}

/// `--config key.pem`: the TOML error would quote the line it failed on.
fn a_key_given_as_the_settings_file_is_never_quoted() {
    let project = Project::lifecycle().under_timeout();
    let key = project.root().join("settings.pem");
    std::fs::write(&key, "a = 1\nMC4CAQAwBQYDK2VwBCIEISECRET\n-----END PRIVATE KEY-----\n").unwrap();
    let packet = project.packet("anthropic", "a");
    let out = project.run(&["--config", s(&key), "validate", "--packet", s(&packet)]);
    out.clean();
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(!out.describe().contains("SECRET"), "the key was quoted: {}", out.describe());
    assert_output_snapshot!("a_key_as_the_settings_file", out, project.root());
    // Any other settings file is quoted only as bounded lines.
    std::fs::write(&key, format!("a = {}\n", "x".repeat(5000))).unwrap();
    let out = project.run(&["--config", s(&key), "validate", "--packet", s(&packet)]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.len() < 2000, "{}", out.describe());
    assert_output_snapshot!("a_long_settings_line_quoted_as_an_excerpt", out, project.root());
}
