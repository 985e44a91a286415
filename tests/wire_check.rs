//! Provenance to the wire, the library: the provider request body each
//! API gets from a packet, and the check of a captured request, one test per kind of
//! difference. Captured requests are made here from the corpus cases' packets, compiled
//! by the current templates (the body the packet implies, then one edit each), so they
//! never go stale when a template changes.

#[path = "support/mod.rs"]
mod support;

use packetproof::judge::{self, Step};
use packetproof::wire::{self, capture::Captured, Api};
use packetproof::{canonical, Config, Error, JsonPath, Location};
use serde_json::{json, Value};
use std::path::Path;

const ANTHROPIC: &str = "anthropic-staged-both-selected-interop-shape";
const OPENAI: &str = "openai-staged-alone-selected";
const GOOGLE: &str = "google-staged-both-selected";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn config() -> packetproof::Invocation {
    packetproof::Invocation::from(Config::load(root(), None).expect("harness.toml"))
}

fn packet(case: &str) -> Value {
    support::compiled_packet(case)
}

fn body(case: &str, api: Api) -> Value {
    wire::body(&packet(case), api, case).unwrap()
}

/// The findings of checking `captured` (a bare body) against the case's packet, as `path: message`.
fn check(case: &str, api: Api, captured: Value) -> Vec<String> {
    let outcome = checked(case, api, &Captured::body(captured, "cap.json"));
    outcome.findings.iter().map(|f| format!("{}: {}", f.path, f.message)).collect()
}

/// The outcome of checking `captured` against the case's packet.
fn checked(case: &str, api: Api, captured: &Captured) -> packetproof::Outcome {
    wire::check(&packet(case), api, captured, config().settings(), case, wire::CHECK).unwrap()
}

#[track_caller]
fn assert_one(findings: &[String], path: &str, fragment: &str) {
    assert!(
        findings.iter().any(|f| f.starts_with(&format!("cap.json {path}: ")) && f.contains(fragment)),
        "expected a finding at {path} containing {fragment:?}, got {findings:#?}"
    );
}

// ------------------------------------------------------------------ bodies

#[test]
fn each_api_body_carries_exactly_the_packet_material() {
    let p = packet(ANTHROPIC);
    let schema = &p["outputSchema"];
    assert_eq!(
        body(ANTHROPIC, Api::from_name("anthropic").unwrap()),
        json!({
            "model": p["model"], "max_tokens": p["maxTokens"], "system": p["systemPrompt"],
            "messages": [{"role": "user", "content": p["effectiveUserMessage"]}],
            "tools": [{"name": schema["name"], "description": schema["description"], "input_schema": schema["schema"]}],
            "tool_choice": {"type": "tool", "name": schema["name"]},
        })
    );
    let p = packet(OPENAI);
    let schema = &p["outputSchema"];
    assert_eq!(
        body(OPENAI, Api::from_name("openai-chat").unwrap()),
        json!({
            "model": p["model"], "max_completion_tokens": p["maxTokens"],
            "messages": [{"role": "system", "content": p["systemPrompt"]}, {"role": "user", "content": p["effectiveUserMessage"]}],
            "response_format": {"type": "json_schema", "json_schema": {
                "name": schema["name"], "description": schema["description"], "schema": schema["schema"], "strict": false}},
        })
    );
    assert_eq!(
        body(OPENAI, Api::from_name("openai-responses").unwrap()),
        json!({
            "model": p["model"], "max_output_tokens": p["maxTokens"], "instructions": p["systemPrompt"],
            "input": [{"role": "user", "content": p["effectiveUserMessage"]}],
            "text": {"format": {"type": "json_schema", "name": schema["name"], "description": schema["description"],
                "schema": schema["schema"], "strict": false}},
        })
    );
    let p = packet(GOOGLE);
    assert_eq!(
        body(GOOGLE, Api::from_name("gemini").unwrap()),
        json!({
            "systemInstruction": {"parts": [{"text": p["systemPrompt"]}]},
            "contents": [{"role": "user", "parts": [{"text": p["effectiveUserMessage"]}]}],
            "generationConfig": {"maxOutputTokens": p["maxTokens"], "responseMimeType": "application/json"},
        })
    );
    assert_ne!(p["userMessage"], p["effectiveUserMessage"], "the Google body carries the suffixed message");
}

