//! Writes that escape or destroy, and races between steps: directory-relative
//! writes, ownership of replaced files, and the run-directory and runs-root locks.

use super::*;
use libtest_mimic::Trial;

pub fn trials() -> Vec<Trial> {
    trials![
        a_folder_flipped_to_a_symlink_never_redirects_a_write_outside_the_run,
        reports_and_exports_never_replace_what_the_command_does_not_own,
        concurrent_prepares_of_one_run_directory_never_mix,
        concurrent_completes_record_an_agent_task_once,
        completes_whose_runs_roots_are_each_others_runs_never_deadlock,
        complete_racing_evaluate_never_receipts_a_failed_evaluation
    ]
}

fn a_folder_flipped_to_a_symlink_never_redirects_a_write_outside_the_run() {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    let project = Project::lifecycle().under_timeout();
    let outside = tempfile::tempdir().unwrap();
    let dir = project.answered("anthropic", "flip", &good_output());
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.join("sub-swap")).unwrap();
    let mut manifest = read_json(&dir.join("run-manifest.json"));
    manifest["evaluation"] = json!("sub/evaluation.json");
    write_json(&dir.join("run-manifest.json"), &manifest);
    // `sub` is atomically exchanged with a symlink leading out, as fast as possible,
    // so it is a folder about half the time and a way out the other half.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let (stop, sub, swap) = (stop.clone(), dir.join("sub"), dir.join("sub-swap"));
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                renameat_with(CWD, &sub, CWD, &swap, RenameFlags::EXCHANGE).unwrap();
            }
        })
    };
    for _ in 0..40 {
        project.run(&["evaluate", "--run-dir", s(&dir)]).clean();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flipper.join().unwrap();
    let escaped: Vec<_> = std::fs::read_dir(outside.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(escaped.is_empty(), "evaluate wrote outside the run: {escaped:?}");
}

fn reports_and_exports_never_replace_what_the_command_does_not_own() {
    let project = Project::lifecycle().under_timeout();
    let finished = project.completed("done", "T1");
    let dir = project.answered("anthropic", "run", &good_output());
    let harness = project.root().join("harness.toml");
    let harness_before = std::fs::read(&harness).unwrap();
    let own_output = dir.join("raw-output.json");
    let packet = project.packet("anthropic", "a");
    let protected = [
        finished.join("completion.json"),
        finished.join("run-manifest.json"),
        finished.join("evaluation.json"),
        harness.clone(),
        own_output.clone(),
        packet.clone(),
    ];
    for target in &protected {
        let before = std::fs::read(target).unwrap();
        let out = project.run(&[
            "evaluate",
            "--run-dir",
            s(&dir),
            "--packet",
            s(&packet),
            "--output",
            s(&own_output),
            "--report",
            s(target),
        ]);
        out.clean();
        assert_eq!(out.code, 2, "--report {}: {}", target.display(), out.describe());
        assert!(out.stderr.contains("refused"), "{}", out.describe());
        assert_eq!(std::fs::read(target).unwrap(), before, "{} was replaced", target.display());
    }
    // A report of its own may be replaced, again and again.
    let report = project.root().join("report.json");
    for _ in 0..2 {
        let out = project.run(&["evaluate", "--run-dir", s(&dir), "--report", s(&report)]);
        assert_eq!(out.code, 0, "{}", out.describe());
    }
    // export (run against this crate's own project): never onto a device node, its
    // own request, or a file that is not a packet it wrote.
    let copy = project.root().join("request.json");
    std::fs::copy(support::root().join("fixtures/anthropic-immediate-succ-selected/request.json"), &copy).unwrap();
    let export = |out: &Path| {
        let mut cmd = project.bin();
        finish(
            cmd.args(["export", "--request", s(&copy), "--out", s(out)])
                .env("PACKETPROOF_ROOT", support::root())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        )
    };
    let exported = project.root().join("exported.json");
    for _ in 0..2 {
        let out = export(&exported);
        assert_eq!(out.code, 0, "export may replace its own packet: {}", out.describe());
    }
    let mut targets = vec![(harness.clone(), "harness.toml"), (copy.clone(), "its own request")];
    let node = project.root().join("null-node");
    if is_root() {
        let status = Command::new("mknod").args([s(&node), "c", "1", "3"]).status().unwrap();
        assert!(status.success());
        targets.push((node.clone(), "a device node"));
    }
    for (target, what) in targets {
        let meta_before = std::fs::symlink_metadata(&target).unwrap();
        let bytes_before = if meta_before.is_file() { std::fs::read(&target).unwrap() } else { Vec::new() };
        let out = export(&target);
        out.clean();
        assert_eq!(out.code, 2, "export --out {what}: {}", out.describe());
        assert!(out.stderr.contains("refused"), "{what}: {}", out.describe());
        let meta_after = std::fs::symlink_metadata(&target).unwrap();
        assert_eq!(meta_before.file_type(), meta_after.file_type(), "{what} was replaced");
        if meta_after.is_file() {
            assert_eq!(std::fs::read(&target).unwrap(), bytes_before, "{what} was rewritten");
        }
    }
    assert_eq!(std::fs::read(&harness).unwrap(), harness_before);
}

fn concurrent_prepares_of_one_run_directory_never_mix() {
    let project = Project::lifecycle().under_timeout();
    let a = project.packet("anthropic", "a");
    let b = project.packet("anthropic", "b");
    // Ten identical prepares at once: all succeed, one writes.
    let dir = project.root().join("runs/same");
    let children: Vec<Child> =
        (0..10).map(|_| project.spawn(&["prepare", "--packet", s(&a), "--out-dir", s(&dir)])).collect();
    for out in children.into_iter().map(finish) {
        out.clean();
        assert_eq!(out.code, 0, "identical concurrent prepare failed: {}", out.describe());
    }
    // Two different packets at once: exactly one wins, and every file is the winner's.
    for round in 0..8 {
        let dir = project.root().join(format!("runs/race-{round}"));
        let children: Vec<Child> =
            [&a, &b].iter().map(|p| project.spawn(&["prepare", "--packet", s(p), "--out-dir", s(&dir)])).collect();
        let outs: Vec<Output> = children.into_iter().map(finish).collect();
        let winners: Vec<usize> = (0..2).filter(|i| outs[*i].code == 0).collect();
        assert_eq!(winners.len(), 1, "round {round}: {} / {}", outs[0].describe(), outs[1].describe());
        let verify = project.run(&["verify", s(&dir)]);
        assert!(!verify.stdout.contains("[run::agent-request]"), "mixed files: {}", verify.describe());
        assert!(!verify.stdout.contains("[run::manifest-binding]"), "mixed files: {}", verify.describe());
    }
}

fn concurrent_completes_record_an_agent_task_once() {
    let project = Project::lifecycle().under_timeout();
    let root = project.root().join("runs");
    let dirs: Vec<PathBuf> = (0..20).map(|i| project.evaluated(&format!("run-{i:02}"))).collect();
    // Receipts of other tasks, scanned after the runs (by name): each scan passes the
    // runs early and then takes a while, so without one lock over "scan, then
    // write" a receipt written meanwhile is missed and the task recorded again.
    for i in 0..1500 {
        let decoy = root.join(format!("zz-decoy-{i:04}"));
        std::fs::create_dir(&decoy).unwrap();
        write_json(&decoy.join("completion.json"), &json!({"agentTask": format!("other-{i}")}));
    }
    let args: Vec<Vec<&str>> = dirs.iter().map(|d| Project::complete_args(d, "T-shared", Some(&root))).collect();
    let children: Vec<Child> = args.iter().map(|a| project.spawn(a)).collect();
    let outs: Vec<Output> = children.into_iter().map(finish).collect();
    outs.iter().for_each(|o| {
        o.clean();
    });
    let done = dirs.iter().filter(|d| d.join("completion.json").exists()).count();
    assert_eq!(done, 1, "agent task recorded {done} times");
    assert_eq!(outs.iter().filter(|o| o.code == 0).count(), 1);
}

/// `complete A --runs-root B` and `complete B --runs-root A`
/// at once each held its own run's lock and waited for the other's. Both locks
/// are now taken in one order; a deadlock would show as the hang limit (exit 124).
fn completes_whose_runs_roots_are_each_others_runs_never_deadlock() {
    let project = Project::lifecycle().under_timeout();
    for round in 0..6 {
        let a = project.evaluated(&format!("a-{round}"));
        let b = project.evaluated(&format!("b-{round}"));
        let (task_a, task_b) = (format!("T-a-{round}"), format!("T-b-{round}"));
        let children = [
            project.spawn(&Project::complete_args(&a, &task_a, Some(&b))),
            project.spawn(&Project::complete_args(&b, &task_b, Some(&a))),
        ];
        for out in children.map(finish) {
            out.clean();
            assert_eq!(out.code, 0, "round {round}: {}", out.describe());
        }
    }
}

fn complete_racing_evaluate_never_receipts_a_failed_evaluation() {
    let project = Project::lifecycle().under_timeout();
    let mut bad = good_output();
    bad["result"]["onboardingStrategySequence"][0]["firstScreenId"] = json!("nowhere");
    let bad_file = project.root().join("bad-output.json");
    write_json(&bad_file, &bad);
    for round in 0..12 {
        let dir = project.evaluated(&format!("race-{round}"));
        let complete_args = Project::complete_args(&dir, "T", None);
        let task = format!("T-{round}");
        let complete_args: Vec<&str> =
            complete_args.iter().map(|a| if *a == "T" { task.as_str() } else { a }).collect();
        let evaluate = project.spawn(&["evaluate", "--run-dir", s(&dir), "--output", s(&bad_file)]);
        let complete = project.spawn(&complete_args);
        finish(evaluate).clean();
        let completed = finish(complete);
        completed.clean();
        if dir.join("completion.json").exists() {
            let receipt = read_json(&dir.join("completion.json"));
            let evaluation = read_json(&dir.join("evaluation.json"));
            assert_eq!(evaluation["ok"], json!(true), "round {round}: receipt over a failed evaluation");
            assert_eq!(receipt["evaluation"]["ok"], json!(true));
            let verify = project.run(&["verify", s(&dir)]);
            assert_eq!(verify.code, 0, "round {round}: {}", verify.describe());
        }
    }
}
