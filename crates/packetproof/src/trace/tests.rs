//! Every convention, hand-made here from the facts of its instrumentation (the recorded
//! exports are tests/trace_recordings.rs): each read as the same call, in OTLP/JSON and
//! in protobuf; calls counted once; the request judged as sent; nothing passing unjudged.

use super::record::test_id;
use super::*;
use serde_json::{json, Value};

#[path = "families_tests.rs"]
mod families;

#[path = "declared_tests.rs"]
mod declared;

const SYSTEM: &str = "You review code.";
const USER: &str = "Review this diff.";

fn packets() -> Packets {
    Packets::of_texts(&[("p.json", SYSTEM, USER, "gpt-5", 100)])
}

fn any(value: &Value) -> Value {
    match value {
        Value::String(s) => json!({"stringValue": s}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) if n.is_i64() || n.is_u64() => json!({"intValue": n.to_string()}),
        Value::Number(n) => json!({"doubleValue": n}),
        Value::Array(items) => json!({"arrayValue": {"values": items.iter().map(any).collect::<Vec<_>>()}}),
        Value::Object(map) => {
            json!({"kvlistValue": {"values": map.iter().map(|(k, v)| json!({"key": k, "value": any(v)})).collect::<Vec<_>>()}})
        }
        Value::Null => json!({}),
    }
}

fn attributes(pairs: &[(&str, Value)]) -> Vec<Value> {
    pairs.iter().map(|(k, v)| json!({"key": k, "value": any(v)})).collect()
}

/// A span of trace 1 with id `id` (parent `parent`, "" for none).
fn span(id: &str, parent: &str, scope: &str, pairs: &[(&str, Value)]) -> Value {
    let (trace, span_id, parent_id) = (test_id("01", 32), test_id(id, 16), test_id(parent, 16));
    let span = json!({"traceId": trace, "spanId": span_id, "parentSpanId": parent_id, "name": format!("span {id}"),
        "attributes": attributes(pairs)});
    json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": scope}, "spans": [span]}]}]})
}

/// A log record of span `id`.
fn event(id: &str, name: &str, body: Value, pairs: &[(&str, Value)]) -> Value {
    let (trace, span_id) = (test_id("01", 32), test_id(id, 16));
    let mut record = json!({"traceId": trace, "spanId": span_id, "eventName": name, "attributes": attributes(pairs)});
    if !body.is_null() {
        record["body"] = any(&body);
    }
    json!({"resourceLogs": [{"scopeLogs": [{"scope": {"name": "s"}, "logRecords": [record]}]}]})
}

fn judge_with(documents: &[Value], encoding: Encoding, options: Options) -> (Vec<Judged>, Counts) {
    let packets = packets();
    let mut session = Session::new(&packets, options);
    for (i, document) in documents.iter().enumerate() {
        let bytes = match encoding {
            Encoding::Json => document.to_string().into_bytes(),
            Encoding::Protobuf => crate::otlp::encode::encode_json(document),
        };
        session.read(&bytes, encoding, None, "t", i + 1).unwrap();
    }
    let mut calls = Vec::new();
    let counts = session
        .finish(&mut |j| {
            calls.push(j.clone());
            Ok(())
        })
        .unwrap();
    (calls, counts)
}

/// The verdict of the one call `documents` hold, the same in JSON and protobuf.
fn verdict(documents: &[Value]) -> Verdict {
    let (calls, _) = judge_with(documents, Encoding::Json, Options::default());
    assert_eq!(calls.len(), 1, "one call: {calls:#?}");
    let (binary, _) = judge_with(documents, Encoding::Protobuf, Options::default());
    assert_eq!(binary.len(), 1, "one call in protobuf: {binary:#?}");
    assert_eq!(binary[0].verdict, calls[0].verdict);
    calls[0].verdict.clone()
}

fn messages(system_role: &str) -> Value {
    json!([{"role": system_role, "content": SYSTEM}, {"role": "user", "content": USER}])
}

