//! `cargo bench --bench validate`: validating the 217 KB interop packet in-process
//! (strict parse + every packet check + both hashes), and its parts separately.
//! Skips (with a message) when ../shared/interop is absent.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use packetproof::{canonical, digest, packet, Config};
use std::path::Path;

const PACKET: &str = "../shared/interop/runtime-packet.anthropic.json";

fn validate(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Ok(bytes) = std::fs::read(root.join(PACKET)) else {
        eprintln!("SKIPPED: validate benchmarks: {PACKET} is absent");
        return;
    };
    let mut config = Config::load(root, None).expect("harness.toml loads");
    // The sample's asset examples carry generator prompts: noted under warn, as the tests do.
    config.packet.asset_example_prompts = packetproof::config::Policy::Warn;
    let value = canonical::parse(&bytes).expect("the interop packet parses");
    let findings = packet::validate(&value, &config);
    assert!(findings.is_empty(), "the interop packet must validate: {findings:?}");
    let map = value.as_object().expect("a packet object");

    c.bench_function("validate (parse + checks + both hashes)", |b| {
        b.iter(|| {
            let value = canonical::parse(black_box(&bytes)).unwrap();
            packet::validate(&value, &config)
        })
    });
    c.bench_function("parse", |b| b.iter(|| canonical::parse(black_box(&bytes)).unwrap()));
    c.bench_function("canonical write", |b| b.iter(|| canonical::to_vec(black_box(&value))));
    c.bench_function("exactInputHash", |b| b.iter(|| digest::exact_input_hash(black_box(map))));
    c.bench_function("checksum", |b| b.iter(|| digest::packet_checksum(black_box(map))));
}

criterion_group!(benches, validate);
criterion_main!(benches);
