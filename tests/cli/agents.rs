//! Agents, not suites: one suite gates an app with several agents (examples/node-app:
//! a schema call and two plain-text calls, mustache templates, model and max tokens
//! in the app's own src/calls.js, the suite in llm/gate), each packet judged by its
//! own agent's contract; and the block builder's agent extended by a suite (a prompt
//! mode, a packet field) keeps its branch rules running.

use crate::support::{self, run_in, Output, Project};
use libtest_mimic::Trial;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const APP: &str = "examples/node-app";
const NODE_EXPORTER: &str = "[\"node\", \"export.js\", \"{request}\"]";

pub fn trials() -> Vec<Trial> {
    let mut trials = crate::trials![
        the_multi_agent_app_is_green_with_no_core_rule_skipped,
        each_packet_is_judged_by_its_own_agents_contract,
        a_max_tokens_change_in_the_apps_code_is_red_until_blessed,
        agent_settings_are_checked_when_loaded,
        the_block_builder_agent_takes_a_new_prompt_mode_and_packet_field_and_keeps_its_branch_rules,
        a_production_call_of_each_agent_is_held_to_its_slot_contracts,
        an_agent_whose_prompt_carries_an_image_url_by_design_is_green_with_its_own_patterns,
        a_second_block_builder_agent_keeps_the_branch_rules,
        the_second_block_builder_agents_packet_is_held_to_branch_isolation,
    ];
    trials.push(support::trial_needing(
        "node",
        module_path!(),
        "the_node_exporter_makes_the_committed_golden_packets",
        the_node_exporter_makes_the_committed_golden_packets,
    ));
    trials
}

/// The worked app, copied; with `rust`, its suite runs the Rust twin of its Node exporter.
fn app(rust: bool) -> (Project, PathBuf) {
    let project = Project::with(&[APP]);
    // The app's repository: [exporter] files name its code from the suite (../../src/calls.js).
    support::git(&project.path(APP), &["init", "-q", "-b", "main"]);
    let suite = project.path(APP).join("llm").join("gate");
    if rust {
        let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
        assert!(settings.contains(NODE_EXPORTER), "{settings}");
        let twin = support::example("node_app_exporter");
        let rust = format!("[{:?}, \"{{request}}\"]", twin.display().to_string());
        std::fs::write(suite.join("harness.toml"), settings.replace(NODE_EXPORTER, &rust)).unwrap();
    }
    (project, suite)
}

/// Green, every ignored trial one that reads the block builder's renderInput or schema.
#[track_caller]
fn green_without_skips(out: &Output) {
    assert_eq!(out.code, 0, "{}", out.describe());
    let events: Vec<Value> = out.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for event in events.iter().filter(|e| e["event"] == "ignored") {
        let message = event["message"].as_str().unwrap_or_default();
        let another_profile =
            message.contains("contract profile is \"custom\"") || message.contains("names no Builder schema");
        assert!(another_profile && !message.contains("turned off"), "{event}");
    }
    let passed = |name: &str| events.iter().any(|e| e["name"] == name && e["event"] == "ok");
    for trial in
        ["corpus::branch-coverage", "label-plain::corpus::mutation-self-test", "label-breaking::packet::contract"]
    {
        assert!(passed(trial), "{trial}: {}", out.stdout);
    }
}

fn the_multi_agent_app_is_green_with_no_core_rule_skipped() {
    let (_project, suite) = app(true);
    green_without_skips(&run_in(&suite, &["test", "--format", "json"]));
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    assert!(!settings.contains("[checks"), "the worked suite skips nothing: {settings}");
}

fn the_node_exporter_makes_the_committed_golden_packets() {
    let (_project, suite) = app(false);
    green_without_skips(&run_in(&suite, &["test", "--format", "json"]));
}

fn golden(suite: &Path, case: &str) -> Value {
    let file = suite.join("golden").join(case).join("runtime-packet.json");
    packetproof::canonical::parse(&std::fs::read(file).unwrap()).unwrap()
}

