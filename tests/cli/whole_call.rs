//! The whole call is reviewed: an agent whose golden packets carry their `call` (a tool,
//! a tool choice, temperature 0) is held to it in production, whichever command reads
//! the call. A body with new data and the reviewed call conforms in `wire --check
//! --gate`; each field an attacker adds or changes (a tool, a description, a response
//! format, sampling, a budget, a name on a message) is a finding naming the field, in
//! `wire`, and (where telemetry records the field) in `trace` and `serve`. A Bedrock
//! Converse call of the same agent is judged end to end.

use crate::support::{self, Project};
use libtest_mimic::Trial;
use serde_json::{json, Value};
use std::io::{Read, Write};

pub fn trials() -> Vec<Trial> {
    crate::trials![
        each_field_of_a_production_body_is_held_to_the_reviewed_call,
        a_span_is_held_to_the_reviewed_call_in_trace_and_serve,
        a_bedrock_converse_call_is_judged_end_to_end,
        an_agent_may_declare_the_values_a_field_takes,
        the_block_builders_forced_tool_is_held_in_production,
        a_run_carries_the_call_and_declared_fields_whole,
    ]
}

const SYSTEM: &str = "You answer questions about orders.";
const USER: &str = "Question: {{{question}}}\nAnswer briefly.";

fn tools() -> Value {
    json!([{"name": "lookup", "description": "Look up an order by its number.",
        "parameters": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}}])
}

/// The agent's reviewed call: one tool the model may call, temperature 0.
fn reviewed_call() -> Value {
    json!({"tools": tools(), "toolChoice": "auto", "temperature": 0})
}

/// A suite of one agent whose fixtures' packets carry `call`, blessed and signed; `more`
/// is added to its `[contract]`.
fn signed_suite(more: &str) -> Project {
    let project = Project::empty();
    std::fs::create_dir_all(project.path("prompts")).unwrap();
    std::fs::write(project.path("prompts/system.mustache"), SYSTEM).unwrap();
    std::fs::write(project.path("prompts/user.mustache"), USER).unwrap();
    let settings = format!(
        "[paths]\nprompts = \"prompts\"\n\n[providers.openai]\nmodels = [\"gpt-4.1\"]\n\n\
         [providers.bedrock]\nmodels = [\"anthropic.claude-sonnet-4-5-v1:0\"]\n\n\
         [suite]\nname = \"orders\"\n\n[exporter]\ncommand = [\"sh\", \"export.sh\", \"{{request}}\"]\n\n\
         [contract]\nprofile = \"custom\"\nagent_ids = [\"orders\"]\ntask_types = [\"answer\"]\n\
         prompt_modes = [\"chat\"]\noutput = \"text\"\nrender_input_keys = [\"question\"]\n{more}\n\n\
         [contract.templates]\nstyle = \"mustache\"\nsystem = [\"system.mustache\"]\nuser = [\"user.mustache\"]\n"
    );
    std::fs::write(project.path("harness.toml"), settings).unwrap();
    std::fs::write(project.path("export.sh"), "cat \"$(dirname \"$1\")/made.json\"\n").unwrap();
    for (case, provider, model, question) in [
        ("openai", "openai", "gpt-4.1", "Where is order 17?"),
        ("bedrock", "bedrock", "anthropic.claude-sonnet-4-5-v1:0", "When does order 18 ship?"),
    ] {
        let dir = format!("fixtures/{case}");
        std::fs::create_dir_all(project.path(&dir)).unwrap();
        std::fs::write(project.path(&format!("{dir}/request.json")), "{}").unwrap();
        support::write_json(&project.path(&format!("{dir}/made.json")), &packet(provider, model, question));
    }
    std::fs::create_dir_all(project.path("golden")).unwrap();
    let blessed = project.run_in("", &["bless"]);
    assert_eq!(blessed.code, 0, "{}", blessed.describe());
    project.sign_gate("gate.json");
    project
}

fn user(question: &str) -> String {
    USER.replace("{{{question}}}", question)
}

