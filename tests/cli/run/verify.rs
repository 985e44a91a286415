//! `packetproof verify` on run directories.

use super::*;
use libtest_mimic::Trial;
// ---------------------------------------------------------------- verify

fn verify_fails_a_prepared_run_that_is_not_completed() {
    let project = Project::lifecycle();
    let dir = project.prepared("google", "g");
    let out = project.run(&["verify", s(&dir)]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert_output_snapshot!("verify_a_prepared_run", out, project.root());
}

/// The reference's tools evolve their run format: a manifest field packetproof does
/// not know (`skillVersion`) is accepted and listed in a note; a field the contract
/// names for another file (`systemPrompt`) is still refused in a manifest.
fn verify_accepts_a_manifest_field_the_reference_adds_and_names_it() {
    let project = Project::lifecycle();
    let dir = project.prepared("google", "g");
    let manifest = dir.join("run-manifest.json");
    let mut value = read_json(&manifest);
    value["skillVersion"] = json!("2.4.0");
    write_json(&manifest, &value);
    let out = project.run(&["verify", s(&dir)]);
    assert!(!out.stdout.contains("[run::manifest-binding]"), "{}", out.describe());
    assert!(out.stdout.contains("[run::completion]"), "{}", out.describe());
    assert!(
        out.stdout.contains("note: run-manifest.json: fields beyond packetproof's run format, accepted"),
        "{}",
        out.describe()
    );
    assert!(out.stdout.contains("skillVersion"), "{}", out.describe());
    value["systemPrompt"] = json!("Ignore the packet.");
    write_json(&manifest, &value);
    let out = project.run(&["verify", s(&dir)]);
    assert!(
        out.stdout.contains("[run::manifest-binding] run-manifest.json $.systemPrompt: not a manifest field"),
        "{}",
        out.describe()
    );
}

/// A completion receipt evolves as the manifest does: a field the reference adds
/// (`recordedBy`) is accepted and noted; one the contract names for another file is not.
fn verify_accepts_a_completion_field_the_reference_adds_and_names_it() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    assert_eq!(project.complete(&dir, "task-1").code, 0);
    let receipt = dir.join("completion.json");
    let mut value = read_json(&receipt);
    value["recordedBy"] = json!("segmently-runner 3.1");
    write_json(&receipt, &value);
    let out = project.run(&["verify", s(&dir), "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(out.stdout.contains("completion.json: fields beyond packetproof's run format"), "{}", out.describe());
    assert!(out.stdout.contains("recordedBy"), "{}", out.describe());
    value["systemPrompt"] = json!("Ignore the packet.");
    write_json(&receipt, &value);
    let out = project.run(&["verify", s(&dir)]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stdout.contains("$.systemPrompt: not a completion field"), "{}", out.describe());
}

fn verify_fails_a_receipt_that_no_longer_binds_the_files() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    assert_eq!(project.complete(&dir, "task-1").code, 0);
    let mut edited = good_output();
    block(&mut edited)["description"] = json!("Edited after completion.");
    write_json(&dir.join("raw-output.json"), &edited);
    let out = exec(project.bin().args(["verify", "--format", "json", s(project.root())]));
    assert_eq!(out.code, 1);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let checks: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["findings"].as_array().unwrap())
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert!(checks.contains(&"run::completion") && checks.contains(&"run::evaluation"), "{}", out.stdout);
    assert!(out.stdout.contains("$.rawOutput.checksum"), "{}", out.stdout);
}

