//! One judge under the engine's settings, with templates where the app keeps them: a
//! jinja agent whose templates are strings in its YAML config, rendered with Jinja2's
//! defaults (the texts below are what Jinja2 3.1.6 renders). Its packets conform
//! under the defaults and are refused, naming the template, under the settings of the
//! block builder's prompts, and the other way round; `verify` and `wire --check` give
//! the one verdict.

use crate::support::{self, Project};
use libtest_mimic::Trial;
use serde_json::{json, Value};

pub fn trials() -> Vec<Trial> {
    crate::trials![
        jinja2s_defaults_are_declared_and_held_in_every_command,
        a_packet_naming_other_template_versions_is_still_judged,
        a_gate_over_templates_in_the_apps_config_passes_new_data_in_production,
        prompts_kept_as_code_are_reported_and_held,
        a_reported_template_is_never_written_through_a_symlink,
        a_declared_budget_holds_packets_and_calls,
    ]
}

const CONFIG: &str = "agent:\n  templates:\n    system_template: |\n      You are a helpful assistant.\n    \
                      instance_template: |\n      <uploaded_files>\n      {{working_dir}}\n      </uploaded_files>\n      \
                      {% if tips %}\n      Tips: {{ tips }}\n      {% endif %}\n      Fix the issue.\n";

/// The suite: one agent, its templates at key paths of `config/default.yaml`, and
/// `jinja`: the `[contract.templates.jinja]` table, if any.
fn suite(jinja: &str) -> Project {
    let project = Project::empty();
    std::fs::create_dir_all(project.path("config")).unwrap();
    std::fs::create_dir_all(project.path("prompts")).unwrap();
    std::fs::write(project.path("config/default.yaml"), CONFIG).unwrap();
    let settings = format!(
        "[paths]\nprompts = \"prompts\"\n\n[contract]\nprofile = \"custom\"\nagent_ids = [\"chooser\"]\n\
         task_types = [\"choose\"]\nprompt_modes = [\"chat\"]\noutput = \"text\"\n\
         render_input_keys = [\"working_dir\", \"tips\"]\n\n[contract.templates]\nstyle = \"jinja\"\n\
         system = [\"config/default.yaml#agent.templates.system_template\"]\n\
         user = [\"config/default.yaml#agent.templates.instance_template\"]\n{jinja}"
    );
    std::fs::write(project.path("harness.toml"), settings).unwrap();
    project
}

/// A sealed packet of the agent with these texts, its prompt paths' versions, and `more`.
fn packet(project: &Project, name: &str, system: &str, user: &str, more: Value) -> String {
    let mut versions = json!({
        "agent.templates.system_template": packetproof::digest::sha256(b"system"),
        "agent.templates.instance_template": packetproof::digest::sha256(b"instance"),
    });
    versions.as_object_mut().unwrap().extend(more.as_object().unwrap().clone());
    let mut packet = json!({
        "packetVersion": 1,
        "agentId": "chooser",
        "taskType": "choose",
        "promptMode": "chat",
        "attempt": 1,
        "provider": "openai",
        "model": "gpt-4.1",
        "maxTokens": 800,
        "promptPaths": ["agent.templates.system_template", "agent.templates.instance_template"],
        "promptVersions": versions,
        "systemPrompt": system,
        "userMessage": user,
        "effectiveUserMessage": user,
        "renderInput": {"working_dir": "/srv/app", "tips": ""},
        "resolvedBranch": {"agentId": "chooser"},
    });
    packetproof::digest::seal(packet.as_object_mut().unwrap());
    let file = format!("{name}.json");
    support::write_json(&project.path(&file), &packet);
    file
}

/// What Jinja2's `Environment()` renders (one final newline dropped, block lines kept).
const DEFAULTS: (&str, &str) =
    ("You are a helpful assistant.", "<uploaded_files>\n/srv/app\n</uploaded_files>\n\nFix the issue.");
/// What `Environment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)` renders.
const ALL_ON: (&str, &str) =
    ("You are a helpful assistant.\n", "<uploaded_files>\n/srv/app\n</uploaded_files>\nFix the issue.\n");