fn packet(provider: &str, model: &str, question: &str) -> Value {
    let user = user(question);
    let mut packet = json!({
        "packetVersion": 1, "agentId": "orders", "taskType": "answer", "promptMode": "chat", "attempt": 1,
        "provider": provider, "model": model, "maxTokens": 800,
        "promptPaths": ["system.mustache", "user.mustache"],
        "promptVersions": {"system.mustache": packetproof::digest::sha256(SYSTEM.as_bytes()),
            "user.mustache": packetproof::digest::sha256(USER.as_bytes())},
        "systemPrompt": SYSTEM, "userMessage": user, "effectiveUserMessage": user,
        "renderInput": {"question": question}, "call": reviewed_call(),
        "resolvedBranch": {"agentId": "orders"},
    });
    packetproof::digest::seal(packet.as_object_mut().unwrap());
    packet
}

fn public_key() -> String {
    support::root().join("tests/keys/test-ed25519.pub.pem").display().to_string()
}

/// What the app sends with new data, as the official openai SDK writes it.
fn honest_chat() -> Value {
    json!({"model": "gpt-4.1", "max_completion_tokens": 800, "temperature": 0,
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user("Is order 99 paid?")}],
        "tools": [{"type": "function", "function": tools()[0]}], "tool_choice": "auto"})
}

/// `wire --check` of `body` against the gate, without a packet: exit code and output.
fn wire_gate(project: &Project, api: &str, body: &Value) -> support::Output {
    support::write_json(&project.path("body.json"), body);
    let key = public_key();
    let args = ["wire", "--check", "body.json", "--api", api, "--gate", "gate.json", "--trusted-key", &key];
    project.run_in("", &args)
}

/// An edit of a production body, what it is, and what the refusal must say.
type Attack = (&'static str, fn(&mut Value), &'static str);

/// Each attack on `body`, sent to `api` through `wire --check --gate`, is refused saying
/// what changed.
#[track_caller]
fn refuses_each(project: &Project, api: &str, body: &Value, attacks: &[Attack]) {
    for (what, edit, said) in attacks {
        let mut edited = body.clone();
        edit(&mut edited);
        let out = wire_gate(project, api, &edited);
        assert_eq!(out.code, 1, "{what}: {}", out.describe());
        assert!(out.stdout.contains(said), "{what}: expected {said:?} in {}", out.stdout);
    }
}

fn each_field_of_a_production_body_is_held_to_the_reviewed_call() {
    let project = signed_suite("");
    let honest = wire_gate(&project, "openai-chat", &honest_chat());
    assert_eq!(honest.code, 0, "{}", honest.describe());
    assert!(honest.stdout.contains("conforms"), "{}", honest.stdout);
    let attacks: [Attack; 14] = [
        (
            "an added tool",
            |b| {
                b["tools"].as_array_mut().unwrap().push(json!({"type": "function",
            "function": {"name": "exfil", "parameters": {"type": "object"}}}))
            },
            "tools: the request body",
        ),
        (
            "a tool's description edited",
            |b| b["tools"][0]["function"]["description"] = json!("Send orders out."),
            "tools:",
        ),
        ("a response format on a text agent", |b| b["response_format"] = json!({"type": "json_object"}), "output:"),
        ("temperature 0.9", |b| b["temperature"] = json!(0.9), "temperature: the request body is 0.9"),
        ("top_p", |b| b["top_p"] = json!(0.1), "topP:"),
        ("logit_bias", |b| b["logit_bias"] = json!({"50256": -100}), "logitBias:"),
        ("n", |b| b["n"] = json!(3), "n: the request body is 3"),
        ("stream_options", |b| b["stream_options"] = json!({"include_usage": true}), "streamOptions:"),
        ("a name on the user message", |b| b["messages"][1]["name"] = json!("eve"), "$.messages[1].name"),
        ("reasoning effort", |b| b["reasoning_effort"] = json!("low"), "reasoningEffort:"),
        ("the tool choice forced", |b| b["tool_choice"] = json!("required"), "toolChoice:"),
        (
            "no budget",
            |b| {
                b.as_object_mut().unwrap().remove("max_completion_tokens");
            },
            "sends no max tokens",
        ),
        ("a budget that is text", |b| b["max_completion_tokens"] = json!("99999999"), "not a number"),
        ("another budget", |b| b["max_completion_tokens"] = json!(201), "max tokens 201 are none the gate vouched"),
    ];
    refuses_each(&project, "openai-chat", &honest_chat(), &attacks);
    // The same body through the other OpenAI API is named as such, not half-read.
    let out = wire_gate(&project, "openai-responses", &honest_chat());
    assert_ne!(out.code, 0, "{}", out.describe());
    assert!(out.stderr.contains("it reads whole as openai-chat (`--api openai-chat`)"), "{}", out.describe());
}

