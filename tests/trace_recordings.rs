//! `packetproof trace` on real traces: what the official OpenTelemetry GenAI
//! instrumentations recorded (scripts/record/record.sh → tests/recordings/traces/, one
//! OTLP/JSON ExportTraceServiceRequest per line) for five calls each, against the
//! packets the SDK recordings were made from: the packet as is, its user text edited,
//! its max tokens halved, another model, and streamed. Without content capture every
//! call is not judgeable. Planted edits of a matched span change its verdict.

use packetproof::trace::{self, packets::Packets, verdict::Verdict, Judged};
use packetproof::Config;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn config() -> packetproof::Invocation {
    packetproof::Invocation::from(Config::load(root(), None).expect("harness.toml"))
}

fn traces() -> PathBuf {
    root().join("tests/recordings/traces")
}

fn packets() -> Packets {
    Packets::load(&[root().join("tests/recordings/sdk/packets")], &config()).unwrap()
}

fn judge(file: &Path) -> packetproof::Result<Vec<Judged>> {
    judge_all(&[file.to_path_buf()])
}

fn judge_all(files: &[PathBuf]) -> packetproof::Result<Vec<Judged>> {
    let mut calls = Vec::new();
    trace::check(files, &packets(), &config(), trace::Options::default(), &mut |j| {
        calls.push(j.clone());
        Ok(())
    })?;
    Ok(calls)
}

fn verdicts(calls: &[Judged]) -> Vec<&'static str> {
    calls.iter().map(|j| j.verdict.name()).collect()
}

