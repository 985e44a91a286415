//! Contract profiles: a suite owns its contract. The worked plain-text suite
//! (examples/python-app: its own str.format prompts, its own exporter, no output
//! schema) is green with no core rule skipped, its real requests pass `wire --check`
//! and its production calls are matched by `trace`; a block-builder maintainer's
//! own edits (a schema field, a branch value) go green after their change and
//! `bless`, and nothing rewrites a file they edited.

use crate::support::{self, run_in, Output, Project};
use libtest_mimic::Trial;
use serde_json::{json, Value};
use std::path::PathBuf;

const APP: &str = "examples/python-app";
const CASE: &str = "openai-formal-question";

pub fn trials() -> Vec<Trial> {
    let mut trials = crate::trials![
        the_plain_text_suite_is_green_with_no_core_rule_skipped,
        plain_text_requests_pass_the_wire_check_and_json_modes_fail_it,
        a_production_call_of_the_plain_text_suite_is_matched_by_trace,
        real_data_in_the_suites_str_format_templates_conforms_to_its_signed_gate,
        a_template_conformance_cannot_follow_is_refused_by_name_when_the_gate_is_signed,
        an_edited_schema_is_red_until_bless_pins_it,
        a_new_branch_value_is_the_suites_to_declare,
        a_renamed_branch_value_keeps_every_rule_running,
        a_run_keeps_whichever_declared_task_type_and_prompt_mode_its_packet_has,
        a_custom_json_profile_without_an_evaluator_is_judged_by_its_schema,
        a_request_bless_would_refuse_says_so_instead_of_re_bless,
    ];
    trials.push(support::trial_needing(
        "python3",
        module_path!(),
        "the_python_exporter_makes_the_committed_golden_packets",
        the_python_exporter_makes_the_committed_golden_packets,
    ));
    trials
}

/// The worked suite, copied; with `Twins::Rust`, harness.toml names the Rust twins of
/// its Python exporter and evaluator instead.
fn app(twins: Twins) -> (Project, PathBuf) {
    let project = Project::with(&[APP]);
    let suite = project.path(APP);
    if twins == Twins::Rust {
        let mut settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
        for (python, twin, args) in [
            ("[\"python3\", \"app/export_packet.py\", \"{request}\"]", "rust_exporter", "\"{request}\""),
            (
                "[\"python3\", \"app/evaluate_reply.py\", \"{packet}\", \"{output}\"]",
                "rust_evaluator",
                "\"{packet}\", \"{output}\"",
            ),
        ] {
            assert!(settings.contains(python), "{settings}");
            let rust = format!("[{:?}, {args}]", support::example(twin).display().to_string());
            settings = settings.replace(python, &rust);
        }
        std::fs::write(suite.join("harness.toml"), settings).unwrap();
    }
    (project, suite)
}

/// Which exporter and evaluator the worked suite runs: its own (Python) or their Rust twins.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Twins {
    Python,
    Rust,
}

/// Every trial passed or was ignored only as not applicable to a custom profile.
#[track_caller]
fn green_without_skips(out: &Output) {
    assert_eq!(out.code, 0, "{}", out.describe());
    let events: Vec<Value> = out.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let ignored: Vec<&Value> = events.iter().filter(|e| e["event"] == "ignored").collect();
    assert!(!ignored.is_empty(), "{}", out.stdout);
    for event in ignored {
        let message = event["message"].as_str().unwrap_or_default();
        let another_profile =
            message.contains("contract profile is \"custom\"") || message.contains("names no Builder schema");
        let no_such_file = message.contains("the fixture's run/ has no");
        assert!(another_profile || no_such_file, "only rules of another profile or file may be left out: {event}");
        assert!(!message.contains("turned off"), "{event}");
    }
}

