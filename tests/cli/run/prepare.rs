//! `packetproof prepare`: the run files, idempotence, refusals.

use super::*;
use libtest_mimic::Trial;
// ---------------------------------------------------------------- prepare

fn prepare_writes_the_run_files_and_holds_back_the_google_schema() {
    let project = Project::lifecycle();
    let google = project.root().join("runs/g");
    let packet = project.packet("google", "a");
    let out = project.run(&["prepare", "--packet", s(&packet), "--out-dir", s(&google)]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert_output_snapshot!("prepare_google", out, project.root());
    let anthropic = project.prepared("anthropic", "a");
    let request = read_json(&google.join("agent-request.json"));
    assert!(request.get("outputSchema").is_none(), "Google agent requests never carry the schema");
    assert!(request.get("renderInput").is_none() && request.get("resolvedBranch").is_none());
    assert!(read_json(&anthropic.join("agent-request.json")).get("outputSchema").is_some());
    let snapshot_bytes = std::fs::read(project.root().join("references/block-screen-output-schema.json")).unwrap();
    assert_eq!(std::fs::read(google.join("validation-schema.json")).unwrap(), snapshot_bytes);
    let manifest = read_json(&google.join("run-manifest.json"));
    assert_eq!(manifest["validationSchemaChecksum"], json!(digest::sha256(&snapshot_bytes)));
    assert_eq!(manifest["status"], json!("prepared-awaiting-agent"));
}

fn prepare_is_a_no_op_when_identical_and_refuses_a_different_manifest() {
    let project = Project::lifecycle();
    let dir = project.prepared("google", "g");
    let before = std::fs::read(dir.join("run-manifest.json")).unwrap();
    let again = project.run(&["prepare", "--packet", s(&project.packet("google", "a")), "--out-dir", s(&dir)]);
    assert_eq!(again.code, 0, "{}", again.describe());
    assert_output_snapshot!("prepare_again", again, project.root());
    let other = project.run(&["prepare", "--packet", s(&project.packet("google", "b")), "--out-dir", s(&dir)]);
    assert_eq!(other.code, 2, "{}", other.describe());
    assert_output_snapshot!("prepare_refuses_another_manifest", other, project.root());
    assert_eq!(std::fs::read(dir.join("run-manifest.json")).unwrap(), before);
}

fn an_interrupted_prepare_is_finished_by_preparing_again() {
    // prepare writes the manifest last, so a run killed mid-prepare has no manifest
    // (it is not "prepared"); preparing again writes exactly what is missing.
    let project = Project::lifecycle();
    let dir = project.prepared("anthropic", "a");
    let request = std::fs::read(dir.join("agent-request.json")).unwrap();
    std::fs::remove_file(dir.join("run-manifest.json")).unwrap();
    std::fs::remove_file(dir.join("eval-context.json")).unwrap();
    let out = project.run(&["prepare", "--packet", s(&project.packet("anthropic", "a")), "--out-dir", s(&dir)]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert_output_snapshot!("prepare_finishes_an_interrupted_run", out, project.root());
    assert_eq!(std::fs::read(dir.join("agent-request.json")).unwrap(), request);
}

fn prepare_refuses_an_invalid_packet() {
    let project = Project::lifecycle();
    let packet = project.packet("anthropic", "a");
    let mut value = read_json(&packet);
    value["systemPrompt"] = json!("You adapt one library block, and more.");
    write_json(&packet, &value);
    let dir = project.root().join("runs/x");
    let out = project.run(&["prepare", "--packet", s(&packet), "--out-dir", s(&dir)]);
    assert_eq!(out.code, 1, "a failed check is exit 1: {}", out.describe());
    assert_output_snapshot!("prepare_refuses_an_invalid_packet", out, project.root());
    assert!(!dir.join("run-manifest.json").exists());
}

/// A packet made elsewhere, prepared in a folder with no harness.toml: the built-in
/// snapshot is not its schema, so prepare refuses, until `--schema` pins the one it carries.
fn prepare_pins_the_schema_named_by_schema() {
    let project = Project::lifecycle();
    let packet = project.packet("anthropic", "a");
    let elsewhere = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| exec(support::bin().current_dir(elsewhere.path()).args(args));
    let out_dir = elsewhere.path().join("run");
    let refused = run(&["prepare", "--packet", s(&packet), "--out-dir", s(&out_dir)]);
    assert_eq!(refused.code, 1, "{}", refused.describe());
    assert!(
        refused.stderr.contains("$.outputSchema: differs from the schema snapshot <built-in"),
        "{}",
        refused.stderr
    );
    let snapshot = project.root().join("references/block-screen-output-schema.json");
    let pinned = run(&["prepare", "--packet", s(&packet), "--out-dir", s(&out_dir), "--schema", s(&snapshot)]);
    assert_eq!(pinned.code, 0, "{}", pinned.describe());
    assert_eq!(std::fs::read(out_dir.join("validation-schema.json")).unwrap(), std::fs::read(&snapshot).unwrap());
    // And a pinned schema the packet does not carry is refused, naming it.
    let other = elsewhere.path().join("other.json");
    let mut changed = lifecycle::snapshot();
    changed["description"] = json!("another schema");
    write_json(&other, &changed);
    let out_dir = elsewhere.path().join("run2");
    let wrong = run(&["prepare", "--packet", s(&packet), "--out-dir", s(&out_dir), "--schema", s(&other)]);
    assert_eq!(wrong.code, 1, "{}", wrong.describe());
    assert!(
        wrong.stderr.contains(&format!("differs from the schema snapshot {}", other.display())),
        "{}",
        wrong.stderr
    );
}

/// A formatter that writes `6.0` for `6` changes a schema's bytes, not its values:
/// prepare holds the packet to the snapshot's values (as verify does), and where the
/// bytes are what counts (the digest the manifest pins), the refusal says that only
/// the bytes differ and how to restore them.
fn numbers_are_values_in_prepare_and_bytes_where_a_digest_pins_them() {
    let project = Project::lifecycle();
    let snapshot_file = project.root().join("references/block-screen-output-schema.json");
    let mut snapshot = lifecycle::snapshot();
    snapshot["schema"]["maxProperties"] = json!(6);
    let spelled = canonical::to_pretty(&snapshot).replace("\"maxProperties\": 6", "\"maxProperties\": 6.0");
    assert!(spelled.contains("6.0"));
    std::fs::write(&snapshot_file, &spelled).unwrap();
    let packet = project.packet("anthropic", "a");
    let mut value = read_json(&packet);
    value["outputSchema"] = snapshot;
    digest::seal(value.as_object_mut().unwrap());
    write_json(&packet, &value);
    let dir = project.root().join("runs/spelled");
    let out = project.run(&["prepare", "--packet", s(&packet), "--out-dir", s(&dir)]);
    assert_eq!(out.code, 0, "{}", out.describe());
    // Prepared, not completed: verify's one finding is the missing receipt.
    let verified = project.run(&["verify", s(&dir)]);
    assert!(verified.stdout.contains("1 checked: 0 hold, 1 failed"), "{}", verified.describe());
    assert!(verified.stdout.contains("[run::completion] completion.json: missing"), "{}", verified.describe());
    // The held-back copy re-saved with `6`: the values are the same, the pinned bytes are not.
    let resaved = canonical::to_pretty(&read_json(&dir.join("validation-schema.json")));
    std::fs::write(dir.join("validation-schema.json"), resaved).unwrap();
    let verified = project.run(&["verify", s(&dir)]);
    assert!(verified.stdout.contains("[run::snapshot-parity]"), "{}", verified.describe());
    assert!(verified.stdout.contains("only its bytes differ"), "{}", verified.describe());
    assert!(verified.stdout.contains("the manifest pins the bytes prepare wrote"), "{}", verified.describe());
}

pub fn trials() -> Vec<Trial> {
    let trials = trials![
        prepare_writes_the_run_files_and_holds_back_the_google_schema,
        prepare_is_a_no_op_when_identical_and_refuses_a_different_manifest,
        an_interrupted_prepare_is_finished_by_preparing_again,
        prepare_refuses_an_invalid_packet,
        prepare_pins_the_schema_named_by_schema,
        numbers_are_values_in_prepare_and_bytes_where_a_digest_pins_them,
    ];
    trials
}
