//! What a family's entry declares (`conventions::table::Declared`), read by the one generic
//! reader: a family added in a temporary table reads its recording; its marks make a span a
//! call and leave the rest context; a component's run-time settings; what it never records;
//! placeholders wherever text is recorded.

use super::conventions::table::{At, Declared, Family, Library, Read, Shape, SHARED};
use super::conventions::{read_by, Piece};
use super::*;

/// The records of a recording's first export, with its scope renamed.
fn recorded(stem: &str, scope: &str) -> Vec<Value> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/recordings/traces");
    let text = std::fs::read_to_string(root.join(format!("{stem}.jsonl"))).unwrap();
    let mut export: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    for resource in export["resourceSpans"].as_array_mut().unwrap() {
        for scoped in resource["scopeSpans"].as_array_mut().unwrap() {
            scoped["scope"]["name"] = json!(scope);
        }
    }
    vec![export]
}

/// What `reading` gives of each record of `documents`, read by `families`.
fn readings(documents: &[Value], families: &[Family]) -> Vec<(bool, Vec<Piece>)> {
    let mut out = Vec::new();
    for document in documents {
        let text = document.to_string();
        crate::otlp::json::records(value::parse(text.as_bytes()).unwrap(), &mut |record| {
            let reading = read_by(families, &record);
            out.push((reading.call, reading.content));
            Ok(())
        })
        .unwrap()
        .unwrap();
    }
    out
}

const ACME: Family = Family {
    library: Library::LangSmith,
    name: "Acme tracing",
    versions: "acme 1.0",
    scopes: &["acme.genai"],
    keys: &[],
    messages: "acme.request",
    model: "gen_ai.request.model",
    max_tokens: "acme.request",
    switch: "ACME_CONTENT=1",
    hint: "Acme: set ACME_CONTENT=1",
    recordings: &[],
    declared: Declared { reads: &[Read { at: At::Attribute("gen_ai.prompt"), shape: Shape::Request }], ..SHARED },
};