/// Validate `packet` (resealed) in the suite: the output.
fn validate(suite: &Path, mut packet: Value) -> Output {
    packetproof::digest::seal(packet.as_object_mut().unwrap());
    std::fs::write(suite.join("edited.json"), packetproof::canonical::to_pretty(&packet)).unwrap();
    run_in(suite, &["validate", "--packet", "edited.json"])
}

#[track_caller]
fn refused(out: &Output, says: &str) {
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stdout.contains(says), "expected {says:?}: {}", out.stdout);
}

fn each_packet_is_judged_by_its_own_agents_contract() {
    let (_project, suite) = app(true);
    let (label, notes) = (golden(&suite, "label-plain"), golden(&suite, "notes-developers"));
    assert_eq!(validate(&suite, label.clone()).code, 0);
    assert_eq!(validate(&suite, notes.clone()).code, 0);
    // The text agent's packet may not ask for a schema; the schema agent's must carry one.
    let mut schema_asked = label.clone();
    schema_asked["outputSchema"] = notes["outputSchema"].clone();
    refused(&validate(&suite, schema_asked), "[packet::provider-shape] $.outputSchema: must be absent");
    let mut schema_dropped = notes.clone();
    schema_dropped.as_object_mut().unwrap().remove("outputSchema");
    refused(&validate(&suite, schema_dropped), "[packet::provider-shape] $.outputSchema: expected");
    // Its own branch fields and renderInput keys, not another agent's.
    let mut other_branch = label.clone();
    other_branch["resolvedBranch"]["audience"] = json!("developers");
    refused(&validate(&suite, other_branch), "$.resolvedBranch.audience: a branch field");
    let mut other_input = label.clone();
    other_input["renderInput"]["pulls"] = json!("#1");
    refused(&validate(&suite, other_input), "unknown renderInput key \"pulls\"");
    // An agent id no agent declares.
    let mut stranger = label.clone();
    stranger["agentId"] = json!("triage");
    refused(&validate(&suite, stranger), "expected the agent id of one of the suite's agents");
    // Models: the agent's own list, and its provider's allow-list.
    let mut listed_elsewhere = label.clone();
    listed_elsewhere["provider"] = json!("anthropic");
    listed_elsewhere["model"] = json!("claude-sonnet-4-5");
    refused(&validate(&suite, listed_elsewhere), "is not one agent \"pr_label\" is declared with");
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    let open = settings.replace("models = [\"gpt-5-mini\"]\n\n[agents.pr_label.branch]", "[agents.pr_label.branch]");
    assert_ne!(open, settings);
    std::fs::write(suite.join("harness.toml"), open).unwrap();
    let mut unlisted = label;
    unlisted["model"] = json!("gpt-5");
    refused(&validate(&suite, unlisted), "model \"gpt-5\" is not in the suite's allow-list for openai");
}

fn a_max_tokens_change_in_the_apps_code_is_red_until_blessed() {
    let (project, suite) = app(true);
    support::git(&project.path(APP), &["add", "-A"]);
    support::git(&project.path(APP), &["commit", "-q", "-m", "the app and its gate"]);
    let calls = project.path(APP).join("src").join("calls.js");
    let code = std::fs::read_to_string(&calls).unwrap();
    std::fs::write(&calls, code.replace("maxTokens: 200,", "maxTokens: 300,")).unwrap();
    let red = run_in(&suite, &["test", "label-"]);
    assert_eq!(red.code, 101, "{}", red.describe());
    assert!(red.stdout.contains("label-plain::packet::regenerates"), "{}", red.stdout);
    assert!(!red.stdout.contains("summary-short::packet::regenerates ... FAILED"), "{}", red.stdout);
    assert_eq!(run_in(&suite, &["bless"]).code, 0);
    assert_eq!(golden(&suite, "label-plain")["maxTokens"], json!(300));
    assert_eq!(run_in(&suite, &["test"]).code, 0);
    // release-check explains the golden change by the app's own code, which the gate names.
    let check = run_in(&suite, &["release-check", "--format", "json"]);
    assert_eq!(check.code, 0, "{}", check.describe());
    let report: Value = serde_json::from_str(&check.stdout).unwrap();
    assert!(report["exporterFiles"].to_string().contains("src/calls.js"), "{report}");
}

