//! `cargo bench --bench conformance`: template conformance on one core, on the cost
//! attack of "Conformance exact both ways": a call whose slot holds the template's own
//! text over and over (every literal of the template almost matches everywhere).
//!
//! The templates are the project's (references/prompts, minijinja, trimmed as the block
//! builder's compiler trims), the call a golden packet's system prompt and user message
//! with the `{{ schemaName }}` value, and then one evidence value, replaced by 1 MB of
//! the template's text. Goal: under 1 s a call. Also the golden packet's own texts (the
//! everyday cost of a conforming call).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use packetproof::template::{jinja, Matcher, Trim};
use std::collections::BTreeMap;
use std::path::Path;

const ONE_MB: usize = 1 << 20;

fn templates() -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("references/prompts");
    walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let name = e.path().strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
            (name, std::fs::read_to_string(e.path()).unwrap())
        })
        .collect()
}

fn matcher(files: &BTreeMap<String, String>, root: &str) -> Matcher {
    jinja::read(root, files).unwrap().matcher(Trim::TrimEnd).unwrap()
}

/// `text` with the value `matcher` finds in the slot `slot` replaced by `filler` (1 MB of it).
fn flooded(matcher: &Matcher, text: &str, slot: &str, filler: &str) -> String {
    let found = matcher.matches(text).unwrap().expect("the golden text conforms");
    let value = &found.slots.iter().find(|(name, _)| name == slot).expect("the slot is filled").1;
    let flood = filler.repeat(ONE_MB / filler.len() + 1);
    let cut = (0..=ONE_MB).rev().find(|i| flood.is_char_boundary(*i)).unwrap();
    let flooded = text.replacen(value.as_str(), &flood[..cut], 1);
    assert!(matcher.matches(&flooded).unwrap().is_some(), "the flooded text still conforms");
    flooded
}

fn conformance(c: &mut Criterion) {
    let files = templates();
    let packet: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/anthropic-staged-pred-selected/runtime-packet.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let system = packet["systemPrompt"].as_str().unwrap();
    let user = packet["effectiveUserMessage"].as_str().unwrap();
    let (system_matcher, user_matcher) = (matcher(&files, "system.md.j2"), matcher(&files, "user.md.j2"));

    let mut group = c.benchmark_group("conformance");
    group.sample_size(10);
    group.throughput(Throughput::Bytes((system.len() + user.len()) as u64));
    group.bench_function("golden call", |b| {
        b.iter(|| {
            assert!(system_matcher.matches(system).unwrap().is_some());
            assert!(user_matcher.matches(user).unwrap().is_some());
        })
    });
    let big_system = flooded(&system_matcher, system, "schemaName", &files["system.md.j2"]);
    group.throughput(Throughput::Bytes(big_system.len() as u64));
    group.bench_function("1 MB of the system template in its slot", |b| {
        b.iter(|| assert!(system_matcher.matches(&big_system).unwrap().is_some()))
    });
    let big_user = flooded(&user_matcher, user, "target.blockName", &files["user.md.j2"]);
    group.throughput(Throughput::Bytes(big_user.len() as u64));
    group.bench_function("1 MB of the user template in a slot", |b| {
        b.iter(|| assert!(user_matcher.matches(&big_user).unwrap().is_some()))
    });
    group.finish();
}

criterion_group!(benches, conformance);
criterion_main!(benches);
