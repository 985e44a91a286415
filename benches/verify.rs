//! `cargo bench --bench verify`: `verify` of a directory of 1,000 copies of the 217 KB
//! interop packet, in-process (discovery, reading, parsing, every check, both hashes,
//! the re-render from renderInput). Wall time: this is the one that uses every core.
//! `PACKETPROOF_BENCH_COPIES` changes the number of copies. Skips (with a message)
//! when ../shared/interop is absent. Also: discovery in 400, 800 and 1,600 nested
//! empty folders (it was cubic, 800 took 19.6 s; now 28, 75 and 214 ms).

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
    let config = Config::load(root, Some(&interop.join("google-suffix.txt"))).expect("harness.toml loads");
    // The sample's asset examples carry generator prompts: noted under warn, as the tests do.
    let config = packetproof::Invocation::new(
        config,
        packetproof::CommandPolicy {
            asset_example_prompts: Some(packetproof::config::Policy::Warn),
            ..Default::default()
        },
    );
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

fn nested_folders(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = packetproof::Invocation::from(Config::load(root, None).expect("harness.toml loads"));
    let mut group = c.benchmark_group("verify nested folders");
    group.sample_size(10);
    for depth in [400, 800, 1600] {
        let dir = tempfile::tempdir().expect("a temp dir");
        let deep: std::path::PathBuf = std::iter::repeat_n("d", depth).collect();
        std::fs::create_dir_all(dir.path().join(deep)).expect("nested folders");
        let paths = [dir.path().to_path_buf()];
        group.throughput(Throughput::Elements(depth as u64));
        group.bench_function(format!("{depth} deep"), |b| {
            b.iter(|| packetproof::verify::verify(&config, &paths).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, verify, nested_folders);
criterion_main!(benches);
