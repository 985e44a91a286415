//! `cargo bench --bench validate`: validating the 217 KB interop packet in-process
//! (strict parse + every packet check + both hashes), its parts separately, and
//! canonical hashing against raw SHA-256 of the same bytes (the targets:
//! validate ≤ 0.8 ms; canonical hashing ≥ 25% of raw SHA-256 throughput).
//! Skips (with a message) when ../shared/interop is absent.
//!
//! Times are this thread's CPU time per iteration (`CLOCK_THREAD_CPUTIME_ID`), not
//! wall time: the development machine is shared by parallel builds, and wall time
//! there measured the scheduler (the same code varied by ±60% between runs).

// The CLI's allocator (src/main.rs), so these figures are the CLI's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{black_box, criterion_group, criterion_main, Bencher, Criterion, Throughput};
use packetproof::judge::{self, Step};
use packetproof::{canonical, digest, packet, Config};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::time::Duration;

const PACKET: &str = "../shared/interop/runtime-packet.anthropic.json";

/// This thread's CPU time so far.
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec it is given.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "the thread CPU clock is readable");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Run `f` as criterion asks, timed by the thread's CPU clock.
fn on_cpu<T>(b: &mut Bencher, mut f: impl FnMut() -> T) {
    b.iter_custom(|iterations| {
        let start = thread_cpu_time();
        for _ in 0..iterations {
            black_box(f());
        }
        thread_cpu_time() - start
    })
}

fn validate(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Ok(bytes) = std::fs::read(root.join(PACKET)) else {
        eprintln!("SKIPPED: validate benchmarks: {PACKET} is absent");
        return;
    };
    let config = Config::load(root, None).expect("harness.toml loads");
    // The sample's asset examples carry generator prompts: noted under warn, as the tests do.
    let config = packetproof::Invocation::new(
        config,
        packetproof::CommandPolicy {
            asset_example_prompts: Some(packetproof::config::Policy::Warn),
            ..Default::default()
        },
    );
    let value = canonical::parse(&bytes).expect("the interop packet parses");
    let file = root.join(PACKET);
    let judged = judge::packet_file(&file, &value, &config, Step::Validate);
    assert!(judged.ok(), "the interop packet must validate: {:?}", judged.findings);
    let map = value.as_object().expect("a packet object");

    // What `validate` runs: every rule of the rule book that applies to the packet, as
    // the engine decides (renders-from-input reports itself not applicable: the sample
    // has other templates; the rules that need a request, that it has none), and the notes.
    c.bench_function("validate as judged (parse + every applicable rule + notes)", |b| {
        on_cpu(b, || {
            let value = canonical::parse(black_box(&bytes)).unwrap();
            judge::packet_file(&file, &value, &config, Step::Validate)
        })
    });
    // The rules alone, on a packet value no file names (no corpus lookup): what a
    // trace or wire step pays per packet once the suite's fixtures are listed.
    c.bench_function("every applicable rule (parse + rules, no notes)", |b| {
        on_cpu(b, || {
            let value = canonical::parse(black_box(&bytes)).unwrap();
            judge::packet(&value, None, &config, Step::Validate)
        })
    });
    c.bench_function("parse", |b| on_cpu(b, || canonical::parse(black_box(&bytes)).unwrap()));
    c.bench_function("checks without hashes", |b| {
        on_cpu(b, || {
            let map = black_box(map);
            let mut findings = packet::contract(map, &config);
            findings.extend(packet::provider_shape(map, config.settings()));
            findings.extend(packet::forbidden_material(map, &config));
            findings
        })
    });
    c.bench_function("forbidden material", |b| on_cpu(b, || packet::forbidden_material(black_box(map), &config)));
    c.bench_function("exactInputHash", |b| on_cpu(b, || digest::exact_input_hash(black_box(map))));

    // Throughput in canonical bytes: what the checksum covers.
    let mut canonical_bytes = Vec::new();
    canonical::write_object(&mut canonical_bytes, map, Some("checksum"));
    let mut group = c.benchmark_group("hashing");
    group.throughput(Throughput::Bytes(canonical_bytes.len() as u64));
    group.bench_function("raw SHA-256 of the canonical bytes", |b| {
        on_cpu(b, || Sha256::digest(black_box(&canonical_bytes)))
    });
    group.bench_function("canonical write", |b| on_cpu(b, || canonical::to_vec(black_box(&value))));
    group.bench_function("checksum (canonical hashing)", |b| on_cpu(b, || digest::packet_checksum(black_box(map))));
    group.finish();
}

criterion_group!(benches, validate);
criterion_main!(benches);
