//! `packetproof complete`: the receipt and every refusal.

use super::*;
use libtest_mimic::Trial;
// ---------------------------------------------------------------- complete

fn complete_writes_a_receipt_that_verify_accepts() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    let out = project.complete(&dir, "task-1");
    assert_eq!(out.code, 0, "{}", out.describe());
    assert_output_snapshot!("complete", out, project.root());
    let receipt = read_json(&dir.join("completion.json"));
    let keys: Vec<&str> = receipt.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "schemaVersion",
            "kind",
            "status",
            "scenario",
            "runId",
            "agentTask",
            "completedAt",
            "inputBoundary",
            "exactInputHash",
            "checksum",
            "validationSchemaChecksum",
            "rawOutput",
            "evaluation",
            "evaluatorNotes",
            "proofClass",
            "replacesRuntimeTaskDebug"
        ]
    );
    let evaluation = std::fs::read(dir.join("evaluation.json")).unwrap();
    assert_eq!(receipt["evaluation"]["checksum"], json!(digest::sha256(&evaluation)));
    let verify = project.run(&["verify", s(&dir)]);
    assert_eq!(verify.code, 0, "{}", verify.stdout);
}

fn complete_refuses_a_missing_evaluation() {
    let project = Project::lifecycle();
    let dir = project.answered("anthropic", "a", &good_output());
    let out = project.complete(&dir, "task-1");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("evaluation.json: refused: missing"), "{}", out.stderr);
}

fn complete_refuses_a_failing_evaluation() {
    let project = Project::lifecycle();
    let mut output = good_output();
    block(&mut output)["screens"] = json!([]);
    let dir = project.answered("anthropic", "a", &output);
    assert_eq!(project.evaluate(&dir).0, 1);
    let out = project.complete(&dir, "task-1");
    assert_eq!(out.code, 1, "a failed check is exit 1: {}", out.describe());
    assert_output_snapshot!("complete_refuses_a_failing_evaluation", out, project.root());
    assert!(!dir.join("completion.json").exists());
}

fn complete_refuses_raw_output_edited_after_evaluation() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    let mut edited = good_output();
    block(&mut edited)["description"] = json!("Edited after the evaluation.");
    write_json(&dir.join("raw-output.json"), &edited);
    let out = project.complete(&dir, "task-1");
    assert_eq!(out.code, 1, "a failed check is exit 1");
    assert!(out.stderr.contains("$.rawOutputChecksum: the evaluation was made from raw output"), "{}", out.stderr);
}

fn complete_refuses_a_manifest_that_is_not_the_prepared_one() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    let mut manifest = read_json(&dir.join("run-manifest.json"));
    manifest["status"] = json!("completed");
    write_json(&dir.join("run-manifest.json"), &manifest);
    let out = project.complete(&dir, "task-1");
    assert_eq!(out.code, 1, "a failed check is exit 1: {}", out.describe());
    assert_output_snapshot!("complete_refuses_another_manifest", out, project.root());
}

fn complete_refuses_an_agent_task_used_by_a_sibling_run() {
    let project = Project::lifecycle();
    let first = project.answered("google", "one", &good_output());
    let second = project.answered("google", "two", &good_output());
    for dir in [&first, &second] {
        assert_eq!(project.evaluate(dir).0, 0);
    }
    assert_eq!(project.complete(&first, "task-shared").code, 0);
    let out = project.complete(&second, "task-shared");
    assert_eq!(out.code, 1, "a failed check is exit 1: {}", out.describe());
    assert_output_snapshot!("complete_refuses_a_used_agent_task", out, project.root());
    assert_eq!(project.complete(&second, "task-fresh").code, 0);
}

fn complete_refuses_blank_notes() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    let out = project.run(&[
        "complete",
        "--run-dir",
        s(&dir),
        "--scenario",
        "x",
        "--run-id",
        "r",
        "--agent-task",
        "t",
        "--note",
        "  ",
    ]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("none may be blank"), "{}", out.stderr);
    let out = project.run(&["complete", "--run-dir", s(&dir), "--scenario", "x", "--run-id", "r", "--agent-task", "t"]);
    assert_eq!(out.code, 2, "--note is required");
}

fn complete_never_overwrites_a_receipt() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    assert_eq!(project.complete(&dir, "task-1").code, 0);
    let before = std::fs::read(dir.join("completion.json")).unwrap();
    let out = project.complete(&dir, "task-2");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("completion.json: refused: already exists"), "{}", out.stderr);
    assert_eq!(std::fs::read(dir.join("completion.json")).unwrap(), before);
}

/// A fenced answer passes the evaluation (as the reference's evaluator), but is not
/// completed (as the reference's completion): the receipt binds bare JSON only.
fn complete_refuses_a_fenced_answer_the_evaluation_accepted() {
    let project = Project::lifecycle();
    let dir = project.prepared("google", "g");
    std::fs::write(dir.join("raw-output.json"), format!("```json\n{}\n```\n", good_output())).unwrap();
    assert_eq!(project.evaluate(&dir).0, 0);
    let out = project.complete(&dir, "task-1");
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(out.stderr.contains("raw-output.json: is a fenced block, not bare JSON"), "{}", out.stderr);
    assert!(!dir.join("completion.json").exists());
}

pub fn trials() -> Vec<Trial> {
    let trials = trials![
        complete_refuses_a_fenced_answer_the_evaluation_accepted,
        complete_writes_a_receipt_that_verify_accepts,
        complete_refuses_a_missing_evaluation,
        complete_refuses_a_failing_evaluation,
        complete_refuses_raw_output_edited_after_evaluation,
        complete_refuses_a_manifest_that_is_not_the_prepared_one,
        complete_refuses_an_agent_task_used_by_a_sibling_run,
        complete_refuses_blank_notes,
        complete_never_overwrites_a_receipt,
    ];
    trials
}