/// A packet without outputSchema whose effectiveUserMessage is its userMessage asks for
/// plain text: every API's body then carries no output format (no tools, no
/// response_format, no text.format, no JSON mode), and one that adds it fails.
#[test]
fn a_plain_text_packet_has_plain_text_bodies() {
    let plain = |case: &str| {
        let mut p = packet(case);
        let map = p.as_object_mut().unwrap();
        map.remove("outputSchema");
        let user = map["userMessage"].clone();
        map.insert("effectiveUserMessage".into(), user);
        packetproof::digest::seal(map);
        p
    };
    for (case, api, format) in [
        (ANTHROPIC, Api::from_name("anthropic").unwrap(), "tools"),
        (OPENAI, Api::from_name("openai-chat").unwrap(), "response_format"),
        (OPENAI, Api::from_name("openai-responses").unwrap(), "text"),
    ] {
        let p = plain(case);
        let b = wire::body(&p, api, case).unwrap();
        assert!(b.get(format).is_none() && b.get("tool_choice").is_none(), "{api:?}: {b}");
        let captured = Captured::body(b.clone(), "cap.json");
        let held = wire::check(&p, api, &captured, config().settings(), case, wire::CHECK).unwrap();
        assert!(held.findings.is_empty(), "{api:?}: {:?}", held.findings);
        let mut asked = b;
        asked[format] = json!({"type": "json_object"});
        let captured = Captured::body(asked, "cap.json");
        let failed = wire::check(&p, api, &captured, config().settings(), case, wire::CHECK).unwrap();
        assert!(!failed.findings.is_empty(), "{api:?} accepted an output format the packet does not ask for");
    }
    let b = wire::body(&plain(GOOGLE), Api::from_name("gemini").unwrap(), GOOGLE).unwrap();
    assert_eq!(b["generationConfig"], json!({"maxOutputTokens": packet(GOOGLE)["maxTokens"]}), "no JSON mode: {b}");
}

#[test]
fn a_packet_for_another_provider_is_refused() {
    for (case, api) in [
        (ANTHROPIC, Api::from_name("openai-chat").unwrap()),
        (OPENAI, Api::from_name("anthropic").unwrap()),
        (GOOGLE, Api::from_name("openai-responses").unwrap()),
        (OPENAI, Api::from_name("gemini").unwrap()),
    ] {
        let err = wire::body(&packet(case), api, case).unwrap_err();
        assert!(matches!(err, Error::Refused { .. }), "{err}");
        assert!(err.to_string().contains(&format!("{case} $.provider: refused")), "{err}");
        let captured = Captured::body(json!({}), "cap.json");
        assert!(wire::check(&packet(case), api, &captured, config().settings(), case, wire::CHECK).is_err());
    }
}

#[test]
fn a_packet_that_fails_the_contract_is_refused() {
    let mut p = packet(ANTHROPIC);
    p["systemPrompt"] = json!("edited after review");
    let err = judge::wire_body(&config(), Path::new("p.json"), &p, Api::from_name("anthropic").unwrap()).unwrap_err();
    assert_eq!(err.exit_status(), 1, "a packet failing a rule is exit 1 in wire as everywhere: {err}");
    let err = err.to_string();
    assert!(err.contains("p.json: refused with") && err.contains("packet::exact-input-hash"), "{err}");
}

// ------------------------------------------------------------------ checks that hold

#[test]
fn the_implied_body_passes_for_every_api() {
    for (case, api) in [
        (ANTHROPIC, Api::from_name("anthropic").unwrap()),
        (OPENAI, Api::from_name("openai-chat").unwrap()),
        (OPENAI, Api::from_name("openai-responses").unwrap()),
        (GOOGLE, Api::from_name("gemini").unwrap()),
    ] {
        let findings = check(case, api, body(case, api));
        assert!(findings.is_empty(), "{api:?}: {findings:#?}");
    }
}

#[test]
fn documented_equivalent_forms_pass() {
    let mut b = body(ANTHROPIC, Api::from_name("anthropic").unwrap());
    b["system"] = json!([{"type": "text", "text": b["system"]}]);
    b["messages"][0]["content"] = json!([{"type": "text", "text": b["messages"][0]["content"]}]);
    assert_eq!(check(ANTHROPIC, Api::from_name("anthropic").unwrap(), b), Vec::<String>::new());

    let mut b = body(OPENAI, Api::from_name("openai-chat").unwrap());
    b["messages"][0]["role"] = json!("developer");
    b["messages"][1]["content"] = json!([{"type": "text", "text": b["messages"][1]["content"]}]);
    assert_eq!(check(OPENAI, Api::from_name("openai-chat").unwrap(), b), Vec::<String>::new());

    let mut b = body(OPENAI, Api::from_name("openai-responses").unwrap());
    b["input"] = b["input"][0]["content"].clone();
    assert_eq!(check(OPENAI, Api::from_name("openai-responses").unwrap(), b), Vec::<String>::new());
}

