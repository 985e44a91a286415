//! No input file of any kind makes any command panic, hang or write outside its run.

use super::*;
use libtest_mimic::Trial;

pub fn trials() -> Vec<Trial> {
    trials![no_kind_of_input_file_crashes_hangs_or_writes_outside_the_run]
}

/// No input file kind makes any command panic, hang, or write outside its run.
fn no_kind_of_input_file_crashes_hangs_or_writes_outside_the_run() {
    let project = Project::lifecycle().under_timeout();
    let inputs = project.root().join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    let regular = project.packet("anthropic", "a");
    let kinds: Vec<(&str, PathBuf)> = {
        let fifo = inputs.join("fifo.json");
        mkfifo(&fifo);
        let folder = inputs.join("folder.json");
        std::fs::create_dir(&folder).unwrap();
        let link = inputs.join("link.json");
        std::os::unix::fs::symlink(&regular, &link).unwrap();
        let fifo_link = inputs.join("fifo-link.json");
        std::os::unix::fs::symlink(&fifo, &fifo_link).unwrap();
        let dangling = inputs.join("dangling.json");
        std::os::unix::fs::symlink(inputs.join("gone"), &dangling).unwrap();
        let huge = inputs.join("huge.json");
        std::fs::File::create(&huge).unwrap().set_len(1 << 34).unwrap();
        let malformed = inputs.join("malformed.json");
        std::fs::write(&malformed, b"{\"a\": [1, 2,, \xff").unwrap();
        let deep = inputs.join("deep.json");
        std::fs::write(&deep, "[".repeat(100_000)).unwrap();
        vec![
            ("regular", regular.clone()),
            ("fifo", fifo),
            ("directory", folder),
            ("device", PathBuf::from("/dev/zero")),
            ("symlink", link),
            ("symlink to a fifo", fifo_link),
            ("dangling symlink", dangling),
            ("huge", huge),
            ("malformed", malformed),
            ("deeply nested", deep),
        ]
    };
    let run = project.answered("anthropic", "run", &good_output());
    let before = tree(project.root(), &[&run]);
    for (kind, file) in &kinds {
        let f = s(file);
        let commands: Vec<Vec<&str>> = vec![
            vec!["canon", f],
            vec!["validate", "--packet", f],
            vec!["export", "--request", f],
            vec!["verify", f],
            vec!["--google-suffix-file", f, "validate", "--packet", s(&regular)],
            vec!["prepare", "--packet", f, "--out-dir", s(&run)],
            vec!["evaluate", "--run-dir", s(&run), "--output", f],
            vec!["evaluate", "--run-dir", s(&run), "--packet", f],
            vec!["complete", "--run-dir", f, "--scenario", "s", "--run-id", "r", "--agent-task", "t", "--note", "n"],
            vec!["wire", "--packet", f, "--api", "anthropic"],
            vec!["wire", "--packet", s(&regular), "--api", "anthropic", "--check", f],
            vec!["attest", s(&run), "--key", f],
        ];
        for args in commands {
            let out = project.run(&args);
            out.clean();
            assert!(out.code <= 2, "{kind}: {args:?}: {}", out.describe());
        }
        // The run directory's own files, replaced by this kind, are read the same way.
        let raw = run.join("raw-output.json");
        let saved = std::fs::read(&raw).unwrap();
        std::fs::remove_file(&raw).unwrap();
        if *kind == "regular" {
            std::fs::copy(file, &raw).unwrap();
        } else {
            std::os::unix::fs::symlink(file, &raw).unwrap();
        }
        for args in [vec!["evaluate", "--run-dir", s(&run)], vec!["verify", s(&run)]] {
            let out = project.run(&args);
            out.clean();
            assert!(out.code <= 2, "{kind} as raw output: {args:?}: {}", out.describe());
        }
        std::fs::remove_file(&raw).unwrap();
        std::fs::write(&raw, saved).unwrap();
    }
    let after = tree(project.root(), &[&run]);
    let changed: Vec<&PathBuf> = after.iter().filter(|e| !before.contains(e)).map(|(p, _)| p).collect();
    assert!(changed.is_empty(), "written outside the run directory: {changed:?}");
}
