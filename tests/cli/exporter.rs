//! `[exporter]`: a suite whose packets another program makes. The gate runs the
//! exporter where it would compile (bless, `packet::regenerates`), and every other
//! check applies to its packets unchanged.

use crate::support::{self, Output};
use crate::test::verdict;
use libtest_mimic::Trial;
use std::path::Path;

const CASE: &str = "google-staged-both-selected";

/// A suite with `script` as `./export.sh` and harness.toml naming it.
fn suite_with_exporter(script: &str, timeout_seconds: u64) -> support::Project {
    let folder = support::Project::empty();
    let suite = folder.init();
    let bin = env!("CARGO_BIN_EXE_packetproof");
    write_script(&suite.join("export.sh"), &format!("#!/bin/sh\n{}\n", script.replace("BIN", bin)));
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    let exporter =
        format!("\n[exporter]\ncommand = [\"./export.sh\", \"{{request}}\"]\ntimeout_seconds = {timeout_seconds}\n");
    std::fs::write(suite.join("harness.toml"), settings + &exporter).unwrap();
    folder
}

fn write_script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[track_caller]
fn bless_and_test(folder: &support::Project) -> Output {
    let bless = folder.run_in("suite", &["bless"]);
    assert_eq!(bless.code, 0, "{}", bless.describe());
    folder.run_in("suite", &["test", CASE])
}

fn an_exporter_wrapping_packetproof_export_passes_the_gate() {
    let folder = suite_with_exporter("exec \"BIN\" export --request \"$1\"", 30);
    let out = bless_and_test(&folder);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert_eq!(verdict(&out.stdout, &format!("{CASE}::packet::regenerates")), Some("ok"), "{}", out.stdout);
    // Named from elsewhere, the suite's exporter still runs in the suite's folder.
    let regenerates = format!("{CASE}::packet::regenerates");
    let named = folder.run_in("", &["--config", "suite/harness.toml", "test", &regenerates]);
    assert_eq!(named.code, 0, "{}", named.describe());
    // The exporter really runs: one that now fails makes regenerates fail.
    write_script(&folder.path("suite/export.sh"), "#!/bin/sh\necho 'no packet today' >&2\nexit 3\n");
    let broken = folder.run_in("suite", &["test", &format!("{CASE}::packet::regenerates")]);
    assert_eq!(broken.code, 101, "{}", broken.describe());
    assert!(broken.stdout.contains("no packet today") && broken.stdout.contains("exit status: 3"), "{}", broken.stdout);
    // The mutation self-test passes the exporter's failure on as it is, not as bad usage
    // (with renders-from-input off, regenerates answers for the mutations it would catch).
    let settings = std::fs::read_to_string(folder.path("suite/harness.toml")).unwrap();
    let skip = "\n[checks.skip]\n\"packet::renders-from-input\" = \"self-test through regenerates\"\n";
    std::fs::write(folder.path("suite/harness.toml"), settings + skip).unwrap();
    let self_test = folder.run_in("suite", &["test", "--exact", &format!("{CASE}::corpus::mutation-self-test")]);
    assert_eq!(self_test.code, 101, "{}", self_test.describe());
    assert!(self_test.stdout.contains("request.json: exporter [\"./export.sh\""), "{}", self_test.stdout);
    assert!(
        self_test.stdout.contains("no packet today") && !self_test.stdout.contains("usage:"),
        "{}",
        self_test.stdout
    );
}

/// Text of an unselected evidence item in the prompt: bless reports branch isolation
/// failing, says where, and writes nothing.
fn an_exporter_that_leaks_unselected_text_fails_branch_isolation() {
    let script = "leak=$(grep -o 'UNSELECTED [^\"]*' \"$1\" | head -n 1)\n\
                  \"BIN\" export --request \"$1\" | sed \"s|\\\"systemPrompt\\\": \\\"|\\\"systemPrompt\\\": \\\"$leak |\"";
    let folder = suite_with_exporter(script, 30);
    let out = refused_bless(&folder);
    // The rendering's finding quotes the project's system prompt: cut there, so that a
    // prompt edit fails only the conformance gate, never this snapshot.
    let rendering = ": is not the templates rendered over the packet's own renderInput and resolvedBranch:";
    let text = out.describe();
    let lines = text.lines().map(|line| match line.find(rendering) {
        Some(at) => format!("{} [the lines that differ, quoting the project's prompt]", &line[..at + rendering.len()]),
        None => line.to_owned(),
    });
    let text = lines.collect::<Vec<_>>().join("\n");
    assert!(text.contains("[packet::renders-from-input] $.systemPrompt"), "{text}");
    assert_output_snapshot!(text: "bless_an_exporter_leaking_unselected_text", text, folder.root());
}