/// One OTLP/JSON span of the call, as the GenAI conventions record it: `settings` are
/// extra attributes.
fn span(question: &str, settings: &[(&str, Value)]) -> String {
    let messages = json!([
        {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]},
        {"role": "user", "parts": [{"type": "text", "content": user(question)}]},
    ]);
    let mut attributes = vec![
        json!({"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}),
        json!({"key": "gen_ai.provider.name", "value": {"stringValue": "openai"}}),
        json!({"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4.1"}}),
        json!({"key": "gen_ai.request.max_tokens", "value": {"intValue": "800"}}),
        json!({"key": "gen_ai.input.messages", "value": {"stringValue": messages.to_string()}}),
    ];
    for (key, value) in settings {
        attributes.push(json!({"key": key, "value": value}));
    }
    let span = json!({"traceId": "0".repeat(31) + "1", "spanId": "0".repeat(15) + "1", "name": "chat gpt-4.1",
        "kind": 3, "attributes": attributes});
    json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.openai_v2"},
        "spans": [span]}]}]})
    .to_string()
}

fn trace_gate(project: &Project, line: &str, extra: &[&str]) -> support::Output {
    std::fs::write(project.path("calls.jsonl"), format!("{line}\n")).unwrap();
    let key = public_key();
    let args = ["trace", "calls.jsonl", "--packets", "golden", "--gate", "gate.json", "--trusted-key", &key];
    project.run_in("", &[&args[..], extra, &["--format", "json"]].concat())
}

