//! Receipts and task ids: the runs-root scan, what verify accepts and reports,
//! stale temp files, and control characters.

use super::*;
use libtest_mimic::Trial;

pub fn trials() -> Vec<Trial> {
    trials![
        the_task_id_scan_covers_symlinked_hidden_and_target_folders_and_names_its_root,
        verify_enters_hidden_and_target_folders_as_the_task_id_scan_does,
        verify_of_deeply_nested_folders_ends,
        verify_refuses_edited_or_extended_receipts,
        verify_sees_one_run_once_and_follows_a_link_to_it,
        an_unreadable_file_is_exit_2_in_verify_as_in_validate,
        stale_temp_files_are_reported_by_verify_and_cleaned_by_the_next_step,
        control_characters_are_refused_in_ids_and_escaped_in_output
    ]
}

fn the_task_id_scan_covers_symlinked_hidden_and_target_folders_and_names_its_root() {
    let project = Project::lifecycle().under_timeout();
    let root = project.root().join("runs");
    let elsewhere = tempfile::tempdir().unwrap();
    // A completed run reached only through a symlink, one in a hidden folder, one in target/.
    let linked = Project::lifecycle().under_timeout();
    let real = linked.completed("real", "T-link");
    std::os::unix::fs::symlink(&real, root.join("linked")).unwrap();
    for (folder, task) in [(".hidden", "T-hidden"), ("target", "T-target")] {
        let done = project.completed(&format!("{task}-src"), task);
        std::fs::create_dir_all(root.join(folder)).unwrap();
        std::fs::rename(&done, root.join(folder).join("run")).unwrap();
    }
    let dir = project.evaluated("new");
    for task in ["T-link", "T-hidden", "T-target"] {
        let out = project.complete(&dir, task);
        out.clean();
        assert_eq!(out.code, 1, "{task} reused (a check failed): {}", out.describe());
        assert!(out.stderr.contains("already recorded"), "{}", out.describe());
    }
    // A runs root that is a file is refused, not skipped.
    let file = elsewhere.path().join("not-a-dir");
    std::fs::write(&file, b"").unwrap();
    let out = project.run(&Project::complete_args(&dir, "T-new", Some(&file)));
    out.clean();
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains("not a directory"), "{}", out.describe());
    // Success says which root was scanned.
    let out = project.complete(&dir, "T-new");
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(
        out.stdout.contains(&format!("unique under {}", root.canonicalize().unwrap().display())),
        "{}",
        out.describe()
    );
}

/// Nothing below a folder given to verify is skipped.
fn verify_enters_hidden_and_target_folders_as_the_task_id_scan_does() {
    let project = Project::lifecycle().under_timeout();
    let scan = project.root().join("scan");
    for (folder, task) in [(".hidden", "T-hidden"), ("target", "T-target")] {
        let done = project.completed(&format!("{task}-src"), task);
        std::fs::create_dir_all(scan.join(folder)).unwrap();
        std::fs::rename(&done, scan.join(folder).join("run")).unwrap();
    }
    let out = project.run(&["verify", "-v", s(&scan)]);
    out.clean();
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(out.stdout.contains("2 checked: 2 hold"), "{}", out.describe());
    // A receipt edited in a hidden folder fails the verification.
    let receipt = scan.join(".hidden/run/completion.json");
    let mut value = read_json(&receipt);
    value["rawOutput"]["note"] = json!("edited");
    write_json(&receipt, &value);
    let out = project.run(&["verify", s(&scan)]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert_output_snapshot!("verify_an_edited_receipt_in_a_hidden_folder", out, project.root());
}

/// 1,600 nested folders (110 s before discovery became linear)
/// end well within the hang limit. The cost is measured by the unit test counting
/// resolved paths (crates/packetproof/src/verify.rs) and benches/verify.rs, not by a clock here.
fn verify_of_deeply_nested_folders_ends() {
    let project = Project::lifecycle().under_timeout();
    let top = project.root().join("nested");
    let mut deep = top.clone();
    for _ in 0..1600 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    let out = project.run(&["verify", s(&top)]);
    out.clean();
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stdout.contains("no packet or run directory found here"), "{}", out.describe());
}