fn semconv(extra: &[(&str, Value)]) -> Vec<(&'static str, Value)> {
    let mut pairs = vec![
        ("gen_ai.operation.name", json!("chat")),
        ("gen_ai.request.model", json!("gpt-5")),
        ("gen_ai.request.max_tokens", json!(100)),
    ];
    for (k, v) in extra {
        pairs.push((Box::leak(k.to_string().into_boxed_str()), v.clone()));
    }
    pairs
}

fn parts_messages() -> Value {
    json!(json!([{"role": "system", "parts": [{"type": "text", "content": SYSTEM}]},
                  {"role": "user", "parts": [{"type": "text", "content": USER}]}])
    .to_string())
}

fn matched() -> Verdict {
    Verdict::Matched { packet: "p.json".into() }
}

#[test]
fn every_convention_reads_as_the_same_call() {
    let instructions = json!(json!([{"type": "text", "content": SYSTEM}]).to_string());
    let user_only = json!(json!([{"role": "user", "parts": [{"type": "text", "content": USER}]}]).to_string());
    let cases: Vec<(&str, Vec<Value>)> = vec![
        (
            "semconv messages",
            vec![span(
                "a1",
                "",
                "opentelemetry.instrumentation.openai_v2",
                &semconv(&[("gen_ai.input.messages", parts_messages())]),
            )],
        ),
        (
            "semconv instructions",
            vec![span(
                "a1",
                "",
                "s",
                &semconv(&[("gen_ai.system_instructions", instructions), ("gen_ai.input.messages", user_only.clone())]),
            )],
        ),
        (
            "LiteLLM responses, plain instructions",
            vec![span(
                "a1",
                "",
                "litellm",
                &[
                    ("gen_ai.operation.name", json!("responses")),
                    ("gen_ai.request.model", json!("gpt-5")),
                    ("gen_ai.request.max_tokens", json!(100)),
                    ("gen_ai.system_instructions", json!(SYSTEM)),
                    ("gen_ai.input.messages", user_only.clone()),
                ],
            )],
        ),
        (
            "LiteLLM anthropic_messages",
            vec![span(
                "a1",
                "",
                "litellm",
                &[
                    ("gen_ai.operation.name", json!("anthropic_messages")),
                    ("gen_ai.request.model", json!("gpt-5")),
                    ("gen_ai.request.max_tokens", json!(100)),
                    ("gen_ai.input.messages", parts_messages()),
                ],
            )],
        ),
        (
            "details log event without an operation",
            vec![event(
                "a1",
                DETAILS_EVENT,
                Value::Null,
                &[
                    ("gen_ai.request.model", json!("gpt-5")),
                    ("gen_ai.request.max_tokens", json!(100)),
                    ("gen_ai.input.messages", parts_messages()),
                ],
            )],
        ),
        (
            "per-message log events",
            vec![
                span("a1", "", "@opentelemetry/instrumentation-openai", &semconv(&[])),
                event("a1", "gen_ai.system.message", json!({"content": SYSTEM}), &[]),
                event("a1", "gen_ai.user.message", json!({"content": USER}), &[]),
            ],
        ),
        (
            "OpenLLMetry flattened",
            vec![span(
                "a1",
                "",
                "opentelemetry.instrumentation.openai.v1",
                &[
                    ("gen_ai.system", json!("openai")),
                    ("gen_ai.request.model", json!("gpt-5")),
                    ("gen_ai.request.max_tokens", json!(100)),
                    ("gen_ai.prompt.0.role", json!("system")),
                    ("gen_ai.prompt.0.content", json!(SYSTEM)),
                    ("gen_ai.prompt.1.role", json!("user")),
                    ("gen_ai.prompt.1.content", json!(USER)),
                ],
            )],
        ),
        (
            "OpenInference",
            vec![span(
                "a1",
                "",
                "openinference.instrumentation.openai",
                &[
                    ("openinference.span.kind", json!("LLM")),
                    ("llm.model_name", json!("gpt-5")),
                    ("llm.invocation_parameters", json!(r#"{"max_completion_tokens": 100}"#)),
                    ("llm.input_messages.0.message.role", json!("system")),
                    ("llm.input_messages.0.message.content", json!(SYSTEM)),
                    ("llm.input_messages.1.message.role", json!("user")),
                    ("llm.input_messages.1.message.contents.0.message_content.type", json!("text")),
                    ("llm.input_messages.1.message.contents.0.message_content.text", json!(USER)),
                ],
            )],
        ),
        (
            "Langfuse",
            vec![span(
                "a1",
                "",
                "langfuse-sdk",
                &[
                    ("langfuse.observation.type", json!("generation")),
                    ("langfuse.observation.model.name", json!("gpt-5")),
                    (
                        "langfuse.observation.model.parameters",
                        json!(r#"{"temperature": 1, "max_completion_tokens": 100}"#),
                    ),
                    ("langfuse.observation.input", json!(messages("developer").to_string())),
                ],
            )],
        ),
        (
            "Vercel AI SDK",
            vec![
                span(
                    "a0",
                    "",
                    "ai",
                    &[
                        ("ai.operationId", json!("ai.generateText")),
                        ("ai.model.id", json!("gpt-5")),
                        ("ai.prompt", json!(json!({"system": SYSTEM, "prompt": USER}).to_string())),
                    ],
                ),
                span(
                    "a1",
                    "a0",
                    "ai",
                    &[
                        ("ai.operationId", json!("ai.generateText.doGenerate")),
                        ("gen_ai.system", json!("openai.chat")),
                        ("gen_ai.request.model", json!("gpt-5")),
                        ("ai.model.id", json!("gpt-5")),
                        ("ai.settings.maxOutputTokens", json!(100)),
                        (
                            "ai.prompt.messages",
                            json!(json!([{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": [{"type": "text", "text": USER}]}])
                            .to_string()),
                        ),
                    ],
                ),
            ],
        ),
        (
            "Logfire version=1",
            vec![span(
                "a1",
                "",
                "logfire.openai",
                &[
                    ("logfire.msg_template", json!("Chat Completion with {request_data[model]!r}")),
                    (
                        "request_data",
                        json!(json!({"model": "gpt-5", "max_completion_tokens": 100, "messages": messages("system")})
                            .to_string()),
                    ),
                ],
            )],
        ),
    ];
    for (name, documents) in cases {
        assert_eq!(verdict(&documents), matched(), "{name}");
    }
}

#[test]
fn each_call_is_counted_once() {
    let content = semconv(&[("gen_ai.input.messages", parts_messages())]);
    // Logfire's stream summary repeats the call of its span.
    let logfire = span(
        "a2",
        "",
        "logfire.openai",
        &[
            ("logfire.msg_template", json!("streaming response from {request_data[model]!r} took {duration:.2f}s")),
            ("gen_ai.operation.name", json!("chat")),
            ("gen_ai.request.model", json!("gpt-5")),
            ("gen_ai.input.messages", parts_messages()),
        ],
    );
    assert_eq!(verdict(&[span("a1", "", "logfire.openai", &content), logfire]), matched());
    // google-genai's content-less details event beside its span.
    let details = event("a1", DETAILS_EVENT, Value::Null, &[("gen_ai.operation.name", json!("generate_content"))]);
    assert_eq!(verdict(&[span("a1", "", "s", &content), details]), matched());
    // The anthropic SDK's content-less span under OpenLLMetry's (in either order).
    let sdk = span("a2", "a1", "com.anthropic.sdk.python", &semconv(&[]));
    assert_eq!(verdict(&[sdk.clone(), span("a1", "", "opentelemetry.instrumentation.anthropic", &content)]), matched());
    // The anthropic SDK's span in a trace of its own, inside OpenLLMetry's span in time.
    let timed = |mut document: Value, trace: &str, start: u64, end: u64| {
        let span = &mut document["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        span["traceId"] = json!(test_id(trace, 32));
        span["startTimeUnixNano"] = json!(start.to_string());
        span["endTimeUnixNano"] = json!(end.to_string());
        document
    };
    let host = timed(span("a1", "", "opentelemetry.instrumentation.anthropic", &content), "aa", 100, 200);
    let sdk = timed(span("b1", "", "com.anthropic.sdk.python", &semconv(&[])), "bb", 120, 180);
    assert_eq!(verdict(&[sdk.clone(), host.clone()]), matched());
    // Outside its time it is a call of its own (not judgeable: it has no content).
    let (calls, _) = judge_with(
        &[timed(sdk, "bb", 220, 260), host],
        Encoding::Json,
        Options { allow_unjudged: true, ..Options::default() },
    );
    assert_eq!(calls.iter().map(|j| j.verdict.name()).collect::<Vec<_>>(), ["not judgeable", "matched"]);
    // The same export read twice.
    assert_eq!(verdict(&[span("a1", "", "s", &content), span("a1", "", "s", &content)]), matched());
}

fn differences(verdict: Verdict) -> Vec<String> {
    match verdict {
        Verdict::Mismatched { differences, .. } => differences,
        other => panic!("not mismatched: {other:?}"),
    }
}

#[test]
fn the_request_is_judged_as_sent() {
    let reversed = json!(json!([{"role": "user", "content": USER}, {"role": "system", "content": SYSTEM}]).to_string());
    let found = differences(verdict(&[span("a1", "", "s", &semconv(&[("gen_ai.input.messages", reversed)]))]));
    assert_eq!(found, ["messages: the call sends [user, system]; the packet's request sends [system, user]"]);
    let twice = json!(json!([{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER},
        {"role": "system", "content": SYSTEM}])
    .to_string());
    let found = differences(verdict(&[span("a1", "", "s", &semconv(&[("gen_ai.input.messages", twice)]))]));
    assert!(found[0].contains("[system, user, system]"), "{found:?}");

    let content = ("gen_ai.input.messages", parts_messages());
    let wrong = |key: &'static str, value: Value| {
        let mut pairs = semconv(std::slice::from_ref(&content));
        pairs.retain(|(k, _)| *k != key);
        pairs.push((key, value));
        differences(verdict(&[span("a1", "", "s", &pairs)]))
    };
    assert_eq!(
        wrong("gen_ai.request.max_tokens", json!("100")),
        ["max tokens: gen_ai.request.max_tokens is \"100\", not a number"]
    );
    assert!(wrong("gen_ai.request.max_tokens", json!(100.5))[0].contains("out of range"));
    assert!(wrong("gen_ai.request.max_tokens", json!(-3))[0].contains("out of range"));
    assert_eq!(
        wrong("gen_ai.request.model", json!(5)),
        ["model: gen_ai.request.model is \"5\", not a model name (a string)"]
    );
    assert_eq!(wrong("gen_ai.request.model", json!("")), ["model: gen_ai.request.model is \"\", an empty model name"]);
    // JavaScript's whole doubles are whole numbers.
    let mut pairs = semconv(std::slice::from_ref(&content));
    pairs[2].1 = json!(100.0);
    assert_eq!(verdict(&[span("a1", "", "s", &pairs)]), matched());
}

#[test]
fn conflicting_evidence_is_a_mismatch_naming_both_values() {
    let mut pairs = semconv(&[("gen_ai.input.messages", parts_messages())]);
    pairs.push(("gen_ai.request.model", json!("gpt-5-mini")));
    let found = differences(verdict(&[span("a1", "", "s", &pairs)]));
    assert_eq!(found, ["attribute gen_ai.request.model is recorded twice, as \"gpt-5\" and as \"gpt-5-mini\""]);

    let drifted =
        json!(json!([{"role": "system", "content": "You review code quickly."}, {"role": "user", "content": USER}])
            .to_string());
    let beside = vec![
        span("a1", "", "s", &semconv(&[("gen_ai.input.messages", parts_messages())])),
        event("a1", DETAILS_EVENT, Value::Null, &[("gen_ai.input.messages", drifted)]),
    ];
    let found = differences(verdict(&beside));
    assert!(
        found[0].starts_with("the span's gen_ai.input.messages and the inference details event differ: message 0 is system \"You review code.\"")
            && found[0].contains("\"You review code quickly.\""),
        "{found:?}"
    );
    let mut pairs = semconv(&[]);
    pairs.push(("gen_ai.input.messages", json!(r#"[{"role": "user", "content": "a", "content": "b"}]"#)));
    let found = differences(verdict(&[span("a1", "", "s", &pairs)]));
    assert!(found[0].contains("duplicate object key \"content\""), "{found:?}");
    let mut pairs = semconv(&[("gen_ai.input.messages", parts_messages())]);
    pairs.push(("gen_ai.request.max_tokens", json!(200)));
    assert!(differences(verdict(&[span("a1", "", "s", &pairs)]))[0].contains("as \"100\" and as \"200\""));
}

#[test]
fn nothing_passes_unjudged_unless_allowed() {
    let none = vec![json!({})];
    let (calls, counts) = judge_with(&none, Encoding::Json, Options::default());
    assert!(calls.is_empty() && !counts.ok() && counts.calls == 0);
    let allowed = Options { allow_unjudged: true, ..Options::default() };
    assert!(judge_with(&none, Encoding::Json, allowed).1.ok());

    let unparsed = vec![span("a1", "", "s", &semconv(&[("gen_ai.input.messages", json!("[{oops"))]))];
    let (calls, counts) = judge_with(&unparsed, Encoding::Json, Options::default());
    assert_eq!(calls[0].verdict.name(), "not judgeable");
    assert!(!counts.ok());
    assert!(judge_with(&unparsed, Encoding::Json, allowed).1.ok());

    // Without content, the hint names the setting of the library that recorded the call.
    for (scope, setting) in [
        ("opentelemetry.instrumentation.openai_v2", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY"),
        ("@opentelemetry/instrumentation-openai", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true"),
        ("opentelemetry.instrumentation.anthropic", "TRACELOOP_TRACE_CONTENT=true"),
        ("com.anthropic.sdk.python", "ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content"),
    ] {
        let (calls, _) = judge_with(&[span("a1", "", scope, &semconv(&[]))], Encoding::Json, Options::default());
        let Verdict::NotJudgeable { reason } = &calls[0].verdict else { panic!("{scope}") };
        assert!(reason.contains(setting), "{scope}: {reason}");
    }
    let oi = span("a1", "", "openinference.instrumentation.openai", &[("openinference.span.kind", json!("LLM"))]);
    let Verdict::NotJudgeable { reason } = verdict(&[oi]) else { panic!() };
    assert!(reason.contains("OPENINFERENCE_HIDE_INPUTS"), "{reason}");
}

/// OpenLLMetry's flattened attributes were read with one scan per index: an 11 MB line
/// took 190 s. Now each index is one lookup; this line reads in well under a second in
/// a release build (benches/trace.rs measures it).
#[test]
fn an_11_mb_line_of_flattened_attributes_reads_in_linear_time() {
    let mut pairs =
        vec![("gen_ai.system".to_owned(), json!("openai")), ("gen_ai.request.model".to_owned(), json!("gpt-5"))];
    let text = "x".repeat(40);
    for i in 0..100_000 {
        pairs.push((format!("gen_ai.prompt.{i}.role"), json!("user")));
        pairs.push((format!("gen_ai.prompt.{i}.content"), json!(text)));
    }
    let attributes: Vec<Value> = pairs.iter().map(|(k, v)| json!({"key": k, "value": any(v)})).collect();
    let document = json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": test_id("01", 16), "attributes": attributes}]}]}]});
    let line = document.to_string();
    assert!(line.len() > 11_000_000, "{}", line.len());
    let packets = packets();
    let mut session = Session::new(&packets, Options::default());
    session.read(line.as_bytes(), Encoding::Json, None, "t", 1).unwrap();
    let mut verdicts = Vec::new();
    session
        .finish(&mut |j| {
            verdicts.push(j.verdict.name());
            Ok(())
        })
        .unwrap();
    assert_eq!(verdicts, ["unreviewed"]);
}

/// The entry an OTLP/HTTP receiver calls with each request body.
#[test]
fn judge_export_takes_the_bytes_of_one_request() {
    let spans = span("a1", "", "s", &semconv(&[("gen_ai.input.messages", parts_messages())]));
    let packets = packets();
    for (bytes, encoding) in [
        (spans.to_string().into_bytes(), Encoding::Json),
        (crate::otlp::encode::encode_json(&spans), Encoding::Protobuf),
    ] {
        let (calls, counts) = judge_export(&bytes, encoding, Signal::Traces, &packets, Options::default()).unwrap();
        assert_eq!((calls.len(), counts.ok()), (1, true));
        assert_eq!(calls[0].verdict, matched());
    }
    let logs = event("a1", DETAILS_EVENT, Value::Null, &[("gen_ai.input.messages", parts_messages())]);
    let (calls, _) = judge_export(
        &crate::otlp::encode::encode_json(&logs),
        Encoding::Protobuf,
        Signal::Logs,
        &packets,
        Options::default(),
    )
    .unwrap();
    assert_eq!(calls.len(), 1);
    let err =
        judge_export(b"\x0a\x05\xff", Encoding::Protobuf, Signal::Traces, &packets, Options::default()).unwrap_err();
    assert!(err.to_string().contains("not an OTLP protobuf ExportTraceServiceRequest"), "{err}");
    let (calls, counts) = judge_export(b"{}", Encoding::Json, Signal::Traces, &packets, Options::default()).unwrap();
    assert!(calls.is_empty() && !counts.ok());
}

/// Placeholders are no data: a message recorded as `[REDACTED]` (Strands Agents with
/// content off) is not judgeable, never a drift; OpenLIT's max tokens of -1 (unset) is
/// no budget, never a wrong one.
#[test]
fn placeholders_are_not_read_as_data() {
    let redacted =
        json!(json!([{"role": "system", "content": SYSTEM}, {"role": "user", "content": "[REDACTED]"}]).to_string());
    let found = verdict(&[span("a1", "", "s", &semconv(&[("gen_ai.input.messages", redacted)]))]);
    let Verdict::NotJudgeable { reason } = found else { panic!("{found:?}") };
    assert!(reason.contains("[REDACTED]: content capture is off"), "{reason}");
    let mut pairs = semconv(&[("gen_ai.input.messages", parts_messages())]);
    pairs.retain(|(k, _)| *k != "gen_ai.request.max_tokens");
    pairs.push(("gen_ai.request.max_tokens", json!(-1)));
    assert_eq!(verdict(&[span("a1", "", "openlit.otel.tracing", &pairs)]), matched());
    // From any instrumentation, -1 and 0 (which no API takes) are placeholders for no budget,
    // said in a note; another value out of range is still a difference.
    for sentinel in [-1, 0] {
        pairs.retain(|(k, _)| *k != "gen_ai.request.max_tokens");
        pairs.push(("gen_ai.request.max_tokens", json!(sentinel)));
        let (calls, _) = judge_with(&[span("a1", "", "s", &pairs)], Encoding::Json, Options::default());
        assert_eq!(calls[0].verdict, matched(), "{sentinel}");
        let said = format!("gen_ai.request.max_tokens is recorded as {sentinel}, a placeholder for none");
        assert!(calls[0].notes.iter().any(|n| n.starts_with(&said)), "{:?}", calls[0].notes);
    }
    pairs.retain(|(k, _)| *k != "gen_ai.request.max_tokens");
    pairs.push(("gen_ai.request.max_tokens", json!(-3)));
    assert!(differences(verdict(&[span("a1", "", "s", &pairs)]))[0].contains("out of range"));
}