fn an_exporter_that_drops_a_hash_fails_the_gate() {
    let folder = suite_with_exporter("\"BIN\" export --request \"$1\" | sed '/^  \"exactInputHash\"/d'", 30);
    let out = refused_bless(&folder);
    assert!(out.stderr.contains("$.exactInputHash"), "{}", out.stderr);
}

/// bless judges each exporter packet by every packet rule before writing: a bad one
/// is reported, and no golden file is written or changed.
#[track_caller]
fn refused_bless(folder: &crate::support::Project) -> Output {
    let golden = folder.path(&format!("suite/golden/{CASE}/runtime-packet.json"));
    let before = std::fs::read(&golden).unwrap();
    let out = folder.run_in("suite", &["bless"]);
    assert_ne!(out.code, 0, "{}", out.describe());
    assert!(out.stderr.contains("(made from") && out.stderr.contains("request.json"), "{}", out.stderr);
    assert_eq!(std::fs::read(&golden).unwrap(), before, "a refused packet was written");
    out
}

/// A non-zero exit, output that is not a packet, and a hang: each a clear failure naming the fixture.
fn exporter_failures_name_the_fixture() {
    let cases = [
        ("echo 'the adapter crashed' >&2\nexit 3", 30),
        ("echo 'not json'", 30),
        ("echo '[1]'", 30),
        ("exec tail -f /dev/null", 1),
    ];
    let mut transcript = String::new();
    for (script, timeout) in cases {
        let folder = suite_with_exporter(script, timeout);
        let out = folder.run_in("suite", &["bless"]);
        assert_eq!(out.code, 2, "{script}: {}", out.describe());
        // An exporter failure, not a refusal of the user's data nor bad usage.
        assert!(!out.stderr.contains("refused") && !out.stderr.contains("usage:"), "{script}: {}", out.stderr);
        transcript.push_str(&format!("=== {script:?}\n{}\n", support::redact(&out.describe(), folder.root())));
    }
    // Each case in a folder of its own, written `[project]`.
    assert_output_snapshot!(text: "bless_exporter_failures", transcript);
}

/// `packetproof ARGS` in `dir`, ended after 20 s (exit 124) so a delay fails the test.
fn run_bounded(dir: &Path, args: &[&str]) -> Output {
    let mut command = std::process::Command::new("timeout");
    command.args(["-k", "2", "20", env!("CARGO_BIN_EXE_packetproof")]).args(args).current_dir(dir);
    command.env_remove("PACKETPROOF_ROOT").env_remove("CI").env_remove("PACKETPROOF_BLESS");
    crate::support::exec(command.stdin(std::process::Stdio::null()))
}

/// Every process whose pid the exporters appended to `file` has ended (a zombie
/// waiting for its reaper counts as ended). The kill is asynchronous: each is
/// given a few seconds to go.
#[track_caller]
fn assert_all_ended(file: &Path) {
    let pids = std::fs::read_to_string(file).unwrap();
    assert!(!pids.trim().is_empty(), "no exporter ran");
    for pid in pids.split_whitespace() {
        let stat = format!("/proc/{pid}/stat");
        let alive = || {
            std::fs::read_to_string(&stat)
                .is_ok_and(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
        };
        let start = std::time::Instant::now();
        while alive() && start.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!alive(), "process {pid} the exporter started is still running");
    }
}

/// An exporter and everything it started end together, and a
/// child left holding the pipes delays nothing (the timeout is 60 s; the command
/// is allowed 20).
#[cfg(unix)]
fn an_exporter_ends_whole_and_a_child_left_behind_never_delays_the_report() {
    let left_behind = "sleep 300 &\necho $! >> children.pid\necho 'gave up' >&2\nexit 3";
    let folder = suite_with_exporter(left_behind, 60);
    let out = run_bounded(&folder.path("suite"), &["bless"]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains("gave up"), "{}", out.describe());
    assert_all_ended(&folder.path("suite/children.pid"));
    let hanging = "sleep 300 &\necho $! >> children.pid\nexec sleep 300";
    let folder = suite_with_exporter(hanging, 1);
    let out = run_bounded(&folder.path("suite"), &["bless"]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains("did not finish within 1s and was killed"), "{}", out.describe());
    assert_all_ended(&folder.path("suite/children.pid"));
}