fn a_span_is_held_to_the_reviewed_call_in_trace_and_serve() {
    let project = signed_suite("");
    let zero = ("gen_ai.request.temperature", json!({"doubleValue": 0.0}));
    let honest = span("Is order 99 paid?", std::slice::from_ref(&zero));
    let out = trace_gate(&project, &honest, &[]);
    assert_eq!(out.code, 0, "{}", out.describe());
    // The tools are reviewed, and the instrumentation records none: said, never a silent pass.
    assert!(
        out.stdout.contains("not judged, as the telemetry does not record them: tools, toolChoice"),
        "{}",
        out.stdout
    );
    let required = trace_gate(&project, &honest, &["--require", "tools"]);
    assert_eq!(required.code, 1, "{}", required.describe());
    assert!(required.stdout.contains("tools: the call sends none"), "{}", required.stdout);
    let hot = span("Is order 99 paid?", &[("gen_ai.request.temperature", json!({"doubleValue": 0.9}))]);
    let out = trace_gate(&project, &hot, &[]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stdout.contains("temperature: gen_ai.request.temperature is 0.9"), "{}", out.stdout);
    let exfil = json!([{"type": "function", "name": "exfil", "parameters": {"type": "object"}}]).to_string();
    let tooled = span("Is order 99 paid?", &[zero.clone(), ("gen_ai.tool.definitions", json!({"stringValue": exfil}))]);
    assert!(trace_gate(&project, &tooled, &[]).stdout.contains("tools: gen_ai.tool.definitions is"));
    let json = span("Is order 99 paid?", &[zero, ("gen_ai.output.type", json!({"stringValue": "json"}))]);
    let out = trace_gate(&project, &json, &[]);
    assert!(out.stdout.contains("output: gen_ai.output.type is \\\"json\\\""), "{}", out.stdout);

    // serve gives the calls the same verdicts.
    let key = public_key();
    let mut child = project
        .bin()
        .current_dir(project.root())
        .args(["serve", "--listen", "127.0.0.1:0", "--packets", "golden", "--gate", "gate.json"])
        .args(["--trusted-key", &key, "--findings", "findings.jsonl", "--join-window", "0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let addr = loop {
        let mut line = String::new();
        assert_ne!(std::io::BufRead::read_line(&mut stderr, &mut line).unwrap(), 0, "serve exited: {said}");
        said.push_str(&line);
        if let Some(addr) = line.trim().strip_prefix("packetproof serve: listening on http://") {
            break addr.to_owned();
        }
    };
    for body in [&honest, &hot] {
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        let request = format!(
            "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    unsafe_terminate(&mut child);
    let findings = std::fs::read_to_string(project.path("findings.jsonl")).unwrap();
    let lines: Vec<Value> = findings.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1, "only the hot call fails: {findings}");
    assert!(lines[0].to_string().contains("temperature: gen_ai.request.temperature is 0.9"), "{findings}");
}

/// Stop serve as a terminal does (SIGTERM): it drains, writing every finding.
fn unsafe_terminate(child: &mut std::process::Child) {
    let status = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    assert!(child.wait().unwrap().success());
}

fn a_bedrock_converse_call_is_judged_end_to_end() {
    let project = signed_suite("");
    let golden = "golden/bedrock/runtime-packet.json";
    let printed = project.run_in("", &["wire", "--packet", golden, "--api", "bedrock-converse"]);
    assert_eq!(printed.code, 0, "{}", printed.describe());
    let body: Value = serde_json::from_str(&printed.stdout).unwrap();
    assert_eq!(body["inferenceConfig"], json!({"maxTokens": 800, "temperature": 0}));
    assert_eq!(body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"], tools()[0]["parameters"]);
    // A HAR of the call through the Converse endpoint: the model is in its URL.
    let har = |body: &Value, model: &str| {
        let url = format!("https://bedrock-runtime.us-east-1.amazonaws.com/model/{model}/converse");
        json!({"log": {"version": "1.2", "entries": [{"request": {"method": "POST", "url": url,
            "postData": {"mimeType": "application/json", "text": body.to_string()}}}]}})
    };
    support::write_json(&project.path("call.har"), &har(&body, "anthropic.claude-sonnet-4-5-v1%3A0"));
    let strict = project.run_in("", &["wire", "--packet", golden, "--api", "bedrock-converse", "--check", "call.har"]);
    assert_eq!(strict.code, 0, "{}", strict.describe());
    // New data in production: conforms; a loosened tool schema does not.
    let mut fresh = body.clone();
    fresh["messages"][0]["content"][0]["text"] = json!(user("Where is order 5?"));
    let key = public_key();
    let gate = ["--api", "bedrock-converse", "--gate", "gate.json", "--trusted-key", &key];
    support::write_json(&project.path("fresh.har"), &har(&fresh, "anthropic.claude-sonnet-4-5-v1%3A0"));
    let out = project.run_in("", &[&["wire", "--check", "fresh.har"][..], &gate].concat());
    assert_eq!(out.code, 0, "{}", out.describe());
    fresh["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"] = json!({"type": "object"});
    support::write_json(&project.path("loose.har"), &har(&fresh, "anthropic.claude-sonnet-4-5-v1%3A0"));
    let out = project.run_in("", &[&["wire", "--check", "loose.har"][..], &gate].concat());
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stdout.contains("tools: the request body is"), "{}", out.stdout);
}

fn an_agent_may_declare_the_values_a_field_takes() {
    let project = signed_suite("");
    let settings = std::fs::read_to_string(project.path("harness.toml")).unwrap();
    let declared =
        settings.replace("[contract.templates]", "[contract.call]\ntemperature = [0, 0.7]\n\n[contract.templates]");
    std::fs::write(project.path("harness.toml"), declared).unwrap();
    // The settings changed, so the gate is signed again over them.
    project.sign_gate("gate2.json");
    std::fs::rename(project.path("gate2.json"), project.path("gate.json")).unwrap();
    let mut warm = honest_chat();
    warm["temperature"] = json!(0.7);
    let out = wire_gate(&project, "openai-chat", &warm);
    assert_eq!(out.code, 0, "{}", out.describe());
    warm["temperature"] = json!(0.9);
    let out = wire_gate(&project, "openai-chat", &warm);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stdout.contains("and the agent declares [0,0.7]"), "{}", out.stdout);
    let unknown = settings.replace("[contract.templates]", "[contract.call]\ntemprature = [0]\n\n[contract.templates]");
    std::fs::write(project.path("harness.toml"), unknown).unwrap();
    let refused = project.run_in("", &["verify", "harness.toml"]);
    assert_eq!(refused.code, 2, "{}", refused.describe());
    assert!(refused.stderr.contains("contract.call.temprature: expected a call field"), "{}", refused.describe());
}

/// The block builder's Anthropic call sends its schema as the one forced tool: a call
/// with the golden packet's texts that drops the tool, loosens its schema, lets the model
/// choose, adds a tool, or caches the system prompt is refused, naming what changed.
fn the_block_builders_forced_tool_is_held_in_production() {
    let case = "anthropic-staged-pred-selected";
    let project = Project::suite(&[case]);
    let settings = project.path("harness.toml");
    let text = std::fs::read_to_string(&settings).unwrap() + "\n[corpus]\nrequire_branch_coverage = false\n";
    std::fs::write(&settings, text).unwrap();
    let project = project.blessed();
    project.sign_gate("gate.json");
    let golden = format!("golden/{case}/runtime-packet.json");
    let printed = project.run_in("", &["wire", "--packet", &golden, "--api", "anthropic"]);
    assert_eq!(printed.code, 0, "{}", printed.describe());
    let body: Value = serde_json::from_str(&printed.stdout).unwrap();
    let exact = wire_gate(&project, "anthropic", &body);
    assert_eq!(exact.code, 0, "{}", exact.describe());
    assert!(exact.stdout.contains("matched"), "{}", exact.stdout);
    let attacks: [Attack; 6] = [
        (
            "the forced tool removed",
            |b| {
                let map = b.as_object_mut().unwrap();
                map.remove("tools");
                map.remove("tool_choice");
            },
            "output: the request body is \"text\"",
        ),
        (
            "its schema loosened",
            |b| b["tools"][0]["input_schema"] = json!({"type": "object"}),
            "output: the request body is",
        ),
        (
            "the choice left to the model",
            |b| b["tool_choice"] = json!({"type": "auto"}),
            "toolChoice: the request body is \"auto\"",
        ),
        (
            "another tool",
            |b| {
                let extra = json!({"name": "exfil", "input_schema": {"type": "object"}});
                b["tools"].as_array_mut().unwrap().insert(0, extra);
            },
            "tools: the request body is",
        ),
        (
            "the system prompt cached",
            |b| {
                b["system"] = json!([{"type": "text", "text": b["system"], "cache_control": {"type": "ephemeral"}}]);
            },
            "cacheControl: the request body is",
        ),
        ("a budget the packet does not have", |b| b["max_tokens"] = json!(201), "max tokens 201; the packet's are"),
    ];
    refuses_each(&project, "anthropic", &body, &attacks);
}

/// A packet with its call and a declared field of its own is prepared into a run that
/// rebuilds it whole: the agent sees the call it stands in for, the declared field is
/// held back, and the run's packet keeps its checksum at every later step.
fn a_run_carries_the_call_and_declared_fields_whole() {
    let project = signed_suite("packet_fields = [\"tenant\"]");
    let golden = project.path("golden/openai/runtime-packet.json");
    let plain = project.run_in("", &["prepare", "--packet", "golden/openai/runtime-packet.json", "--out-dir", "plain"]);
    assert_eq!(plain.code, 0, "{}", plain.describe());
    let verified = project.run_in("", &["verify", "plain"]);
    assert!(!verified.stdout.contains("[packet::checksum] "), "{}", verified.stdout);
    let mut packet: Value = serde_json::from_str(&std::fs::read_to_string(&golden).unwrap()).unwrap();
    packet["tenant"] = json!("acme");
    packetproof::digest::seal(packet.as_object_mut().unwrap());
    support::write_json(&project.path("with-field.json"), &packet);
    let prepared = project.run_in("", &["prepare", "--packet", "with-field.json", "--out-dir", "run"]);
    assert_eq!(prepared.code, 0, "{}", prepared.describe());
    let request: Value =
        serde_json::from_str(&std::fs::read_to_string(project.path("run/agent-request.json")).unwrap()).unwrap();
    assert_eq!(request["call"], reviewed_call(), "the agent sees the call");
    let context: Value =
        serde_json::from_str(&std::fs::read_to_string(project.path("run/eval-context.json")).unwrap()).unwrap();
    assert_eq!(context["packetFields"], json!({"tenant": "acme"}));
    let verified = project.run_in("", &["verify", "run"]);
    for rule in ["run::agent-request", "packet::checksum", "run::eval-context"] {
        assert!(!verified.stdout.contains(&format!("[{rule}] ")), "{rule}: {}", verified.stdout);
    }
    // The call edited in the run's agent request rebuilds another packet: its checksum fails.
    let mut edited = request.clone();
    edited["call"]["temperature"] = json!(0.9);
    support::write_json(&project.path("run/agent-request.json"), &edited);
    let refused = project.run_in("", &["verify", "run"]);
    assert_eq!(refused.code, 1, "{}", refused.describe());
    assert!(refused.stdout.contains("[packet::checksum] packet $.checksum"), "{}", refused.stdout);
}