const RULE: &str = "[packet::template-conformance]";

fn jinja2s_defaults_are_declared_and_held_in_every_command() {
    let defaults = suite("");
    let conforming = packet(&defaults, "defaults", DEFAULTS.0, DEFAULTS.1, json!({}));
    let other = packet(&defaults, "all-on", ALL_ON.0, ALL_ON.1, json!({}));
    let ok = defaults.run_in("", &["verify", &conforming, "--format", "json"]);
    assert_eq!(ok.code, 0, "{}", ok.describe());
    let report: Value = serde_json::from_str(&ok.stdout).unwrap();
    let ran = report["results"][0]["checks"].as_array().unwrap();
    assert!(ran.contains(&json!("packet::template-conformance")), "{report}");
    let refused = defaults.run_in("", &["verify", &other]);
    assert_eq!(refused.code, 1, "{}", refused.describe());
    assert!(refused.stdout.contains(RULE), "{}", refused.describe());
    assert!(refused.stdout.contains("config/default.yaml#agent.templates.system_template"), "{}", refused.stdout);
    // wire --check refuses it before it compares any body.
    let wire = defaults.run_in("", &["wire", "--packet", &other, "--api", "openai-chat"]);
    assert_ne!(wire.code, 0, "{}", wire.describe());
    assert!(wire.stderr.contains(RULE), "{}", wire.describe());

    // The app that turns the three settings on declares them: the verdicts swap.
    let all_on =
        suite("\n[contract.templates.jinja]\ntrim_blocks = true\nlstrip_blocks = true\nkeep_trailing_newline = true\n");
    let conforming = packet(&all_on, "all-on", ALL_ON.0, ALL_ON.1, json!({}));
    let other = packet(&all_on, "defaults", DEFAULTS.0, DEFAULTS.1, json!({}));
    assert!(!all_on.run_in("", &["verify", &conforming]).stdout.contains(RULE));
    let refused = all_on.run_in("", &["verify", &other]);
    assert_eq!(refused.code, 1, "{}", refused.describe());
    assert!(refused.stdout.contains(RULE), "{}", refused.describe());

    // A setting no engine has is refused by name.
    let unknown = suite("\n[contract.templates.jinja]\ntrim_block = true\n");
    let out = unknown.run_in("", &["verify", "harness.toml"]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains("trim_block"), "{}", out.describe());
}

/// A packet whose promptVersions name other versions of the suite's templates is still
/// judged by the suite's templates: a golden packet cannot leave the gate by naming
/// versions it was not made from.
fn a_packet_naming_other_template_versions_is_still_judged() {
    let project = suite("");
    std::fs::write(project.path("prompts/system.txt"), "You are a helpful assistant.").unwrap();
    let stale = json!({"system.txt": format!("sha256:{}", "0".repeat(64))});
    let file = packet(&project, "stale", ALL_ON.0, ALL_ON.1, stale);
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(project.path(&file)).unwrap()).unwrap();
    value["promptPaths"].as_array_mut().unwrap().push(json!("system.txt"));
    packetproof::digest::seal(value.as_object_mut().unwrap());
    support::write_json(&project.path(&file), &value);
    let out = project.run_in("", &["verify", &file]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stdout.contains("[packet::template-conformance] $.systemPrompt"), "{}", out.describe());
}

/// The render of the instance template for `working_dir`, as Jinja2's defaults render it.
fn instance(working_dir: &str) -> String {
    format!("<uploaded_files>\n{working_dir}\n</uploaded_files>\n\nFix the issue.")
}

