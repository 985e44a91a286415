//! `cargo bench --bench gate`: the conformance gate (`packetproof test`) on suites
//! of 100, 300 and 1,000 fixtures. Each suite is what `packetproof init` writes,
//! with its three fixtures (and their golden files) copied under new names and
//! fresh agent task ids until the suite has that many. The binary runs as a user
//! runs it, on every core; wall time, since the gate's promise is wall time.
//! `PACKETPROOF_BENCH_SUITES=100,300` picks other sizes.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_packetproof");

/// A suite of `fixtures` fixtures in `dir` (which must not exist yet).
fn generate(dir: &Path, fixtures: usize) {
    let status = Command::new(BIN).arg("init").arg(dir).stdout(Stdio::null()).status().expect("init runs");
    assert!(status.success(), "init failed");
    let templates: Vec<String> = names(&dir.join("fixtures"));
    let moved = dir.join("templates");
    std::fs::create_dir(&moved).expect("a folder for the originals");
    for name in &templates {
        for part in ["fixtures", "golden"] {
            std::fs::rename(dir.join(part).join(name), moved.join(format!("{part}-{name}"))).expect("moved");
        }
    }
    for i in 0..fixtures {
        let name = &templates[i % templates.len()];
        let copy = format!("{name}-{i:04}");
        for part in ["fixtures", "golden"] {
            copy_tree(&moved.join(format!("{part}-{name}")), &dir.join(part).join(&copy));
        }
        let record = dir.join("fixtures").join(&copy).join("run/completion.toml");
        let text = std::fs::read_to_string(&record).expect("completion.toml");
        let text = text
            .lines()
            .map(|line| match line.strip_prefix("agent_task = \"") {
                Some(rest) => format!("agent_task = \"{}-{i:04}\"", rest.trim_end_matches('"')),
                None => line.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&record, text + "\n").expect("completion.toml written");
    }
    std::fs::remove_dir_all(&moved).expect("originals removed");
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("fixtures")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a copy folder");
    for entry in std::fs::read_dir(from).expect("a folder to copy") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("a file copied");
        }
    }
}

/// `packetproof test` in `dir`; the gate must pass.
fn gate(dir: &Path) {
    let out = Command::new(BIN).args(["test", "--format", "terse"]).current_dir(dir).output().expect("test runs");
    assert!(out.status.success(), "the gate failed:\n{}", String::from_utf8_lossy(&out.stdout));
}

fn suites() -> Vec<usize> {
    let sizes = std::env::var("PACKETPROOF_BENCH_SUITES").unwrap_or_else(|_| "100,300,1000".into());
    sizes.split(',').map(|n| n.trim().parse().expect("PACKETPROOF_BENCH_SUITES: numbers, comma-separated")).collect()
}

fn bench(c: &mut Criterion) {
    let temp = tempfile::tempdir().expect("a temp dir");
    let mut group = c.benchmark_group("gate");
    group.sample_size(10);
    for fixtures in suites() {
        let dir: PathBuf = temp.path().join(format!("suite-{fixtures}"));
        generate(&dir, fixtures);
        group.throughput(Throughput::Elements(fixtures as u64));
        group.bench_function(format!("packetproof test, {fixtures} fixtures"), |b| b.iter(|| gate(&dir)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