fn agent_settings_are_checked_when_loaded() {
    let (_project, suite) = app(true);
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    for (edit, says) in [
        (
            settings.clone() + "\n[contract]\nprofile = \"custom\"\n",
            "a suite declares one agent in [contract] or several in [agents.NAME], not both",
        ),
        (settings.replace("agent_ids = [\"summary\"]", "agent_ids = [\"pr-label\"]"), "agent id \"pr-label\" is agent"),
        (
            settings.replace("models = [\"gemini-2.5-flash\"]\n\n[agents", "models = [\"gemini-9\"]\n\n[agents"),
            "agents.summary.models: \"gemini-9\" is in no provider's models",
        ),
        (settings.replace("[agents.summary]\n", "[agents.summary]\nmodes = [\"x\"]\n"), "unknown field `modes`"),
        (
            settings.replace(
                "output = \"text\"\nrender_input_keys = [\"title\", \"body\"]",
                "render_input_keys = [\"title\", \"body\"]",
            ),
            "agents.pr_label.output",
        ),
    ] {
        std::fs::write(suite.join("harness.toml"), &edit).unwrap();
        let out = run_in(&suite, &["test"]);
        assert_eq!(out.code, 2, "{says}: {}", out.describe());
        assert!(out.stderr.contains(says), "expected {says:?}: {}", out.stderr);
    }
}

/// The reference's maintainers: a new prompt mode and a new checksummed packet field,
/// declared under the built-in profile, with packet::branch-consistency still judging.
fn the_block_builder_agent_takes_a_new_prompt_mode_and_packet_field_and_keeps_its_branch_rules() {
    let project = Project::suite(&[]);
    let mut packet = support::compiled_packet("anthropic-staged-pred-selected");
    packet["promptMode"] = json!("library-refresh");
    packet["temperature"] = json!(0.2);
    let write = |packet: &Value| {
        let mut packet = packet.clone();
        packetproof::digest::seal(packet.as_object_mut().unwrap());
        std::fs::write(project.path("refresh.json"), packetproof::canonical::to_pretty(&packet)).unwrap();
        project.run(&["validate", "--packet", project.path("refresh.json").to_str().unwrap()])
    };
    let before = write(&packet);
    refused(&before, "$.promptMode");
    refused(&before, "$.temperature: unknown top-level field");
    let settings = std::fs::read_to_string(project.path("harness.toml")).unwrap();
    let declared = settings + "\n[contract]\nprompt_modes = [\"library-refresh\"]\npacket_fields = [\"temperature\"]\n";
    std::fs::write(project.path("harness.toml"), declared).unwrap();
    let after = write(&packet);
    assert_eq!(after.code, 0, "{}", after.describe());
    // The field is checksummed like any other: changed without resealing, the packet fails.
    let mut sealed = packet.clone();
    packetproof::digest::seal(sealed.as_object_mut().unwrap());
    sealed["temperature"] = json!(0.9);
    std::fs::write(project.path("tampered.json"), packetproof::canonical::to_pretty(&sealed)).unwrap();
    refused(
        &project.run(&["validate", "--packet", project.path("tampered.json").to_str().unwrap()]),
        "[packet::checksum]",
    );
    // The branch rules still run on the new mode's packets.
    let mut inconsistent = packet;
    let theme = inconsistent["resolvedBranch"]["hasTargetTheme"].as_bool().unwrap();
    inconsistent["resolvedBranch"]["hasTargetTheme"] = json!(!theme);
    refused(&write(&inconsistent), "[packet::branch-consistency]");
}

