//! `[evaluator]`: a suite that judges agent answers with its own evaluator. Its
//! verdict on every run fixture is golden: `bless` writes it, `test` fails when it
//! changes, and a negative fixture declares the stage it must fail at. The
//! maintainers' two edits are proven with an evaluator in shell (always run) and the
//! same one in Python (ignored when python3 is absent).

use crate::support::{self, Output, Project};
use crate::test::verdict;
use libtest_mimic::Trial;
use std::path::Path;

/// The answers the tests write: a line per screen and per instruction.
const NAMED: &str = "openai-staged-alone-selected";
const UNNAMED: &str = "google-staged-both-selected";
const OTHER: &str = "anthropic-staged-both-selected-interop-shape";

#[derive(Clone, Copy)]
enum Lang {
    Shell,
    Python,
}

/// An evaluator with two rules: 2 to `max` instructions, and (with `names`) a name on
/// every screen. The same messages in both languages, so the same golden verdicts.
fn evaluator(lang: Lang, max: usize, names: bool) -> String {
    match lang {
        Lang::Shell => {
            let names = if names {
                r#"if [ "$named" -lt "$screens" ]; then
  failures="${failures:+$failures, }{\"stage\": \"screens\", \"message\": \"every screen needs a name: $((screens - named)) of $screens have none\"}"
fi"#
            } else {
                ""
            };
            format!(
                r#"#!/bin/sh
# The suite's evaluator: eval.sh {{run_dir}} {{packet}} {{output}}
[ -f "$1/agent-request.json" ] && [ -f "$2" ] || {{ echo "not given a run and its packet" >&2; exit 3; }}
out="$3"
instructions=$(grep -c '^    "' "$out")
screens=$(grep -c '"id":' "$out")
named=$(grep -c '"name":' "$out")
failures=""
if [ "$instructions" -lt 2 ] || [ "$instructions" -gt {max} ]; then
  failures="{{\"stage\": \"instructions\", \"message\": \"expected 2-{max} instructions, found $instructions\"}}"
fi
{names}
if [ -z "$failures" ]; then echo '{{"ok": true, "failures": []}}'; exit 0; fi
echo "{{\"ok\": false, \"failures\": [$failures]}}"
exit 1
"#
            )
        }
        Lang::Python => format!(
            r#"import json, os, sys
run_dir, packet, output = sys.argv[1:4]
if not (os.path.isfile(os.path.join(run_dir, "agent-request.json")) and os.path.isfile(packet)):
    sys.exit("not given a run and its packet")
with open(output) as f:
    answer = json.load(f)
failures = []
n = len(answer["instructions"])
if not 2 <= n <= {max}:
    failures.append({{"stage": "instructions", "message": f"expected 2-{max} instructions, found {{n}}"}})
screens = answer["screens"]
unnamed = [s for s in screens if not s.get("name")]
if {names} and unnamed:
    failures.append({{"stage": "screens", "message": f"every screen needs a name: {{len(unnamed)}} of {{len(screens)}} have none"}})
print(json.dumps({{"ok": not failures, "proofClass": "advisory-subagent-smoke", "failures": failures,
                  "summary": {{"screenCount": len(screens), "instructionCount": n}}}}, indent=2))
sys.exit(1 if failures else 0)
"#,
            names = if names { "True" } else { "False" }
        ),
    }
}

/// An answer: each screen `(id, name)`, then `instructions` instructions.
fn answer(screens: &[(&str, Option<&str>)], instructions: usize) -> String {
    let screens: Vec<String> = screens
        .iter()
        .map(|(id, name)| match name {
            Some(name) => format!("    {{\"id\": \"{id}\", \"name\": \"{name}\"}}"),
            None => format!("    {{\"id\": \"{id}\"}}"),
        })
        .collect();
    let steps: Vec<String> = (1..=instructions).map(|i| format!("    \"step {i}\"")).collect();
    format!(
        "{{\n  \"screens\": [\n{}\n  ],\n  \"instructions\": [\n{}\n  ]\n}}\n",
        screens.join(",\n"),
        steps.join(",\n")
    )
}

fn write_script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// `init`'s suite judged by `lang`'s evaluator (2 to 6 instructions, no name rule),
/// with answers of the tests' own; not yet blessed with it.
fn suite(lang: Lang) -> Project {
    let folder = Project::empty();
    let suite = folder.init();
    let named = [("hello", Some("Hello")), ("practice", Some("Practice"))];
    std::fs::write(suite.join(format!("fixtures/{NAMED}/run/raw-output.json")), answer(&named, 3)).unwrap();
    std::fs::write(suite.join(format!("fixtures/{OTHER}/run/raw-output.json")), answer(&named, 2)).unwrap();
    let unnamed = [("hello", Some("Hello")), ("practice", None)];
    std::fs::write(suite.join(format!("fixtures/{UNNAMED}/run/raw-output.json")), answer(&unnamed, 3)).unwrap();
    set_evaluator(&folder, lang, 6, false);
    let command = match lang {
        Lang::Shell => r#"["./eval.sh", "{run_dir}", "{packet}", "{output}"]"#,
        Lang::Python => r#"["python3", "eval.py", "{run_dir}", "{packet}", "{output}"]"#,
    };
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    std::fs::write(suite.join("harness.toml"), format!("{settings}\n[evaluator]\ncommand = {command}\n")).unwrap();
    folder
}

