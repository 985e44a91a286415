//! `cargo bench --bench trace`: spans per second per core for `trace` against the raw parse
//! of the same input, on OTLP/JSON and on OTLP protobuf; the figure is the ratio of the
//! two throughputs, printed side by side for both encodings (1.0: trace as fast as the parse).
//!
//! The input is 100,000 GenAI spans, generated here as the Collector's file exporter writes
//! them (1,000 lines of 100 spans: one span in a hundred carries the SDK recordings' OpenAI
//! packet's content, one carries no content, the others a short prompt no packet has), and
//! the same spans as one protobuf `ExportTraceServiceRequest` (what the SDK's OTLP/HTTP
//! exporter sends). Four runs each, measured on this thread's CPU clock
//! (`CLOCK_THREAD_CPUTIME_ID`, as in benches/validate.rs):
//!
//! - `trace` on the JSON file (`trace::check`: read, strict parse, conventions, join, judge);
//! - `serde_json::from_slice::<Value>` of each line of it (the raw parse);
//! - `trace` on the protobuf file;
//! - `ExportTraceServiceRequest::decode` of it (prost, the raw parse);
//! - and for each encoding, the floor under any `trace`: the raw parse, then each span's
//!   `gen_ai.input.messages` text parsed as JSON (`serde_json::Value`) and each message's
//!   text hashed (SHA-256), which a call must have before it can be compared with a
//!   reviewed packet. The raw parsers leave that text a string; `trace` cannot.
//!
//! Also: one 11 MB line of OpenLLMetry's flattened attributes (100,000 `gen_ai.prompt.{i}`
//! messages), which took 190 s when each index was a scan; and the peak resident memory while
//! reading 10,000 spans and 100,000, from JSON and from protobuf (Linux's VmHWM, reset
//! before each read).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use packetproof::trace::{self, packets::Packets};
use packetproof::Config;
use prost::Message;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

#[path = "../crates/packetproof/src/otlp/encode.rs"]
mod encode;
use std::time::Duration;

#[path = "support/spans.rs"]
mod spans;
use spans::span;

const LINES: usize = 1_000;
const SPANS_PER_LINE: usize = 100;
const SPANS: usize = LINES * SPANS_PER_LINE;

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

/// The JSON lines (written to `path`) and the same spans as one protobuf export (to `binary`).
fn write_trace(path: &Path, binary: &Path, lines: usize, packet: &Value) {
    let text = |key: &str| packet[key].as_str().unwrap();
    let (system, user, model) = (text("systemPrompt"), text("effectiveUserMessage"), text("model"));
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut proto = std::io::BufWriter::new(std::fs::File::create(binary).unwrap());
    for line in 0..lines {
        let spans: Vec<Value> =
            (0..SPANS_PER_LINE).map(|j| span(line * SPANS_PER_LINE + j, system, user, model)).collect();
        let request = json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]});
        writeln!(out, "{request}").unwrap();
        // Concatenated exports are one (protobuf merges repeated fields).
        proto.write_all(&encode::encode_json(&request)).unwrap();
    }
}

fn run(files: &[PathBuf], packets: &Packets, config: &packetproof::Invocation) -> trace::Counts {
    trace::check(files, packets, config, trace::Options::default(), &mut |_| Ok(())).unwrap()
}

/// The least CPU time of `runs` runs of `work`.
fn least(runs: usize, mut work: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = thread_cpu_time();
            work();
            thread_cpu_time() - start
        })
        .min()
        .unwrap()
}

fn per_second(n: usize, time: Duration) -> String {
    let rate = n as f64 / time.as_secs_f64();
    format!("{:.0}k spans/s ({:.3} s)", rate / 1000.0, time.as_secs_f64())
}

/// The messages text of a span's attributes parsed, and each message's text hashed:
/// the work of [`floor`] past the raw parse.
fn parse_and_hash(messages: &str) -> u8 {
    use sha2::Digest;
    let messages: Value = serde_json::from_str(messages).unwrap();
    let texts = messages.as_array().unwrap().iter().flat_map(|m| m["parts"].as_array().unwrap());
    texts.map(|part| sha2::Sha256::digest(part["content"].as_str().unwrap().as_bytes())[0]).fold(0, u8::wrapping_add)
}

/// The floor under `trace` on `bytes` (protobuf, else JSON lines): the raw parse, then
/// every span's messages parsed and hashed.
fn floor(bytes: &[u8], protobuf: bool) -> u8 {
    let mut sum = 0u8;
    if protobuf {
        let request = ExportTraceServiceRequest::decode(bytes).unwrap();
        for span in request.resource_spans.iter().flat_map(|r| &r.scope_spans).flat_map(|s| &s.spans) {
            for kv in span.attributes.iter().filter(|kv| kv.key == "gen_ai.input.messages") {
                if let Some(any_value::Value::StringValue(text)) = kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                    sum = sum.wrapping_add(parse_and_hash(text));
                }
            }
        }
        return sum;
    }
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let export: Value = serde_json::from_slice(line).unwrap();
        let spans =
            export["resourceSpans"].as_array().unwrap().iter().flat_map(|r| r["scopeSpans"].as_array().unwrap());
        for span in spans.flat_map(|s| s["spans"].as_array().unwrap()) {
            for kv in span["attributes"].as_array().unwrap().iter().filter(|kv| kv["key"] == "gen_ai.input.messages") {
                sum = sum.wrapping_add(parse_and_hash(kv["value"]["stringValue"].as_str().unwrap()));
            }
        }
    }
    sum
}