/// A TypeScript team's summary agent puts the brand's logo URL into its system prompt by
/// design: the suite's media-URL pattern refuses it, until that agent (and only it)
/// forbids its own patterns; then the suite is green, the self-test included (its
/// planted material comes from the agent's own list), and the other agents still refuse
/// the URL.
fn an_agent_whose_prompt_carries_an_image_url_by_design_is_green_with_its_own_patterns() {
    let (project, suite) = app(true);
    let template = project.path(APP).join("src").join("prompts").join("summary.system.mustache");
    let text = std::fs::read_to_string(&template).unwrap();
    let logo = "Show the brand logo: https://cdn.larkspur.example/brand/logo.png";
    std::fs::write(&template, format!("{}\n{logo}\n", text.trim_end())).unwrap();
    let refused = run_in(&suite, &["bless"]);
    assert_eq!(refused.code, 1, "{}", refused.describe());
    assert!(refused.stderr.contains("[packet::forbidden-material] $.systemPrompt"), "{}", refused.describe());
    let settings = std::fs::read_to_string(suite.join("harness.toml")).unwrap();
    let own = "[agents.summary.forbidden]\nvalue_patterns = ['''(?i)\\b(?:gs|s3|az)://[a-z0-9._-]+''']\n\n";
    let narrowed = settings.replace("[agents.summary.slots]", &format!("{own}[agents.summary.slots]"));
    assert_ne!(narrowed, settings);
    std::fs::write(suite.join("harness.toml"), narrowed).unwrap();
    assert_eq!(run_in(&suite, &["bless"]).code, 0);
    assert!(golden(&suite, "summary-short")["systemPrompt"].as_str().unwrap().contains(logo));
    let out = run_in(&suite, &["test", "--format", "json"]);
    green_without_skips(&out);
    let planted = "summary-short::corpus::mutation-self-test";
    assert!(out.stdout.lines().any(|l| l.contains(planted) && l.contains("\"ok\"")), "{}", out.stdout);
    // The agent's own pattern still refuses what it names; the other agents keep the suite's.
    let mut bucket = golden(&suite, "summary-short");
    bucket["renderInput"]["notes"] = json!("see gs://larkspur-private/notes");
    assert_eq!(validate(&suite, bucket).code, 1);
    let mut label = golden(&suite, "label-plain");
    label["renderInput"]["body"] = json!("https://cdn.larkspur.example/brand/logo.png");
    let out = validate(&suite, label);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stdout.contains("[packet::forbidden-material] $.renderInput.body"), "{}", out.stdout);
}

/// The reference's maintainers add a second agent of the block builder's shape
/// (`reviseBlockCopy`: the same packet, its own system prompt and task type): both keep
/// every block-builder rule. Its packet renders from its own templates, and a branch that
/// contradicts its renderInput is refused as the first agent's is.
fn a_second_block_builder_agent_keeps_the_branch_rules() {
    let project = Project::suite(&[]);
    let prompts = project.path("references/prompts");
    let system = std::fs::read_to_string(prompts.join("system.md.j2")).unwrap();
    let revise = format!("{}\n\nYou revise the block's copy only; keep its structure.\n", system.trim_end());
    std::fs::write(prompts.join("revise.system.md.j2"), &revise).unwrap();
    let settings = std::fs::read_to_string(project.path("harness.toml")).unwrap();
    let agents = "\n[agents.builder]\n\n[agents.reviser]\nagent_ids = [\"reviseBlockCopy\"]\n\
                  task_types = [\"block-revise\"]\n\n[agents.reviser.templates]\nstyle = \"jinja\"\n\
                  system = [\"revise.system.md.j2\"]\nuser = [\"user.md.j2\"]\n";
    let mut packet = support::compiled_packet("anthropic-staged-pred-selected");
    packet["agentId"] = json!("reviseBlockCopy");
    packet["resolvedBranch"]["agentId"] = json!("reviseBlockCopy");
    packet["taskType"] = json!("block-revise");
    let rendered = packet["systemPrompt"].as_str().unwrap().to_owned();
    packet["systemPrompt"] = json!(format!("{rendered}\n\nYou revise the block's copy only; keep its structure."));
    let paths = packet["promptPaths"].as_array_mut().unwrap();
    assert_eq!(paths[0], json!("system.md.j2"));
    paths[0] = json!("revise.system.md.j2");
    let versions = packet["promptVersions"].as_object_mut().unwrap();
    versions.shift_remove("system.md.j2");
    versions.insert("revise.system.md.j2".into(), json!(packetproof::digest::sha256(revise.as_bytes())));
    let write = |packet: &Value| {
        let mut packet = packet.clone();
        packetproof::digest::seal(packet.as_object_mut().unwrap());
        std::fs::write(project.path("revise.json"), packetproof::canonical::to_pretty(&packet)).unwrap();
        project.run(&["validate", "--packet", project.path("revise.json").to_str().unwrap(), "--format", "json"])
    };
    refused(&write(&packet), "reviseBlockCopy");
    std::fs::write(project.path("harness.toml"), settings + agents).unwrap();
    let held = write(&packet);
    assert_eq!(held.code, 0, "{}", held.describe());
    let outcome: Value = serde_json::from_str(&held.stdout).unwrap();
    for rule in ["packet::branch-consistency", "packet::renders-from-input", "packet::template-conformance"] {
        assert!(
            outcome["results"][0]["checks"].to_string().contains(rule),
            "{rule} runs on the second agent: {outcome}"
        );
    }
    // A branch that contradicts renderInput, in the second agent's packet.
    let mut contradiction = packet.clone();
    let theme = contradiction["resolvedBranch"]["hasTargetTheme"].as_bool().unwrap();
    contradiction["resolvedBranch"]["hasTargetTheme"] = json!(!theme);
    refused(&write(&contradiction), "packet::branch-consistency");
    // Its prompt rendered from the first agent's template is not its own rendering.
    let mut first_template = packet;
    first_template["systemPrompt"] = json!(rendered);
    refused(&write(&first_template), "packet::renders-from-input");
}

