//! `packetproof test`: the conformance trials from the binary, with libtest's
//! filter, `--list`, `--exact`, formats, a JUnit report, and cargo test's exit codes.

use crate::support;
use libtest_mimic::Trial;

const CASE: &str = "openai-staged-alone-selected";

/// The output of `packetproof test` in an order that does not change from run to run,
/// for a whole-output snapshot. With more than one thread libtest prints each trial's
/// verdict (one line, or one character in the terse format) and lists each failure as
/// the trial ends; here the verdict lines, the terse characters, the failures' sections
/// and the list of failed trials are each in name order. Nothing is left out.
pub fn in_name_order(out: &support::Output) -> support::Output {
    let lines: Vec<&str> = out.stdout.split_inclusive('\n').collect();
    let mut stdout = String::new();
    let mut i = 0;
    let is_verdict = |line: &str| line.starts_with("test ") && line.contains(" ... ");
    let is_terse = |line: &str| !line.trim_end().is_empty() && line.trim_end().chars().all(|c| ".iF".contains(c));
    while i < lines.len() {
        let line = lines[i];
        if is_verdict(line) {
            let mut group: Vec<&str> = lines[i..].iter().copied().take_while(|l| is_verdict(l)).collect();
            i += group.len();
            group.sort_unstable();
            stdout.extend(group);
        } else if is_terse(line) {
            let mut characters: Vec<char> = line.trim_end().chars().collect();
            characters.sort_unstable();
            stdout.extend(characters);
            stdout.push_str(&line[line.trim_end().len()..]);
            i += 1;
        } else if line.starts_with("---- ") {
            // The failures' sections, each from its `---- name` line to the next.
            let end = lines[i..].iter().position(|l| *l == "failures:\n").map_or(lines.len(), |n| i + n);
            // The blank line libtest adds after the last section stays last.
            let body = if end > i && lines[end - 1] == "\n" { end - 1 } else { end };
            let mut sections: Vec<String> = Vec::new();
            for line in &lines[i..body] {
                match sections.last_mut() {
                    Some(section) if !line.starts_with("---- ") => section.push_str(line),
                    _ => sections.push((*line).to_owned()),
                }
            }
            sections.sort_unstable();
            stdout.extend(sections);
            stdout.extend(lines[body..end].iter().copied());
            i = end;
        } else if line.starts_with("    ") && stdout.ends_with("failures:\n") {
            let mut names: Vec<&str> = lines[i..].iter().copied().take_while(|l| l.starts_with("    ")).collect();
            i += names.len();
            names.sort_unstable();
            stdout.extend(names);
        } else {
            stdout.push_str(line);
            i += 1;
        }
    }
    support::Output { code: out.code, stdout, stderr: out.stderr.clone() }
}

/// The verdict libtest printed for trial `name` (`ok`, `FAILED`, `ignored`), from the
/// pretty format (an ignored trial's reason, in parentheses, is left out).
pub fn verdict<'a>(stdout: &'a str, name: &str) -> Option<&'a str> {
    stdout.lines().find_map(|line| {
        let (trial, verdict) = line.strip_prefix("test ")?.split_once(" ... ")?;
        (trial.trim_end() == name).then(|| verdict.split_whitespace().next().unwrap_or_default())
    })
}

fn list_filter_and_exact_select_trials() {
    let folder = support::Project::empty();
    folder.init();
    let list = folder.run_in("suite", &["test", "--list"]);
    assert_eq!(list.code, 0, "{}", list.describe());
    // The mutation self-test is one trial per fixture, named after it.
    for name in [format!("{CASE}::packet::regenerates: test"), format!("{CASE}::corpus::mutation-self-test: test")] {
        assert!(list.stdout.lines().any(|l| l == name), "{name} not listed:\n{}", list.stdout);
    }
    assert!(!list.stdout.lines().any(|l| l == "corpus::mutation-self-test: test"), "{}", list.stdout);
    assert_eq!(list.stdout.matches("::corpus::mutation-self-test: test").count(), 3, "{}", list.stdout);
    let exact_name = format!("{CASE}::packet::checksum");
    let exact = folder.run_in("suite", &["test", "--exact", &exact_name]);
    assert_eq!(exact.code, 0, "{}", exact.describe());
    assert_output_snapshot!("test_exact", exact, folder.root());
    let json = folder.run_in("suite", &["test", "--format", "json", &format!("{CASE}::packet::")]);
    assert_eq!(json.code, 0, "{}", json.describe());
    for line in json.stdout.lines().filter(|l| !l.trim().is_empty()) {
        let event: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(event["type"] == "suite" || event["type"] == "test", "{line}");
    }
    assert!(
        json.stdout.contains(&format!("\"name\": \"{CASE}::packet::contract\", \"event\": \"ok\"")),
        "{}",
        json.stdout
    );
    let terse = folder.run_in("suite", &["test", "--format", "terse", CASE]);
    assert_eq!(terse.code, 0, "{}", terse.describe());
    assert!(!terse.stdout.contains("... ok"), "terse prints no line per trial: {}", terse.stdout);
    assert_output_snapshot!("test_terse", in_name_order(&terse), folder.root());
}

