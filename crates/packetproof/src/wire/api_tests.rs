//! Every API spec both ways: reading back a built body gives the packet's material
//! (proptest over texts, budgets, output formats and every call field the API takes),
//! and what a spec does not know is reported, never dropped.

use super::*;
use crate::wire::specs::SPECS;
use crate::wire::Api;
use proptest::prelude::*;
use serde_json::json;

/// A value of the field's kind.
fn value_of(name: &str, seed: u32) -> Value {
    let field = crate::call::field(name).unwrap();
    match field.kind {
        call::Kind::Number => json!(f64::from(seed % 20) / 10.0),
        call::Kind::Integer => json!(seed % 5000 + 1),
        call::Kind::Text => json!(format!("v{seed}")),
        call::Kind::Bool => json!(seed % 2 == 0),
        call::Kind::Texts => json!([format!("s{seed}")]),
        call::Kind::Object | call::Kind::Any => json!({"k": format!("v{seed}")}),
        call::Kind::Tools => json!([{"name": format!("tool_{seed}"), "description": "d",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}]),
        call::Kind::Choice => match seed % 3 {
            0 => json!("auto"),
            1 => json!("none"),
            _ => json!({"name": format!("tool_{seed}")}),
        },
    }
}

/// A call of some of the fields `spec` takes (tools and a choice of them always
/// possible), and whether the packet asks for a schema.
fn call_for(spec: &Spec, picks: &[bool], seed: u32, schema: bool) -> Call {
    let mut call = Call::default();
    let mut names: Vec<&str> = spec.fields.iter().map(|(name, _)| *name).collect();
    names.extend(spec.also.iter().filter(|name| !["toolChoice", "strictOutput"].contains(name)));
    for (name, pick) in names.iter().zip(picks.iter().cycle()) {
        if *pick {
            call.set(name, value_of(name, seed));
        }
    }
    // Said only when it is not what the schema allows (true, for the schema below).
    if schema && spec.also.contains(&"strictOutput") && picks.last() == Some(&true) {
        call.set("strictOutput", json!(false));
    }
    if seed % 7 == 0 {
        call.set("maxTokensOmitted", json!(true));
    }
    // Where the API sends the output schema as the forced last tool (Anthropic, Bedrock),
    // a forced choice of the call's own last tool reads back as an output schema: those
    // two are one body (`as_sent` reads both sides the same way), left out here.
    let schema_as_tool = ["anthropic", "bedrock-converse"].contains(&spec.name);
    if call.get("tools").is_some() && !schema && picks.first() == Some(&true) {
        let choice = value_of("toolChoice", seed);
        let ambiguous = schema_as_tool && choice.get("name").is_some()
            || spec.name == "bedrock-converse" && choice == "none"
            || spec.name == "anthropic" && choice == "auto" && call.get("parallelToolCalls").is_some();
        if !ambiguous {
            call.set("toolChoice", choice);
        }
    }
    call
}

fn packet(spec: &Spec, system: &str, user: &str, budget: u64, schema: bool, call: &Call) -> Value {
    let mut packet = json!({"provider": spec.provider, "model": "m-1", "maxTokens": budget,
        "systemPrompt": system, "userMessage": user, "effectiveUserMessage": user});
    if schema {
        packet["outputSchema"] = json!({"name": "answer", "description": "the answer", "schema": {"type": "object",
            "additionalProperties": false, "required": ["a"], "properties": {"a": {"type": "string"}}}});
    }
    if !call.is_empty() {
        packet["call"] = call.to_value();
    }
    packet
}