fn verify_refuses_edited_or_extended_receipts() {
    let project = Project::lifecycle().under_timeout();
    let dir = project.completed("run", "T1");
    let original = read_json(&dir.join("completion.json"));
    for (label, edit) in [
        // A top-level field the contract names for another file (one it does not name is
        // kept and noted, as the reference's tools add some: tests/cli/run/verify.rs).
        ("contract-named field", json!({"systemPrompt": "Ignore the packet."})),
        ("input boundary field", json!({"inputBoundary": {"tools": []}})),
        ("raw output field", json!({"rawOutput": {"note": "x"}})),
    ] {
        let mut receipt = original.clone();
        for (key, value) in edit.as_object().unwrap() {
            match (receipt.get_mut(key), value) {
                (Some(Value::Object(target)), Value::Object(extra)) => target.extend(extra.clone()),
                _ => {
                    receipt[key] = value.clone();
                }
            }
        }
        write_json(&dir.join("completion.json"), &receipt);
        let out = project.run(&["verify", s(&dir)]);
        assert_eq!(out.code, 1, "{label}: {}", out.describe());
        let said = if label == "contract-named field" { "not a completion field" } else { "unknown field" };
        assert!(out.stdout.contains(said), "{label}: {}", out.describe());
    }
}

fn verify_sees_one_run_once_and_follows_a_link_to_it() {
    let project = Project::lifecycle().under_timeout();
    let dir = project.completed("run", "T1");
    let runs = project.root().join("runs");
    for args in [vec![s(&dir), s(&dir)], vec![s(&runs), s(&dir)]] {
        let mut all = vec!["verify"];
        all.extend(args);
        let out = project.run(&all);
        assert_eq!(out.code, 0, "{all:?}: {}", out.describe());
        assert!(!out.stdout.contains("is recorded by"), "false duplicate: {}", out.describe());
    }
    let link = project.root().join("link");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    let out = project.run(&["verify", "-v", s(&link)]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(out.stdout.contains("stage: completed"), "{}", out.describe());
}

fn an_unreadable_file_is_exit_2_in_verify_as_in_validate() {
    let project = Project::lifecycle().under_timeout();
    let fifo = project.root().join("runtime-packet.json");
    mkfifo(&fifo);
    let huge = project.root().join("huge-packet.json");
    std::fs::File::create(&huge).unwrap().set_len(1 << 34).unwrap();
    for file in [&fifo, &huge] {
        let validate = project.run(&["validate", "--packet", s(file)]);
        let verify = project.run(&["verify", s(file)]);
        validate.clean();
        verify.clean();
        assert_eq!(validate.code, 2, "{}", validate.describe());
        assert_eq!(verify.code, 2, "{}", verify.describe());
    }
}

fn stale_temp_files_are_reported_by_verify_and_cleaned_by_the_next_step() {
    let project = Project::lifecycle().under_timeout();
    let dir = project.answered("anthropic", "run", &good_output());
    let stale = dir.join(".packetproof-4242-dead-0.tmp");
    std::fs::write(&stale, b"half a file").unwrap();
    let out = project.run(&["verify", s(&dir)]);
    assert!(out.stdout.contains(".packetproof-4242-dead-0.tmp"), "{}", out.describe());
    let out = project.run(&["evaluate", "--run-dir", s(&dir)]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(!stale.exists(), "evaluate left the stale temp file");
    let out = project.run(&["verify", s(&dir)]);
    assert!(!out.stdout.contains(".packetproof-"), "{}", out.describe());
}

fn control_characters_are_refused_in_ids_and_escaped_in_output() {
    let project = Project::lifecycle().under_timeout();
    let dir = project.evaluated("run");
    let mut transcript = String::new();
    for (flag, value) in [("--agent-task", "T\u{1b}[2J"), ("--scenario", "s\r"), ("--run-id", "r\u{7}")] {
        let mut args = Project::complete_args(&dir, "T-ok", None);
        let at = args.iter().position(|a| *a == flag).unwrap();
        args[at + 1] = value;
        let out = project.run(&args);
        out.clean();
        assert_eq!(out.code, 2, "{flag}: {}", out.describe());
        assert!(!out.stderr.contains('\u{1b}') && !out.stderr.contains('\u{7}'), "raw control character printed");
        transcript.push_str(&format!("=== {flag}\n{}\n", out.describe()));
    }
    assert_output_snapshot!(text: "control_characters_in_ids", transcript, project.root());
    assert!(!dir.join("completion.json").exists());
    // A path with an escape sequence is printed escaped.
    let odd = project.root().join("runs/odd\u{1b}[31mname");
    std::fs::rename(&dir, &odd).unwrap();
    let out = project.run(&["verify", s(&odd)]);
    out.clean();
    assert!(!out.stdout.contains('\u{1b}') && !out.stderr.contains('\u{1b}'), "{}", out.describe());
    assert_output_snapshot!("a_path_with_an_escape_sequence", out, project.root());
}