#[cfg(not(unix))]
fn an_exporter_ends_whole_and_a_child_left_behind_never_delays_the_report() {}

/// A child the exporter moved out of its process group (`setsid`) that keeps its
/// stdout open delays nothing once the exporter has exited (the timeout is 60 s; the
/// command is allowed 20), and is ended.
#[cfg(target_os = "linux")]
fn a_child_in_a_session_of_its_own_never_delays_bless() {
    let escaped = "setsid sh -c 'echo $$ >> children.pid; exec sleep 300' &\nexec \"BIN\" export --request \"$1\"";
    let folder = suite_with_exporter(escaped, 60);
    let started = std::time::Instant::now();
    let out = run_bounded(&folder.path("suite"), &["bless"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(started.elapsed() < std::time::Duration::from_secs(15), "bless waited {:?}", started.elapsed());
    assert_all_ended(&folder.path("suite/children.pid"));
}

#[cfg(not(target_os = "linux"))]
fn a_child_in_a_session_of_its_own_never_delays_bless() {}

/// An exporter that fails is exit 2, "could not run", in `verify --run-exporter` as
/// in `bless`: the report names the failure, then the command says what failed.
fn an_exporter_failure_is_exit_2_in_verify_as_in_bless() {
    let folder = suite_with_exporter("echo 'the adapter crashed' >&2\nexit 3", 30);
    let bless = folder.run_in("suite", &["bless"]);
    assert_eq!(bless.code, 2, "{}", bless.describe());
    let verify = folder.run_in("suite", &["verify", "--run-exporter", "golden"]);
    assert_eq!(verify.code, 2, "{}", verify.describe());
    assert!(verify.stdout.contains("the adapter crashed"), "the report says why: {}", verify.describe());
    assert!(verify.stderr.contains("exporter") && verify.stderr.contains("could not run"), "{}", verify.describe());
    let json = folder.run_in("suite", &["verify", "--run-exporter", "golden", "--format", "json"]);
    assert_eq!(json.code, 2, "{}", json.describe());
    assert!(json.stdout.contains("\"cause\": \"exporter-failed\""), "{}", json.stdout);
}

/// `verify` runs no command harness.toml names unless asked (nor do `validate` and
/// `prepare`, which check files they are given), and its report says which check that
/// leaves out, and why; `--run-exporter` runs it.
fn verify_runs_the_exporter_only_when_asked() {
    let folder = suite_with_exporter("touch exporter-ran\nexec \"BIN\" export --request \"$1\"", 30);
    let bless = folder.run_in("suite", &["bless"]);
    assert_eq!(bless.code, 0, "{}", bless.describe());
    let marker = folder.path("suite/exporter-ran");
    std::fs::remove_file(&marker).unwrap();
    let out = folder.run_in("suite", &["verify", "golden"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(!marker.exists(), "verify ran the exporter");
    let skipped = "[packet::regenerates] not applicable: the suite's [exporter] makes its packets, and it runs only \
                   when asked (verify --run-exporter)";
    assert!(out.stdout.contains(skipped), "{}", out.describe());
    // Nor do the other commands that check files they are given, for a golden packet.
    let golden = std::fs::read_dir(folder.path("suite/golden")).unwrap().next().unwrap().unwrap().path();
    let packet = golden.join("runtime-packet.json").display().to_string();
    let run = folder.path("run").display().to_string();
    for args in [vec!["validate", "--packet", &packet], vec!["prepare", "--packet", &packet, "--out-dir", &run]] {
        let out = folder.run_in("suite", &args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.describe());
        assert!(!marker.exists(), "{args:?} ran the exporter");
        assert!(out.stdout.contains(skipped), "{args:?}: {}", out.describe());
    }
    let out = folder.run_in("suite", &["verify", "--run-exporter", "golden"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(marker.exists(), "--run-exporter did not run the exporter");
    assert!(!out.stdout.contains("not applicable: the suite's [exporter]"), "{}", out.describe());
}

/// A packet of the reference's exporter: the compiled packet, but with its checksum
/// made in JavaScript localeCompare key order, which differs from RFC 8785 at one
/// object of mixed-case keys (`Zeta` sorts first in UTF-16 code units, last under
/// localeCompare). The reordered bytes are written out here by hand.
fn locale_ordered_packet(suite: &Path) -> String {
    let request = suite.join(format!("fixtures/{CASE}/request.json"));
    let mut value: serde_json::Value = serde_json::from_slice(&std::fs::read(&request).unwrap()).unwrap();
    value["source"]["blueprint"]["screens"][0]["content"]["copy"]["Zeta"] = "z".into();
    std::fs::write(&request, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    let exported = support::exec(support::bin().current_dir(suite).args(["export", "--request"]).arg(&request));
    assert_eq!(exported.code, 0, "{}", exported.describe());
    let mut packet: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&exported.stdout).unwrap();
    packet.remove("checksum");
    let canon = support::run_with_stdin(["canon"], serde_json::to_string(&packet).unwrap().as_bytes());
    let copy = r#"{"Zeta":"z","subtitle":"#;
    let start = canon.stdout.find(copy).expect("the mixed-case object, in RFC 8785 order");
    let end = start + canon.stdout[start..].find('}').unwrap();
    let rest = &canon.stdout[start + r#"{"Zeta":"z","#.len()..end];
    let locale = format!("{}{{{rest},\"Zeta\":\"z\"}}{}", &canon.stdout[..start], &canon.stdout[end + 1..]);
    use sha2::Digest;
    let checksum: String = sha2::Sha256::digest(locale.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    packet.insert("checksum".into(), format!("sha256:{checksum}").into());
    serde_json::to_string_pretty(&packet).unwrap()
}

/// Under `[canonical] accept_locale_key_order`, a golden packet whose checksum holds
/// only in localeCompare key order passes, and every output of `test` says so: a
/// note after the text report (on stderr beside the JSON events), the trial's
/// `system-out` in JUnit, and the trial's cell in the HTML report.
fn a_checksum_accepted_in_locale_order_is_said_in_every_output_of_test() {
    let script = format!(
        "case \"$1\" in\n  *{CASE}*) cat locale-packet.json ;;\n  *) exec \"BIN\" export --request \"$1\" ;;\nesac"
    );
    let folder = suite_with_exporter(&script, 30);
    let suite = folder.path("suite");
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    std::fs::write(suite.join("harness.toml"), settings + "\n[canonical]\naccept_locale_key_order = true\n").unwrap();
    std::fs::write(suite.join("locale-packet.json"), locale_ordered_packet(&suite)).unwrap();
    let checksum = format!("{CASE}::packet::checksum");
    let out = bless_and_test(&folder);
    assert_eq!(out.code, 0, "{}", out.describe());
    let out = folder.run_in("suite", &["test", CASE, "--junit", "junit.xml", "--report", "report.html"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert_eq!(verdict(&out.stdout, &checksum), Some("ok"), "{}", out.stdout);
    let said = "$.checksum: accepted in JavaScript localeCompare key order";
    let note = format!("note: {checksum}: {said}");
    assert!(out.stdout.lines().any(|l| l.starts_with(&note)), "{}", out.stdout);
    // Only the checksum holds in that order alone: exactInputHash covers no renderInput.
    assert!(!out.stdout.contains(&format!("{CASE}::packet::exact-input-hash: $")), "{}", out.stdout);
    let junit = std::fs::read_to_string(suite.join("junit.xml")).unwrap();
    let case = junit.split("<testcase ").find(|c| c.starts_with("name=\"packet::checksum\"")).unwrap();
    assert!(case.contains("<system-out>") && case.contains(said), "{junit}");
    let page = std::fs::read_to_string(suite.join("report.html")).unwrap();
    assert!(page.contains(said), "the HTML report does not say it");
    let json = folder.run_in("suite", &["test", CASE, "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.describe());
    assert!(json.stdout.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()), "{}", json.stdout);
    assert!(json.stderr.contains(&note), "{}", json.describe());
}

pub fn trials() -> Vec<Trial> {
    trials![
        a_child_in_a_session_of_its_own_never_delays_bless,
        an_exporter_failure_is_exit_2_in_verify_as_in_bless,
        a_checksum_accepted_in_locale_order_is_said_in_every_output_of_test,
        an_exporter_wrapping_packetproof_export_passes_the_gate,
        an_exporter_that_leaks_unselected_text_fails_branch_isolation,
        an_exporter_that_drops_a_hash_fails_the_gate,
        exporter_failures_name_the_fixture,
        an_exporter_ends_whole_and_a_child_left_behind_never_delays_the_report,
        verify_runs_the_exporter_only_when_asked,
    ]
}