#[test]
fn a_family_whose_shapes_exist_is_one_table_entry() {
    // LangSmith's real export, as if another library wrote it under its own scope.
    let documents = recorded("families/langsmith-openai.exact", "acme.genai");
    // The table without the entry: the span is a call (GenAI conventions), its text unread.
    let without = readings(&documents, &[]);
    assert_eq!(without.len(), 1);
    assert!(without[0].0 && without[0].1.is_empty(), "{without:?}");
    // With it: the request's messages, read by the shared shape.
    let with = readings(&documents, &[ACME]);
    let [(true, pieces)] = with.as_slice() else { panic!("{with:?}") };
    let [Piece::Whole { source, messages: Ok(messages) }] = pieces.as_slice() else { panic!("{pieces:?}") };
    assert_eq!(source, "gen_ai.prompt");
    assert_eq!(genai::roles(messages), "[system, user]");
    let packet: Value = serde_json::from_slice(
        &std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/recordings/sdk/packets/openai.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let system = genai::Message::new("system", packet["systemPrompt"].as_str().unwrap());
    assert_eq!(messages[0], system);
}

#[test]
fn declared_marks_make_a_span_a_call_and_leave_the_rest_context() {
    let input = json!({"messages": [{"role": "system", "content": [{"text": SYSTEM}]},
        {"role": "user", "content": [{"text": USER}]}]})
    .to_string();
    let component =
        [("haystack.component.type", json!("OpenAIChatGenerator")), ("haystack.component.input", json!(input.clone()))];
    let pipeline = [("haystack.pipeline.input_data", json!(input.clone()))];
    let documents = [span("a1", "p1", "haystack", &component), span("p1", "", "haystack", &pipeline)];
    let calls = judge_with(&documents, Encoding::Json, Options::default()).0;
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert_eq!(calls[0].verdict.name(), "matched");
    // Another component is context: no call.
    let retriever = [("haystack.component.type", json!("InMemoryBM25Retriever")), component[1].clone()];
    assert!(judge_with(&[span("a1", "", "haystack", &retriever)], Encoding::Json, Options::default()).0.is_empty());
    // Run-time settings of the component are the call's: its max tokens are compared.
    let with_budget = json!({"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
        "generation_kwargs": {"max_completion_tokens": 99}})
    .to_string();
    let pairs = [component[0].clone(), ("haystack.component.input", json!(with_budget))];
    let found = verdict(&[span("a1", "", "haystack", &pairs)]);
    let Verdict::Mismatched { differences, .. } = found else { panic!("{found:?}") };
    assert_eq!(differences, ["max tokens 99; the packet's are 100"]);
}

#[test]
fn an_agent_or_loop_span_is_context_never_a_call() {
    let scope = "strands.telemetry.tracer";
    let with_messages = |id: &str, parent: &str, operation: &str| {
        let mut document = span(id, parent, scope, &[("gen_ai.operation.name", json!(operation))]);
        document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["events"] = json!([
            {"name": "gen_ai.system.message", "attributes": attributes(&[("content", json!(SYSTEM))])},
            {"name": "gen_ai.user.message", "attributes": attributes(&[("content", json!(USER))])},
        ]);
        document
    };
    let mut chat = with_messages("c1", "l1", "chat");
    let attrs = &mut chat["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"];
    attrs.as_array_mut().unwrap().extend(attributes(&[("gen_ai.request.model", json!("gpt-5"))]));
    let documents =
        [chat, with_messages("l1", "a1", "execute_event_loop_cycle"), with_messages("a1", "", "invoke_agent")];
    let calls = judge_with(&documents, Encoding::Json, Options::default()).0;
    assert_eq!(calls.iter().map(|j| j.verdict.name()).collect::<Vec<_>>(), ["matched"], "{calls:#?}");
}

#[test]
fn details_split_over_a_spans_events_are_read_as_one() {
    let system = json!(json!([{"type": "text", "content": SYSTEM}]).to_string());
    let input = json!(json!([{"role": "user", "parts": [{"type": "text", "content": USER}]}]).to_string());
    let mut document = span("a1", "", "strands.telemetry.tracer", &semconv(&[]));
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["events"] = json!([
        {"name": DETAILS_EVENT, "attributes": attributes(&[("gen_ai.system_instructions", system)])},
        {"name": DETAILS_EVENT, "attributes": attributes(&[("gen_ai.input.messages", input)])},
    ]);
    assert_eq!(verdict(&[document]), matched());
}

#[test]
fn a_family_that_never_records_the_system_prompt_is_never_judged_as_sending_none() {
    let scope = "opentelemetry.instrumentation.openai_agents";
    let user_only =
        |user: &str| json!(json!([{"role": "user", "parts": [{"type": "text", "content": user}]}]).to_string());
    let found = verdict(&[span("a1", "", scope, &semconv(&[("gen_ai.input.messages", user_only(USER))]))]);
    let Verdict::NotJudgeable { reason } = found else { panic!("{found:?}") };
    assert!(reason.contains("does not record the agent's instructions"), "{reason}");
    // A user text no packet has is a finding, whatever the system prompt was.
    let found = verdict(&[span("a1", "", scope, &semconv(&[("gen_ai.input.messages", user_only("Other."))]))]);
    let Verdict::Unreviewed { reason } = found else { panic!("{found:?}") };
    assert!(reason.starts_with("no reviewed packet has this user text"), "{reason}");
    // The contrib GenAI instrumentations record it: a call without it sends none.
    let found = verdict(&[span(
        "a1",
        "",
        "opentelemetry.instrumentation.openai_v2",
        &semconv(&[("gen_ai.input.messages", user_only(USER))]),
    )]);
    assert_ne!(found.name(), "not judgeable", "{found:?}");
}

#[test]
fn placeholders_are_no_content_wherever_text_is_recorded() {
    for placeholder in ["[REDACTED]", "__REDACTED__", "<hidden>", ""] {
        // A whole attribute, and the system text recorded apart.
        let pairs = semconv(&[
            ("gen_ai.system_instructions", json!(placeholder)),
            ("gen_ai.input.messages", json!(placeholder)),
        ]);
        let found = verdict(&[span("a1", "", "s", &pairs)]);
        let Verdict::NotJudgeable { reason } = &found else { panic!("{placeholder:?}: {found:?}") };
        assert!(reason.contains("recorded"), "{reason}");
        // A message's text in an event, and a request recorded as JSON.
        let event = event("a1", "gen_ai.user.message", json!({"content": placeholder}), &[]);
        let found = verdict(&[span("a1", "", "s", &semconv(&[])), event]);
        assert_eq!(found.name(), "not judgeable", "{placeholder:?}: {found:?}");
        let prompt = [("langsmith.span.kind", json!("llm")), ("gen_ai.prompt", json!(placeholder))];
        let found = verdict(&[span("a1", "", "langsmith", &prompt)]);
        assert_eq!(found.name(), "not judgeable", "{placeholder:?}: {found:?}");
    }
    // LangSmith's hidden inputs: an empty object.
    let prompt = [("langsmith.span.kind", json!("llm")), ("gen_ai.prompt", json!("{}"))];
    let Verdict::NotJudgeable { reason } = verdict(&[span("a1", "", "langsmith", &prompt)]) else { panic!() };
    assert!(reason.contains("hides the call's inputs") && reason.contains("LANGSMITH_HIDE_INPUTS"), "{reason}");
    // Text that only looks like one is text.
    let pairs =
        semconv(&[("gen_ai.input.messages", json!(json!([{"role": "user", "content": "[REDACTED] x"}]).to_string()))]);
    assert_eq!(verdict(&[span("a1", "", "s", &pairs)]).name(), "unreviewed");
}

#[test]
fn a_text_cut_short_is_judged_only_as_a_beginning_never_passed() {
    let scope = "openlit.instrumentation.openai";
    let cut = |text: &str, at: usize| format!("{}...", &text[..at]);
    let with = |system: &str, user: &str| {
        json!(json!([{"role": "system", "parts": [{"type": "text", "content": system}]},
            {"role": "user", "parts": [{"type": "text", "content": user}]}])
        .to_string())
    };
    let found = verdict(&[span("a1", "", scope, &semconv(&[("gen_ai.input.messages", with(SYSTEM, &cut(USER, 6)))]))]);
    let Verdict::NotJudgeable { reason } = found else { panic!("{found:?}") };
    assert!(reason.contains("message 1 (user) is recorded cut short after 6 characters"), "{reason}");
    // A beginning no reviewed text has is a finding.
    let found = verdict(&[span("a1", "", scope, &semconv(&[("gen_ai.input.messages", with(SYSTEM, "Rewrite..."))]))]);
    assert_eq!(found.name(), "unreviewed", "{found:?}");
    // Even a cut text that is a packet's whole text does not pass.
    let found =
        verdict(&[span("a1", "", scope, &semconv(&[("gen_ai.input.messages", with(SYSTEM, &format!("{USER}...")))]))]);
    assert_eq!(found.name(), "not judgeable", "{found:?}");
    // Another family marks nothing so: its text is as recorded.
    let found = verdict(&[span("a1", "", "s", &semconv(&[("gen_ai.input.messages", with(SYSTEM, &cut(USER, 6)))]))]);
    assert_eq!(found.name(), "unreviewed", "{found:?}");
}