/// A broken golden packet fails its trials: exit 101 (cargo test's), the failure in the JUnit report.
fn a_failing_trial_exits_101_and_reaches_the_junit_report() {
    let folder = support::Project::empty();
    let suite = folder.init();
    let golden = suite.join(format!("golden/{CASE}/runtime-packet.json"));
    let text = std::fs::read_to_string(&golden).unwrap();
    std::fs::write(&golden, text.replacen("\"maxTokens\": ", "\"maxTokens\": 1", 1)).unwrap();
    let out = folder.run_in("suite", &["test", CASE, "--junit", "junit.xml"]);
    assert_eq!(out.code, 101, "{}", out.describe());
    assert_eq!(verdict(&out.stdout, &format!("{CASE}::packet::checksum")), Some("FAILED"), "{}", out.stdout);
    assert_output_snapshot!("test_one_failing_case", in_name_order(&out), folder.root());
    let junit = std::fs::read_to_string(suite.join("junit.xml")).unwrap();
    assert!(junit.contains(&format!("<testcase name=\"packet::checksum\" classname=\"{CASE}\"")), "{junit}");
    assert!(junit.contains("<failure message="), "{junit}");
}

/// `require_branch_coverage = false` only holds the check back (ignored); turned on, the
/// three examples fail it and say what they miss.
fn branch_coverage_runs_once_the_suite_requires_it() {
    let folder = support::Project::empty();
    let suite = folder.init();
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    let required = settings.replace("require_branch_coverage = false", "require_branch_coverage = true");
    assert_ne!(settings, required);
    std::fs::write(suite.join("harness.toml"), required).unwrap();
    let out = folder.run_in("suite", &["test", "--exact", "corpus::branch-coverage"]);
    assert_eq!(out.code, 101, "{}", out.describe());
    assert_output_snapshot!("test_branch_coverage_required", out, folder.root());
}

/// The names `test --list` prints (one `name: test` line each).
fn listed(stdout: &str) -> Vec<String> {
    let mut names: Vec<String> = stdout.lines().filter_map(|l| l.strip_suffix(": test")).map(str::to_owned).collect();
    names.sort();
    names
}

/// `--partition count:M/N` and `hash:M/N` over an init suite: the shards are disjoint, together
/// they are every trial (corpus-wide ones included), and a shard runs and passes on its own.
fn partitions_are_disjoint_and_cover_the_gate() {
    let folder = crate::support::Project::empty();
    folder.init();
    let all = folder.run_in("suite", &["test", "--list"]);
    assert_eq!(all.code, 0, "{}", all.describe());
    let all = listed(&all.stdout);
    assert!(all.len() > 30 && all.iter().any(|n| n == "corpus::layout"), "{all:?}");
    for strategy in ["count", "hash"] {
        let mut union: Vec<String> = Vec::new();
        for shard in 1..=3 {
            let partition = format!("{strategy}:{shard}/3");
            let out = folder.run_in("suite", &["test", "--list", "--partition", &partition]);
            assert_eq!(out.code, 0, "{}", out.describe());
            let names = listed(&out.stdout);
            assert!(!names.is_empty() && names.len() < all.len(), "{partition}: {names:?}");
            assert!(
                out.stderr.contains(&format!("--partition {partition}: {} trial(s)", names.len())),
                "{}",
                out.stderr
            );
            union.extend(names);
        }
        union.sort();
        assert_eq!(union, all, "{strategy}: the shards overlap or miss trials");
    }
    // count: deals the filtered trials in name order: shard 1 of 2 takes the 1st, 3rd, … of them.
    let out = folder.run_in("suite", &["test", "--list", "--partition", "count:1/2", &format!("{CASE}::packet::")]);
    let filtered: Vec<&String> = all.iter().filter(|n| n.contains(&format!("{CASE}::packet::"))).collect();
    let expected: Vec<String> = filtered.iter().step_by(2).map(|n| n.to_string()).collect();
    assert_eq!(listed(&out.stdout), expected);
    let run = folder.run_in("suite", &["test", "--partition", "hash:2/3", "--junit", "shard.xml"]);
    assert_eq!(run.code, 0, "{}", run.describe());
    assert!(run.stdout.contains("test result: ok."), "{}", run.stdout);
}