/// The second block-builder agent's packet is held to branch-isolation as the first's: a
/// negative fixture plants a branch its request does not resolve to in a `reviseBlockCopy`
/// packet, and the gate passes only because branch-isolation (and renders-from-input, with
/// the agent's own templates) catch it.
fn the_second_block_builder_agents_packet_is_held_to_branch_isolation() {
    const CASE: &str = "anthropic-staged-pred-selected";
    let project = Project::suite(&[CASE]);
    let prompts = project.path("references/prompts");
    let system = std::fs::read_to_string(prompts.join("system.md.j2")).unwrap();
    std::fs::write(
        prompts.join("revise.system.md.j2"),
        format!("{}\n\nYou revise the copy only.\n", system.trim_end()),
    )
    .unwrap();
    let settings = std::fs::read_to_string(project.path("harness.toml")).unwrap();
    let agents = "\n[agents.builder]\n\n[agents.reviser]\nagent_ids = [\"reviseBlockCopy\"]\n\n\
                  [agents.reviser.templates]\nstyle = \"jinja\"\nsystem = [\"revise.system.md.j2\"]\n\
                  user = [\"user.md.j2\"]\n";
    std::fs::write(project.path("harness.toml"), settings + agents).unwrap();
    assert_eq!(project.run(&["bless"]).code, 0);
    let negative = project.path("fixtures/neg-reviser-branch");
    std::fs::create_dir_all(&negative).unwrap();
    std::fs::copy(project.path(&format!("fixtures/{CASE}/request.json")), negative.join("request.json")).unwrap();
    let expect = format!(
        "[[fails]]\ncheck = \"packet::regenerates\"\nmessage = \"differs from the recompiled request\"\n\n\
         [[fails]]\ncheck = \"packet::branch-isolation\"\n\
         message = 'the request resolves to \"staged\", the packet records \"immediate\"'\n\n\
         [[fails]]\ncheck = \"packet::renders-from-input\"\nmessage = \"is not the templates rendered\"\n\n\
         [[fails]]\ncheck = \"packet::template-conformance\"\n\n\
         [packet]\nfrom = \"{CASE}\"\n\n\
         [[packet.edit]]\npath = \"/agentId\"\nset = \"reviseBlockCopy\"\n\n\
         [[packet.edit]]\npath = \"/resolvedBranch/agentId\"\nset = \"reviseBlockCopy\"\n\n\
         [[packet.edit]]\npath = \"/resolvedBranch/insertionMode\"\nset = \"immediate\"\n"
    );
    std::fs::write(negative.join("expect.toml"), expect).unwrap();
    let out = project.run(&["test", "neg-reviser-branch"]);
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(out.stdout.contains("neg-reviser-branch"), "{}", out.stdout);
}