/// A setting passes when the packet's call sends it, with the value it sends.
#[test]
fn a_setting_passes_only_as_the_packets_call_sends_it() {
    let gemini = Api::from_name("gemini").unwrap();
    let mut p = packet(GOOGLE);
    p["call"] = json!({"temperature": 0.2, "tools": [{"name": "lookup", "parameters": {"type": "object"}}]});
    let judged = |b: Value| {
        let outcome =
            wire::check(&p, gemini, &Captured::body(b, "cap.json"), config().settings(), GOOGLE, wire::CHECK).unwrap();
        outcome.findings.iter().map(|f| format!("{}: {}", f.path, f.message)).collect::<Vec<_>>()
    };
    let sent = wire::body(&p, gemini, GOOGLE).unwrap();
    assert_eq!(sent["generationConfig"]["temperature"], json!(0.2));
    assert_eq!(judged(sent.clone()), Vec::<String>::new());
    let mut hotter = sent.clone();
    hotter["generationConfig"]["temperature"] = json!(0.9);
    assert_eq!(judged(hotter), ["cap.json $.generationConfig.temperature: generation config: is 0.9; expected 0.2"]);
    let mut loosened = sent;
    loosened["tools"][0]["functionDeclarations"][0]["parameters"] = json!({});
    let found = judged(loosened);
    assert!(found[0].starts_with("cap.json $.tools[0].functionDeclarations[0].parameters.type: missing"), "{found:?}");
    // Anthropic has no place for a seed: no body of it sends that call.
    let mut p = packet(ANTHROPIC);
    p["call"] = json!({"seed": 7});
    let err = wire::body(&p, Api::from_name("anthropic").unwrap(), ANTHROPIC).unwrap_err().to_string();
    assert!(err.contains("has no place for [\"seed\"]"), "{err}");
}

// ------------------------------------------------------------------ every difference is a finding

#[test]
fn an_extra_message_is_a_finding() {
    let mut b = body(OPENAI, Api::from_name("openai-chat").unwrap());
    b["messages"].as_array_mut().unwrap().push(json!({"role": "user", "content": "Also add a bonus screen."}));
    let findings = check(OPENAI, Api::from_name("openai-chat").unwrap(), b);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_one(&findings, "$.messages[2]", "messages: an extra item the packet does not imply");
}

#[test]
fn an_edited_user_message_is_a_finding_that_says_where() {
    let mut b = body(ANTHROPIC, Api::from_name("anthropic").unwrap());
    let text = b["messages"][0]["content"].as_str().unwrap().replacen("Screen", "SCREEN", 1);
    b["messages"][0]["content"] = json!(text);
    let findings = check(ANTHROPIC, Api::from_name("anthropic").unwrap(), b);
    assert_one(&findings, "$.messages[0].content", "user message: differs from the packet's text at byte");
}

#[test]
fn an_edited_system_prompt_is_a_finding() {
    let mut b = body(OPENAI, Api::from_name("openai-responses").unwrap());
    b["instructions"] = json!(format!("{} Be brief.", b["instructions"].as_str().unwrap()));
    assert_one(
        &check(OPENAI, Api::from_name("openai-responses").unwrap(), b),
        "$.instructions",
        "system prompt: differs",
    );
}

#[test]
fn a_dropped_schema_is_a_finding() {
    let mut b = body(ANTHROPIC, Api::from_name("anthropic").unwrap());
    b.as_object_mut().unwrap().remove("tools");
    b.as_object_mut().unwrap().remove("tool_choice");
    let findings = check(ANTHROPIC, Api::from_name("anthropic").unwrap(), b);
    assert_one(&findings, "$.tools", "tools: missing");
    assert_one(&findings, "$.tool_choice", "tool choice: missing");
}