/// The app's gate, end to end: its exporter (here a script printing what the app
/// rendered) makes the golden packets, `bless` pins the YAML config that holds the
/// templates, `test --attest` signs, and a production call with new data conforms
/// under `trace --gate`, while one with a word of a template changed does not. An
/// edit of the config's template turns the gate red until blessed. (Before the texts at
/// key paths were gate materials, every such call was refused as "not among the
/// templates the gate statement vouches for".)
fn a_gate_over_templates_in_the_apps_config_passes_new_data_in_production() {
    let project = suite("");
    let settings = std::fs::read_to_string(project.path("harness.toml")).unwrap();
    let exporter = "\n[suite]\nname = \"chooser\"\n\n[exporter]\ncommand = [\"sh\", \"export.sh\", \"{request}\"]\n";
    std::fs::write(project.path("harness.toml"), format!("{settings}{exporter}")).unwrap();
    std::fs::write(project.path("export.sh"), "cat \"$(dirname \"$1\")/made.json\"\n").unwrap();
    for (case, dir) in [("one", "/srv/app"), ("two", "/testbed")] {
        std::fs::create_dir_all(project.path(&format!("fixtures/{case}"))).unwrap();
        std::fs::write(project.path(&format!("fixtures/{case}/request.json")), "{}").unwrap();
        let file = packet(&project, &format!("fixtures/{case}/made"), DEFAULTS.0, &instance(dir), json!({}));
        let mut made: Value = serde_json::from_str(&std::fs::read_to_string(project.path(&file)).unwrap()).unwrap();
        made["renderInput"]["working_dir"] = json!(dir);
        packetproof::digest::seal(made.as_object_mut().unwrap());
        support::write_json(&project.path(&file), &made);
    }
    std::fs::create_dir_all(project.path("golden")).unwrap();
    let blessed = project.run_in("", &["bless"]);
    assert_eq!(blessed.code, 0, "{}", blessed.describe());
    let lock = std::fs::read_to_string(project.path("packetproof.lock")).unwrap();
    assert!(lock.contains("config/default.yaml"), "the lock pins the config that holds the templates: {lock}");
    project.sign_gate("gate.json");
    let public = support::root().join("tests/keys/test-ed25519.pub.pem");
    let trace = |user: &str| {
        std::fs::write(project.path("calls.jsonl"), span(DEFAULTS.0, user)).unwrap();
        let args = ["trace", "calls.jsonl", "--packets", "golden", "--gate", "gate.json", "--trusted-key"];
        project.run_in("", &[&args[..], &[public.to_str().unwrap(), "--format", "json"]].concat())
    };
    let new_data = trace(&instance("/home/dev/a-new-repo"));
    assert_eq!(new_data.code, 0, "{}", new_data.describe());
    assert!(new_data.stdout.contains("\"conforms\""), "{}", new_data.stdout);
    let drifted = trace(&instance("/home/dev/a-new-repo").replace("Fix the issue.", "Fix the issue, then push."));
    assert_eq!(drifted.code, 1, "{}", drifted.describe());
    // The budget is held too: one the vouched packets carry, and a number.
    for (budget, said) in [
        (json!({"intValue": "801"}), "max tokens 801 are none the gate vouched"),
        (json!({"stringValue": "99999999"}), "not a number"),
    ] {
        let call =
            span(DEFAULTS.0, &instance("/home/dev/a-new-repo")).replace(r#"{"intValue":"800"}"#, &budget.to_string());
        std::fs::write(project.path("calls.jsonl"), call).unwrap();
        let args = ["trace", "calls.jsonl", "--packets", "golden", "--gate", "gate.json", "--trusted-key"];
        let out = project.run_in("", &[&args[..], &[public.to_str().unwrap()]].concat());
        assert_eq!(out.code, 1, "{}", out.describe());
        assert!(out.stdout.contains(said), "{}", out.describe());
    }

    // The template edited in the config: red until blessed.
    let config = std::fs::read_to_string(project.path("config/default.yaml")).unwrap();
    std::fs::write(project.path("config/default.yaml"), config.replace("Fix the issue.", "Fix it.")).unwrap();
    let red = project.run_in("", &["test"]);
    assert_eq!(red.code, 101, "{}", red.describe());
    assert!(red.stdout.contains("corpus::lock"), "{}", red.stdout);
}

/// One OTLP/JSON span of a chat call sending `system` then `user`.
fn span(system: &str, user: &str) -> String {
    let messages = json!([
        {"role": "system", "parts": [{"type": "text", "content": system}]},
        {"role": "user", "parts": [{"type": "text", "content": user}]},
    ]);
    let span = json!({
        "traceId": "0".repeat(31) + "1", "spanId": "0".repeat(15) + "1", "name": "chat gpt-4.1", "kind": 3,
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.provider.name", "value": {"stringValue": "openai"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4.1"}},
            {"key": "gen_ai.request.max_tokens", "value": {"intValue": "800"}},
            {"key": "gen_ai.input.messages", "value": {"stringValue": messages.to_string()}},
        ],
    });
    format!("{}\n", json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "app"}, "spans": [span]}]}]}))
}