fn the_plain_text_suite_is_green_with_no_core_rule_skipped() {
    let (_project, suite) = app(Twins::Rust);
    let out = run_in(&suite, &["test", "--format", "json"]);
    green_without_skips(&out);
    // Its answers are judged by its own evaluator, whose verdicts are golden.
    for case in ["openai-formal-question", "neg-eval-promises-a-date"] {
        let name = format!("{case}::run::evaluator-verdict");
        assert!(out.stdout.contains(&format!("\"name\": \"{name}\", \"event\": \"ok\"")), "{name}: {}", out.stdout);
    }
    let answer = suite.join("fixtures/openai-formal-question/run/raw-output.json");
    let text = std::fs::read_to_string(&answer).unwrap();
    std::fs::write(&answer, text.replace("Kind regards", "We will refund you.\n\nKind regards")).unwrap();
    let red = run_in(&suite, &["test", "openai-formal-question::run::"]);
    assert_eq!(red.code, 101, "{}", red.describe());
    assert!(red.stdout.contains("'refund you'"), "{}", red.stdout);
    std::fs::write(&answer, text).unwrap();
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    assert!(!settings.contains("[checks"), "the worked suite skips nothing: {settings}");
    // The profile is enforced: a packet of another agent fails packet::contract.
    let golden = suite.join("golden").join(CASE).join("runtime-packet.json");
    let mut packet = packetproof::canonical::parse(&std::fs::read(&golden).unwrap()).unwrap();
    packet["agentId"] = json!("updateBlockFromLibrary");
    packetproof::digest::seal(packet.as_object_mut().unwrap());
    let other = suite.join("other.json");
    std::fs::write(&other, packetproof::canonical::to_pretty(&packet)).unwrap();
    let refused = run_in(&suite, &["validate", "--packet", "other.json"]);
    assert_eq!(refused.code, 1, "{}", refused.describe());
    assert!(refused.stdout.contains("expected \"support-reply\""), "{}", refused.stdout);
}

/// The body the app sends with the official OpenAI SDK (`client.chat.completions.create`).
fn chat_body(packet: &Value) -> Value {
    json!({
        "messages": [
            {"role": "system", "content": packet["systemPrompt"]},
            {"role": "user", "content": packet["userMessage"]},
        ],
        "model": packet["model"],
        "max_completion_tokens": packet["maxTokens"],
    })
}

fn plain_text_requests_pass_the_wire_check_and_json_modes_fail_it() {
    let (_project, suite) = app(Twins::Python);
    let packet_file = format!("golden/{CASE}/runtime-packet.json");
    let packet = packetproof::canonical::parse(&std::fs::read(suite.join(&packet_file)).unwrap()).unwrap();
    let check = |body: &Value| {
        std::fs::write(suite.join("sent.json"), body.to_string()).unwrap();
        run_in(&suite, &["wire", "--packet", &packet_file, "--api", "openai-chat", "--check", "sent.json"])
    };
    let sent = chat_body(&packet);
    let out = check(&sent);
    assert_eq!(out.code, 0, "{}", out.describe());
    let mut json_mode = sent.clone();
    json_mode["response_format"] = json!({"type": "json_object"});
    let out = check(&json_mode);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stdout.contains("response_format"), "{}", out.stdout);
    // The body `wire` writes is the plain one.
    let written = run_in(&suite, &["wire", "--packet", &packet_file, "--api", "openai-chat"]);
    assert_eq!(written.code, 0, "{}", written.describe());
    let body = packetproof::canonical::parse(written.stdout.as_bytes()).unwrap();
    assert!(body.get("response_format").is_none(), "{body}");
    // Anthropic: no tools for a plain-text answer.
    let anthropic = "golden/anthropic-casual-question/runtime-packet.json";
    let written = run_in(&suite, &["wire", "--packet", anthropic, "--api", "anthropic"]);
    let body = packetproof::canonical::parse(written.stdout.as_bytes()).unwrap();
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "{body}");
}

