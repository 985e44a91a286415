//! `cargo bench --bench wire`: one captured request checked against its packet (`wire
//! --check --packet`), per call: what the official openai SDK sent for the recorded
//! golden packet (tests/recordings/sdk), and a whole call with a tool and temperature
//! (tests/recordings/calls). The figure to hold: no slower per call as the check grew to
//! read every field of the call.

use criterion::{criterion_group, criterion_main, Criterion};
use packetproof::wire::{self, capture::Captured, Api};
use packetproof::Config;
use serde_json::{json, Value};
use std::path::Path;

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = packetproof::Invocation::from(Config::load(root, None).expect("harness.toml loads"));
    let recordings = root.join("tests/recordings");
    let golden = read(&recordings.join("sdk/packets/openai.json"));
    let sdk_body = read(&recordings.join("sdk/node/openai-chat.json"));
    let inputs = read(&recordings.join("calls/inputs.json"));
    let whole = json!({"provider": "openai", "model": inputs["model"], "maxTokens": inputs["maxTokens"],
        "systemPrompt": inputs["system"], "userMessage": inputs["user"], "effectiveUserMessage": inputs["user"],
        "call": {"tools": [inputs["tool"]], "toolChoice": "auto", "temperature": 0}});
    let whole_body = read(&recordings.join("calls/openai.chat-tools.json"));
    let api = Api::from_name("openai-chat").unwrap();
    let mut group = c.benchmark_group("wire --check");
    for (name, packet, body) in
        [("golden packet, openai SDK body", &golden, &sdk_body), ("a call with a tool", &whole, &whole_body)]
    {
        let captured = Captured::body(body.clone(), "body.json");
        group.bench_function(name, |b| {
            b.iter(|| wire::check(packet, api, &captured, config.settings(), "packet.json", wire::CHECK).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