/// The TypeScript app's prompts are constants in its code; `[exporter] templates`
/// reports their texts (here a script reading them out of `app/prompts.ts`).
const PROMPTS_TS: &str = "export const SYSTEM = `You answer questions about {{product}}. Be brief.`;\n\
                          export const USER = `  {{question}}  `;\n";

const TEMPLATES_SH: &str = "s=$(sed -n 's/^export const SYSTEM = `\\(.*\\)`;$/\\1/p' app/prompts.ts)\n\
                            u=$(sed -n 's/^export const USER = `\\(.*\\)`;$/\\1/p' app/prompts.ts)\n\
                            printf '{\"system.mustache\": \"%s\", \"user.mustache\": \"%s\"}' \"$s\" \"$u\"\n";

/// A suite of the TypeScript app: its templates reported from its code, the user
/// prompt trimmed by the app and the system prompt not.
fn code_suite() -> Project {
    let project = Project::empty();
    for dir in ["app", "prompts", "golden"] {
        std::fs::create_dir_all(project.path(dir)).unwrap();
    }
    std::fs::write(project.path("app/prompts.ts"), PROMPTS_TS).unwrap();
    std::fs::write(project.path("templates.sh"), TEMPLATES_SH).unwrap();
    std::fs::write(project.path("export.sh"), "cat \"$(dirname \"$1\")/made.json\"\n").unwrap();
    let settings = "[paths]\nprompts = \"prompts\"\n\n[contract]\nprofile = \"custom\"\nagent_ids = [\"answer\"]\n\
                    task_types = [\"answer\"]\nprompt_modes = [\"chat\"]\noutput = \"text\"\n\
                    render_input_keys = [\"product\", \"question\"]\n\n[contract.templates]\nstyle = \"mustache\"\n\
                    system = [\"system.mustache\"]\nuser = [\"user.mustache\"]\n\n\
                    [contract.templates.renderings]\n\"user.mustache\" = \"trim\"\n\n[suite]\nname = \"answers\"\n\n\
                    [exporter]\ncommand = [\"sh\", \"export.sh\", \"{request}\"]\ntemplates = [\"sh\", \"templates.sh\"]\n\
                    files = [\"app/prompts.ts\"]\n";
    std::fs::write(project.path("harness.toml"), settings).unwrap();
    project
}

/// What the app sends for a fixture: its code's templates rendered, the user prompt trimmed.
fn made(project: &Project, case: &str, product: &str, question: &str, brief: &str) {
    std::fs::create_dir_all(project.path(&format!("fixtures/{case}"))).unwrap();
    std::fs::write(project.path(&format!("fixtures/{case}/request.json")), "{}").unwrap();
    let system = format!("You answer questions about {product}. {brief}");
    let mut packet = json!({
        "packetVersion": 1, "agentId": "answer", "taskType": "answer", "promptMode": "chat", "attempt": 1,
        "provider": "openai", "model": "gpt-4.1", "maxTokens": 800,
        "promptPaths": ["system.mustache", "user.mustache"],
        "promptVersions": {
            "system.mustache": packetproof::digest::sha256(
                std::fs::read_to_string(project.path("app/prompts.ts")).unwrap().lines().next().unwrap().as_bytes()),
            "user.mustache": packetproof::digest::sha256(b"user"),
        },
        "systemPrompt": system, "userMessage": question, "effectiveUserMessage": question,
        "renderInput": {"product": product, "question": question}, "resolvedBranch": {"agentId": "answer"},
    });
    packetproof::digest::seal(packet.as_object_mut().unwrap());
    support::write_json(&project.path(&format!("fixtures/{case}/made.json")), &packet);
}

