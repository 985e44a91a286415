//! The Node-made samples in `../shared/interop` (read only; copied when a test writes).

use super::*;
use libtest_mimic::Trial;
fn interop_verify_passes_on_the_node_samples() {
    let dir = support::interop_dir();
    // The Node samples themselves: node-eval/ and node-compile/ beside them hold deliberately
    // broken inputs (the reference's verdict corpora), which have tests of their own.
    let paths = ["run-anthropic", "run-google", "runtime-packet.anthropic.json", "runtime-packet.google.json"]
        .map(|name| dir.join(name));
    let out = exec(interop_cmd("verify").args(["-v"]).args(&paths));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("run-google: ok") && out.stdout.contains("run-anthropic: ok"), "{}", out.stdout);
}

fn interop_evaluation_matches_node_field_for_field() {
    let interop = support::interop_dir();
    let temp = tempfile::tempdir().unwrap();
    for run in ["run-anthropic", "run-google"] {
        let report = temp.path().join(format!("{run}.json"));
        let out = exec(interop_cmd("evaluate").args(["--run-dir", s(&interop.join(run)), "--report", s(&report)]));
        assert_eq!(out.code, 0, "{run}: {}{}", out.stdout, out.stderr);
        let mut ours = read_json(&report);
        let raw = std::fs::read(interop.join(run).join("raw-output.json")).unwrap();
        assert_eq!(ours.as_object_mut().unwrap().remove("rawOutputChecksum"), Some(json!(digest::sha256(&raw))));
        let node = read_json(&interop.join(run).join("evaluation.json"));
        pretty_assertions::assert_eq!(canonical::to_pretty(&ours), canonical::to_pretty(&node), "{run}");
    }
}

fn interop_prepare_reproduces_the_node_run_files() {
    let interop = support::interop_dir();
    let root = tempfile::tempdir().unwrap();
    std::fs::copy(support::root().join("harness.toml"), root.path().join("harness.toml")).unwrap();
    std::fs::create_dir_all(root.path().join("references")).unwrap();
    std::fs::copy(
        support::root().join("references/gemini-json-suffix.txt"),
        root.path().join("references/gemini-json-suffix.txt"),
    )
    .unwrap();
    std::fs::copy(
        interop.join("block-screen-output-schema.json"),
        root.path().join("references/block-screen-output-schema.json"),
    )
    .unwrap();
    for provider in ["anthropic", "google"] {
        let out_dir = root.path().join(format!("run-{provider}"));
        let packet = interop.join(format!("runtime-packet.{provider}.json"));
        let out = exec(interop_cmd("prepare").env("PACKETPROOF_ROOT", root.path()).args([
            "--packet",
            s(&packet),
            "--out-dir",
            s(&out_dir),
        ]));
        assert_eq!(out.code, 0, "{provider}: {}{}", out.stdout, out.stderr);
        for file in ["agent-request.json", "eval-context.json", "validation-schema.json", "run-manifest.json"] {
            let ours = std::fs::read(out_dir.join(file)).unwrap();
            let node = std::fs::read(interop.join(format!("run-{provider}")).join(file)).unwrap();
            assert!(ours == node, "{provider}/{file} differs from the Node run directory");
        }
    }
}

fn interop_complete_on_a_copy_matches_node_and_verifies() {
    let interop = support::interop_dir();
    let temp = tempfile::tempdir().unwrap();
    for (run, scenario, task) in
        [("run-anthropic", "interop-anthropic", "task-anthropic-1"), ("run-google", "interop-google", "task-google-1")]
    {
        let dir = temp.path().join(run);
        copy_dir(&interop.join(run), &dir, &["completion.json"]);
        let complete = |cmd: &mut Command| {
            exec(
                cmd.args(["--run-dir", s(&dir), "--scenario", scenario, "--run-id", "run-1", "--agent-task", task])
                    .args(["--note", "Topology matched the resolved branch."]),
            )
        };
        // Node's evaluation does not record which raw output it checked.
        let out = complete(&mut interop_cmd("complete"));
        assert_eq!(out.code, 1, "{}", out.stdout);
        assert!(out.stderr.contains("$.rawOutputChecksum: missing"), "{}", out.stderr);
        let out = exec(interop_cmd("evaluate").args(["--run-dir", s(&dir)]));
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        let out = complete(&mut interop_cmd("complete"));
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        let mut ours = read_json(&dir.join("completion.json"));
        let mut node = read_json(&interop.join(run).join("completion.json"));
        for receipt in [&mut ours, &mut node] {
            let map = receipt.as_object_mut().unwrap();
            map.remove("completedAt");
            // Our evaluation.json has one more field, so its checksum differs by design.
            map["evaluation"].as_object_mut().unwrap().remove("checksum");
        }
        pretty_assertions::assert_eq!(canonical::to_pretty(&ours), canonical::to_pretty(&node), "{run}");
    }
    let out = exec(interop_cmd("verify").args([s(temp.path())]));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

fn interop_evaluate_prints_the_evaluation_document_with_format_json() {
    let interop = support::interop_dir();
    let temp = tempfile::tempdir().unwrap();
    let run = temp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    for entry in std::fs::read_dir(interop.join("run-anthropic")).unwrap() {
        let entry = entry.unwrap();
        if !["completion.json", "evaluation.json"].contains(&entry.file_name().to_str().unwrap()) {
            std::fs::copy(entry.path(), run.join(entry.file_name())).unwrap();
        }
    }
    let args = ["--asset-example-prompts", "warn", "evaluate", "--format", "json", "--run-dir"];
    let out = support::bin().args(args).arg(&run).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed, read_json(&run.join("evaluation.json")));
    assert_eq!(printed["ok"], json!(true));
}

pub fn trials() -> Vec<Trial> {
    let mut trials = trials![];
    trials.extend(interop_trials![
        interop_verify_passes_on_the_node_samples,
        interop_evaluation_matches_node_field_for_field,
        interop_prepare_reproduces_the_node_run_files,
        interop_complete_on_a_copy_matches_node_and_verifies,
        interop_evaluate_prints_the_evaluation_document_with_format_json,
    ]);
    trials
}
