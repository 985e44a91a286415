//! What the official SDKs send: the requests recorded by
//! scripts/record/record.sh (tests/recordings/sdk/{python,node}/, the SDK versions in
//! tests/recordings/VERSIONS.toml) are replayed here, without Python or Node. Every
//! recording, bare body and HAR, plain and streamed, passes `wire --check` against the
//! packet it was made from; each planted edit of each recording is refused, the finding
//! naming what changed.

use packetproof::wire::{self, capture, Api};
use packetproof::{canonical, Config, Outcome};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const SDKS: [&str; 2] = ["python", "node"];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/recordings")
}

fn config() -> packetproof::Invocation {
    packetproof::Invocation::from(Config::load(Path::new(env!("CARGO_MANIFEST_DIR")), None).expect("harness.toml"))
}

/// The capture server's address, as record.sh wrote it.
fn base_url() -> String {
    let text = std::fs::read_to_string(dir().join("VERSIONS.toml")).unwrap();
    let versions: toml::Value = toml::from_str(&text).unwrap();
    versions["base_url"].as_str().unwrap().to_owned()
}

fn packet_of(api: Api) -> Value {
    let name = match api.name() {
        "anthropic" => "anthropic",
        "openai-chat" | "openai-responses" => "openai",
        "gemini" => "google",
        other => unreachable!("no recordings of {other}"),
    };
    canonical::parse(&std::fs::read(dir().join(format!("sdk/packets/{name}.json"))).unwrap()).unwrap()
}

/// Every recording: (sdk, api, file name).
fn recordings() -> Vec<(&'static str, Api, String)> {
    let mut out = Vec::new();
    for sdk in SDKS {
        // The APIs the official SDKs were recorded against (Bedrock is judged in tests/cli/wire.rs).
        for api in ["anthropic", "openai-chat", "openai-responses", "gemini"].map(|n| Api::from_name(n).unwrap()) {
            for stream in ["", ".stream"] {
                for ext in ["json", "har"] {
                    out.push((sdk, api, format!("{}{stream}.{ext}", api.name())));
                }
            }
        }
    }
    out
}

fn check_bytes(api: Api, bytes: &[u8], name: &str, base: Option<&str>) -> Outcome {
    let captured = capture::parse(bytes, name, api).unwrap().through(base);
    wire::check(&packet_of(api), api, &captured, config().settings(), "packet", wire::CHECK).unwrap()
}

fn read(sdk: &str, name: &str) -> Vec<u8> {
    std::fs::read(dir().join("sdk").join(sdk).join(name)).unwrap_or_else(|e| panic!("{sdk}/{name}: {e}"))
}

#[test]
fn every_recorded_sdk_request_passes_and_says_when_it_was_streamed() {
    let base = base_url();
    for (sdk, api, name) in recordings() {
        let outcome = check_bytes(api, &read(sdk, &name), &name, Some(&base));
        assert!(outcome.findings.is_empty(), "{sdk}/{name}: {:#?}", outcome.findings);
        let streamed = outcome.notes.iter().any(|n| n.starts_with("the request was streamed"));
        // A bare Gemini body cannot show streaming: its URL says it, and the note says so.
        let shows = !(api == Api::from_name("gemini").unwrap() && name.ends_with(".json"));
        assert_eq!(streamed, shows && name.contains(".stream."), "{sdk}/{name}: {:?}", outcome.notes);
    }
}

#[test]
fn a_har_recording_without_its_base_url_is_refused_naming_the_endpoint() {
    for (sdk, api, name) in recordings().into_iter().filter(|(_, _, n)| n.ends_with(".har")) {
        let outcome = check_bytes(api, &read(sdk, &name), &name, None);
        assert_eq!(outcome.findings.len(), 1, "{sdk}/{name}: {:#?}", outcome.findings);
        let f = &outcome.findings[0];
        assert!(f.path.to_string().ends_with(".request.url"), "{f:?}");
        assert!(
            f.message.contains("expected https://") && f.message.contains("`wire --check --base-url` names a proxy"),
            "{sdk}/{name}: {}",
            f.message
        );
    }
}

/// Where each API keeps what a planted edit changes: (JSON pointer, label in the finding).
fn edit_points(api: Api) -> Vec<(&'static str, &'static str)> {
    match api.name() {
        "anthropic" => vec![
            ("/model", "model"),
            ("/max_tokens", "token limit"),
            ("/system", "system prompt"),
            ("/messages/0/content", "user message"),
        ],
        "openai-chat" => vec![
            ("/model", "model"),
            ("/max_completion_tokens", "token limit"),
            ("/messages/0/content", "system message"),
            ("/messages/1/content", "user message"),
        ],
        "openai-responses" => vec![
            ("/model", "model"),
            ("/max_output_tokens", "token limit"),
            ("/instructions", "system prompt"),
            ("/input/0/content", "user message"),
        ],
        "gemini" => vec![
            ("/generationConfig/maxOutputTokens", "token limit"),
            ("/systemInstruction/parts/0/text", "system prompt"),
            ("/contents/0/parts/0/text", "user message"),
        ],
        other => unreachable!("no recordings of {other}"),
    }
}