fn a_malformed_partition_is_a_usage_error() {
    let folder = crate::support::Project::empty();
    folder.init();
    let mut transcript = String::new();
    for bad in ["hash:0/3", "count:4/3", "slice:1/2", "hash:1", "count:a/2"] {
        let out = folder.run_in("suite", &["test", "--partition", bad]);
        assert_eq!(out.code, 2, "{bad}: {}", out.describe());
        transcript.push_str(&format!("=== --partition {bad}\n{}\n", out.describe()));
    }
    assert_output_snapshot!(text: "test_malformed_partitions", transcript, folder.root());
}

/// Two prompt edits, one in every case's system prompt and one in a partial two
/// cases render: the gate shows two changes, each diff once, and its last line is
/// the fastest correct fix (`packetproof bless`), which then makes it pass.
fn after_two_prompt_edits_the_gate_shows_two_changes_and_ends_with_the_bless_command() {
    let folder = crate::support::Project::empty();
    let suite = folder.init();
    // The snapshot shows template text: the suite runs on a fixed copy of the templates
    // (the one the SDK recordings were compiled from), blessed, so that an edit of the
    // project's own prompts fails the conformance gate, not this test.
    let templates = suite.join("references/prompts");
    std::fs::remove_dir_all(&templates).unwrap();
    support::copy_tree(&support::root().join("tests/recordings/sdk/prompts"), &templates);
    assert_eq!(folder.run_in("suite", &["bless"]).code, 0);
    let edits = [
        ("references/prompts/system.md.j2", "First sentence added by the test."),
        ("references/prompts/branches/neighbours/both.md.j2", "Second sentence added by the test."),
    ];
    for (file, sentence) in edits {
        let text = std::fs::read_to_string(suite.join(file)).unwrap();
        std::fs::write(suite.join(file), text.replacen('\n', &format!(" {sentence}\n"), 1)).unwrap();
    }
    let out = folder.run_in("suite", &["test"]);
    assert_eq!(out.code, 101, "{}", out.describe());
    assert_output_snapshot!("test_after_two_prompt_edits", in_name_order(&out), folder.root());
    assert_eq!(folder.run_in("suite", &["bless"]).code, 0);
    let again = folder.run_in("suite", &["test"]);
    assert_eq!(again.code, 0, "{}", again.describe());
}

/// A fixture added with an agent task id another fixture already records is the
/// one blamed, even when its name sorts first.
fn a_reused_agent_task_is_blamed_on_the_fixture_being_added() {
    let folder = crate::support::Project::empty();
    let suite = folder.init();
    let existing = suite.join(format!("fixtures/{CASE}/run/completion.toml"));
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    std::fs::File::options().write(true).open(&existing).unwrap().set_modified(old).unwrap();
    let added = suite.join("fixtures/a-added");
    crate::support::copy_tree(&suite.join(format!("fixtures/{CASE}")), &added);
    let out = folder.run_in("suite", &["test", "--exact", "corpus::unique-agent-tasks"]);
    assert_eq!(out.code, 101, "{}", out.describe());
    assert_output_snapshot!("test_a_reused_agent_task", out, folder.root());
}