/// One span as the official openai-v2 instrumentation writes it, content on the span.
fn span(packet: &Value, system: &str) -> String {
    let messages = json!([
        {"role": "system", "parts": [{"type": "text", "content": system}]},
        {"role": "user", "parts": [{"type": "text", "content": packet["userMessage"]}]},
    ]);
    let attribute = |key: &str, value: Value| json!({"key": key, "value": value});
    let span = json!({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "opentelemetry.util.genai.handler"}, "spans": [{
        "traceId": "c6e2d13080ee6793bd86508e6060fb93", "spanId": "58a5dbbbbdf78971", "name": "chat gpt-4.1", "kind": 3,
        "attributes": [
            attribute("gen_ai.operation.name", json!({"stringValue": "chat"})),
            attribute("gen_ai.request.model", json!({"stringValue": packet["model"]})),
            attribute("gen_ai.provider.name", json!({"stringValue": "openai"})),
            attribute("gen_ai.request.max_tokens", json!({"intValue": packet["maxTokens"].to_string()})),
            attribute("gen_ai.input.messages", json!({"stringValue": messages.to_string()})),
        ]
    }]}]}]});
    format!("{span}\n")
}

fn a_production_call_of_the_plain_text_suite_is_matched_by_trace() {
    let (_project, suite) = app(Twins::Python);
    let packet_file = suite.join("golden").join(CASE).join("runtime-packet.json");
    let packet = packetproof::canonical::parse(&std::fs::read(&packet_file).unwrap()).unwrap();
    let system = packet["systemPrompt"].as_str().unwrap();
    std::fs::write(suite.join("exact.jsonl"), span(&packet, system)).unwrap();
    std::fs::write(suite.join("drift.jsonl"), span(&packet, &system.replace("three", "four"))).unwrap();
    let exact = run_in(&suite, &["trace", "exact.jsonl", "--packets", "golden"]);
    assert_eq!(exact.code, 0, "{}", exact.describe());
    assert!(exact.stdout.contains("matched"), "{}", exact.stdout);
    let drift = run_in(&suite, &["trace", "drift.jsonl", "--packets", "golden"]);
    assert_eq!(drift.code, 1, "{}", drift.describe());
}