fn planted(value: &Value) -> Value {
    match value {
        Value::String(s) => json!(format!("{s} ")),
        Value::Number(n) => json!(n.as_u64().unwrap() - 1),
        other => panic!("no edit planned for {other}"),
    }
}

/// The recording with its body edited by `edit` (for a HAR, the entry's postData.text).
fn edited(bytes: &[u8], har: bool, edit: impl Fn(&mut Value)) -> Vec<u8> {
    let mut value: Value = serde_json::from_slice(bytes).unwrap();
    if !har {
        edit(&mut value);
        return serde_json::to_vec(&value).unwrap();
    }
    let text = &mut value["log"]["entries"][0]["request"]["postData"]["text"];
    let mut body: Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
    edit(&mut body);
    *text = json!(body.to_string());
    serde_json::to_vec(&value).unwrap()
}

#[test]
fn every_planted_edit_of_every_recording_is_refused_naming_what_changed() {
    let base = base_url();
    for (sdk, api, name) in recordings() {
        let bytes = read(sdk, &name);
        let har = name.ends_with(".har");
        let body_at = if har { ".request.postData.text $" } else { ".json $" };
        for (pointer, label) in edit_points(api) {
            let bytes = edited(&bytes, har, |b| {
                let slot = b.pointer_mut(pointer).unwrap_or_else(|| panic!("{sdk}/{name}: no {pointer}"));
                *slot = planted(slot);
            });
            let outcome = check_bytes(api, &bytes, &name, Some(&base));
            let path = pointer.replace('/', ".");
            assert!(
                outcome
                    .findings
                    .iter()
                    .any(|f| f.path.to_string().contains(body_at) && f.message.starts_with(&format!("{label}: "))),
                "{sdk}/{name} edit {path}: {:#?}",
                outcome.findings
            );
        }
        let setting = if api == Api::from_name("gemini").unwrap() { "/generationConfig/topK" } else { "/top_k" };
        let bytes = edited(&bytes, har, |b| {
            let (parent, key) = setting.rsplit_once('/').unwrap();
            b.pointer_mut(if parent.is_empty() { "" } else { parent }).unwrap()[key] = json!(5);
        });
        let outcome = check_bytes(api, &bytes, &name, Some(&base));
        let dotted = setting[1..].replace('/', ".");
        assert!(
            outcome.findings.iter().any(|f| f.message.contains(&format!("`{dotted}` is sent, and the packet's call"))),
            "{sdk}/{name} added {dotted}: {:#?}",
            outcome.findings
        );
    }
}

#[test]
fn a_planted_model_or_stream_flag_in_a_har_url_or_body_is_refused() {
    let base = base_url();
    for sdk in SDKS {
        for stream in ["", ".stream"] {
            let name = format!("gemini{stream}.har");
            let mut har: Value = serde_json::from_slice(&read(sdk, &name)).unwrap();
            let url = &mut har["log"]["entries"][0]["request"]["url"];
            *url = json!(url.as_str().unwrap().replace("gemini-2.5-flash", "gemini-2.5-pro"));
            let outcome =
                check_bytes(Api::from_name("gemini").unwrap(), &serde_json::to_vec(&har).unwrap(), &name, Some(&base));
            assert_eq!(outcome.findings.len(), 1, "{sdk}/{name}: {:#?}", outcome.findings);
            assert!(outcome.findings[0].message.contains("model: the URL names model \"gemini-2.5-pro\""));
        }
        for api in [
            Api::from_name("anthropic").unwrap(),
            Api::from_name("openai-chat").unwrap(),
            Api::from_name("openai-responses").unwrap(),
        ] {
            let name = format!("{}.stream.json", api.name());
            let bytes = edited(&read(sdk, &name), false, |b| b["stream"] = json!("yes"));
            let outcome = check_bytes(api, &bytes, &name, Some(&base));
            assert!(
                outcome.findings.iter().any(|f| f.path.to_string().ends_with("$.stream")),
                "{sdk}/{name}: {outcome:#?}"
            );
        }
        // Only the role the SDKs send passes: a system instruction in the model's role is refused.
        let bytes = edited(&read(sdk, "gemini.json"), false, |b| b["systemInstruction"]["role"] = json!("model"));
        let outcome = check_bytes(Api::from_name("gemini").unwrap(), &bytes, "gemini.json", Some(&base));
        assert!(
            outcome.findings.iter().any(|f| f.path.to_string().ends_with("$.systemInstruction.role")),
            "{outcome:#?}"
        );
    }
}