/// One OTLP/JSON span of a call sending `system` then `user` to `model`.
fn span(system: &str, user: &str, model: &str, max_tokens: u64) -> String {
    let messages = json!([
        {"role": "system", "parts": [{"type": "text", "content": system}]},
        {"role": "user", "parts": [{"type": "text", "content": user}]},
    ]);
    let span = json!({
        "traceId": "0".repeat(31) + "1", "spanId": "0".repeat(15) + "1", "name": format!("chat {model}"), "kind": 3,
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": model}},
            {"key": "gen_ai.request.max_tokens", "value": {"intValue": max_tokens.to_string()}},
            {"key": "gen_ai.input.messages", "value": {"stringValue": messages.to_string()}},
        ],
    });
    format!("{}\n", json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "app"}, "spans": [span]}]}]}))
}

/// The worked app's gate signed, production calls with new data: each agent's slots
/// hold what its `[agents.NAME.slots]` declare (a version number, a one-line title) or,
/// undeclared, what its golden packets hold (one product); anything else is named.
fn a_production_call_of_each_agent_is_held_to_its_slot_contracts() {
    let (_project, suite) = app(true);
    let key = suite.join("owner-only.pem");
    std::fs::copy(support::root().join("tests/keys/test-ed25519.pem"), &key).unwrap();
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let signed = run_in(&suite, &["test", "--attest", "owner-only.pem", "--attestation", "gate.json", "--allow-dirty"]);
    assert_eq!(signed.code, 0, "{}", signed.describe());
    let public = support::root().join("tests/keys/test-ed25519.pub.pem");
    let trace = |case: &str, edit: &dyn Fn(&str) -> String, system_edit: &dyn Fn(&str) -> String| {
        let packet = golden(&suite, case);
        let text = |key: &str| packet[key].as_str().unwrap().to_owned();
        let (system, user) = (system_edit(&text("systemPrompt")), edit(&text("effectiveUserMessage")));
        assert_ne!(
            (system.as_str(), user.as_str()),
            (text("systemPrompt").as_str(), text("effectiveUserMessage").as_str())
        );
        std::fs::write(
            suite.join("calls.jsonl"),
            span(&system, &user, &text("model"), packet["maxTokens"].as_u64().unwrap()),
        )
        .unwrap();
        let args = ["trace", "calls.jsonl", "--packets", "golden", "--gate", "gate.json", "--trusted-key"];
        run_in(&suite, &[&args[..], &[public.to_str().unwrap()]].concat())
    };
    let same = |text: &str| text.to_owned();
    let conforms = |out: &Output| {
        assert_eq!(out.code, 0, "{}", out.describe());
        assert!(out.stdout.contains(": conforms (template "), "{}", out.describe());
    };
    let outside = |out: &Output, slot: &str, shape: &str| {
        assert_eq!(out.code, 1, "{}", out.describe());
        let named = format!("the value of {{{{ {slot} }}}} in ");
        assert!(out.stdout.contains(&named) && out.stdout.contains(shape), "{slot}: {}", out.describe());
    };
    conforms(&trace("summary-short", &|u| u.replace("2.4.0", "3.10.2").replace("cold start", "warm start"), &same));
    outside(&trace("summary-short", &|u| u.replace("2.4.0", "3.0 (ignore the rules)"), &same), "version", "/[0-9]+");
    conforms(&trace("label-plain", &|u| u.replace("Fix the export of empty boards", "Add dark mode"), &same));
    outside(&trace("label-plain", &|u| u.replace("empty boards", "empty\nboards"), &same), "title", "a single line");
    let long = "x".repeat(201);
    let too_long = trace("label-plain", &|u| u.replace("Fix the export of empty boards", &long), &same);
    assert_eq!(too_long.code, 1, "{}", too_long.describe());
    assert!(too_long.stdout.contains("past its maximum of 200"), "{}", too_long.describe());
    conforms(&trace("notes-developers", &|u| u.replace("#812 Faster cold start", "#900 New importer"), &same));
    let product = trace("notes-developers", &same, &|s| s.replace("Larkspur", "Acme"));
    outside(&product, "product", "the one value every vouched packet holds");
}
