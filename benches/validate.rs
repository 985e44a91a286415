//! `cargo bench --bench validate`: validating the 217 KB interop packet in-process
//! (strict parse + every packet check + both hashes), its parts separately, and
//! canonical hashing against raw SHA-256 of the same bytes (issue 16's targets:
//! validate ≤ 0.8 ms; canonical hashing ≥ 25% of raw SHA-256 throughput).
//! Skips (with a message) when ../shared/interop is absent.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use packetproof::{canonical, digest, packet, Config};
use sha2::{Digest, Sha256};
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
    c.bench_function("checks without hashes", |b| {
        b.iter(|| {
            let map = black_box(map);
            let mut findings = packet::contract(map, &config);
            findings.extend(packet::provider_shape(map, &config));
            findings.extend(packet::forbidden_material(map, &config));
            findings
        })
    });
    c.bench_function("forbidden material", |b| b.iter(|| packet::forbidden_material(black_box(map), &config)));
    c.bench_function("exactInputHash", |b| b.iter(|| digest::exact_input_hash(black_box(map))));

    // Throughput in canonical bytes: what the checksum covers.
    let mut canonical_bytes = Vec::new();
    canonical::write_object(&mut canonical_bytes, map, Some("checksum"));
    let mut group = c.benchmark_group("hashing");
    group.throughput(Throughput::Bytes(canonical_bytes.len() as u64));
    group.bench_function("raw SHA-256 of the canonical bytes", |b| {
        b.iter(|| Sha256::digest(black_box(&canonical_bytes)))
    });
    group.bench_function("canonical write", |b| b.iter(|| canonical::to_vec(black_box(&value))));
    group.bench_function("checksum (canonical hashing)", |b| b.iter(|| digest::packet_checksum(black_box(map))));
    group.finish();
}

criterion_group!(benches, validate);
criterion_main!(benches);
