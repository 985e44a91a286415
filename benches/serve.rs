//! `cargo bench --bench serve`: `packetproof serve` under a bounded flood from loopback
//! clients, against `trace` reading the same spans from a file.
//!
//! 20,000 GenAI spans, generated as benches/trace.rs generates them (one in a hundred
//! carries the SDK recordings' OpenAI packet's 10 KB of content, one carries none, the
//! others a short prompt no packet has), are sent as 200 OTLP/JSON export requests of
//! 100 spans by 8 client threads at once, first each request on its own connection,
//! then each client's requests on one connection kept alive (as the SDKs' OTLP/HTTP
//! exporters keep theirs); a 429 is sent again. Reported: the server's CPU time per
//! flood (utime + stime of the serve process, /proc/PID/stat) and so spans per second
//! per core, each request's latency
//! (p50, p99, max), and the server's peak resident memory (VmHWM) after every flood;
//! then `trace::check` on the same spans from a file, on this thread's CPU clock: once
//! cold, then warm, judging alone and rendering each finding as serve writes it (serve
//! renders a line for each call that does not hold: 19,800 lines, 5.7 MB, here).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use packetproof::trace::{self, packets::Packets, verdict::Verdict};
use packetproof::Config;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "support/spans.rs"]
mod spans;
use spans::span;

const REQUESTS: usize = 200;
const SPANS_PER_REQUEST: usize = 100;
const CLIENTS: usize = 8;
/// `trace` is measured again this many times, warm: its one cold run takes the same spans
/// in 0.08 s or in 0.15 s, by whether mimalloc has given freed pages back (with
/// MIMALLOC_PURGE_DELAY=-1 every run takes 0.08 s).
const TRACE_RUNS: usize = 5;

/// The export requests, one body each.
fn bodies(packet: &Value) -> Vec<Vec<u8>> {
    let text = |key: &str| packet[key].as_str().unwrap();
    let (system, user, model) = (text("systemPrompt"), text("effectiveUserMessage"), text("model"));
    (0..REQUESTS)
        .map(|r| {
            let spans: Vec<Value> =
                (0..SPANS_PER_REQUEST).map(|j| span(r * SPANS_PER_REQUEST + j, system, user, model)).collect();
            json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]})
                .to_string()
                .into_bytes()
        })
        .collect()
}

/// How a client sends its requests: each on a connection of its own, or all on one
/// connection kept alive (as the SDKs' OTLP/HTTP exporters keep theirs).
#[derive(Clone, Copy, PartialEq)]
enum Connections {
    OnePerRequest,
    KeptAlive,
}

/// One POST: the status. On a kept-alive connection, the answer is read by its length
/// and the connection kept for the next request unless the server closes it.
fn post(addr: SocketAddr, body: &[u8], kept: &mut Option<BufReader<TcpStream>>, connections: Connections) -> u16 {
    let close = connections == Connections::OnePerRequest;
    let head = format!(
        "POST /v1/traces HTTP/1.1\r\nHost: {addr}\r\nConnection: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        if close { "close" } else { "keep-alive" },
        body.len()
    );
    // A kept connection the server closed meanwhile fails at once: sent again on a new one.
    for _ in 0..3 {
        let stream = kept.get_or_insert_with(|| {
            let stream = TcpStream::connect(addr).unwrap();
            // The request goes in two writes: without this, the second waits for the
            // server's delayed acknowledgement of the first (40 ms) on a kept connection.
            stream.set_nodelay(true).unwrap();
            BufReader::new(stream)
        });
        let sent = stream.get_mut().write_all(head.as_bytes()).and_then(|()| stream.get_mut().write_all(body));
        if sent.is_err() && !close {
            *kept = None;
            continue;
        }
        let answer = if close { read_to_close(stream) } else { read_answer(stream) };
        if close || answer.is_none() || answer.is_some_and(|(_, closing)| closing) {
            *kept = None;
        }
        match answer {
            Some((status, _)) => return status,
            None if close => return 0,
            None => continue,
        }
    }
    0
}