/// Prompts kept as code are templates the gate holds: `bless` keeps the texts the app
/// reports, a word changed in the code turns `test` red, and the golden packets are
/// held to the new text (a bless whose packets the app did not make again is refused)
/// until the app's packets are its renderings again.
fn prompts_kept_as_code_are_reported_and_held() {
    let project = code_suite();
    made(&project, "one", "Acme", "How do I reset it?", "Be brief.");
    made(&project, "two", "Globex", "Where is my invoice?", "Be brief.");
    let blessed = project.run_in("", &["bless"]);
    assert_eq!(blessed.code, 0, "{}", blessed.describe());
    assert!(blessed.stdout.contains("copied    system.mustache"), "{}", blessed.stdout);
    let copy = std::fs::read_to_string(project.path("prompts/system.mustache")).unwrap();
    assert_eq!(copy, "You answer questions about {{product}}. Be brief.");
    let green = project.run_in("", &["test"]);
    assert_eq!(green.code, 0, "{}", green.describe());

    // A word changed in the app's code: red, naming the template.
    let ts = PROMPTS_TS.replace("Be brief.", "Be brief and kind.");
    std::fs::write(project.path("app/prompts.ts"), ts).unwrap();
    let red = project.run_in("", &["test"]);
    assert_eq!(red.code, 101, "{}", red.describe());
    assert!(red.stdout.contains("the template system.mustache the app keeps as code"), "{}", red.stdout);
    // Blessed while the golden packets are still the old renderings: refused.
    let refused = project.run_in("", &["bless"]);
    assert_ne!(refused.code, 0, "{}", refused.describe());
    assert!(refused.stderr.contains("[packet::template-conformance]"), "{}", refused.describe());
    // The app's packets made again with its new text: green.
    made(&project, "one", "Acme", "How do I reset it?", "Be brief and kind.");
    made(&project, "two", "Globex", "Where is my invoice?", "Be brief and kind.");
    let blessed = project.run_in("", &["bless"]);
    assert_eq!(blessed.code, 0, "{}", blessed.describe());
    let green = project.run_in("", &["test"]);
    assert_eq!(green.code, 0, "{}", green.describe());
}

/// An app that sets the budget per call declares `max_tokens`: a packet outside it fails
/// `packet::contract`, as production would refuse its call.
fn a_declared_budget_holds_packets_and_calls() {
    let project = suite("");
    let settings = std::fs::read_to_string(project.path("harness.toml")).unwrap();
    let declared = settings.replace("render_input_keys", "max_tokens = { min = 100, max = 500 }\nrender_input_keys");
    std::fs::write(project.path("harness.toml"), declared).unwrap();
    let file = packet(&project, "over", DEFAULTS.0, DEFAULTS.1, json!({}));
    let out = project.run_in("", &["verify", &file]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(
        out.stdout.contains("maxTokens 800 is none of agent \"contract\"'s max_tokens (100 to 500)"),
        "{}",
        out.stdout
    );
    let broken = settings.replace("render_input_keys", "max_tokens = { min = 600, max = 500 }\nrender_input_keys");
    std::fs::write(project.path("harness.toml"), broken).unwrap();
    let refused = project.run_in("", &["verify", &file]);
    assert_eq!(refused.code, 2, "{}", refused.describe());
    assert!(refused.stderr.contains("contract.max_tokens: expected 1 <= min <= max"), "{}", refused.describe());
}

/// `bless` writes the copies inside paths.prompts only: a reported name whose folder there
/// is a symlink leading out of it is refused, and nothing is written outside.
fn a_reported_template_is_never_written_through_a_symlink() {
    let project = code_suite();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), project.path("prompts/out")).unwrap();
    std::fs::write(project.path("templates.sh"), "printf '{\"out/system.mustache\": \"x\"}'\n").unwrap();
    let refused = project.run_in("", &["bless"]);
    assert_eq!(refused.code, 2, "{}", refused.describe());
    assert!(!outside.path().join("system.mustache").exists(), "written through the symlink");
}
