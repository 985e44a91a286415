//! Crashes and hangs: a failing stdout, self-referential schemas, unbounded or
//! blocking reads, and floods of findings.

use super::*;
use libtest_mimic::Trial;

pub fn trials() -> Vec<Trial> {
    trials![
        a_closed_stdout_is_a_normal_end_and_a_failing_one_is_exit_2,
        packetproof_test_never_panics_on_a_closed_or_full_stdout,
        packetproof_test_ends_with_the_trials_verdict_when_its_reader_leaves,
        a_self_referential_schema_is_a_finding_naming_the_run_not_a_crash,
        every_read_is_bounded_and_non_regular_files_are_refused_without_blocking,
        verify_walks_past_fifos_and_names_them,
        findings_are_capped_per_rule_and_say_so
    ]
}

/// A pipe whose reading end is already closed: every write gets EPIPE.
fn closed_pipe() -> std::os::fd::OwnedFd {
    let (reader, writer) = rustix::pipe::pipe().unwrap();
    drop(reader);
    writer
}

/// `packetproof test` onto a stdout closed from the start, or full: every format and
/// `--list` end as other commands do (a closed pipe is a normal end, a full disk exit 2).
fn packetproof_test_never_panics_on_a_closed_or_full_stdout() {
    let suite = tempfile::tempdir().unwrap();
    let init = Command::new(BIN).args(["init", s(suite.path())]).env_remove("PACKETPROOF_ROOT").output().unwrap();
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
    let junit = suite.path().join("junit.xml");
    for extra in [&["--format", "pretty"][..], &["--format", "terse"], &["--format", "json"], &["--list"]] {
        let mut args = vec!["test", "corpus::layout", "--junit", s(&junit)];
        args.extend(extra);
        let cmd = |stdout: Stdio| {
            let mut cmd = Command::new("timeout");
            cmd.args(["-k", "2", "60", BIN]).args(&args).current_dir(suite.path()).stdin(Stdio::null());
            cmd.env("PACKETPROOF_ROOT", suite.path()).env_remove("CI").env_remove("PACKETPROOF_BLESS");
            finish(cmd.stdout(stdout).stderr(Stdio::piped()).spawn().unwrap())
        };
        let closed = cmd(Stdio::from(closed_pipe()));
        closed.clean();
        assert_eq!(closed.code, 0, "{extra:?} onto a closed pipe: {}", closed.describe());
        let full = cmd(Stdio::from(File::create_dev_full()));
        full.clean();
        assert_eq!(full.code, 2, "{extra:?} onto a full disk: {}", full.describe());
        assert!(full.stderr.contains("<stdout>"), "{extra:?}: {}", full.describe());
        let shown = cmd(Stdio::piped());
        assert_eq!(shown.code, 0, "{}", shown.describe());
        let reported = ["corpus::layout", "test result: ok. 1 passed"].iter().any(|t| shown.stdout.contains(t));
        assert!(reported, "{extra:?}: {}", shown.describe());
    }
    assert!(std::fs::read_to_string(&junit).unwrap().contains("<testsuites"));
}

/// A reader that leaves mid-run (`packetproof test | head -c 16`): the printing stops,
/// the trials do not (the JUnit report has every one), and the command exits with
/// their verdict, 0 or 101, without a panic. The pipe holds one page, less than the
/// report, so packetproof is still writing when the reader goes.
fn packetproof_test_ends_with_the_trials_verdict_when_its_reader_leaves() {
    let suite = tempfile::tempdir().unwrap();
    let init = Command::new(BIN).args(["init", s(suite.path())]).env_remove("PACKETPROOF_ROOT").output().unwrap();
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
    let junit = suite.path().join("junit.xml");
    let trials = Command::new(BIN).args(["test", "--list"]).current_dir(suite.path()).output().unwrap();
    let trials = String::from_utf8_lossy(&trials.stdout).lines().count();
    assert!(trials > 50, "{trials} trials");
    for (format, expected) in [("pretty", 0), ("json", 0), ("pretty", 101), ("json", 101)] {
        if expected == 101 {
            let golden = suite.path().join("golden/openai-staged-alone-selected/runtime-packet.json");
            let text = std::fs::read_to_string(&golden).unwrap();
            std::fs::write(&golden, text.replacen("\"maxTokens\": ", "\"maxTokens\": 1", 1)).unwrap();
        }
        // Close-on-exec: the child must not hold a reading end of its own.
        let (reader, writer) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
        rustix::pipe::fcntl_setpipe_size(&writer, 4096).unwrap();
        let mut cmd = Command::new("timeout");
        cmd.args(["-k", "2", "60", BIN, "test", "--format", format, "--junit", s(&junit)]);
        cmd.current_dir(suite.path()).stdin(Stdio::null()).env("PACKETPROOF_ROOT", suite.path());
        let child = cmd.env_remove("CI").stdout(writer).stderr(Stdio::piped()).spawn().unwrap();
        drop(cmd);
        let mut first = [0u8; 16];
        assert!(rustix::io::read(&reader, &mut first).unwrap() > 0);
        drop(reader);
        let out = finish(child);
        assert_eq!(out.code, expected, "--format {format}, the reader gone: {}", out.describe());
        assert!(!out.stderr.contains("panicked"), "--format {format}: {}", out.describe());
        let report = std::fs::read_to_string(&junit).unwrap();
        assert!(report.contains(&format!("<testsuites name=\"packetproof\" tests=\"{trials}\"")), "{report}");
    }
}

