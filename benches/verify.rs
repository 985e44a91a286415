//! `cargo bench --bench verify`: `verify` of a directory of 1,000 copies of the 217 KB
//! interop packet, in-process (discovery, reading, parsing, every check, both hashes,
//! the re-render from renderInput). Wall time: this is the one that uses every core.
//! `PACKETPROOF_BENCH_COPIES` changes the number of copies. Skips (with a message)
//! when ../shared/interop is absent.

// The CLI's allocator (src/main.rs), so these figures are the CLI's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use packetproof::Config;
use std::path::Path;

const INTEROP: &str = "../shared/interop";

fn verify(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let interop = root.join(INTEROP);
    let Ok(bytes) = std::fs::read(interop.join("runtime-packet.anthropic.json")) else {
        eprintln!("SKIPPED: verify benchmark: {INTEROP} is absent");
        return;
    };
    let copies: usize = std::env::var("PACKETPROOF_BENCH_COPIES").ok().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let mut config = Config::load(root, Some(&interop.join("google-suffix.txt"))).expect("harness.toml loads");
    // The sample's asset examples carry generator prompts: noted under warn, as the tests do.
    config.packet.asset_example_prompts = packetproof::config::Policy::Warn;
    let dir = tempfile::tempdir().expect("a temp dir");
    for i in 0..copies {
        std::fs::write(dir.path().join(format!("runtime-packet-{i:04}.json")), &bytes).expect("a copy is written");
    }
    let paths = [dir.path().to_path_buf()];
    let outcomes = packetproof::verify::verify(&config, &paths).expect("verify runs");
    assert!(outcomes.len() == copies && outcomes.iter().all(|o| o.ok()), "every copy must verify");

    let mut group = c.benchmark_group("verify");
    group.sample_size(10);
    group.throughput(Throughput::Elements(copies as u64));
    group.bench_function(format!("{copies} copies of the interop packet"), |b| {
        b.iter(|| packetproof::verify::verify(&config, &paths).unwrap())
    });
    group.finish();
}

criterion_group!(benches, verify);
criterion_main!(benches);