fn url(spec: &Spec) -> String {
    format!("{}{}", spec.origin, spec.path.split(' ').next().unwrap().replace("{model}", "m-1"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn reading_back_a_built_body_gives_the_packets_material(
        system in "[ -~\\n]{0,40}", user in "[ -~\\n]{1,40}", budget in 1u64..200_000,
        schema in any::<bool>(), picks in proptest::collection::vec(any::<bool>(), 1..40), seed in 0u32..1000,
    ) {
        for spec in SPECS {
            let schema = schema && spec.name != "gemini";
            let call = call_for(spec, &picks, seed, schema);
            let packet = packet(spec, &system, &user, budget, schema, &call);
            let material = Material::of(packet.as_object().unwrap(), "p").unwrap();
            let body = build(spec, &material);
            let sent = read(spec, &body, Some(&url(spec))).unwrap();
            prop_assert!(sent.unknown.is_empty(), "{}: {:?} in {body}", spec.name, sent.unknown);
            prop_assert_eq!(sent.system.as_deref(), Some(system.as_str()), "{}", spec.name);
            prop_assert_eq!(&sent.messages, &vec![("user".to_owned(), user.clone())], "{}", spec.name);
            prop_assert_eq!(sent.model.as_deref(), Some("m-1"), "{}", spec.name);
            let omitted = call.get("maxTokensOmitted").is_some();
            prop_assert_eq!(sent.max_tokens, (!omitted).then(|| json!(budget)), "{}", spec.name);
            prop_assert_eq!(&sent.call, &call, "{}: {}", spec.name, body);
            let expected = match (Output::of(&material), spec.name) {
                (Output::Schema(s), "gemini") => Output::Schema(json!({"schema": s["schema"]})),
                (output, _) => output,
            };
            prop_assert_eq!(sent.output, expected, "{}", spec.name);
        }
    }
}

#[test]
fn a_field_no_spec_reads_is_reported_with_its_path() {
    let api = |name: &str| Api::from_name(name).unwrap().spec();
    let chat = json!({"model": "m", "max_completion_tokens": 5, "exfil": true, "messages": [
        {"role": "system", "content": "S"}, {"role": "user", "content": "U", "name": "eve"}]});
    let sent = read(api("openai-chat"), &chat, None).unwrap();
    let paths: Vec<String> = sent.unknown.iter().map(|(at, _)| at.to_string()).collect();
    assert_eq!(paths, ["$.messages[1].name", "$.exfil"]);
    let gemini = json!({"contents": [{"role": "user", "parts": [{"text": "U"}]}],
        "generationConfig": {"maxOutputTokens": 5, "temperature": 0.2, "mystery": 1}});
    let sent = read(api("gemini"), &gemini, None).unwrap();
    assert_eq!(sent.call.get("temperature"), Some(&json!(0.2)));
    assert_eq!(sent.unknown[0].0.to_string(), "$.generationConfig.mystery");
    let cached = json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "U"}],
        "system": [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}]});
    let sent = read(api("anthropic"), &cached, None).unwrap();
    assert_eq!(
        (sent.system.as_deref(), sent.call.get("cacheControl")),
        (Some("S"), Some(&json!({"type": "ephemeral"})))
    );
    let loosened = json!({"model": "m", "messages": [], "response_format": {"type": "json_schema",
        "json_schema": {"name": "n", "strict": false, "schema": {"type": "object", "additionalProperties": false,
        "properties": {}, "required": []}}}});
    let sent = read(api("openai-chat"), &loosened, None).unwrap();
    assert_eq!(sent.call.get("strictOutput"), Some(&json!(false)), "strict mode off is the call's, to review");
    assert_eq!(sent.call.get("maxTokensOmitted"), Some(&json!(true)), "no budget is read as such");
}

#[test]
fn each_api_reads_the_forms_its_clients_send() {
    let api = |name: &str| Api::from_name(name).unwrap().spec();
    // The Vercel AI SDK's Responses body: the system prompt as the first input message, no budget.
    let vercel = json!({"model": "gpt-5", "input": [{"role": "system", "content": "S"},
        {"role": "user", "content": [{"type": "input_text", "text": "U"}]}]});
    let sent = read(api("openai-responses"), &vercel, None).unwrap();
    assert_eq!((sent.system.as_deref(), sent.messages.len(), sent.max_tokens), (Some("S"), 1, None));
    let gemini = json!({"system_instruction": {"role": "user", "parts": [{"text": "S"}]},
        "contents": [{"role": "user", "parts": [{"text": "U1"}, {"text": "U2"}]}],
        "generation_config": {"max_output_tokens": 5}});
    let url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent";
    let sent = read(api("gemini"), &gemini, Some(url)).unwrap();
    assert_eq!((sent.model.as_deref(), sent.messages[0].1.as_str()), (Some("gemini-2.5-pro"), "U1U2"));
    assert!(sent.streamed && sent.unknown.is_empty(), "{:?}", sent.unknown);
    // Anthropic's structured outputs: a schema answer with no tool, and the effort beside it.
    let structured = json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "U"}],
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}, "effort": "high"},
        "speed": "fast"});
    let sent = read(api("anthropic"), &structured, None).unwrap();
    assert_eq!(sent.output, Output::Schema(json!({"schema": {"type": "object"}})));
    assert_eq!(
        (sent.call.get("reasoningEffort"), sent.call.get("speed")),
        (Some(&json!("high")), Some(&json!("fast")))
    );
    assert!(sent.unknown.is_empty(), "{:?}", sent.unknown);
    let image = json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]});
    let (at, expected) = read(api("anthropic"), &image, None).unwrap_err();
    assert_eq!(
        (at.to_string().as_str(), expected.as_str()),
        ("$.messages[0].content[0]", "a text part (only text is judged)")
    );
}

/// Every field a spec names is a call field, and every call field has a place in some
/// API: a field forgotten on either side fails here.
#[test]
fn every_call_field_has_a_place_and_every_place_a_field() {
    for spec in SPECS {
        for name in spec.fields.iter().map(|(name, _)| *name).chain(spec.also.iter().copied()) {
            assert!(call::field(name).is_some(), "{}: {name} is no call field", spec.name);
        }
    }
    for field in call::FIELDS {
        let placed = field.name == "maxTokensOmitted"
            || SPECS.iter().any(|s| s.fields.iter().any(|(n, _)| *n == field.name) || s.also.contains(&field.name));
        assert!(placed, "{} has a place in no API", field.name);
    }
}