fn a_closed_stdout_is_a_normal_end_and_a_failing_one_is_exit_2() {
    let project = Project::lifecycle().under_timeout();
    let dir = project.evaluated("run");
    let packet = project.packet("anthropic", "a");
    let commands: Vec<Vec<&str>> = vec![
        vec!["validate", "--packet", s(&packet)],
        vec!["verify", s(&packet)],
        vec!["canon", s(&packet)],
        vec!["evaluate", "--run-dir", s(&dir)],
    ];
    for args in &commands {
        let closed = finish(project.bin().args(args).stdout(closed_pipe()).stderr(Stdio::piped()).spawn().unwrap());
        closed.clean();
        assert!(closed.code == 0 || closed.code == 1, "{args:?} onto a closed pipe: {}", closed.describe());
        let full = File::create_dev_full();
        let failed = finish(project.bin().args(args).stdout(full).stderr(Stdio::piped()).spawn().unwrap());
        failed.clean();
        assert_eq!(failed.code, 2, "{args:?} onto a full disk: {}", failed.describe());
        assert!(failed.stderr.contains("<stdout>"), "{args:?}: {}", failed.describe());
    }
    // schema --check, on this crate's own project.
    for (stdout, expected) in [(Stdio::from(closed_pipe()), 0), (Stdio::from(File::create_dev_full()), 2)] {
        let mut cmd = project.bin();
        cmd.args(["schema", "--check"]).env("PACKETPROOF_ROOT", support::root()).stdout(stdout).stderr(Stdio::piped());
        let out = finish(cmd.spawn().unwrap());
        out.clean();
        assert_eq!(out.code, expected, "schema --check: {}", out.describe());
    }
    // complete writes its receipt, then reports; a closed pipe does not undo or crash it.
    let closed = finish(
        project
            .bin()
            .args(Project::complete_args(&dir, "T-closed", None))
            .stdout(closed_pipe())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    closed.clean();
    assert_eq!(closed.code, 0, "{}", closed.describe());
    assert_eq!(read_json(&dir.join("completion.json"))["agentTask"], json!("T-closed"));
    let other = project.evaluated("other");
    let full = finish(
        project
            .bin()
            .args(Project::complete_args(&other, "T-full", None))
            .stdout(File::create_dev_full())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    full.clean();
    assert_eq!(full.code, 2, "{}", full.describe());
    assert!(full.stderr.contains("completion.json") && full.stderr.contains("written"), "{}", full.describe());
    assert_eq!(read_json(&other.join("completion.json"))["agentTask"], json!("T-full"));
}

struct File;

impl File {
    fn create_dev_full() -> std::fs::File {
        std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full")
    }
}

fn a_self_referential_schema_is_a_finding_naming_the_run_not_a_crash() {
    for (label, schema) in [
        ("self", json!({"allOf": [{"$ref": "#"}]})),
        ("loop", json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})),
    ] {
        let project = Project::lifecycle_with_schema(Some(schema)).under_timeout();
        let bad = project.answered("google", "bad", &good_output());
        let out = project.run(&["evaluate", "--run-dir", s(&bad)]);
        out.clean();
        assert_eq!(out.code, 1, "{label}: {}", out.describe());
        let evaluation = read_json(&bad.join("evaluation.json"));
        let text = evaluation["failures"].to_string();
        assert!(text.contains("refers to itself"), "{label}: {text}");
        // One such run does not abort verify of the whole tree: the run is named.
        let verify = project.run(&["verify", s(&project.root().join("runs"))]);
        verify.clean();
        assert_eq!(verify.code, 1, "{label}: {}", verify.describe());
        assert!(verify.stdout.contains(&format!("{}: FAILED", bad.display())), "{label}: {}", verify.describe());
    }
}