/// The maintainer's edit of the evaluator.
fn set_evaluator(folder: &Project, lang: Lang, max: usize, names: bool) {
    let file = match lang {
        Lang::Shell => "suite/eval.sh",
        Lang::Python => "suite/eval.py",
    };
    write_script(&folder.path(file), &evaluator(lang, max, names));
}

fn expect(folder: &Project, case: &str, text: Option<&str>) {
    let file = folder.path(&format!("suite/fixtures/{case}/expect.toml"));
    match text {
        Some(text) => std::fs::write(file, text).unwrap(),
        None => std::fs::remove_file(file).unwrap(),
    }
}

#[track_caller]
fn bless(folder: &Project) {
    let out = folder.run_in("suite", &["bless"]);
    assert_eq!(out.code, 0, "{}", out.describe());
}

#[track_caller]
fn green(folder: &Project) -> Output {
    let out = folder.run_in("suite", &["test"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    out
}

#[track_caller]
fn red(folder: &Project, trial: &str, why: &str) -> Output {
    let out = folder.run_in("suite", &["test"]);
    assert_eq!(out.code, 101, "{}", out.describe());
    assert_eq!(verdict(&out.stdout, trial), Some("FAILED"), "{trial}: {}", out.stdout);
    assert!(out.stdout.contains(why), "{why:?} in {}", out.stdout);
    out
}

fn declared(stage: &str, message: &str) -> String {
    format!(
        "[evaluator]\nstage = \"{stage}\"\n\n[[fails]]\ncheck = \"run::evaluation\"\nmessage = \"{message}\"\n\n\
         [[fails]]\ncheck = \"run::completion\"\nmessage = \"missing: the run is not completed\"\n"
    )
}

/// Every screen needs a name: the built-in evaluator (and the suite's, before the
/// rule) passes the answer with an unnamed screen.
fn new_rule(lang: Lang) {
    let folder = suite(lang);
    bless(&folder);
    let verdict_file = folder.path(&format!("suite/golden/{UNNAMED}/evaluator-verdict.json"));
    let blessed: serde_json::Value = serde_json::from_slice(&std::fs::read(&verdict_file).unwrap()).unwrap();
    assert_eq!(blessed["ok"], true, "{blessed}");
    green(&folder);
    let suite = folder.path("suite");
    support::git(&suite, &["init", "-q", "-b", "main"]);
    support::git(&suite, &["add", "-A"]);
    support::git(&suite, &["commit", "-q", "-m", "base"]);
    let unchanged = folder.run_in("suite", &["release-check"]);
    assert!(unchanged.code == 0 && !unchanged.stdout.contains("Evaluator verdicts"), "{}", unchanged.describe());
    // The maintainer's new rule: red, on the verdict and on the evaluation.
    set_evaluator(&folder, lang, 6, true);
    let trial = format!("{UNNAMED}::run::evaluator-verdict");
    red(&folder, &trial, "blessed: it passes; now it fails at stage \"screens\"");
    // Their own change: the fixture is a negative one now. Still red until blessed.
    expect(&folder, UNNAMED, Some(&declared("screens", "every screen needs a name: 1 of 2 have none")));
    red(&folder, &trial, "the evaluator's verdict is not the blessed one");
    bless(&folder);
    green(&folder);
    // release-check shows the verdict that changed (the rule explains it: no violation).
    let release = folder.run_in("suite", &["release-check"]);
    assert_eq!(release.code, 0, "{}", release.describe());
    let change =
        format!("Evaluator verdicts (golden):\n- {UNNAMED}: passes → fails at stage \"screens\" (1 failure(s))");
    assert!(release.stdout.contains(&change), "{}", release.stdout);
    // The declared stage is checked: another one fails.
    expect(&folder, UNNAMED, Some(&declared("names", "every screen needs a name")));
    red(&folder, &trial, "declares that the evaluator fails the answer at stage \"names\", but it fails at stage");
}

/// 2 to 8 instructions instead of 2 to 6: the answer with seven was a negative fixture.
fn relaxed_rule(lang: Lang) {
    let folder = suite(lang);
    let seven = answer(&[("hello", Some("Hello"))], 7);
    std::fs::write(folder.path(&format!("suite/fixtures/{NAMED}/run/raw-output.json")), seven).unwrap();
    expect(&folder, NAMED, Some(&declared("instructions", "expected 2-6 instructions, found 7")));
    bless(&folder);
    green(&folder);
    set_evaluator(&folder, lang, 8, false);
    let trial = format!("{NAMED}::run::evaluator-verdict");
    red(&folder, &trial, "blessed: it fails at stage \"instructions\"; now it passes");
    // Their own change: the fixture is a positive one again. Still red until blessed.
    expect(&folder, NAMED, None);
    red(&folder, &trial, "the evaluator's verdict is not the blessed one");
    // Blessed from the gate this time, as a stale packet is.
    let blessing =
        support::exec(support::bin().current_dir(folder.path("suite")).env("PACKETPROOF_BLESS", "1").arg("test"));
    assert_eq!(blessing.code, 0, "{}", blessing.describe());
    green(&folder);
}

fn a_new_evaluator_rule_is_red_until_the_maintainer_declares_it_and_blesses() {
    new_rule(Lang::Shell);
}

fn a_relaxed_evaluator_rule_is_red_until_the_maintainer_undeclares_it_and_blesses() {
    relaxed_rule(Lang::Shell);
}

fn a_new_evaluator_rule_in_python() {
    new_rule(Lang::Python);
}

fn a_relaxed_evaluator_rule_in_python() {
    relaxed_rule(Lang::Python);
}

/// `evaluate` records the suite's verdict, and says where the built-in evaluator,
/// which applies to block-builder packets, disagrees (a note, not a failure).
fn evaluate_uses_the_suites_evaluator_and_notes_the_builtin_disagreement() {
    let folder = suite(Lang::Shell);
    bless(&folder);
    let packet = format!("golden/{NAMED}/runtime-packet.json");
    let prepared = folder.run_in("suite", &["prepare", "--packet", &packet, "--out-dir", "run"]);
    assert_eq!(prepared.code, 0, "{}", prepared.describe());
    let answer = std::fs::read(folder.path(&format!("suite/fixtures/{NAMED}/run/raw-output.json"))).unwrap();
    std::fs::write(folder.path("suite/run/raw-output.json"), answer).unwrap();
    let out = folder.run_in("suite", &["evaluate", "--run-dir", "run"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(out.stdout.contains("note: the built-in block-builder evaluator disagrees"), "{}", out.stdout);
    assert!(out.stdout.contains("the built-in one fails at stage \"schema\""), "{}", out.stdout);
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.path("suite/run/evaluation.json")).unwrap()).unwrap();
    assert_eq!(written["ok"], true);
    assert_eq!(written["earliestFailureStage"], serde_json::Value::Null, "filled in: {written}");
    assert!(written["rawOutputChecksum"].as_str().unwrap().starts_with("sha256:"), "{written}");
    // verify runs suite code only when asked: the evaluation is then not re-checked.
    let verified = folder.run_in("suite", &["verify", "run"]);
    assert!(
        verified.stdout.contains("run::evaluation") && verified.stdout.contains("--run-exporter"),
        "{}",
        verified.describe()
    );
    // An evaluator that cannot give an evaluation: exit 2, naming the run and why.
    for (script, why) in [
        ("#!/bin/sh\necho broken >&2\nexit 3\n", "failed (exit status: 3): \"broken\""),
        ("#!/bin/sh\necho '{\"ok\": true}'\n", "printed stdout $.failures: expected an array"),
        ("#!/bin/sh\necho '{\"ok\": true, \"failures\": []}'\nexit 1\n", "exited 1 (a failed evaluation) but printed"),
        ("#!/bin/sh\necho 'ok'\n", "printed invalid JSON"),
    ] {
        write_script(&folder.path("suite/eval.sh"), script);
        let out = folder.run_in("suite", &["evaluate", "--run-dir", "run"]);
        assert_eq!(out.code, 2, "{}", out.describe());
        assert!(out.stderr.contains("evaluator [\"./eval.sh\"") && out.stderr.contains(why), "{why}: {}", out.stderr);
    }
}

fn python_present() -> bool {
    std::process::Command::new("python3").arg("--version").output().is_ok_and(|out| out.status.success())
}

pub fn trials() -> Vec<Trial> {
    let mut trials = trials![
        a_new_evaluator_rule_is_red_until_the_maintainer_declares_it_and_blesses,
        a_relaxed_evaluator_rule_is_red_until_the_maintainer_undeclares_it_and_blesses,
        evaluate_uses_the_suites_evaluator_and_notes_the_builtin_disagreement,
    ];
    let missing = (!python_present()).then(|| "python3 is absent".to_owned());
    let in_python = trials![a_new_evaluator_rule_in_python, a_relaxed_evaluator_rule_in_python];
    trials.extend(in_python.into_iter().map(|trial| crate::support::needs("python3", missing.clone(), trial)));
    trials
}