/// One line of OpenLLMetry's flattened attributes: 100,000 messages, 11 MB.
fn flattened_line() -> String {
    let mut attributes = vec![
        json!({"key": "gen_ai.system", "value": {"stringValue": "openai"}}),
        json!({"key": "gen_ai.request.model", "value": {"stringValue": "gpt-5"}}),
    ];
    let text = "x".repeat(40);
    for i in 0..100_000 {
        attributes.push(json!({"key": format!("gen_ai.prompt.{i}.role"), "value": {"stringValue": "user"}}));
        attributes.push(json!({"key": format!("gen_ai.prompt.{i}.content"), "value": {"stringValue": text}}));
    }
    json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "0000000000000001", "attributes": attributes}]}]}]})
        .to_string()
}

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config = Config::load(root, None).expect("harness.toml loads");
    // A protobuf file is one export, bounded by limits.max_file_bytes (16 MiB): these are 40 MB.
    config.limits.max_file_bytes = 256 << 20;
    let packet_file = root.join("tests/recordings/sdk/packets/openai.json");
    let packet: Value = serde_json::from_slice(&std::fs::read(&packet_file).unwrap()).unwrap();
    let config = packetproof::Invocation::from(config);
    let packets = Packets::load(&[packet_file], &config).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (small, small_pb) = (dir.path().join("10k.jsonl"), dir.path().join("10k.pb"));
    let (large, large_pb) = (dir.path().join("100k.jsonl"), dir.path().join("100k.pb"));
    write_trace(&small, &small_pb, LINES / 10, &packet);
    write_trace(&large, &large_pb, LINES, &packet);

    reset_peak();
    let before = peak_rss_kib();
    let counts = run(std::slice::from_ref(&small), &packets, &config);
    let after_small = peak_rss_kib();
    assert_eq!((counts.spans, counts.matched, counts.not_judgeable), (10_000, 100, 100));
    reset_peak();
    let counts = run(std::slice::from_ref(&large), &packets, &config);
    let after_large = peak_rss_kib();
    assert_eq!((counts.spans, counts.matched, counts.not_judgeable), (100_000, 1_000, 1_000));
    reset_peak();
    let pb_counts = run(std::slice::from_ref(&large_pb), &packets, &config);
    let after_large_pb = peak_rss_kib();
    assert_eq!(pb_counts, counts);

    let json_bytes = std::fs::read(&large).unwrap();
    let pb_bytes = std::fs::read(&large_pb).unwrap();
    let trace_json = least(4, || {
        run(std::slice::from_ref(&large), &packets, &config);
    });
    let raw_json = least(4, || {
        for line in json_bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            std::hint::black_box(serde_json::from_slice::<Value>(line).unwrap());
        }
    });
    let trace_pb = least(4, || {
        run(std::slice::from_ref(&large_pb), &packets, &config);
    });
    let raw_pb = least(4, || {
        std::hint::black_box(ExportTraceServiceRequest::decode(pb_bytes.as_slice()).unwrap());
    });
    let floor_json = least(4, || {
        std::hint::black_box(floor(&json_bytes, false));
    });
    let floor_pb = least(4, || {
        std::hint::black_box(floor(&pb_bytes, true));
    });
    let line = flattened_line();
    let flattened = least(3, || {
        let mut session = trace::Session::new(&packets, trace::Options::default());
        session.read(line.as_bytes(), trace::Encoding::Json, None, "flattened", 1).unwrap();
        session.finish(&mut |_| Ok(())).unwrap();
    });
    // The figure is trace's throughput as a share of the raw parser's (1.0: as fast).
    let ratio = |trace: Duration, raw: Duration| raw.as_secs_f64() / trace.as_secs_f64();
    eprintln!(
        "trace, 100,000 spans, one core:\n  JSON ({} MB): trace {}, serde_json::Value parse {}\n  \
         protobuf ({} MB): trace {}, prost decode {}\n  \
         trace's throughput over the raw parser's: JSON {:.2}, protobuf {:.2}\n  \
         the floor (raw parse, then each span's messages parsed and hashed): JSON {}, protobuf {}\n  \
         trace's throughput over the floor's: JSON {:.2}, protobuf {:.2}\n  \
         one {:.1} MB line of 100,000 flattened gen_ai.prompt.{{i}} messages: {:.3} s\n  \
         resident {} KiB before reading; peak {} KiB reading 10,000 spans, {} KiB reading 100,000 \
         (JSON), {} KiB reading them from protobuf",
        json_bytes.len() / 1_000_000,
        per_second(SPANS, trace_json),
        per_second(SPANS, raw_json),
        pb_bytes.len() / 1_000_000,
        per_second(SPANS, trace_pb),
        per_second(SPANS, raw_pb),
        ratio(trace_json, raw_json),
        ratio(trace_pb, raw_pb),
        per_second(SPANS, floor_json),
        per_second(SPANS, floor_pb),
        ratio(trace_json, floor_json),
        ratio(trace_pb, floor_pb),
        line.len() as f64 / 1e6,
        flattened.as_secs_f64(),
        before,
        after_small,
        after_large,
        after_large_pb
    );

    let mut group = c.benchmark_group("trace");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(SPANS as u64));
    for (name, file) in [("100,000 spans, OTLP/JSON", &large), ("100,000 spans, OTLP protobuf", &large_pb)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let start = thread_cpu_time();
                for _ in 0..iterations {
                    run(std::slice::from_ref(file), &packets, &config);
                }
                thread_cpu_time() - start
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
