//! `cargo bench --bench trace`: `trace::check` over 100,000 GenAI spans, generated here
//! as the Collector's file exporter writes them (1,000 lines of 100 spans: one span in
//! a hundred carries the SDK recordings' OpenAI packet's 10 KB of content, one carries
//! no content, the others a short prompt no packet has). Reports CPU time per run and
//! spans per second, and the peak
//! resident memory while reading 10,000 spans and while reading 100,000 (flat: one line
//! at a time is held, never the spans; Linux's VmHWM, reset before each read).
//!
//! Times are this thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), as in benches/validate.rs.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use packetproof::trace::{self, packets::Packets};
use packetproof::Config;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

const LINES: usize = 1_000;
const SPANS_PER_LINE: usize = 100;

fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec it is given.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "the thread CPU clock is readable");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// The peak resident set size since the last [`reset_peak`], in KiB (Linux: VmHWM).
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or("VmHWM: 0 kB");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// Start a new peak at the current resident set (Linux ≥ 4.0: `5` to clear_refs).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn span(i: usize, system: &str, user: &str, model: &str) -> Value {
    let (system, user) = match i % 100 {
        0 => (system.to_owned(), user.to_owned()),
        _ => (format!("You are assistant {}.", i % 7), format!("Summarise ticket {i} in one line.")),
    };
    let messages = json!([
        {"role": "system", "parts": [{"type": "text", "content": system}]},
        {"role": "user", "parts": [{"type": "text", "content": user}]},
    ]);
    let mut attributes = vec![
        json!({"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}),
        json!({"key": "gen_ai.request.model", "value": {"stringValue": model}}),
    ];
    if i % 100 != 1 {
        attributes.push(json!({"key": "gen_ai.input.messages", "value": {"stringValue": messages.to_string()}}));
    }
    json!({
        "traceId": format!("{i:032x}"), "spanId": format!("{i:016x}"), "name": format!("chat {model}"), "kind": 3,
        "attributes": attributes,
    })
}

fn write_trace(path: &Path, lines: usize, packet: &Value) {
    let text = |key: &str| packet[key].as_str().unwrap();
    let (system, user, model) = (text("systemPrompt"), text("effectiveUserMessage"), text("model"));
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for line in 0..lines {
        let spans: Vec<Value> =
            (0..SPANS_PER_LINE).map(|j| span(line * SPANS_PER_LINE + j, system, user, model)).collect();
        let request = json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]});
        writeln!(out, "{request}").unwrap();
    }
}

fn run(files: &[PathBuf], packets: &Packets, config: &Config) -> trace::Counts {
    trace::check(files, packets, config, trace::Options::default(), &mut |_| Ok(())).unwrap()
}

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = Config::load(root, None).expect("harness.toml loads");
    let packet_file = root.join("tests/recordings/sdk/packets/openai.json");
    let packet: Value = serde_json::from_slice(&std::fs::read(&packet_file).unwrap()).unwrap();
    let packets = Packets::load(&[packet_file], &config).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("10k.jsonl");
    let large = dir.path().join("100k.jsonl");
    write_trace(&small, LINES / 10, &packet);
    write_trace(&large, LINES, &packet);

    reset_peak();
    let before = peak_rss_kib();
    let counts = run(std::slice::from_ref(&small), &packets, &config);
    let after_small = peak_rss_kib();
    reset_peak();
    assert_eq!((counts.spans, counts.matched, counts.not_judgeable), (10_000, 100, 100));
    let start = thread_cpu_time();
    let counts = run(std::slice::from_ref(&large), &packets, &config);
    let cpu = thread_cpu_time() - start;
    let after_large = peak_rss_kib();
    assert_eq!((counts.spans, counts.matched, counts.not_judgeable), (100_000, 1_000, 1_000));
    eprintln!(
        "trace: 100,000 spans ({} MB) in {:.2} s CPU; resident {} KiB before reading; peak {} KiB reading 10,000 spans, {} KiB reading 100,000",
        std::fs::metadata(&large).unwrap().len() / 1_000_000,
        cpu.as_secs_f64(),
        before,
        after_small,
        after_large
    );

    let mut group = c.benchmark_group("trace");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(100_000));
    group.bench_function("100,000 spans", |b| {
        b.iter_custom(|iterations| {
            let start = thread_cpu_time();
            for _ in 0..iterations {
                run(std::slice::from_ref(&large), &packets, &config);
            }
            thread_cpu_time() - start
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
