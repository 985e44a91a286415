//! Branch truth on any packet, through the CLI: packets that are not
//! corpus cases (a copy in a temporary folder, a run directory) are held to their
//! own renderInput, and numbers are values. The per-rule negatives are fixtures
//! (`fixtures/neg-packet-*`) and unit tests beside each check.

use crate::support::{self, compiled_packet, Output};
use libtest_mimic::Trial;
use packetproof::judge::Step;
use packetproof::{canonical, digest};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[track_caller]
fn run(args: &[&str]) -> Output {
    support::exec(support::bin().args(args))
}

fn sealed(mut packet: Value) -> Value {
    digest::seal(packet.as_object_mut().unwrap());
    packet
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn verify_holds_any_packet_to_its_own_render_input() {
    let temp = tempfile::tempdir().unwrap();
    let mut packet = compiled_packet("google-staged-both-selected");
    packet["resolvedBranch"]["neighbours"] = json!("none");
    let file = write(temp.path(), "from-a-bug-report.json", &canonical::to_pretty(&sealed(packet)));
    let out = run(&["verify", s(&file)]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert_output_snapshot!("verify_a_packet_lying_about_its_branch", out, temp.path());
    // validate holds it to the same consistency rule.
    let out = run(&["validate", "--packet", s(&file)]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert_output_snapshot!("validate_a_packet_lying_about_its_branch", out, temp.path());
}

fn verify_re_renders_a_run_directorys_packet_from_its_own_evidence() {
    let temp = tempfile::tempdir().unwrap();
    let prepare = |name: &str, packet: &Value| -> PathBuf {
        let file = write(temp.path(), &format!("{name}.json"), &canonical::to_pretty(packet));
        let dir = temp.path().join(name);
        let out = run(&["prepare", "--packet", s(&file), "--out-dir", s(&dir)]);
        assert_eq!(out.code, 0, "{}", out.describe());
        dir
    };
    let intact = prepare("intact", &compiled_packet("openai-staged-succ-default"));
    let out = run(&["verify", s(&intact)]);
    assert!(!out.stdout.contains("packet::renders-from-input"), "{}", out.describe());

    // Evidence edited in renderInput after rendering, every hash recomputed: the
    // packet is consistent with itself, but its prompt is not its evidence rendered.
    // prepare refuses it, as verify would fail it.
    let mut packet = compiled_packet("openai-staged-succ-default");
    packet["renderInput"]["target"]["blockName"] = json!("Renamed after rendering");
    let file = write(temp.path(), "edited.json", &canonical::to_pretty(&sealed(packet)));
    let edited = temp.path().join("edited");
    let refused = run(&["prepare", "--packet", s(&file), "--out-dir", s(&edited)]);
    assert_eq!(refused.code, 1, "{}", refused.describe());
    assert_output_snapshot!("prepare_refuses_a_prompt_that_is_not_its_evidence", refused, temp.path());
    assert!(!edited.join("run-manifest.json").exists());
    // A suite that turns the check off explicitly prepares it (and says the check is off);
    // verify with the default rule book still finds the run's packet is not its evidence.
    let settings = write(
        temp.path(),
        "harness.toml",
        "[checks.skip]\n\"packet::renders-from-input\" = \"prompts are rendered by hand here\"\n",
    );
    let out = run(&["--config", s(&settings), "prepare", "--packet", s(&file), "--out-dir", s(&edited)]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert_output_snapshot!("prepare_with_renders_from_input_off", out, temp.path());
    let out = run(&["--config", s(&settings), "verify", "-v", s(&edited)]);
    // (Only its missing completion fails it: the run is prepared, not completed.)
    assert_eq!(out.code, 1, "{}", out.describe());
    assert_output_snapshot!("verify_with_renders_from_input_off", out, temp.path());
    let out = run(&["verify", s(&edited)]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert_output_snapshot!("verify_a_run_whose_prompt_is_not_its_evidence", out, temp.path());
}

fn numbers_are_compared_by_value_and_quoted_as_written() {
    let temp = tempfile::tempdir().unwrap();
    let text = canonical::to_pretty(&compiled_packet("openai-staged-succ-default"));
    assert!(text.contains("\"attempt\": 1,"));
    let same = write(temp.path(), "same.json", &text.replace("\"attempt\": 1,", "\"attempt\": 1e0,"));
    let out = run(&["validate", "--packet", s(&same)]);
    assert_eq!(out.code, 0, "`1e0` is the attempt 1:\n{}", out.describe());

    let mut packet = compiled_packet("openai-staged-succ-default");
    packet["attempt"] = json!(2.0);
    let text = canonical::to_pretty(&sealed(packet));
    // Written as JSON.stringify writes the double 2.0.
    assert!(text.contains("\"attempt\": 2,"));
    let second = write(temp.path(), "second.json", &text.replace("\"attempt\": 2,", "\"attempt\": 2e0,"));
    let out = run(&["validate", "--packet", s(&second)]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stdout.contains("[packet::contract] $.attempt: expected 1, found 2e0"), "{}", out.describe());
    let out = run(&["verify", s(&second)]);
    assert!(out.stdout.contains("$.attempt: expected 1, found 2e0"), "{}", out.describe());
}

fn a_run_file_may_spell_a_number_another_way() {
    let temp = tempfile::tempdir().unwrap();
    let file = support::packet_file(temp.path(), "openai-staged-succ-default");
    let dir = temp.path().join("run");
    assert_eq!(run(&["prepare", "--packet", s(&file), "--out-dir", s(&dir)]).code, 0);
    let manifest = dir.join("run-manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("\"schemaVersion\": 2,"));
    std::fs::write(&manifest, text.replace("\"schemaVersion\": 2,", "\"schemaVersion\": 2e0,")).unwrap();
    let out = run(&["verify", s(&dir)]);
    assert!(!out.stdout.contains("schemaVersion"), "2e0 is the manifest format 2:\n{}", out.describe());
    std::fs::write(&manifest, text.replace("\"schemaVersion\": 2,", "\"schemaVersion\": 3e0,")).unwrap();
    let out = run(&["verify", s(&dir)]);
    assert!(out.stdout.contains("$.schemaVersion: expected 2 (the manifest format), found 3e0"), "{}", out.describe());
}

fn interop_packets_are_noted_as_made_from_other_templates() {
    let packet = support::interop_dir().join("runtime-packet.anthropic.json");
    let out = run(&["--asset-example-prompts", "warn", "verify", "-v", s(&packet)]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert_output_snapshot!("verify_an_interop_packet", out);
}

/// The lies, on a packet of this project's: each is found by
/// packet::branch-consistency alone.
fn branch_lies_fail_on_a_project_packet() {
    branch_lies_fail_alone(vec![("project", compiled_packet("google-staged-both-selected"))]);
}

/// The same lies on a packet of the reference exporter's shape.
fn branch_lies_fail_on_a_reference_packet() {
    let bytes = std::fs::read(support::interop_dir().join("runtime-packet.anthropic.json")).unwrap();
    branch_lies_fail_alone(vec![("reference", serde_json::from_slice(&bytes).unwrap())]);
}

#[track_caller]
fn branch_lies_fail_alone(packets: Vec<(&str, Value)>) {
    type Lie = (&'static str, fn(&mut Value), &'static str);
    let lies: [Lie; 5] = [
        (
            "neighbours none beside both summaries",
            |p| p["resolvedBranch"]["neighbours"] = json!("none"),
            "$.resolvedBranch.neighbours",
        ),
        (
            "no theme beside a theme",
            |p| p["resolvedBranch"]["hasTargetTheme"] = json!(false),
            "$.resolvedBranch.hasTargetTheme",
        ),
        (
            "no instruction beside one",
            |p| p["resolvedBranch"]["operatorInstructionPresent"] = json!(false),
            "$.resolvedBranch.operatorInstructionPresent",
        ),
        (
            "no evidence items under selected-only",
            |p| p["renderInput"]["evidence"]["items"] = json!([]),
            "$.renderInput.evidence.items",
        ),
        ("an extra renderInput key", |p| p["renderInput"]["debug"] = json!({}), "$.renderInput.debug"),
    ];
    let config = packetproof::Config::load(Path::new(ROOT), None).unwrap();
    let config = packetproof::Invocation::new(
        config,
        packetproof::CommandPolicy {
            asset_example_prompts: Some(packetproof::config::Policy::Warn),
            ..Default::default()
        },
    );
    for (shape, packet) in packets {
        let judged = |packet: &Value| {
            let outcome = packetproof::judge::packet_file(Path::new("p.json"), packet, &config, Step::Validate);
            // packet::renders-from-input catches a lie too; branch-consistency must catch it alone.
            outcome.findings.into_iter().filter(|f| f.check.name() != "packet::renders-from-input").collect::<Vec<_>>()
        };
        assert_eq!(judged(&packet), Vec::new(), "{shape} packet as given");
        for (lie, edit, at) in lies {
            let mut lying = packet.clone();
            edit(&mut lying);
            let findings = judged(&sealed(lying));
            let found: Vec<(&str, String)> = findings.iter().map(|f| (f.check.name(), f.path.to_string())).collect();
            assert_eq!(found, [("packet::branch-consistency", at.to_string())], "{shape}: {lie}: {findings:#?}");
        }
    }
}

pub fn trials() -> Vec<Trial> {
    let mut trials = trials![
        verify_holds_any_packet_to_its_own_render_input,
        verify_re_renders_a_run_directorys_packet_from_its_own_evidence,
        numbers_are_compared_by_value_and_quoted_as_written,
        a_run_file_may_spell_a_number_another_way,
        branch_lies_fail_on_a_project_packet,
    ];
    trials.extend(interop_trials![
        interop_packets_are_noted_as_made_from_other_templates,
        branch_lies_fail_on_a_reference_packet
    ]);
    trials
}