/// A fixture named to fake libtest's summary (a newline, then `test result: ok.`) shows
/// as one escaped name in every output of `test`: the pretty, terse and JSON formats,
/// `--list`, the JUnit and HTML reports and the account of stale golden files.
fn a_fixture_name_cannot_fake_a_line_of_the_test_report() {
    let folder = support::Project::empty();
    let suite = folder.init();
    let evil = "x\ntest result: ok. 99 passed; 0 failed\u{202e}";
    support::copy_tree(&suite.join(format!("fixtures/{CASE}")), &suite.join(format!("fixtures/{evil}")));
    support::copy_tree(&suite.join(format!("golden/{CASE}")), &suite.join(format!("golden/{evil}")));
    // Its golden packet is stale, so the account of stale cases names it too.
    let golden = suite.join(format!("golden/{evil}/runtime-packet.json"));
    let text = std::fs::read_to_string(&golden).unwrap();
    std::fs::write(&golden, text.replacen("\"maxTokens\": ", "\"maxTokens\": 1", 1)).unwrap();
    let shown = "x\\u{a}test result: ok. 99 passed; 0 failed\\u{202e}";
    let fake = |text: &str| text.lines().any(|l| l.trim_start().starts_with("test result: ok. 99"));
    let mut outputs = Vec::new();
    let first = vec!["test", "--junit", "junit.xml", "--report", "report.html"];
    for args in [first, vec!["test", "--format", "terse"], vec!["test", "--list"]] {
        let out = folder.run_in("suite", &args);
        assert!(!fake(&out.stdout) && !fake(&out.stderr), "{args:?}: {}", out.describe());
        assert!(!out.stdout.contains('\u{202e}'), "{args:?}: {}", out.describe());
        outputs.push(out);
    }
    assert_eq!(
        verdict(&outputs[0].stdout, &format!("{shown}::packet::checksum")),
        Some("FAILED"),
        "{}",
        outputs[0].stdout
    );
    assert!(outputs[0].stdout.contains(&format!("case(s): {shown}\n")), "the stale account: {}", outputs[0].stdout);
    assert!(outputs[2].stdout.contains(&format!("{shown}::packet::checksum: test")), "{}", outputs[2].stdout);
    let junit = std::fs::read_to_string(suite.join("junit.xml")).unwrap();
    assert!(junit.contains(&format!("classname=\"{shown}\"")), "{junit}");
    // The HTML report finds the trials of the fixture under the same escaped names.
    let page = std::fs::read_to_string(suite.join("report.html")).unwrap();
    assert!(!page.contains("data-state=\"not-run\""), "a trial that ran is shown as not run");
    let json = folder.run_in("suite", &["test", "--format", "json"]);
    let names: Vec<String> = json
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|event| event["name"].as_str().map(str::to_owned))
        .filter(|name| name.starts_with('x'))
        .collect();
    assert!(!names.is_empty() && names.iter().all(|n| n.starts_with(shown)), "{names:?}");
}

/// Every ignored trial says why in the JSON events (libtest's `message`), the reason the
/// pretty format shows in parentheses, on every platform: the events come from the
/// runner, not from a rewrite of another tool's output.
fn json_events_give_each_ignored_trial_its_reason() {
    let folder = support::Project::empty();
    folder.init();
    let pretty = folder.run_in("suite", &["test"]);
    assert_eq!(pretty.code, 0, "{}", pretty.describe());
    let mut shown: Vec<(String, String)> = pretty
        .stdout
        .lines()
        .filter_map(|line| {
            let (name, verdict) = line.strip_prefix("test ")?.split_once(" ... ")?;
            let reason = verdict.strip_prefix("ignored (")?.strip_suffix(')')?;
            Some((name.trim_end().to_owned(), reason.to_owned()))
        })
        .collect();
    let json = folder.run_in("suite", &["test", "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.describe());
    let mut given: Vec<(String, String)> = json
        .stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .filter(|event| event["event"] == "ignored")
        .map(|event| (event["name"].as_str().unwrap().to_owned(), event["message"].as_str().unwrap().to_owned()))
        .collect();
    shown.sort();
    given.sort();
    assert!(shown.len() >= 5, "{}", pretty.stdout);
    assert_eq!(given, shown);
}

pub fn trials() -> Vec<Trial> {
    trials![
        json_events_give_each_ignored_trial_its_reason,
        a_fixture_name_cannot_fake_a_line_of_the_test_report,
        partitions_are_disjoint_and_cover_the_gate,
        a_malformed_partition_is_a_usage_error,
        a_reused_agent_task_is_blamed_on_the_fixture_being_added,
        after_two_prompt_edits_the_gate_shows_two_changes_and_ends_with_the_bless_command,
        list_filter_and_exact_select_trials,
        a_failing_trial_exits_101_and_reaches_the_junit_report,
        branch_coverage_runs_once_the_suite_requires_it,
    ]
}
