//! `cargo bench --bench gate`: the conformance gate (`packetproof test`) on suites
//! of 100, 300 and 1,000 fixtures. Each suite is what `packetproof init` writes,
//! with its three fixtures (and their golden files) copied under new names and
//! fresh agent task ids until the suite has that many. The binary runs as a user
//! runs it, on every core. Criterion reports wall time; beside it each size prints
//! the CPU time (user + system) one run took, read from the kernel's account of
//! this process's children: on a shared machine wall time is mostly the neighbours.
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

/// User + system CPU seconds of every child this process has waited for.
fn children_cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0, "getrusage");
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
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
        let (runs, cpu) = (std::cell::Cell::new(0u32), std::cell::Cell::new(0.0f64));
        group.bench_function(format!("packetproof test, {fixtures} fixtures"), |b| {
            b.iter(|| {
                let before = children_cpu_seconds();
                gate(&dir);
                cpu.set(cpu.get() + children_cpu_seconds() - before);
                runs.set(runs.get() + 1);
            })
        });
        let per_run = cpu.get() / f64::from(runs.get().max(1));
        println!(
            "gate/{fixtures} fixtures: {per_run:.2} CPU-s a run (user + system, mean of {} runs), {:.1} ms of CPU a fixture",
            runs.get(),
            1000.0 * per_run / fixtures as f64
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