/// The suite signs its gate; a production call with a new customer's data in the slots of
/// its vouched `str.format` templates conforms, and one changed word of a template does not.
fn real_data_in_the_suites_str_format_templates_conforms_to_its_signed_gate() {
    let (_project, suite) = app(Twins::Rust);
    let key = suite.join("owner-only.pem");
    std::fs::copy(support::root().join("tests/keys/test-ed25519.pem"), &key).unwrap();
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let signed = run_in(&suite, &["test", "--attest", "owner-only.pem", "--attestation", "gate.json"]);
    assert_eq!(signed.code, 0, "{}", signed.describe());
    let public = support::root().join("tests/keys/test-ed25519.pub.pem");
    let gate = std::cell::Cell::new("gate.json");
    let trace_with = |model: &str, max_tokens: u64, system: &str, user: &str| {
        let packet = json!({"model": model, "maxTokens": max_tokens, "userMessage": user});
        std::fs::write(suite.join("calls.jsonl"), span(&packet, system)).unwrap();
        let args = ["trace", "calls.jsonl", "--packets", "golden", "--gate", gate.get(), "--trusted-key"];
        run_in(&suite, &[&args[..], &[public.to_str().unwrap(), "--format", "json"]].concat())
    };
    let trace = |system: &str, user: &str| trace_with("gpt-4.1", 800, system, user);
    let system = std::fs::read_to_string(suite.join("app/prompts/system.txt")).unwrap().replace("{tone}", "formal");
    let user = "Customer Noor Haddad asks:\nWhere do I change my billing address?\n";
    let conforms = trace(&system, user);
    assert_eq!(conforms.code, 0, "{}", conforms.describe());
    let report = packetproof::canonical::parse(conforms.stdout.as_bytes()).unwrap();
    assert_eq!(report["calls"][0]["verdict"], "conforms", "{report}");
    assert!(conforms.stdout.contains("reply.txt") && conforms.stdout.contains("system.txt"), "{}", conforms.stdout);
    let drifted = trace(&system.replace("three short", "four short"), user);
    assert_eq!(drifted.code, 1, "{}", drifted.describe());
    // The whole call, not two texts: a model nobody vouched, or a budget past the model's limit.
    let unlisted = trace_with("gpt-6-unlisted", 800, &system, user);
    assert_eq!(unlisted.code, 1, "{}", unlisted.describe());
    assert!(unlisted.stdout.contains("gpt-6-unlisted\\\" is none the gate vouched"), "{}", unlisted.stdout);
    // The budget is one the reviewed packets carry, not any within the model's limit.
    for tokens in [99_999_999, 801, 1] {
        let budget = trace_with("gpt-4.1", tokens, &system, user);
        assert_eq!(budget.code, 1, "{}", budget.describe());
        let said = format!("its max tokens {tokens} are none the gate vouched for model \\\"gpt-4.1\\\" ([800];");
        assert!(budget.stdout.contains(&said), "{}", budget.stdout);
    }

    // An app that strips its renderings' trailing newlines declares it, and the gate holds
    // its golden packets to the declaration as production holds calls: packets its
    // exporter did not strip are none of the app's calls, so the gate signs nothing.
    let (stripped_system, stripped_user) = (system.trim_end_matches('\n'), user.trim_end_matches('\n'));
    assert_eq!(trace(stripped_system, stripped_user).code, 1);
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    let declared = "style = \"format\"\nrendering = \"strip-trailing-newlines\"";
    std::fs::write(suite.join("harness.toml"), settings.replace("style = \"format\"", declared)).unwrap();
    // trace reads the golden packets under the declaration too, and refuses them.
    let unread = trace(stripped_system, stripped_user);
    assert_eq!(unread.code, 1, "{}", unread.describe());
    assert!(unread.stderr.contains("[packet::template-conformance]"), "{}", unread.describe());
    let refused = run_in(&suite, &["test", "--attest", "owner-only.pem", "--attestation", "gate-stripped.json"]);
    assert_ne!(refused.code, 0, "{}", refused.describe());
    assert!(refused.stdout.contains("production would refuse this packet"), "{}", refused.describe());
    assert!(!suite.join("gate-stripped.json").exists(), "a gate over packets production refuses is never signed");
    std::fs::write(suite.join("harness.toml"), settings).unwrap();

    // A template edited after the gate ran: the golden packets rendered from it are no
    // renderings of it, and trace refuses to read them as `test` would (one judge), naming
    // the template, until they are blessed again (gate.rs holds the deployed case: a
    // template the gate does not vouch for is left out by name).
    let followup = suite.join("app/prompts/followup.txt");
    let text = std::fs::read_to_string(&followup).unwrap();
    std::fs::write(&followup, text.replace("New question:", "Next question:")).unwrap();
    let stale = trace(&system, user);
    assert_eq!(stale.code, 1, "{}", stale.describe());
    assert!(
        stale.stderr.contains("[packet::template-conformance]") && stale.stderr.contains("followup.txt"),
        "{}",
        stale.describe()
    );
}

/// `test --attest` signs no gate over a template `trace --gate` could not follow: it
/// names the template and why, before any trial runs (exit 2), never at production time.
fn a_template_conformance_cannot_follow_is_refused_by_name_when_the_gate_is_signed() {
    let (_project, suite) = app(Twins::Rust);
    let key = suite.join("owner-only.pem");
    std::fs::copy(support::root().join("tests/keys/test-ed25519.pem"), &key).unwrap();
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let reply = suite.join("app/prompts/reply.txt");
    let text = std::fs::read_to_string(&reply).unwrap();
    std::fs::write(&reply, format!("{text}{{question!x}}\n")).unwrap();
    let signed = run_in(&suite, &["test", "--attest", "owner-only.pem", "--attestation", "gate.json"]);
    assert_eq!(signed.code, 2, "{}", signed.describe());
    assert!(
        signed.stderr.contains("the template reply.txt: the field at byte")
            && signed.stderr.contains("unknown conversion '!x'"),
        "{}",
        signed.describe()
    );
    assert!(!suite.join("gate.json").exists());
}