#[test]
fn a_loosened_schema_json_object_mode_is_a_finding() {
    let mut b = body(OPENAI, Api::from_name("openai-chat").unwrap());
    b["response_format"] = json!({"type": "json_object"});
    let findings = check(OPENAI, Api::from_name("openai-chat").unwrap(), b);
    assert_one(&findings, "$.response_format.type", "output schema: is \"json_object\"; expected \"json_schema\"");
    assert_one(&findings, "$.response_format.json_schema", "output schema: missing");
}

#[test]
fn strict_follows_the_schema_and_any_other_strict_or_schema_edit_is_a_finding() {
    // The snapshot has optional properties: OpenAI strict mode would refuse it, so
    // the body says strict: false, and says why.
    let findings = check(
        OPENAI,
        Api::from_name("openai-responses").unwrap(),
        body(OPENAI, Api::from_name("openai-responses").unwrap()),
    );
    assert!(findings.is_empty(), "{findings:#?}");
    let captured = Captured::body(body(OPENAI, Api::from_name("openai-responses").unwrap()), "cap.json");
    let outcome = checked(OPENAI, Api::from_name("openai-responses").unwrap(), &captured);
    assert!(outcome.notes.iter().any(|n| n.starts_with("strict is false") && n.contains("$.outputSchema.schema")));

    let mut b = body(OPENAI, Api::from_name("openai-responses").unwrap());
    b["text"]["format"]["strict"] = json!(true);
    b["text"]["format"]["schema"]["required"] = json!([]);
    let findings = check(OPENAI, Api::from_name("openai-responses").unwrap(), b);
    assert_one(&findings, "$.text.format.strict", "is true; expected false");
    assert_one(&findings, "$.text.format.schema.required[0]", "output schema: missing");

    // A closed schema with every property required is sent strict, and loosening it is a finding.
    let mut p = packet(OPENAI);
    p["outputSchema"]["schema"] = json!({"type": "object", "additionalProperties": false, "required": ["result"],
        "properties": {"result": {"type": "string"}}});
    packetproof::digest::seal(p.as_object_mut().unwrap());
    let mut b = wire::body(&p, Api::from_name("openai-chat").unwrap(), "p.json").unwrap();
    assert_eq!(b["response_format"]["json_schema"]["strict"], json!(true));
    b["response_format"]["json_schema"]["strict"] = json!(false);
    let outcome = wire::check(
        &p,
        Api::from_name("openai-chat").unwrap(),
        &Captured::body(b, "cap.json"),
        config().settings(),
        "p.json",
        wire::CHECK,
    )
    .unwrap();
    assert_eq!(outcome.findings.len(), 1, "{:#?}", outcome.findings);
    let strict = JsonPath::field("response_format").key("json_schema").key("strict");
    assert_eq!(outcome.findings[0].path, Location::in_file("cap.json", strict));
    assert!(outcome.notes.is_empty(), "{:?}", outcome.notes);
}

#[test]
fn a_different_model_or_token_limit_is_a_finding() {
    let mut b = body(ANTHROPIC, Api::from_name("anthropic").unwrap());
    b["model"] = json!("claude-haiku-4-5");
    b["max_tokens"] = json!(1024);
    let findings = check(ANTHROPIC, Api::from_name("anthropic").unwrap(), b);
    assert_one(&findings, "$.model", "model: is \"claude-haiku-4-5\"; expected \"claude-sonnet-4-5\"");
    assert_one(&findings, "$.max_tokens", "token limit: is 1024");
}

#[test]
fn an_unlisted_setting_is_a_finding() {
    let mut b = body(ANTHROPIC, Api::from_name("anthropic").unwrap());
    b["stream"] = json!(false);
    b["tool_choice"]["disable_parallel_tool_use"] = json!(true);
    let findings = check(ANTHROPIC, Api::from_name("anthropic").unwrap(), b);
    assert_one(&findings, "$.stream", "`stream` is sent, and the packet's call does not send it");
    assert_one(&findings, "$.tool_choice.disable_parallel_tool_use", "`tool_choice.disable_parallel_tool_use` is sent");
    let mut b = body(GOOGLE, Api::from_name("gemini").unwrap());
    b["temperature"] = json!(0.2); // allowed only inside generationConfig
    assert_one(
        &check(GOOGLE, Api::from_name("gemini").unwrap(), b),
        "$.temperature",
        "`temperature` is sent, and the packet's call does not send it",
    );
}