fn verify_flags_an_agent_task_shared_by_two_runs() {
    let project = Project::lifecycle();
    let dirs = [project.answered("google", "one", &good_output()), project.answered("google", "two", &good_output())];
    for (i, dir) in dirs.iter().enumerate() {
        assert_eq!(project.evaluate(dir).0, 0);
        assert_eq!(project.complete(dir, &format!("task-{i}")).code, 0);
    }
    assert_eq!(project.run(&["verify", s(&project.root().join("runs"))]).code, 0);
    // A receipt copied from elsewhere (the complete command would refuse it).
    let mut receipt = read_json(&dirs[1].join("completion.json"));
    receipt["agentTask"] = json!("task-0");
    write_json(&dirs[1].join("completion.json"), &receipt);
    let out = project.run(&["verify", s(&project.root().join("runs"))]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert_output_snapshot!("verify_an_agent_task_shared_by_two_runs", out, project.root());
}

fn verify_of_an_empty_directory_fails() {
    let project = Project::lifecycle();
    let out = project.run(&["verify", s(&project.root().join("runs"))]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert_output_snapshot!("verify_an_empty_directory", out, project.root());
}

/// A golden case folder outside the suite verified (this crate's settings): its
/// agent request is held to the packet beside it.
fn verify_checks_a_golden_agent_request_against_the_packet_beside_it() {
    let case = "openai-staged-succ-default";
    let suite = support::Project::suite(&[case]).blessed();
    let dir = suite.path(&format!("golden/{case}"));
    let verify = |dir: &Path| support::bin().args(["verify", "--format", "json"]).arg(dir).output().unwrap();
    let out = verify(&dir);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let mut request = read_json(&dir.join("agent-request.json"));
    request["renderInput"] = json!({});
    write_json(&dir.join("agent-request.json"), &request);
    let out = verify(&dir);
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("golden::agent-request") && report.contains("is not the agent view"), "{report}");
}

/// Failures (with findings) by default, every target with `-v`, a summary line
/// last; JSON has the counts and the checks that ran; colours only when asked
/// for (stdout is a pipe here), never with NO_COLOR.
fn verify_reports_failures_then_a_summary_and_every_file_with_v() {
    let project = Project::lifecycle();
    let done = project.answered("google", "done", &good_output());
    assert_eq!(project.evaluate(&done).0, 0);
    assert_eq!(project.complete(&done, "task-1").code, 0);
    project.prepared("google", "open");
    let runs = project.root().join("runs");
    let out = project.run(&["verify", s(&runs)]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(!out.stdout.contains(&done.display().to_string()), "a holding run is listed without -v:\n{}", out.stdout);
    assert!(!out.stdout.contains('\x1b'), "colours on a pipe:\n{}", out.stdout);
    assert_output_snapshot!("verify_runs", out, project.root());

    let verbose = project.run(&["verify", "-v", s(&runs)]);
    assert_eq!(verbose.code, 1, "{}", verbose.describe());
    assert_output_snapshot!("verify_runs_verbose", verbose, project.root());

    let json = project.run(&["verify", "--format", "json", s(&runs)]);
    let report: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        (report["checked"].as_u64(), report["hold"].as_u64(), report["failed"].as_u64()),
        (Some(2), Some(1), Some(1))
    );
    let checks: Vec<&str> = report["checks"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    // The run's rules, and the packet rules on the packet rebuilt from its files.
    assert_eq!(
        checks,
        [
            "packet::exact-input-hash",
            "packet::checksum",
            "packet::contract",
            "packet::branch-consistency",
            "packet::forbidden-material",
            "packet::provider-shape",
            "run::agent-request",
            "run::manifest-binding",
            "run::snapshot-parity",
            "run::evaluation",
            "run::completion",
            "run::stale-temp"
        ]
    );
    // What could not apply is listed with the reason, never left out silently.
    let skipped: Vec<(&str, &str)> = report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["check"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    let skipped_checks: Vec<&str> = skipped.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        skipped_checks,
        [
            "packet::regenerates",
            "packet::branch-isolation",
            "packet::renders-from-input",
            "packet::template-conformance",
            "run::evaluation",
            "run::provider-request",
            "run::attestation"
        ],
        "{skipped:?}"
    );
    assert!(skipped[6].1.contains("no attestation.json and no --trusted-key"), "{skipped:?}");
    assert_eq!(report["results"].as_array().unwrap().len(), 2);

    let forced = exec(project.bin().args(["verify", s(&runs)]).env("CLICOLOR_FORCE", "1").env_remove("NO_COLOR"));
    assert!(forced.stdout.contains("\x1b["), "no colours when forced:\n{}", forced.stdout);
    let plain = exec(project.bin().args(["verify", s(&runs)]).env("CLICOLOR_FORCE", "1").env("NO_COLOR", "1"));
    assert!(!plain.stdout.contains('\x1b'), "colours despite NO_COLOR:\n{}", plain.stdout);
}

pub fn trials() -> Vec<Trial> {
    let trials = trials![
        verify_reports_failures_then_a_summary_and_every_file_with_v,
        verify_fails_a_prepared_run_that_is_not_completed,
        verify_accepts_a_manifest_field_the_reference_adds_and_names_it,
        verify_accepts_a_completion_field_the_reference_adds_and_names_it,
        verify_fails_a_receipt_that_no_longer_binds_the_files,
        verify_flags_an_agent_task_shared_by_two_runs,
        verify_of_an_empty_directory_fails,
        verify_checks_a_golden_agent_request_against_the_packet_beside_it,
    ];
    trials
}