fn the_python_exporter_makes_the_committed_golden_packets() {
    let (_project, suite) = app(Twins::Python);
    green_without_skips(&run_in(&suite, &["test", "--format", "json"]));
}

/// A block-builder suite whose schema is its own file (no Builder schema named): the
/// maintainers' repository.
fn own_schema_suite() -> Project {
    let project = Project::suite(&["anthropic-staged-pred-selected"]);
    let settings = std::fs::read_to_string(project.path("harness.toml")).unwrap();
    let own: String = settings.lines().filter(|l| !l.starts_with("builder_schema")).map(|l| format!("{l}\n")).collect();
    let small = "\n[corpus]\nrequire_branch_coverage = false\n";
    std::fs::write(project.path("harness.toml"), own + small).unwrap();
    project.blessed()
}

fn an_edited_schema_is_red_until_bless_pins_it() {
    let project = own_schema_suite();
    assert!(project.path("packetproof.lock").is_file(), "bless pins the suite in its lock");
    let green = project.run(&["test"]);
    assert_eq!(green.code, 0, "{}", green.describe());
    assert!(green.stdout.contains("corpus::snapshot-parity") && green.stdout.contains("names no Builder schema"));
    // The maintainer adds an optional field to their own schema.
    let snapshot = project.path("references/block-screen-output-schema.json");
    let text = std::fs::read_to_string(&snapshot).unwrap();
    let mut schema = packetproof::canonical::parse(text.as_bytes()).unwrap();
    schema["schema"]["properties"]["notes"] = json!({"type": "string"});
    let edited = packetproof::canonical::to_pretty(&schema);
    std::fs::write(&snapshot, &edited).unwrap();
    let red = project.run(&["test"]);
    assert_eq!(red.code, 101, "{}", red.describe());
    assert!(
        red.stdout.contains("corpus::lock") && red.stdout.contains("changed since the last bless"),
        "{}",
        red.stdout
    );
    // Nothing writes over it: schema --write refuses, and the file keeps the edit.
    let write = project.run(&["schema", "--write"]);
    assert_eq!(write.code, 2, "{}", write.describe());
    assert_eq!(std::fs::read_to_string(&snapshot).unwrap(), edited);
    let blessed = project.run(&["bless"]);
    assert_eq!(blessed.code, 0, "{}", blessed.describe());
    assert!(blessed.stdout.contains("pinned    packetproof.lock"), "{}", blessed.stdout);
    let green = project.run(&["test"]);
    assert_eq!(green.code, 0, "{}", green.describe());
    // A Windows checkout (CRLF) of the same schema is the same schema.
    std::fs::write(&snapshot, edited.replace('\n', "\r\n")).unwrap();
    let crlf = project.run(&["test", "corpus::lock"]);
    assert_eq!(crlf.code, 0, "{}", crlf.describe());
}