#[test]
fn render_input_reaching_the_request_is_named() {
    let p = packet(OPENAI);
    let render = canonical::to_pretty(&p["renderInput"]);
    let mut b = body(OPENAI, Api::from_name("openai-chat").unwrap());
    b["messages"].as_array_mut().unwrap().insert(1, json!({"role": "user", "content": render}));
    let findings = check(OPENAI, Api::from_name("openai-chat").unwrap(), b);
    assert!(findings.iter().any(|f| f.contains("it carries renderInput text from $.renderInput")), "{findings:#?}");
}

#[test]
fn the_base_user_message_without_the_suffix_is_named() {
    let p = packet(GOOGLE);
    let mut b = body(GOOGLE, Api::from_name("gemini").unwrap());
    b["contents"][0]["parts"][0]["text"] = p["userMessage"].clone();
    let findings = check(GOOGLE, Api::from_name("gemini").unwrap(), b);
    assert_one(&findings, "$.contents[0].parts[0].text", "the packet's userMessage without the provider suffix");
}

// ------------------------------------------------------------------ HAR captures

fn har(entries: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}}),
    )
    .unwrap()
}

fn entry(url: &str, body: &Value) -> Value {
    json!({"request": {"method": "POST", "url": url, "headers": [],
        "postData": {"mimeType": "application/json", "text": body.to_string()}}})
}

#[test]
fn a_har_entry_for_the_endpoint_is_checked_with_the_gemini_model_in_its_url() {
    let b = body(GOOGLE, Api::from_name("gemini").unwrap());
    let ok = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent";
    let other = json!({"contents": []});
    let bytes = har(vec![
        entry("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:countTokens", &other),
        entry(ok, &b),
    ]);
    let captured = wire::capture::parse(&bytes, "cap.har", Api::from_name("gemini").unwrap()).unwrap();
    let outcome = checked(GOOGLE, Api::from_name("gemini").unwrap(), &captured);
    assert!(outcome.ok(), "{:#?}", outcome.findings);

    let bytes = har(vec![entry(&ok.replace("gemini-2.5-flash", "gemini-2.5-pro"), &b)]);
    let captured = wire::capture::parse(&bytes, "cap.har", Api::from_name("gemini").unwrap()).unwrap();
    let outcome = checked(GOOGLE, Api::from_name("gemini").unwrap(), &captured);
    assert_eq!(outcome.findings.len(), 1, "{:#?}", outcome.findings);
    let url = JsonPath::field("log").key("entries").index(0).key("request").key("url");
    assert_eq!(outcome.findings[0].path, Location::in_file("cap.har", url));
    assert!(outcome.findings[0].message.contains("\"gemini-2.5-pro\"; expected \"gemini-2.5-flash\""));

    // A bare Gemini body cannot show its model: said, not silently passed over.
    let outcome = wire::check(
        &packet(GOOGLE),
        Api::from_name("gemini").unwrap(),
        &Captured::body(b, "b.json"),
        config().settings(),
        GOOGLE,
        wire::CHECK,
    )
    .unwrap();
    assert!(outcome.notes.iter().any(|n| n.contains("model of a gemini request is in its URL")));
}

/// A capture with a second generation request beside the reviewed one (Chat beside
/// Responses, an Anthropic batch carrying an unreviewed prompt) fails, naming its URL.
#[test]
fn every_other_generation_post_in_a_har_is_a_finding_naming_its_url() {
    let b = body(ANTHROPIC, Api::from_name("anthropic").unwrap());
    let batch = json!({"requests": [{"custom_id": "x", "params": {"model": "m", "max_tokens": 5,
        "messages": [{"role": "user", "content": "An unreviewed prompt."}]}}]});
    let bytes = har(vec![
        entry("https://api.anthropic.com/v1/messages", &b),
        entry("https://api.anthropic.com/v1/messages/batches", &batch),
        entry("https://api.openai.com/v1/chat/completions", &json!({"model": "gpt-5", "messages": []})),
    ]);
    let captured = wire::capture::parse(&bytes, "cap.har", Api::from_name("anthropic").unwrap()).unwrap();
    let outcome = checked(ANTHROPIC, Api::from_name("anthropic").unwrap(), &captured);
    let found: Vec<String> = outcome.findings.iter().map(|f| format!("{}: {}", f.path, f.message)).collect();
    assert_eq!(
        found,
        [
            "cap.har $.log.entries[1].request.url: another generation request: the capture also POSTs to \"https://api.anthropic.com/v1/messages/batches\", which is not the reviewed call",
            "cap.har $.log.entries[2].request.url: another generation request: the capture also POSTs to \"https://api.openai.com/v1/chat/completions\", which is not the reviewed call"
        ]
    );
}