#[test]
fn recorded_traces_sort_into_matched_mismatched_unreviewed_and_not_judgeable() {
    let five = ["matched", "unreviewed", "mismatched", "mismatched", "matched"];
    // anthropic.content: the anthropic SDK's own spans (on by default, content off) sit
    // beside the instrumentation's, in traces of their own; each is inside its call's
    // time, with its model: one call each.
    for name in ["google-genai.content-on-spans", "anthropic.content", "anthropic-sdk.content"] {
        let calls = judge(&traces().join(format!("{name}.jsonl"))).unwrap();
        assert_eq!(verdicts(&calls), five, "{name}");
        // The only note: a reviewed field (the schema answer) its telemetry does not record.
        let unjudged = |note: &String| note.starts_with("not judged, as the telemetry does not record them: output");
        assert!(calls.iter().all(|j| j.notes.iter().all(unjudged)), "{name}: {calls:#?}");
        let Verdict::Mismatched { differences, .. } = &calls[2].verdict else { unreachable!() };
        assert!(differences[0].starts_with("max tokens "), "{name}: {differences:?}");
        let Verdict::Mismatched { differences, .. } = &calls[3].verdict else { unreachable!() };
        assert!(differences[0].starts_with("model "), "{name}: {differences:?}");
    }
    // openai-v2 records no gen_ai.request.max_tokens for max_completion_tokens: the halved
    // limit cannot be seen, and every matched call says so.
    // Content captured as events (EVENT_ONLY) is in the logs export, as
    // gen_ai.client.inference.operation.details log records; the spans then carry none,
    // and the two files together are one call each.
    for names in [
        &["openai-v2.content-on-spans"][..],
        &["openai-v2.content-as-events.logs"],
        &["openai-v2.content-as-events", "openai-v2.content-as-events.logs"],
    ] {
        let files: Vec<PathBuf> = names.iter().map(|n| traces().join(format!("{n}.jsonl"))).collect();
        let calls = judge_all(&files).unwrap();
        assert_eq!(verdicts(&calls), ["matched", "unreviewed", "matched", "mismatched", "matched"], "{names:?}");
        for j in calls.iter().filter(|j| j.verdict.name() == "matched") {
            assert_eq!(j.notes, ["the call records no gen_ai.request.max_tokens: max tokens are not compared"]);
        }
    }
    // google-genai's content-less details event beside its span is the same call.
    let both = [
        traces().join("google-genai.content-on-spans.jsonl"),
        traces().join("google-genai.content-on-spans.logs.jsonl"),
    ];
    assert_eq!(verdicts(&judge_all(&both).unwrap()), five);
    // Without content every call is not judgeable, and the hint names the library's setting.
    for (name, setting) in [
        ("openai-v2.no-content", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY"),
        ("openai-v2.content-as-events", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY"),
        ("google-genai.no-content", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY"),
        ("google-genai.no-content.logs", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY"),
        ("google-genai.content-on-spans.logs", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY"),
        ("anthropic.no-content", "TRACELOOP_TRACE_CONTENT=true"),
    ] {
        let calls = judge(&traces().join(format!("{name}.jsonl"))).unwrap();
        assert_eq!(calls.len(), 5, "{name}");
        for j in &calls {
            let Verdict::NotJudgeable { reason } = &j.verdict else { panic!("{name}: {j:#?}") };
            assert!(reason.contains(setting), "{name}: {reason}");
        }
    }
}

/// The first line of `name` whose span is matched, as JSON, and the span's place in it.
fn matched_line(name: &str) -> (Value, String) {
    let text = std::fs::read_to_string(traces().join(format!("{name}.jsonl"))).unwrap();
    let calls = judge(&traces().join(format!("{name}.jsonl"))).unwrap();
    let first = calls.iter().find(|j| j.verdict.name() == "matched").unwrap();
    let line = text.lines().nth(first.line - 1).unwrap();
    (serde_json::from_str(line).unwrap(), first.call.span_id.clone())
}

fn edit_span(request: &mut Value, span_id: &str, edit: impl Fn(&mut Vec<Value>)) {
    for resource in request["resourceSpans"].as_array_mut().unwrap() {
        for scope in resource["scopeSpans"].as_array_mut().unwrap() {
            for span in scope["spans"].as_array_mut().unwrap() {
                if span["spanId"] == span_id {
                    edit(span["attributes"].as_array_mut().unwrap());
                }
            }
        }
    }
}

fn judge_line(request: &Value, span_id: &str) -> Judged {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("edited.jsonl");
    std::fs::write(&file, format!("{request}\n")).unwrap();
    judge(&file).unwrap().into_iter().find(|j| j.call.span_id == span_id).unwrap()
}

fn set(attributes: &mut [Value], key: &str, value: Value) {
    let slot = attributes.iter_mut().find(|a| a["key"] == key).unwrap_or_else(|| panic!("no {key}"));
    slot["value"] = value;
}

#[test]
fn planted_edits_of_a_matched_span_change_its_verdict() {
    for name in ["openai-v2.content-on-spans", "google-genai.content-on-spans", "anthropic.content"] {
        let (request, span) = matched_line(name);
        assert_eq!(judge_line(&request, &span).verdict.name(), "matched", "{name}");

        let mut edited = request.clone();
        edit_span(&mut edited, &span, |attributes| {
            let slot = attributes.iter_mut().find(|a| a["key"] == "gen_ai.input.messages").unwrap();
            let text = slot["value"]["stringValue"].as_str().unwrap().replacen("Rebuild", "Rebuild quickly", 1);
            slot["value"] = json!({"stringValue": text});
        });
        let judged = judge_line(&edited, &span);
        assert_eq!(judged.verdict.name(), "unreviewed", "{name}: {judged:#?}");

        let mut edited = request.clone();
        edit_span(&mut edited, &span, |attributes| {
            set(attributes, "gen_ai.request.model", json!({"stringValue": "gemini-2.5-flash-lite"}))
        });
        let Verdict::Mismatched { differences, .. } = judge_line(&edited, &span).verdict else { panic!("{name}") };
        assert_eq!(differences.len(), 1, "{name}");
        assert!(differences[0].starts_with("model \"gemini-2.5-flash-lite\"; the packet's is"), "{differences:?}");

        let mut edited = request.clone();
        edit_span(&mut edited, &span, |attributes| {
            attributes.retain(|a| {
                !a["key"].as_str().unwrap().ends_with("messages") && a["key"] != "gen_ai.system_instructions"
            })
        });
        assert_eq!(judge_line(&edited, &span).verdict.name(), "not judgeable", "{name}");
    }
}

#[test]
fn a_malformed_line_is_an_error_naming_the_file_and_line() {
    let text = std::fs::read_to_string(traces().join("google-genai.content-on-spans.jsonl")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let cut = &lines[2][..lines[2].len() / 2].to_owned();
    lines[2] = cut;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cut.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let err = judge(&file).unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}:3:", file.display())), "{err}");
}

#[test]
fn a_failing_packet_is_no_reviewed_packet() {
    let dir = tempfile::tempdir().unwrap();
    let mut packet: Value =
        serde_json::from_slice(&std::fs::read(root().join("tests/recordings/sdk/packets/openai.json")).unwrap())
            .unwrap();
    packet["systemPrompt"] = json!("edited after review");
    let file = dir.path().join("p.json");
    std::fs::write(&file, packet.to_string()).unwrap();
    let err = Packets::load(&[file], &config()).unwrap_err().to_string();
    assert!(err.contains("refused with") && err.contains("packet::exact-input-hash"), "{err}");
}

fn judged(files: &[PathBuf]) -> (Vec<Judged>, trace::Counts) {
    let mut calls = Vec::new();
    let counts = trace::check(files, &packets(), &config(), trace::Options::default(), &mut |j| {
        calls.push(j.clone());
        Ok(())
    })
    .unwrap();
    (calls, counts)
}

/// The recordings of a family entry (tests/recordings/traces/{stem}.{mode}…): each mode
/// recorded, with its spans and log records, in OTLP/JSON and protobuf.
fn recorded_modes(stem: &str) -> Vec<(&'static str, Vec<PathBuf>)> {
    let mut out = Vec::new();
    for mode in ["exact", "drift", "no-content"] {
        for encoding in ["jsonl", "pb"] {
            let spans = traces().join(format!("{stem}.{mode}.{encoding}"));
            let logs = traces().join(format!("{stem}.{mode}.logs.{encoding}"));
            let files: Vec<PathBuf> = [spans, logs].into_iter().filter(|f| f.exists()).collect();
            if !files.is_empty() {
                out.push((mode, files));
            }
        }
    }
    out
}

/// Every entry of the convention table (`trace::FAMILIES`, scripts/record/record-libraries.sh
/// and record-families.sh → tests/recordings/traces/libraries/ and families/) has recordings, and each is judged as its mode
/// says: exact matched, drift unreviewed, no-content not judgeable naming the entry's
/// switch (a family that never records part of the input: not judgeable, saying so); the
/// docs' production table has a row naming the family, its versions and switch.
#[test]
fn every_convention_entry_has_recordings_judged_as_recorded_and_a_row_in_the_docs() {
    let docs = std::fs::read_to_string(root().join("docs/production.md")).unwrap();
    for family in trace::FAMILIES {
        assert!(!family.recordings.is_empty(), "{}: the convention entry has no recording", family.name);
        let row = docs.lines().find(|l| l.starts_with(&format!("| {} |", family.name)));
        let row = row.unwrap_or_else(|| panic!("docs/production.md's families table has no row for {}", family.name));
        for part in [family.versions, family.switch] {
            assert!(row.contains(part), "docs/production.md's row for {} does not say {part}", family.name);
        }
        assert!(
            family.hint.contains(family.switch.split(' ').next().unwrap()),
            "{}: the hint names the switch",
            family.name
        );
        for stem in family.recordings {
            if !stem.contains('/') {
                // The official instrumentations' five-call files, judged above.
                let mut files = std::fs::read_dir(traces()).unwrap().map(|f| f.unwrap().file_name());
                assert!(files.any(|f| f.to_string_lossy().starts_with(&format!("{stem}."))), "{stem}: no recording");
                continue;
            }
            let modes = recorded_modes(stem);
            assert!(modes.iter().any(|(m, ..)| *m == "exact"), "{stem}: no exact recording");
            assert!(modes.iter().any(|(m, ..)| *m == "drift"), "{stem}: no drifted recording");
            for (mode, files) in modes {
                let (calls, counts) = judged(&files);
                let at = format!("{stem} {mode} {files:?}: {calls:#?}");
                assert_eq!(calls.len(), 1, "{at}");
                let unrecorded = family.declared.unrecorded.filter(|_| mode != "no-content");
                assert_eq!(counts.ok(), mode == "exact" && unrecorded.is_none(), "{at}");
                match mode {
                    // A family that never records part of the input: no call of it is matched
                    // nor judged as if it sent none of that part (its drift is in that part).
                    _ if unrecorded.is_some() => {
                        let Verdict::NotJudgeable { reason } = &calls[0].verdict else { panic!("{at}") };
                        assert!(reason.starts_with(unrecorded.unwrap()), "{at}");
                    }
                    "exact" => assert_eq!(calls[0].verdict.name(), "matched", "{at}"),
                    "drift" => assert_eq!(calls[0].verdict.name(), "unreviewed", "{at}"),
                    _ => {
                        let Verdict::NotJudgeable { reason } = &calls[0].verdict else { panic!("{at}") };
                        assert!(reason.contains(family.switch.split(' ').next().unwrap()), "{at}");
                    }
                }
            }
        }
    }
}

/// The settings each library records of a matched call are held to its packet: a
/// temperature the packet's request does not send is a difference naming where it was
/// read, in the conventions' attributes, OpenInference's invocation parameters and the
/// Vercel AI SDK's settings; so are tools it does not send.
#[test]
fn the_settings_a_library_records_are_held_to_the_packet() {
    let hot = |key: &'static str, value: Value| {
        move |attributes: &mut Vec<Value>| attributes.push(json!({"key": key, "value": value}))
    };
    type Plant = Box<dyn Fn(&mut Vec<Value>)>;
    let cases: [(&str, Plant, &str); 4] = [
        (
            "openai-v2.content-on-spans",
            Box::new(hot("gen_ai.request.temperature", json!({"doubleValue": 0.9}))),
            "temperature: gen_ai.request.temperature is 0.9",
        ),
        (
            "libraries/openinference-openai.exact",
            Box::new(|attributes: &mut Vec<Value>| {
                let slot = attributes.iter_mut().find(|a| a["key"] == "llm.invocation_parameters").unwrap();
                let mut parameters: Value =
                    serde_json::from_str(slot["value"]["stringValue"].as_str().unwrap()).unwrap();
                parameters["temperature"] = json!(0.9);
                slot["value"] = json!({"stringValue": parameters.to_string()});
            }),
            "temperature: llm.invocation_parameters is 0.9",
        ),
        (
            "libraries/vercel-ai.exact",
            Box::new(hot("ai.settings.temperature", json!({"doubleValue": 0.9}))),
            "temperature: ai.settings.temperature is 0.9",
        ),
        (
            "libraries/vercel-ai.exact",
            Box::new(hot(
                "ai.prompt.tools",
                json!({"arrayValue": {"values": [{"stringValue":
                    r#"{"type":"function","name":"exfil","inputSchema":{"type":"object"}}"#}]}}),
            )),
            "tools: ai.prompt.tools is",
        ),
    ];
    for (name, plant, said) in cases {
        let (request, span) = matched_line(name);
        let mut edited = request.clone();
        edit_span(&mut edited, &span, |attributes| plant(attributes));
        let judged = judge_line(&edited, &span);
        let Verdict::Mismatched { differences, .. } = &judged.verdict else { panic!("{name}: {judged:#?}") };
        assert!(differences.iter().any(|d| d.starts_with(said)), "{name}: {differences:?}");
    }
}

/// A text its instrumentation cut short (OpenLIT's max_content_length appends "..."; its
/// recording under families/openlit-openai.cut) is judged only as a beginning: the exact call
/// is not judgeable, saying how far it agrees with its packet; the drifted one unreviewed.
#[test]
fn a_text_recorded_cut_short_is_judged_only_as_a_beginning() {
    for (mode, expected) in [("exact", "not judgeable"), ("drift", "unreviewed")] {
        let files: Vec<PathBuf> = ["jsonl", "logs.jsonl"]
            .iter()
            .map(|tail| traces().join(format!("families/openlit-openai.cut.{mode}.{tail}")))
            .collect();
        let (calls, counts) = judged(&files);
        assert_eq!(verdicts(&calls), [expected], "{mode}: {calls:#?}");
        assert!(!counts.ok(), "{mode}");
        let (Verdict::NotJudgeable { reason } | Verdict::Unreviewed { reason }) = &calls[0].verdict else { panic!() };
        assert!(reason.contains("is recorded cut short after 300 characters"), "{reason}");
        if mode == "exact" {
            assert!(reason.contains("sdk/packets/openai.json as far as it was recorded"), "{reason}");
        }
    }
}

/// What a fresh install exported (scripts/record/fresh-install.sh → tests/recordings/traces/fresh/):
/// an instrumentation that failed to import, refused its library's version, or was never
/// registered exports no span, and the trace fails with 0 GenAI calls; the two setups that
/// work are one matched call each (Vercel AI SDK 7's agent and step spans are context).
#[test]
fn a_fresh_install_that_patched_nothing_is_zero_calls_and_the_setups_that_work_match() {
    let fresh = traces().join("fresh");
    for case in ["openai-v2", "google-genai", "node-openai7", "vercel-ai7"] {
        let (calls, counts) = judged(&[fresh.join(format!("{case}.jsonl"))]);
        assert!(calls.is_empty() && !counts.ok(), "{case}: {calls:#?}");
    }
    for case in ["openinference-openai7", "vercel-ai7-registered"] {
        let (calls, counts) = judged(&[fresh.join(format!("{case}.jsonl"))]);
        assert_eq!(verdicts(&calls), ["matched"], "{case}: {calls:#?}");
        assert!(counts.ok(), "{case}");
    }
}