/// The status of an answer read to the connection's end.
fn read_to_close(stream: &mut BufReader<TcpStream>) -> Option<(u16, bool)> {
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).split(' ').nth(1).and_then(|s| s.parse().ok()).map(|status| (status, true))
}

/// The status of an answer read by its length, and whether the server closes the connection.
fn read_answer(stream: &mut BufReader<TcpStream>) -> Option<(u16, bool)> {
    let mut line = String::new();
    stream.read_line(&mut line).ok().filter(|n| *n > 0)?;
    let status = line.split(' ').nth(1)?.parse().ok()?;
    let (mut length, mut closing) = (0usize, false);
    loop {
        line.clear();
        stream.read_line(&mut line).ok().filter(|n| *n > 0)?;
        let Some((name, value)) = line.trim_end().split_once(':') else { break };
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "connection" => closing = value.trim().eq_ignore_ascii_case("close"),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    stream.read_exact(&mut body).ok()?;
    Some((status, closing))
}

/// Every body sent by [`CLIENTS`] threads; each request's latency, and how many were refused (429) first.
fn flood(addr: SocketAddr, bodies: &Arc<Vec<Vec<u8>>>, connections: Connections) -> (Vec<Duration>, usize) {
    let next = Arc::new(Mutex::new(0usize));
    let threads: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (next, bodies) = (next.clone(), bodies.clone());
            std::thread::spawn(move || {
                let (mut latencies, mut refused, mut kept) = (Vec::new(), 0, None);
                loop {
                    let index = {
                        let mut next = next.lock().unwrap();
                        *next += 1;
                        *next - 1
                    };
                    let Some(body) = bodies.get(index) else { return (latencies, refused) };
                    let start = Instant::now();
                    // Bounded: a request refused 1,000 times in a row is a failure.
                    for _ in 0..1_000 {
                        match post(addr, body, &mut kept, connections) {
                            200 => break,
                            429 => refused += 1,
                            status => panic!("serve answered {status}"),
                        }
                    }
                    latencies.push(start.elapsed());
                }
            })
        })
        .collect();
    let mut all = (Vec::new(), 0);
    for thread in threads {
        let (latencies, refused) = thread.join().unwrap();
        all.0.extend(latencies);
        all.1 += refused;
    }
    (all.0, all.1)
}

/// The CPU time (user + system) the process has used, from /proc/PID/stat.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command (which may hold spaces) end at its ')'.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_nanos(ticks * 1_000_000_000 / per_second)
}

fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or("VmHWM: 0 kB");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn start_serve(root: &Path, packet: &Path) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_packetproof"))
        .current_dir(root)
        // Findings on stdout, which is /dev/null (`--findings` takes only a regular file).
        .args(["serve", "--listen", "127.0.0.1:0", "--packets"])
        .arg(packet)
        // Every flood sends the same spans again: with a join window they would be requests
        // sent again, their calls not judged twice; judged per request, each flood costs
        // what the first did.
        .args(["--join-window", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("serve exited before it listened").unwrap();
        if let Some(addr) = line.strip_prefix("packetproof serve: listening on http://") {
            break addr.parse().unwrap();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    (child, addr)
}

fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec it is given.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "the thread CPU clock is readable");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// The finding serve writes for a judged call, if it is one (src/serve/findings.rs).
fn finding(judged: &trace::Judged) -> Option<String> {
    match judged.verdict {
        Verdict::Matched { .. } | Verdict::Conforms { .. } => None,
        _ => Some(packetproof::reporter::trace_line(judged)),
    }
}

fn median(runs: &mut [Duration]) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let packet_file = root.join("tests/recordings/sdk/packets/openai.json");
    let packet: Value = serde_json::from_slice(&std::fs::read(&packet_file).unwrap()).unwrap();
    let bodies = Arc::new(bodies(&packet));
    let spans = (REQUESTS * SPANS_PER_REQUEST) as f64;
    let megabytes = bodies.iter().map(Vec::len).sum::<usize>() as f64 / 1e6;

    let (mut child, addr) = start_serve(root, &packet_file);
    let idle = peak_rss_kib(child.id());
    eprintln!("serve: peak resident {idle} KiB idle");
    for (connections, name) in
        [(Connections::OnePerRequest, "a connection per request"), (Connections::KeptAlive, "connections kept alive")]
    {
        let before = cpu_time(child.id());
        let wall = Instant::now();
        let (mut latencies, refused) = flood(addr, &bodies, connections);
        let wall = wall.elapsed();
        let cpu = cpu_time(child.id()) - before;
        latencies.sort();
        eprintln!(
            "serve, first flood with {name}: {spans} spans ({megabytes:.1} MB, {REQUESTS} requests, {CLIENTS} clients) \
             in {:.2} s wall, {:.2} s CPU: {:.0} spans/s per core; latency per request p50 {:.1} ms, p99 {:.1} ms, \
             max {:.1} ms; {refused} refused (429) and sent again; peak resident {} KiB after the flood",
            wall.as_secs_f64(),
            cpu.as_secs_f64(),
            spans / cpu.as_secs_f64(),
            percentile(&latencies, 0.5).as_secs_f64() * 1e3,
            percentile(&latencies, 0.99).as_secs_f64() * 1e3,
            latencies.last().unwrap().as_secs_f64() * 1e3,
            peak_rss_kib(child.id()),
        );
    }

    // `trace` on the same spans, from a file (one request per line, as the Collector writes).
    let config = packetproof::Invocation::from(Config::load(root, None).expect("harness.toml loads"));
    let packets = Packets::load(std::slice::from_ref(&packet_file), &config).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("20k.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    for body in bodies.iter() {
        out.write_all(body).unwrap();
        out.write_all(b"\n").unwrap();
    }
    out.into_inner().unwrap().sync_all().unwrap();
    let files = [file];
    let judge = |render: bool| {
        let start = thread_cpu_time();
        let counts = trace::check(&files, &packets, &config, trace::Options::default(), &mut |judged| {
            if render {
                std::hint::black_box(finding(judged));
            }
            Ok(())
        })
        .unwrap();
        assert_eq!((counts.spans, counts.matched), (20_000, 200));
        thread_cpu_time() - start
    };
    let cold = judge(false);
    let mut judged: Vec<Duration> = (0..TRACE_RUNS).map(|_| judge(false)).collect();
    let mut rendered: Vec<Duration> = (0..TRACE_RUNS).map(|_| judge(true)).collect();
    let (judged, rendered) = (median(&mut judged), median(&mut rendered));
    let per_second = |cpu: Duration| spans / cpu.as_secs_f64();
    eprintln!(
        "trace: the same {spans} spans from a file in {:.2} s CPU: {:.0} spans/s; again (median of {TRACE_RUNS}) \
         {:.3} s: {:.0} spans/s; rendering each finding as serve writes it (median of {TRACE_RUNS}) {:.3} s: {:.0} spans/s",
        cold.as_secs_f64(),
        per_second(cold),
        judged.as_secs_f64(),
        per_second(judged),
        rendered.as_secs_f64(),
        per_second(rendered),
    );

    let mut group = c.benchmark_group("serve");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(spans as u64));
    // The server's CPU time per flood: spans per second per core.
    for (connections, name) in [
        (Connections::OnePerRequest, "20,000 spans, server CPU"),
        (Connections::KeptAlive, "20,000 spans, server CPU, connections kept alive"),
    ] {
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let start = cpu_time(child.id());
                for _ in 0..iterations {
                    flood(addr, &bodies, connections);
                }
                cpu_time(child.id()) - start
            })
        });
    }
    group.finish();
    eprintln!("serve: peak resident {} KiB after every flood", peak_rss_kib(child.id()));
    let _ = child.kill();
    let _ = child.wait();
}

criterion_group!(benches, bench);
criterion_main!(benches);