#[test]
fn a_literal_dotted_key_is_not_the_nested_setting() {
    let mut b = body(GOOGLE, Api::from_name("gemini").unwrap());
    b["generationConfig.temperature"] = json!(0.2);
    let findings = check(GOOGLE, Api::from_name("gemini").unwrap(), b);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert!(findings[0].contains("`\"generationConfig.temperature\"` is sent"), "{findings:#?}");
}

#[test]
fn a_har_request_must_go_to_the_api_host_and_path_or_the_base_url_given() {
    let b = body(ANTHROPIC, Api::from_name("anthropic").unwrap());
    let run = |url: &str, base: Option<&str>| {
        let captured =
            wire::capture::parse(&har(vec![entry(url, &b)]), "cap.har", Api::from_name("anthropic").unwrap()).unwrap();
        let outcome = wire::check(
            &packet(ANTHROPIC),
            Api::from_name("anthropic").unwrap(),
            &captured.through(base),
            config().settings(),
            ANTHROPIC,
            wire::CHECK,
        )
        .unwrap();
        outcome.findings.iter().map(|f| format!("{}: {}", f.path, f.message)).collect::<Vec<_>>()
    };
    assert!(run("https://api.anthropic.com/v1/messages", None).is_empty());
    let elsewhere = run("https://api.anthropic.evil.example/v1/messages", None);
    assert_eq!(elsewhere.len(), 1, "{elsewhere:#?}");
    assert!(elsewhere[0].starts_with("cap.har $.log.entries[0].request.url: endpoint: the request went to"));
    assert!(elsewhere[0].contains("expected https://api.anthropic.com/v1/messages"), "{elsewhere:#?}");
    let proxy = "https://gateway.example/acct/anthropic";
    assert!(run(&format!("{proxy}/v1/messages"), Some(proxy)).is_empty());
    let wrong_path = run(&format!("{proxy}/extra/v1/messages"), Some(proxy));
    assert!(wrong_path.iter().any(|f| f.contains("the request went to path /extra/v1/messages")), "{wrong_path:#?}");
    let plain_http = run("http://api.anthropic.com/v1/messages", None);
    assert_eq!(plain_http.len(), 1, "{plain_http:#?}");
}

// ------------------------------------------------------------------ model output limits

#[test]
fn a_packet_past_its_models_output_limit_is_refused_by_validate_and_wire() {
    for (model, tokens) in [("claude-opus-4-1", 64000), ("claude-sonnet-4-5", 10_000_000)] {
        let mut p = packet(ANTHROPIC);
        p["model"] = json!(model);
        p["maxTokens"] = json!(tokens);
        packetproof::digest::seal(p.as_object_mut().unwrap());
        let findings = judge::packet_file(Path::new("p.json"), &p, &config(), Step::Validate).findings;
        assert_eq!(findings.len(), 1, "{findings:#?}");
        assert_eq!(findings[0].path, JsonPath::field("maxTokens").into());
        assert!(findings[0].message.contains(&format!("exceeds model {model:?}'s output limit")), "{findings:#?}");
        let err = judge::wire_body(&config(), Path::new("p.json"), &p, Api::from_name("anthropic").unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("output limit"), "{err}");
    }
    let mut p = packet(ANTHROPIC);
    p["model"] = json!("claude-opus-4-1");
    p["maxTokens"] = json!(32000);
    packetproof::digest::seal(p.as_object_mut().unwrap());
    assert!(judge::packet_file(Path::new("p.json"), &p, &config(), Step::Validate).ok());
}

// ------------------------------------------------------------------ the whole call as clients send it

/// The packet of a recorded call (tests/recordings/calls/inputs.json): its provider and
/// model, the schema answer when `schema`, and `call`.
fn call_packet(provider: &str, schema: bool, call: Value) -> Value {
    let inputs = support::read_json(&root().join("tests/recordings/calls/inputs.json"));
    let model = if provider == "anthropic" { &inputs["anthropicModel"] } else { &inputs["model"] };
    let mut packet = json!({"provider": provider, "model": model, "maxTokens": inputs["maxTokens"],
        "systemPrompt": inputs["system"], "userMessage": inputs["user"], "effectiveUserMessage": inputs["user"]});
    if schema {
        packet["outputSchema"] = inputs["schema"].clone();
    }
    if call != json!({}) {
        packet["call"] = call;
    }
    packet
}