fn a_new_branch_value_is_the_suites_to_declare() {
    let project = Project::suite(&[]);
    let mut packet = support::compiled_packet("anthropic-staged-pred-selected");
    packet["resolvedBranch"]["insertionMode"] = json!("replace");
    packetproof::digest::seal(packet.as_object_mut().unwrap());
    let file = project.path("replace.json");
    std::fs::write(&file, packetproof::canonical::to_pretty(&packet)).unwrap();
    let file = file.to_str().unwrap();
    let refused = project.run(&["validate", "--packet", file]);
    assert_eq!(refused.code, 1, "{}", refused.describe());
    assert!(refused.stdout.contains("$.resolvedBranch.insertionMode"), "{}", refused.stdout);
    let settings = std::fs::read_to_string(project.path("harness.toml")).unwrap();
    let declared = settings + "\n[contract.branch]\ninsertionMode = [\"replace\"]\n";
    std::fs::write(project.path("harness.toml"), declared).unwrap();
    let accepted = project.run(&["validate", "--packet", file]);
    assert_eq!(accepted.code, 0, "{}", accepted.describe());
    // A field the block builder does not have is a custom profile's, said loudly.
    std::fs::write(project.path("harness.toml"), "[contract.branch]\ntone = [\"formal\"]\n").unwrap();
    let wrong = project.run(&["validate", "--packet", file]);
    assert_eq!(wrong.code, 2, "{}", wrong.describe());
    assert!(wrong.stderr.contains("not a block-builder branch field"), "{}", wrong.stderr);
}