fn every_read_is_bounded_and_non_regular_files_are_refused_without_blocking() {
    let project = Project::lifecycle().under_timeout();
    let packet = project.packet("anthropic", "a");
    // The suffix file: a device that never ends, a FIFO no one writes, a huge sparse file.
    let fifo = project.root().join("suffix-fifo.txt");
    mkfifo(&fifo);
    let huge = project.root().join("huge.txt");
    std::fs::File::create(&huge).unwrap().set_len(1 << 34).unwrap();
    for (suffix, expected) in [("/dev/zero", "is a device"), (s(&fifo), "is a FIFO"), (s(&huge), "more than the limit")]
    {
        let out = project.run(&["--google-suffix-file", suffix, "validate", "--packet", s(&packet)]);
        out.clean();
        assert_eq!(out.code, 2, "{suffix}: {}", out.describe());
        assert!(out.stderr.contains(expected), "{suffix}: {}", out.describe());
    }
    let fifo_packet = project.root().join("runtime-packet-fifo.json");
    mkfifo(&fifo_packet);
    for args in [
        vec!["validate", "--packet", s(&fifo_packet)],
        vec!["prepare", "--packet", s(&fifo_packet), "--out-dir", "runs/x"],
        vec!["export", "--request", s(&fifo_packet)],
        vec!["canon", s(&fifo_packet)],
    ] {
        let out = project.run(&args);
        out.clean();
        assert_eq!(out.code, 2, "{args:?}: {}", out.describe());
        assert!(out.stderr.contains("is a FIFO, not a regular file"), "{args:?}: {}", out.describe());
    }
}

fn verify_walks_past_fifos_and_names_them() {
    let project = Project::lifecycle().under_timeout();
    project.completed("run", "T1");
    std::fs::create_dir_all(project.root().join("runs/deep/er")).unwrap();
    mkfifo(&project.root().join("runs/deep/er/notes.json"));
    let out = project.run(&["verify", "-v", s(&project.root().join("runs"))]);
    out.clean();
    assert_eq!(out.code, 0, "{}", out.describe());
    assert_output_snapshot!("verify_walks_past_a_fifo", out, project.root());
}

fn findings_are_capped_per_rule_and_say_so() {
    let project = Project::lifecycle().under_timeout();
    let mut output = good_output();
    // 3,000 extra screens, each routing to a screen that does not exist.
    let screens = output["result"]["onboardingStrategySequence"][0]["screens"].as_array_mut().unwrap();
    let template = screens[0].clone();
    for i in 0..3000 {
        let mut screen = template.clone();
        screen["id"] = json!(format!("x{i}"));
        screen["content"]["actionBar"]["primary"]["action"]["edges"] = json!([{"nextScreenId": format!("gone{i}")}]);
        screens.push(screen);
    }
    let dir = project.answered("anthropic", "flood", &output);
    let out = project.run(&["evaluate", "--run-dir", s(&dir)]);
    out.clean();
    assert_eq!(out.code, 1, "{}", out.describe());
    let evaluation = read_json(&dir.join("evaluation.json"));
    let failures = evaluation["failures"].as_array().unwrap();
    let mut per_stage: std::collections::BTreeMap<&str, usize> = Default::default();
    for failure in failures {
        *per_stage.entry(failure["stage"].as_str().unwrap()).or_default() += 1;
    }
    assert!(per_stage.values().all(|n| *n <= 101), "{per_stage:?}");
    assert!(
        failures
            .iter()
            .any(|f| f["message"].as_str().unwrap().contains("failure(s) not listed (at most 100 per stage")),
        "{per_stage:?}"
    );
    // verify re-evaluates the capped evaluation and reports it without refusing it as too large.
    let verify = project.run(&["verify", s(&dir)]);
    verify.clean();
    assert!(verify.stdout.matches("[run::evaluation]").count() <= 101, "{}", verify.describe());
}