/// Each recorded body (scripts/record/record-calls.sh: the official openai and anthropic
/// SDKs for Node and Python, the Vercel AI SDK 5) with its API and the packet of the call
/// it makes.
fn recorded_calls() -> Vec<(&'static str, &'static str, Value)> {
    let inputs = support::read_json(&root().join("tests/recordings/calls/inputs.json"));
    let tool = inputs["tool"].clone();
    let strict = |strict: bool| {
        let mut tool = tool.clone();
        tool["strict"] = json!(strict);
        tool
    };
    let tools = |tool: Value| json!({"tools": [tool], "toolChoice": "auto", "temperature": 0});
    vec![
        ("openai.chat-tools", "openai-chat", call_packet("openai", false, tools(tool.clone()))),
        ("openai.chat-schema", "openai-chat", call_packet("openai", true, json!({}))),
        ("openai.responses-tools", "openai-responses", call_packet("openai", false, tools(strict(true)))),
        ("anthropic.messages-tools", "anthropic", call_packet("anthropic", false, tools(tool.clone()))),
        ("vercel.openai-tools", "openai-responses", call_packet("openai", false, tools(strict(false)))),
        ("vercel.openai-text", "openai-responses", call_packet("openai", false, json!({"maxTokensOmitted": true}))),
        ("vercel.openai-schema", "openai-responses", call_packet("openai", true, json!({"strictOutput": false}))),
        ("vercel.anthropic-tools", "anthropic", call_packet("anthropic", false, tools(tool.clone()))),
        ("python-openai.chat-tools", "openai-chat", call_packet("openai", false, tools(tool.clone()))),
        ("python-openai.chat-schema", "openai-chat", call_packet("openai", true, json!({}))),
        ("python-openai.responses-tools", "openai-responses", call_packet("openai", false, tools(strict(true)))),
        // anthropic 2.15 for Python takes no temperature.
        (
            "python-anthropic.messages-tools",
            "anthropic",
            call_packet("anthropic", false, json!({"tools": [tool], "toolChoice": "auto"})),
        ),
    ]
}

fn check_recorded(name: &str, api: &str, packet: &Value, body: Value) -> Vec<String> {
    let captured = Captured::body(body, name);
    let outcome =
        wire::check(packet, Api::from_name(api).unwrap(), &captured, config().settings(), "p", wire::CHECK).unwrap();
    outcome.findings.iter().map(|f| format!("{}: {}", f.path, f.message)).collect()
}

/// What the clients send for a reviewed call holds: tools, a tool choice, temperature, a
/// JSON-schema answer, the system prompt as the first input message, no budget.
#[test]
fn the_whole_calls_clients_send_hold_against_their_packets() {
    for (name, api, packet) in recorded_calls() {
        let body = support::read_json(&root().join(format!("tests/recordings/calls/{name}.json")));
        assert_eq!(check_recorded(name, api, &packet, body), Vec::<String>::new(), "{name}");
    }
}

/// And each field changed or added in them is a finding that names it.
#[test]
fn each_field_changed_in_a_recorded_call_is_a_finding() {
    for (name, api, packet) in recorded_calls() {
        let body = support::read_json(&root().join(format!("tests/recordings/calls/{name}.json")));
        let mut hot = body.clone();
        hot["temperature"] = json!(0.9);
        let found = check_recorded(name, api, &packet, hot);
        assert!(found.iter().any(|f| f.contains("$.temperature")), "{name}: {found:?}");
        if let Some(tools) = body.get("tools") {
            let mut more = body.clone();
            let mut extra = tools[0].clone();
            extra["name"] = json!("exfil");
            more["tools"].as_array_mut().unwrap().push(extra);
            let found = check_recorded(name, api, &packet, more);
            assert!(found.iter().any(|f| f.contains("$.tools[1]")), "{name}: {found:?}");
        }
        // A packet that says no budget is sent holds a call that sends one to that.
        if packet.get("call").and_then(|c| c.get("maxTokensOmitted")).is_some() {
            let mut budgeted = body.clone();
            budgeted["max_output_tokens"] = json!(800);
            let found = check_recorded(name, api, &packet, budgeted);
            assert!(found.iter().any(|f| f.contains("$.max_output_tokens")), "{name}: {found:?}");
        }
    }
}