/// The maintainers rename a built-in branch value (`staged` → `staged-review`, its
/// partial renamed with it): every block-builder rule keeps running on the new packets
/// (branch-isolation included, where an added value turned it off), a packet blessed
/// before keeps validating, and `bless` writes the new name.
fn a_renamed_branch_value_keeps_every_rule_running() {
    let project = Project::suite(&["anthropic-staged-pred-selected"]);
    assert_eq!(project.run(&["bless"]).code, 0);
    let golden = project.path("golden/anthropic-staged-pred-selected/runtime-packet.json");
    let before = std::fs::read(&golden).unwrap();
    let partials = project.path("references/prompts/branches/insertion");
    std::fs::copy(partials.join("staged.md.j2"), partials.join("staged-review.md.j2")).unwrap();
    let settings = std::fs::read_to_string(project.path("harness.toml")).unwrap();
    let renamed = settings + "\n[contract.renamed.insertionMode]\n\"staged-review\" = \"staged\"\n";
    std::fs::write(project.path("harness.toml"), renamed).unwrap();
    // Blessed before, it validates as it is (as the golden file, it is only to re-bless).
    std::fs::write(project.path("old.json"), &before).unwrap();
    let old = project.run(&["validate", "--packet", project.path("old.json").to_str().unwrap()]);
    assert_eq!(old.code, 0, "a packet blessed before keeps the old name: {}", old.describe());
    let stale = project.run(&["validate", "--packet", golden.to_str().unwrap()]);
    assert!(
        stale.stdout.contains("(1 finding(s))") && stale.stdout.contains("[packet::regenerates]"),
        "{}",
        stale.stdout
    );
    assert_eq!(project.run(&["bless"]).code, 0);
    let after: Value = packetproof::canonical::parse(&std::fs::read(&golden).unwrap()).unwrap();
    assert_ne!(std::fs::read(&golden).unwrap(), before);
    assert_eq!(after["resolvedBranch"]["insertionMode"], json!("staged-review"));
    // The case's trials (one fixture covers no branch matrix).
    let out = project.run(&["test", "--format", "json", "anthropic-staged-pred-selected"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    for rule in ["packet::branch-isolation", "packet::renders-from-input", "corpus::mutation-self-test"] {
        let ran = out.stdout.lines().any(|l| l.contains(rule) && l.contains("\"event\": \"ok\""));
        assert!(ran, "{rule} runs on the renamed value: {}", out.stdout);
    }
    // A branch the request does not resolve to is still refused under the new name.
    let mut flipped = after.clone();
    flipped["resolvedBranch"]["insertionMode"] = json!("immediate");
    packetproof::digest::seal(flipped.as_object_mut().unwrap());
    std::fs::write(&golden, packetproof::canonical::to_pretty(&flipped)).unwrap();
    let red = project.run(&["test", "anthropic-staged-pred-selected"]);
    assert_eq!(red.code, 101, "{}", red.describe());
    let says = "[packet::branch-isolation] $.resolvedBranch.insertionMode: the request resolves to \"staged-review\"";
    assert!(red.stdout.contains(says), "{}", red.stdout);
}

/// A profile that declares several task types and prompt modes: a packet of the second
/// of each is prepared, evaluated, completed and verified as itself (the run files do
/// not carry the two fields; its checksum names them), and a run whose checksum binds
/// no declared pair is a checksum failure, never another packet's pass. A plain-text
/// answer needs the suite's [evaluator]: without one `evaluate` refuses, with the reason
/// `verify` gives for not applying run::evaluation.
fn a_run_keeps_whichever_declared_task_type_and_prompt_mode_its_packet_has() {
    let (_project, suite) = app(Twins::Rust);
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    let several = settings
        .replace("task_types = [\"support-reply\"]", "task_types = [\"support-reply\", \"escalation\"]")
        .replace("prompt_modes = [\"chat\"]", "prompt_modes = [\"chat\", \"email\"]");
    assert_ne!(several, settings);
    let declared = several.split_once("[evaluator]").expect("the worked suite has an [evaluator]").0;
    std::fs::write(suite.join("harness.toml"), declared).unwrap();
    let golden = suite.join("golden").join(CASE).join("runtime-packet.json");
    let mut packet = packetproof::canonical::parse(&std::fs::read(&golden).unwrap()).unwrap();
    packet["taskType"] = json!("escalation");
    packet["promptMode"] = json!("email");
    packetproof::digest::seal(packet.as_object_mut().unwrap());
    std::fs::write(suite.join("escalation.json"), packetproof::canonical::to_pretty(&packet)).unwrap();
    let prepared = run_in(&suite, &["prepare", "--packet", "escalation.json", "--out-dir", "runs/escalation"]);
    assert_eq!(prepared.code, 0, "{}", prepared.describe());
    let answer = "Dear Ada,\n\nI have passed your question on to our bookkeeping team.\n";
    std::fs::write(suite.join("runs/escalation/raw-output.json"), answer).unwrap();

    // Without the suite's evaluator nothing can judge a plain-text answer.
    let unjudged = run_in(&suite, &["evaluate", "--run-dir", "runs/escalation"]);
    assert_eq!(unjudged.code, 2, "{}", unjudged.describe());
    let why = "plain-text answers and declares no [evaluator]";
    assert!(unjudged.stderr.contains(why), "{}", unjudged.stderr);
    let verified = run_in(&suite, &["verify", "runs/escalation"]);
    let said = format!("[run::evaluation] not applicable: the suite's contract profile is \"custom\" with {why}");
    assert!(verified.stdout.contains(&said), "{}", verified.stdout);
    // The gate's run fixtures hold answers too: nothing could judge them, so it does not run.
    let gate = run_in(&suite, &["test"]);
    assert_eq!(gate.code, 2, "{}", gate.describe());
    assert!(
        gate.stderr.contains("run/raw-output.json: an agent's answer for the gate to evaluate, but"),
        "{}",
        gate.stderr
    );

    std::fs::write(suite.join("harness.toml"), &several).unwrap();
    let evaluated = run_in(&suite, &["evaluate", "--run-dir", "runs/escalation"]);
    assert_eq!(evaluated.code, 0, "{}", evaluated.describe());
    let complete = ["complete", "--run-dir", "runs/escalation", "--scenario", "escalation", "--run-id", "r1"];
    let completed = run_in(&suite, &[&complete[..], &["--agent-task", "T-1", "--note", "Read by hand."]].concat());
    assert_eq!(completed.code, 0, "{}", completed.describe());
    let verified = run_in(&suite, &["verify", "--run-exporter", "runs/escalation"]);
    assert_eq!(verified.code, 0, "{}", verified.describe());

    // The same run under a profile of one pair: its checksum binds no declared pair.
    std::fs::write(suite.join("harness.toml"), &settings).unwrap();
    let narrowed = run_in(&suite, &["verify", "runs/escalation"]);
    assert_eq!(narrowed.code, 1, "{}", narrowed.describe());
    assert!(narrowed.stdout.contains("[packet::checksum]"), "{}", narrowed.stdout);
}

/// A custom profile whose answers are JSON (`output = "schema"`, its own schema file)
/// and that declares no evaluator: the built-in one judges the answer by that schema
/// only, says so, and none of the block builder's answer rules.
fn a_custom_json_profile_without_an_evaluator_is_judged_by_its_schema() {
    let (_project, suite) = app(Twins::Rust);
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    let json = settings
        .split("# The app's own rules")
        .next()
        .unwrap()
        .replace("output = \"text\"", "output = \"schema\"")
        .replace("prompts = \"app/prompts\"", "prompts = \"app/prompts\"\nschema_snapshot = \"reply-schema.json\"");
    std::fs::write(suite.join("harness.toml"), json).unwrap();
    let schema = json!({"name": "support_reply", "schema": {"type": "object", "required": ["reply"],
        "additionalProperties": false, "properties": {"reply": {"type": "string"}}}});
    std::fs::write(suite.join("reply-schema.json"), packetproof::canonical::to_pretty(&schema)).unwrap();
    let golden = suite.join("golden").join(CASE).join("runtime-packet.json");
    let mut packet = packetproof::canonical::parse(&std::fs::read(&golden).unwrap()).unwrap();
    packet["outputSchema"] = schema;
    packetproof::digest::seal(packet.as_object_mut().unwrap());
    std::fs::write(suite.join("json.json"), packetproof::canonical::to_pretty(&packet)).unwrap();
    for (run, answer, code) in [("good", r#"{"reply": "Dear Ada"}"#, 0), ("bad", r#"{"reply": 7}"#, 1)] {
        let dir = format!("runs/{run}");
        let prepared = run_in(&suite, &["prepare", "--packet", "json.json", "--out-dir", &dir]);
        assert_eq!(prepared.code, 0, "{}", prepared.describe());
        std::fs::write(suite.join(&dir).join("raw-output.json"), answer).unwrap();
        let evaluated = run_in(&suite, &["evaluate", "--run-dir", &dir]);
        assert_eq!(evaluated.code, code, "{run}: {}", evaluated.describe());
        let all = format!("{}{}", evaluated.stdout, evaluated.stderr);
        assert!(all.contains("judged by its schema only"), "{run}: {all}");
        let evaluation = std::fs::read_to_string(suite.join(&dir).join("evaluation.json")).unwrap();
        let evaluation = packetproof::canonical::parse(evaluation.as_bytes()).unwrap();
        let stages: Vec<&str> =
            evaluation["failures"].as_array().unwrap().iter().map(|f| f["stage"].as_str().unwrap()).collect();
        assert_eq!(stages, if code == 0 { vec![] } else { vec!["schema"] }, "{run}: {evaluation}");
    }
}

/// A model outside the suite's list in a fixture's request: `test` says that bless would
/// refuse what the request makes now, and why, not "re-bless" (which bless then refused).
fn a_request_bless_would_refuse_says_so_instead_of_re_bless() {
    let (_project, suite) = app(Twins::Rust);
    let request = suite.join("fixtures/anthropic-casual-question/request.json");
    let text = std::fs::read_to_string(&request).unwrap();
    std::fs::write(&request, text.replace("claude-haiku-4-5", "claude-unlisted-9")).unwrap();
    let out = run_in(&suite, &["test", "anthropic-casual-question::packet::regenerates"]);
    assert_eq!(out.code, 101, "{}", out.describe());
    assert!(
        out.stdout.contains("bless would refuse what the request makes now ([packet::contract] $.model"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("re-bless with `"), "{}", out.stdout);
}
