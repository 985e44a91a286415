//! The families added with the convention table (OpenLIT, Semantic Kernel, pydantic-ai, MLflow,
//! OpenLLMetry's anthropic events), hand-made here from what their recordings show
//! (tests/recordings/traces/families/ are the real exports): each reading, and the record
//! that is read otherwise when it differs by one detail.

use super::*;

fn judged(documents: &[Value]) -> Vec<Judged> {
    let (calls, _) = judge_with(documents, Encoding::Json, Options::default());
    let (binary, _) = judge_with(documents, Encoding::Protobuf, Options::default());
    assert_eq!(
        binary.iter().map(|j| j.verdict.clone()).collect::<Vec<_>>(),
        calls.iter().map(|j| j.verdict.clone()).collect::<Vec<_>>()
    );
    calls
}

fn timed_span(id: &str, scope: &str, start: u64, end: u64, pairs: &[(&str, Value)]) -> Value {
    let mut document = span(id, "", scope, pairs);
    let span = &mut document["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    span["startTimeUnixNano"] = json!(start.to_string());
    span["endTimeUnixNano"] = json!(end.to_string());
    document
}

/// A log record without trace or span id, with only its observed time.
fn record_without_ids(scope: &str, name: &str, body: Value, observed: u64, pairs: &[(&str, Value)]) -> Value {
    let mut record =
        json!({"eventName": name, "observedTimeUnixNano": observed.to_string(), "attributes": attributes(pairs)});
    if !body.is_null() {
        record["body"] = any(&body);
    }
    json!({"resourceLogs": [{"scopeLogs": [{"scope": {"name": scope}, "logRecords": [record]}]}]})
}

#[test]
fn a_system_text_recorded_twice_counts_once_with_a_note_and_only_when_it_is_the_same() {
    let system = json!(json!([{"type": "text", "content": SYSTEM}]).to_string());
    let pairs = semconv(&[("gen_ai.system_instructions", system.clone()), ("gen_ai.input.messages", parts_messages())]);
    let calls = judged(&[span("a1", "", "openlit.instrumentation.openai", &pairs)]);
    assert_eq!(calls[0].verdict, matched());
    assert!(calls[0].notes.iter().any(|n| n.contains("recorded twice")), "{:?}", calls[0].notes);
    // Another system text first in the messages is a message of its own: not the packet's.
    let other = json!(json!([{"role": "system", "parts": [{"type": "text", "content": "Other."}]},
        {"role": "user", "parts": [{"type": "text", "content": USER}]}])
    .to_string());
    let pairs = semconv(&[("gen_ai.system_instructions", system), ("gen_ai.input.messages", other)]);
    let calls = judged(&[span("a1", "", "openlit.instrumentation.openai", &pairs)]);
    assert_ne!(calls[0].verdict, matched());
    assert!(calls[0].notes.is_empty());
}

#[test]
fn content_off_is_no_content_naming_the_switch_not_an_empty_or_blank_call() {
    // OpenLIT's event: an empty list of messages.
    let pairs = semconv(&[("gen_ai.input.messages", json!([]))]);
    let Verdict::NotJudgeable { reason } = verdict(&[span("a1", "", "openlit.instrumentation.openai", &pairs)]) else {
        panic!()
    };
    assert!(reason.contains("capture_message_content=True"), "{reason}");
    // pydantic-ai's include_content=False: text parts without their content.
    let bare =
        json!(json!([{"role": "system", "parts": [{"type": "text"}]}, {"role": "user", "parts": [{"type": "text"}]}])
            .to_string());
    let Verdict::NotJudgeable { reason } =
        verdict(&[span("a1", "", "pydantic-ai", &semconv(&[("gen_ai.input.messages", bare)]))])
    else {
        panic!()
    };
    assert!(reason.contains("text part without its content") && reason.contains("include_content=True"), "{reason}");
    // An empty text is no content either: a placeholder is never judged as a sent text, so never
    // a drift; the call is not judgeable, saying so.
    let blank = json!(json!([{"role": "user", "parts": [{"type": "text", "content": ""}]}]).to_string());
    let verdict = verdict(&[span("a1", "", "pydantic-ai", &semconv(&[("gen_ai.input.messages", blank)]))]);
    let Verdict::NotJudgeable { reason } = verdict else { panic!("{verdict:?}") };
    assert!(reason.contains("is recorded empty"), "{reason}");
}

#[test]
fn a_log_body_that_is_a_message_as_json_text_is_the_message() {
    let scope = "semantic_kernel.utils.telemetry.model_diagnostics.decorators";
    let as_text = |role: &str, content: &str| json!(json!({"role": role, "content": content}).to_string());
    let documents = [
        span("a1", "", scope, &semconv(&[])),
        event("a1", "gen_ai.system.message", as_text("system", SYSTEM), &[]),
        event("a1", "gen_ai.user.message", as_text("user", USER), &[]),
    ];
    assert_eq!(verdict(&documents), matched());
    // Text that is not a message is the message's content, as before.
    let documents = [
        span("a1", "", scope, &semconv(&[])),
        event("a1", "gen_ai.system.message", json!("{\"text\": 1}"), &[]),
        event("a1", "gen_ai.user.message", json!(USER), &[]),
    ];
    assert_eq!(verdict(&documents).name(), "unreviewed");
}

#[test]
fn mlflow_span_inputs_are_the_request_and_its_genai_model_attribute_the_requests() {
    let inputs = json!({"model": "gpt-5", "max_completion_tokens": 100, "messages": messages("system")}).to_string();
    let pairs = [("mlflow.spanType", json!("\"CHAT_MODEL\"")), ("mlflow.spanInputs", json!(inputs))];
    assert_eq!(verdict(&[span("a1", "", "mlflow.tracing.provider", &pairs)]), matched());
    // Another span type (a tool, the agent) is no call.
    let pairs = [("mlflow.spanType", json!("\"TOOL\"")), ("mlflow.spanInputs", json!(inputs))];
    assert!(judged(&[span("a1", "", "mlflow.tracing.provider", &pairs)]).is_empty());
    // With the GenAI conventions its gen_ai.request.model is the response's: the model
    // attribute is the request's.
    let pairs = [
        ("gen_ai.operation.name", json!("chat")),
        ("gen_ai.request.model", json!("gpt-5-2025-08-07")),
        ("model", json!("\"gpt-5\"")),
        ("max_completion_tokens", json!("100")),
        ("gen_ai.input.messages", parts_messages()),
    ];
    assert_eq!(verdict(&[span("a1", "", "mlflow.tracing.provider", &pairs)]), matched());
    let mut wrong = pairs.to_vec();
    wrong[2] = ("model", json!("\"gpt-4o\""));
    assert_eq!(verdict(&[span("a1", "", "mlflow.tracing.provider", &wrong)]).name(), "mismatched");
}

#[test]
fn records_without_ids_join_the_call_whose_time_holds_theirs_or_none() {
    let scope = "opentelemetry.instrumentation.anthropic";
    let call = |id: &str, start, end| timed_span(id, scope, start, end, &semconv(&[]));
    let system = |at| record_without_ids(scope, "gen_ai.system.message", json!({"content": SYSTEM}), at, &[]);
    let user = |at| record_without_ids(scope, "gen_ai.user.message", json!({"content": USER}), at, &[]);
    // Within the span's time: its messages, one call.
    let calls = judged(&[call("a1", 100, 200), system(110), user(120)]);
    assert_eq!(calls.iter().map(|j| j.verdict.clone()).collect::<Vec<_>>(), [matched()]);
    // Within no call's time: a call of its own (beside the span without content).
    let calls = judged(&[call("a1", 100, 200), system(310), user(320)]);
    assert_eq!(calls.len(), 2);
    // Within two calls' times: never a second call; the first is not judgeable.
    let calls = judged(&[call("a1", 100, 200), call("b1", 105, 205), system(110), user(120)]);
    assert_eq!(calls.len(), 2, "{calls:#?}");
    let Verdict::NotJudgeable { reason } = &calls[0].verdict else { panic!("{calls:#?}") };
    assert!(reason.contains("falls within the time of 2 calls"), "{reason}");
}
