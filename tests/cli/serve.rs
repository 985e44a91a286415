//! `packetproof serve`: the receiver started on 127.0.0.1:0 (its address read from the
//! "listening" line it prints), sent the request bodies the Python and Node OTLP
//! exporters recorded (tests/recordings/otlp/), and checked on `/metrics`, in the
//! findings file and by its answers: 400, 413, 415, 429 with Retry-After, and SIGTERM
//! finishing the request it took, exit 0. The exporters themselves send to it live
//! where Python's and Node's packages are installed (ignored otherwise, with why).

#[path = "serve_families.rs"]
mod families;
#[path = "serve_grpc.rs"]
mod grpc;
#[path = "serve_limits.rs"]
mod limits;

use crate::support::{bin, exec, root};
use libtest_mimic::Trial;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub fn trials() -> Vec<Trial> {
    let mut trials = crate::trials![
        serve_judges_recorded_exports_as_they_arrive,
        serve_refuses_malformed_oversized_and_unsupported_bodies_and_lives_on,
        serve_answers_429_with_retry_after_when_the_queue_is_full,
        serve_finishes_the_request_it_took_on_sigterm_and_exits_0,
        serve_stops_cleanly_on_a_sigterm_sent_as_soon_as_it_listens,
        serve_stops_when_its_parent_dies_even_by_sigkill,
        serve_refuses_to_start_without_packets_or_its_address,
        serve_answers_503_when_a_finding_cannot_be_written,
        serve_appends_to_its_own_findings_and_to_nothing_else,
        serve_holds_every_call_to_the_gate_it_is_given,
        serve_joins_a_span_and_its_events_sent_in_separate_requests_as_trace_joins_them,
        serve_judges_a_held_call_with_what_it_has_when_its_window_ends,
        serve_judges_the_calls_held_when_it_stops,
        serve_judges_the_oldest_held_call_to_make_room
    ];
    trials.extend(grpc::trials());
    trials.extend(families::trials());
    trials.extend(limits::trials());
    let live = crate::support::trial(
        crate::support::test_name(module_path!(), "serve_takes_the_python_and_node_exporters_live"),
        serve_takes_the_python_and_node_exporters_live,
    );
    trials.push(crate::support::needs("opentelemetry-exporters", live_missing(), live));
    trials
}

const PACKETS: &str = "tests/recordings/sdk/packets";
const RECORDED: &str = "tests/recordings/otlp";

/// A running `serve`, killed when dropped (a test that stops it waits for it instead).
struct Server {
    child: Option<Child>,
    addr: SocketAddr,
    findings: PathBuf,
    stderr: std::sync::mpsc::Receiver<String>,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        Server::start_with(dir.path().join("findings.jsonl"), dir, extra)
    }

    fn start_with(findings: PathBuf, dir: tempfile::TempDir, extra: &[&str]) -> Server {
        let mut args = vec![std::ffi::OsString::from("--findings"), findings.clone().into()];
        args.extend(extra.iter().map(std::ffi::OsString::from));
        Server::spawn(&args, Stdio::piped(), findings, dir)
    }

    /// Findings on stdout (no `--findings`), which is `stdout`.
    fn start_to_stdout(stdout: Stdio) -> Server {
        let dir = tempfile::tempdir().unwrap();
        Server::spawn(&[], stdout, dir.path().join("no-findings-file"), dir)
    }

    fn spawn(args: &[std::ffi::OsString], stdout: Stdio, findings: PathBuf, dir: tempfile::TempDir) -> Server {
        Server::spawn_command(bin(), args, stdout, findings, dir)
    }

    fn spawn_command(
        mut command: Command,
        args: &[std::ffi::OsString],
        stdout: Stdio,
        findings: PathBuf,
        dir: tempfile::TempDir,
    ) -> Server {
        let mut child = command
            .args(["serve", "--listen", "127.0.0.1:0", "--packets", PACKETS])
            .args(args)
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Every stderr line goes to a channel; the test waits for the "listening" one.
        let (send, stderr) = std::sync::mpsc::channel();
        let pipe = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || pipe.lines().map_while(Result::ok).try_for_each(|line| send.send(line)));
        let addr = loop {
            let line = stderr.recv().expect("serve exited before it listened");
            if let Some(addr) = line.strip_prefix("packetproof serve: listening on http://") {
                break addr.parse().unwrap();
            }
        };
        Server { child: Some(child), addr, findings, stderr, _dir: dir }
    }

    fn post(&self, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
        request(self.addr, "POST", path, headers, body)
    }

    /// The value of the sample `name{labels}` on /metrics (0 when absent).
    fn metric(&self, sample: &str) -> f64 {
        let text = request(self.addr, "GET", "/metrics", &[], b"").body_text();
        text.lines()
            .find_map(|line| line.strip_prefix(sample).and_then(|rest| rest.strip_prefix(' ')))
            .map_or(0.0, |value| value.trim().parse().unwrap())
    }

    /// Wait (on /metrics, never a blind sleep) until `sample` is `value`, for at most a minute:
    /// what a join window's end, a second or so, takes.
    fn wait_metric(&self, sample: &str, value: f64) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            if self.metric(sample) == value {
                return;
            }
            std::thread::yield_now();
        }
        panic!("{sample} never {value}: {}", self.metric(sample));
    }

    /// Each request body as an OTLP/JSON export to `path`, answered 200.
    fn post_json(&self, path: &str, bodies: &[&str]) {
        for body in bodies {
            let answer = self.post(path, &[("Content-Type", "application/json")], body.as_bytes());
            assert_eq!(answer.status, 200, "{path}: {}", answer.body_text());
        }
    }

    /// The calls judged so far, summed by verdict (over packets and models).
    fn verdicts(&self) -> std::collections::BTreeMap<String, f64> {
        let text = request(self.addr, "GET", "/metrics", &[], b"").body_text();
        let mut out = std::collections::BTreeMap::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("packetproof_calls_total{verdict=\"") else { continue };
            let (verdict, rest) = rest.split_once('"').unwrap();
            let value: f64 = rest.rsplit(' ').next().unwrap().parse().unwrap();
            *out.entry(verdict.to_owned()).or_insert(0.0) += value;
        }
        out
    }

    /// Wait (on /metrics, never a blind sleep) until `n` requests are admitted.
    /// Until the gauge `metric` reads `n` (polled, for at most 20 s).
    fn wait_for(&self, metric: &str, n: f64) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if self.metric(metric) == n {
                return;
            }
            std::thread::yield_now();
        }
        panic!("{metric} never {n}: {}", self.metric(metric));
    }

    /// The server's peak resident memory so far (Linux VmHWM), in KiB.
    fn peak_kib(&self) -> u64 {
        let pid = self.child.as_ref().unwrap().id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    fn findings(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.findings).unwrap_or_default();
        text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }

    /// SIGTERM, then the exit code, the rest of stderr and the findings file.
    fn terminate(self) -> (i32, String, String) {
        self.stop_with(rustix::process::Signal::TERM)
    }

    /// `signal`, then the exit code, the rest of stderr and the findings file.
    fn stop_with(mut self, signal: rustix::process::Signal) -> (i32, String, String) {
        let mut child = self.child.take().unwrap();
        let pid = rustix::process::Pid::from_child(&child);
        rustix::process::kill_process(pid, signal).unwrap();
        let status = child.wait().unwrap();
        let rest: Vec<String> = self.stderr.iter().collect();
        let findings = std::fs::read_to_string(&self.findings).unwrap_or_default();
        (status.code().unwrap_or(-1), rest.join("\n"), findings)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim().to_owned())
        })
    }
}

/// One HTTP/1.1 request on its own connection, read to its end.
fn request(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    let framed = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if !framed("content-length") && !framed("transfer-encoding") {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (key, value) in headers {
        head.push_str(&format!("{key}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    // The server may answer (413, 429) before it reads the body, and close.
    let _ = stream.write_all(body);
    read_answer(stream)
}

fn read_answer(mut stream: TcpStream) -> Answer {
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("an HTTP answer");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Answer { status, head, body: raw[split + 4..].to_vec() }
}

/// A recorded body and the headers its exporter sent it with.
fn recorded(name: &str) -> (String, Vec<(String, String)>, Vec<u8>) {
    let requests: Value =
        serde_json::from_slice(&std::fs::read(root().join(RECORDED).join("requests.json")).unwrap()).unwrap();
    let meta = &requests[name];
    let mut headers = vec![("Content-Type".to_owned(), meta["contentType"].as_str().unwrap().to_owned())];
    if let Some(encoding) = meta["contentEncoding"].as_str() {
        headers.push(("Content-Encoding".to_owned(), encoding.to_owned()));
    }
    (meta["path"].as_str().unwrap().to_owned(), headers, std::fs::read(root().join(RECORDED).join(name)).unwrap())
}

fn send_recorded(server: &Server, name: &str) -> Answer {
    let (path, headers, body) = recorded(name);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    server.post(&path, &headers, &body)
}

fn calls(server: &Server, verdict: &str, packet: &str) -> f64 {
    server.metric(&format!("packetproof_calls_total{{verdict=\"{verdict}\",packet=\"{packet}\",model=\"gpt-5\"}}"))
}

const OPENAI: &str = "tests/recordings/sdk/packets/openai.json";

fn finding_schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("schemas/serve-finding.schema.json")).unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

/// Each exporter's exact call is matched, the drifted one unreviewed, at once; the one
/// without content is held for its messages (they may come as log events in a logs
/// export), and judged not judgeable as serve stops; the ones that do not hold are
/// findings with their ids.
fn serve_judges_recorded_exports_as_they_arrive() {
    let server = Server::start(&[]);
    let recordings = ["node.traces.json", "node.traces.pb", "python.traces.pb", "python.traces.pb.gz"];
    for (sent, name) in recordings.iter().enumerate() {
        let answer = send_recorded(&server, name);
        assert_eq!(answer.status, 200, "{name}: {}", answer.body_text());
        let empty: &[u8] = if name.ends_with(".json") { b"{}" } else { b"" };
        assert_eq!(answer.body, empty, "{name}: the empty ExportTraceServiceResponse, in the request's encoding");
        let sent = (sent + 1) as f64;
        assert_eq!(calls(&server, "matched", OPENAI), sent, "{name}");
        assert_eq!(calls(&server, "unreviewed", ""), sent, "{name}");
        assert_eq!(server.metric("packetproof_calls_held"), sent, "{name}");
    }
    assert_eq!(calls(&server, "not-judgeable", ""), 0.0);
    assert_eq!(server.metric("packetproof_spans_received_total{signal=\"traces\"}"), 12.0);
    // The Python exporter's logs export: the exact and the drifted call as inference-details
    // events, emitted outside a span: no ids to join by, judged at once.
    assert_eq!(send_recorded(&server, "python.logs.pb").status, 200);
    assert_eq!(calls(&server, "matched", OPENAI), 5.0);
    assert_eq!(calls(&server, "unreviewed", ""), 5.0);
    assert_eq!(server.metric("packetproof_spans_received_total{signal=\"logs\"}"), 2.0);
    assert_eq!(server.metric("packetproof_calls_held"), 4.0);
    let (code, stderr, text) = server.terminate();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("4 calls held for the rest of their records were judged"), "{stderr}");
    let findings: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(findings.len(), 2 * recordings.len() + 1, "{findings:?}");
    let schema = finding_schema();
    for finding in &findings {
        assert!(schema.is_valid(finding), "{finding:#}");
        // The recorded log records were emitted outside a span: they carry no ids.
        if finding["file"] == "/v1/logs" {
            continue;
        }
        assert_eq!(finding["traceId"].as_str().unwrap().len(), 32, "{finding:#}");
        assert_eq!(finding["spanId"].as_str().unwrap().len(), 16, "{finding:#}");
    }
    assert_eq!(findings[0]["verdict"], "unreviewed");
    for held in &findings[5..] {
        assert_eq!(held["verdict"], "not-judgeable", "{held:#}");
        let notes = held["notes"].as_array().unwrap();
        assert!(notes.iter().any(|n| n.as_str().unwrap().contains("as the receiver stopped")), "{held:#}");
    }
    // The schema refuses a matched call (never a finding) and a finding without its ids.
    let mut matched = findings[0].clone();
    matched["verdict"] = "matched".into();
    matched["packet"] = OPENAI.into();
    assert!(!schema.is_valid(&matched));
    let mut anonymous = findings[0].clone();
    anonymous.as_object_mut().unwrap().remove("traceId");
    assert!(!schema.is_valid(&anonymous));
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn serve_refuses_malformed_oversized_and_unsupported_bodies_and_lives_on() {
    let server = Server::start(&["--max-body", "100000"]);
    let json = [("Content-Type", "application/json")];
    let malformed = server.post("/v1/traces", &json, b"{\"resourceSpans\": [");
    assert_eq!(malformed.status, 400, "{}", malformed.body_text());
    let status: Value = serde_json::from_slice(&malformed.body).unwrap();
    assert_eq!(status["code"], 3, "{status}");
    assert!(status["message"].as_str().unwrap().starts_with("/v1/traces:1:"), "{status}");
    let not_otlp = server.post("/v1/logs", &json, b"{\"spans\": []}");
    assert_eq!(not_otlp.status, 400, "{}", not_otlp.body_text());
    // Ids as OTLP has them (16 and 8 bytes, hex in JSON), and UTF-8 JSON: else 400.
    let span = |trace: &str, span: &str| {
        format!(
            r#"{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{{"traceId": "{trace}", "spanId": "{span}", "name": "x"}}]}}]}}]}}"#
        )
    };
    for (trace, span_id) in
        [("0".repeat(31), "0".repeat(16)), ("z".repeat(32), "0".repeat(16)), ("0".repeat(32), "1".to_owned())]
    {
        let bad_id = server.post("/v1/traces", &json, span(&trace, &span_id).as_bytes());
        assert_eq!(bad_id.status, 400, "{trace} {span_id}: {}", bad_id.body_text());
        assert!(bad_id.body_text().contains("is no id"), "{}", bad_id.body_text());
    }
    let latin1 = span(&"0".repeat(32), &"0".repeat(16)).replace("\"x\"", "\"caf\u{e9}\"");
    let mut not_utf8 = latin1.into_bytes();
    let at = not_utf8.iter().position(|b| *b == 0xC3).unwrap();
    not_utf8.splice(at..at + 2, [0xE9]);
    let refused = server.post("/v1/traces", &json, &not_utf8);
    assert_eq!(refused.status, 400, "{}", refused.body_text());
    let protobuf = [("Content-Type", "application/x-protobuf")];
    // A span (field 2 of ScopeSpans, in field 2 of ResourceSpans, in field 1) whose trace id is 15 bytes.
    let short_id: Vec<u8> = {
        let span = [&[0x0A, 15][..], &[7; 15]].concat();
        let scope_spans = [&[0x12, span.len() as u8][..], &span].concat();
        let resource_spans = [&[0x12, scope_spans.len() as u8][..], &scope_spans].concat();
        [&[0x0A, resource_spans.len() as u8][..], &resource_spans].concat()
    };
    let short = server.post("/v1/traces", &protobuf, &short_id);
    assert_eq!(short.status, 400, "{}", short.body_text());

    // Declared too large: refused before a byte of it is read.
    let declared = server.post("/v1/traces", &[json[0], ("Content-Length", "100001")], b"");
    assert_eq!(declared.status, 413, "{}", declared.body_text());
    // Sent chunked past the bound: refused as it is read.
    let mut chunked = format!("{:x}\r\n", 150_000).into_bytes();
    chunked.extend(std::iter::repeat_n(b' ', 150_000));
    chunked.extend(b"\r\n0\r\n\r\n");
    let streamed = server.post("/v1/traces", &[json[0], ("Transfer-Encoding", "chunked")], &chunked);
    assert_eq!(streamed.status, 413, "{}", streamed.body_text());
    // A gzip bomb: under 100 KB that inflate to 96 MB stop at the bound, in status and in memory.
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    (0..96).for_each(|_| encoder.write_all(&[b' '; 1 << 20]).unwrap());
    let bomb = encoder.finish().unwrap();
    assert!(bomb.len() < 100_000, "{}", bomb.len());
    let before = server.peak_kib();
    let inflated = server.post("/v1/traces", &[json[0], ("Content-Encoding", "gzip")], &bomb);
    assert_eq!(inflated.status, 413, "{}", inflated.body_text());
    let grown = server.peak_kib() - before;
    assert!(grown < 32 << 10, "the bomb grew serve's peak memory by {grown} KiB");
    let broken_gzip = server.post("/v1/traces", &[json[0], ("Content-Encoding", "gzip")], b"not gzip");
    assert_eq!(broken_gzip.status, 400, "{}", broken_gzip.body_text());

    let text = server.post("/v1/traces", &[("Content-Type", "text/plain")], b"hello");
    assert_eq!(text.status, 415);
    let brotli = server.post("/v1/traces", &[json[0], ("Content-Encoding", "br")], b"{}");
    assert_eq!(brotli.status, 415);

    // It lives on: a good request, gzip-compressed, is judged.
    let (_, _, body) = recorded("node.traces.json");
    let good = server.post("/v1/traces", &[json[0], ("Content-Encoding", "gzip")], &gzip(&body));
    assert_eq!(good.status, 200, "{}", good.body_text());
    assert_eq!(calls(&server, "matched", OPENAI), 1.0);
    let errors = |kind: &str| server.metric(&format!("packetproof_request_errors_total{{kind=\"{kind}\"}}"));
    assert_eq!((errors("malformed"), errors("too_large"), errors("unsupported")), (8.0, 3.0, 2.0));
    assert_eq!(request(server.addr, "GET", "/healthz", &[], b"").status, 200);
}

/// A slow body holds the bytes it sent, never a place (round 6: eighteen of them locked
/// every exporter out): with one worker and a queue of one, two requests whose headers
/// are sent and whose bodies trickle leave an honest batch accepted at once. Bodies that
/// hold the whole reading budget (`--queue` plus `--workers`, times `--max-body`) are
/// what refuses a request, 429 with Retry-After, until they are answered.
fn serve_answers_429_with_retry_after_when_the_queue_is_full() {
    let (_, _, body) = recorded("node.traces.json");
    let max = body.len().to_string();
    let server = Server::start(&["--workers", "1", "--queue", "1", "--max-body", &max]);
    let json = [("Content-Type", "application/json")];
    let mut held: Vec<TcpStream> = (0..2).map(|_| start_request(server.addr, body.len())).collect();
    for stream in &mut held {
        stream.write_all(&body[..10]).unwrap();
    }
    server.wait_for("packetproof_body_bytes_held", 20.0);
    let honest = server.post("/v1/traces", &json, &body);
    assert_eq!(honest.status, 200, "a trickling body took an honest batch's place: {}", honest.body_text());
    // The trickling bodies near whole: two bodies' bytes of the two the budget holds.
    for stream in &mut held {
        stream.write_all(&body[10..body.len() - 1]).unwrap();
    }
    server.wait_for("packetproof_body_bytes_held", 2.0 * (body.len() - 1) as f64);
    let refused = server.post("/v1/traces", &json, &body);
    assert_eq!(refused.status, 429, "{}", refused.body_text());
    assert_eq!(refused.header("retry-after").as_deref(), Some("1"), "{}", refused.head);
    assert_eq!(server.metric("packetproof_request_errors_total{kind=\"queue_full\"}"), 1.0);
    // The held requests finish, and the budget is free again.
    for mut stream in held {
        stream.write_all(&body[body.len() - 1..]).unwrap();
        assert_eq!(read_answer(stream).status, 200);
    }
    server.wait_for("packetproof_body_bytes_held", 0.0);
    assert_eq!(server.post("/v1/traces", &json, &body).status, 200);
    // The same request four times is one call each, as an exporter's retry must be: the
    // calls judged whole once, the one held taken once.
    assert_eq!(calls(&server, "matched", OPENAI), 1.0);
    assert_eq!(server.metric("packetproof_call_parts_ignored_total{reason=\"judged\"}"), 6.0);
    assert_eq!(server.metric("packetproof_call_parts_ignored_total{reason=\"repeated\"}"), 3.0);
    assert_eq!(server.metric("packetproof_calls_held"), 1.0);
}

/// A request whose headers are sent and whose body is not (yet).
fn start_request(addr: SocketAddr, length: usize) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap();
    let head = format!(
        "POST /v1/traces HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream
}

fn serve_finishes_the_request_it_took_on_sigterm_and_exits_0() {
    let server = Server::start(&[]);
    let (_, _, body) = recorded("node.traces.json");
    let mut taken = start_request(server.addr, body.len());
    taken.write_all(&body[..10]).unwrap();
    server.wait_for("packetproof_body_bytes_held", 10.0);
    let addr = server.addr;
    // SIGTERM while the request is half sent; its body follows once serve is stopping.
    let stopper = std::thread::spawn(move || server.terminate());
    // The listener closes: a new connection is refused (polled, bounded).
    let closed = (0..20_000).any(|_| {
        std::thread::yield_now();
        TcpStream::connect(addr).is_err()
    });
    assert!(closed, "serve still accepts connections after SIGTERM");
    taken.write_all(&body[10..]).unwrap();
    let answer = read_answer(taken);
    assert_eq!(answer.status, 200, "{}", answer.body_text());
    let (code, stderr, lines) = stopper.join().unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("stopped after 1 requests judged (3 spans"), "{stderr}");
    assert_eq!(lines.lines().count(), 2, "every finding of the request taken is written: {lines}");
    assert!(lines.ends_with('\n'));
}

/// A supervisor may stop serve the moment it says it listens: the signal is already
/// handled then (it was not always: a SIGTERM at once killed it about one time in two).
fn serve_stops_cleanly_on_a_sigterm_sent_as_soon_as_it_listens() {
    for attempt in 0..20 {
        let (code, stderr, _) = Server::start(&[]).terminate();
        assert_eq!(code, 0, "attempt {attempt}: {stderr}");
        assert!(stderr.contains("stopped after 0 requests"), "attempt {attempt}: {stderr}");
    }
    // A closed terminal (SIGHUP) and Ctrl-C (SIGINT) drain alike.
    for signal in [rustix::process::Signal::HUP, rustix::process::Signal::INT] {
        let (code, stderr, _) = Server::start(&[]).stop_with(signal);
        assert_eq!(code, 0, "{signal:?}: {stderr}");
        assert!(stderr.contains("stopping: finishing the requests taken"), "{signal:?}: {stderr}");
    }
}

/// Under the npm package's shim (`PACKETPROOF_PARENT_PID`), serve stops when the shim
/// dies, even by SIGKILL: it drains as on SIGTERM and never outlives it holding its
/// port. A shell stands in for the shim: it starts serve, says its pid, and waits.
fn serve_stops_when_its_parent_dies_even_by_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    let script =
        "PACKETPROOF_PARENT_PID=$$ \"$0\" serve --listen 127.0.0.1:0 --packets \"$1\" 2>\"$2\" & echo $!; wait";
    let mut shell = Command::new("sh")
        .args(["-c", script, env!("CARGO_BIN_EXE_packetproof"), PACKETS])
        .arg(&log)
        .current_dir(crate::support::root())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(shell.stdout.take().unwrap()), &mut line).unwrap();
    let serve: i32 = line.trim().parse().unwrap();
    // Whatever happens below, neither is left running.
    struct Reaped(Child, i32);
    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
            if let Some(pid) = rustix::process::Pid::from_raw(self.1) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
    let mut reaped = Reaped(shell, serve);
    let logged = || std::fs::read_to_string(&log).unwrap_or_default();
    let within = |seconds: u64, done: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
        while std::time::Instant::now() < deadline {
            if done() {
                return true;
            }
            std::thread::yield_now();
        }
        done()
    };
    assert!(within(20, &|| logged().contains("listening on")), "serve never listened: {}", logged());
    reaped.0.kill().unwrap();
    reaped.0.wait().unwrap();
    // Gone, or a zombie left for whoever reaps it: either way no longer serving.
    let state = || std::fs::read_to_string(format!("/proc/{serve}/status")).unwrap_or_default();
    let stopped = within(20, &|| {
        let state = state();
        state.is_empty() || state.contains("State:\tZ")
    });
    assert!(stopped, "serve outlived its parent: {}", state());
    assert!(logged().contains("stopping: finishing the requests taken"), "{}", logged());
}

fn serve_refuses_to_start_without_packets_or_its_address() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let busy = exec(bin().args(["serve", "--listen", &addr, "--packets", PACKETS]));
    assert_eq!(busy.code, 2, "{}", busy.describe());
    assert!(busy.stderr.contains(&format!("packetproof: {addr}: ")), "{}", busy.describe());
    assert!(!busy.stderr.contains("listening"), "{}", busy.describe());

    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere");
    let no_packets = exec(bin().args(["serve", "--listen", "127.0.0.1:0", "--packets"]).arg(&missing));
    assert_eq!(no_packets.code, 2, "{}", no_packets.describe());
    assert!(no_packets.stderr.contains("nowhere"), "{}", no_packets.describe());
    let empty = exec(bin().args(["serve", "--listen", "127.0.0.1:0", "--packets"]).arg(dir.path()));
    assert_eq!(empty.code, 2, "{}", empty.describe());
    let findings = dir.path().join("no/such/dir/findings.jsonl");
    let unwritable =
        exec(bin().args(["serve", "--listen", "127.0.0.1:0", "--packets", PACKETS, "--findings"]).arg(&findings));
    assert_eq!(unwritable.code, 2, "{}", unwritable.describe());
}

/// The Python exporter's packages (`python3 -m pip install opentelemetry-sdk
/// opentelemetry-exporter-otlp-proto-http`) and Node's (NODE_PATH naming a
/// node_modules with @opentelemetry/sdk-trace and the two trace exporters), or why not.
fn live_missing() -> Option<String> {
    let python = Command::new("python3")
        .args(["-c", "import opentelemetry.sdk, opentelemetry.exporter.otlp.proto.http"])
        .output()
        .is_ok_and(|o| o.status.success());
    let node = Command::new("node")
        .args([
            "-e",
            "require.resolve('@opentelemetry/exporter-trace-otlp-proto'); require.resolve('@opentelemetry/sdk-trace')",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    match (python, node) {
        (true, true) => None,
        _ => Some(
            "needs python3 with opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http, and node with \
             @opentelemetry/sdk-trace and the OTLP trace exporters on NODE_PATH (scripts/record/record_otlp.sh \
             installs both)"
                .into(),
        ),
    }
}

fn run_client(program: &str, script: &str, addr: SocketAddr) {
    let script: &Path = &root().join("scripts/record").join(script);
    let out = exec(Command::new(program).arg(script).arg(addr.port().to_string()).arg(root().join(OPENAI)));
    assert_eq!(out.code, 0, "{program}: {}", out.describe());
}

fn serve_takes_the_python_and_node_exporters_live() {
    let server = Server::start(&[]);
    run_client("python3", "otlp_clients.py", server.addr);
    // Python: protobuf and gzip-compressed protobuf traces (3 calls each), a logs export (2).
    assert_eq!(calls(&server, "matched", OPENAI), 3.0);
    assert_eq!(calls(&server, "unreviewed", ""), 3.0);
    run_client("node", "otlp_clients.cjs", server.addr);
    // Node: JSON and protobuf (3 calls each).
    assert_eq!(calls(&server, "matched", OPENAI), 5.0);
    assert_eq!(calls(&server, "unreviewed", ""), 5.0);
    assert_eq!(server.metric("packetproof_request_errors_total{kind=\"malformed\"}"), 0.0);
}

/// A full disk (findings on stdout, which is /dev/full): the finding is not written, so
/// the request is not taken (503 with Retry-After: the exporter sends it again), and
/// serve lives on.
fn serve_answers_503_when_a_finding_cannot_be_written() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    let server = Server::start_to_stdout(Stdio::from(full));
    let answer = send_recorded(&server, "node.traces.json");
    assert_eq!(answer.status, 503, "{}", answer.body_text());
    assert_eq!(answer.header("retry-after").as_deref(), Some("1"), "{}", answer.head);
    assert!(answer.body_text().contains("a finding could not be written"), "{}", answer.body_text());
    assert_eq!(server.metric("packetproof_request_errors_total{kind=\"findings_write\"}"), 1.0);
    assert_eq!(request(server.addr, "GET", "/healthz", &[], b"").status, 200);
}

/// With `--gate`, a call matching a reviewed packet counts only when the gate statement
/// vouched for that packet: here a suite's signed gate that never saw the recorded
/// OpenAI packet, so its exact call is unvouched (and a finding), never matched.
fn serve_holds_every_call_to_the_gate_it_is_given() {
    let project = crate::support::Project::suite(&["anthropic-staged-pred-selected"]);
    let settings = project.path("harness.toml");
    let text = std::fs::read_to_string(&settings).unwrap() + "\n[corpus]\nrequire_branch_coverage = false\n";
    std::fs::write(&settings, text).unwrap();
    let project = project.blessed();
    let key = project.path("owner-only.pem");
    std::fs::copy(root().join("tests/keys/test-ed25519.pem"), &key).unwrap();
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let gate = project.path("gate.json");
    let signed = project.run(&["test", "--attest", key.to_str().unwrap(), "--attestation", gate.to_str().unwrap()]);
    assert_eq!(signed.code, 0, "{}", signed.describe());
    let public = root().join("tests/keys/test-ed25519.pub.pem");
    let (gate, public, settings) = (gate.to_str().unwrap(), public.to_str().unwrap(), settings.to_str().unwrap());
    let server = Server::start(&["--gate", gate, "--trusted-key", public, "--config", settings]);
    assert_eq!(send_recorded(&server, "node.traces.json").status, 200);
    assert_eq!(calls(&server, "unvouched", OPENAI), 1.0);
    assert_eq!(calls(&server, "matched", OPENAI), 0.0);
    let findings = server.findings();
    let unvouched = findings.iter().find(|f| f["verdict"] == "unvouched").expect("an unvouched finding");
    // The suite's own statement, read with its settings: unvouched because it never saw the packet.
    let reason = unvouched["reason"].as_str().unwrap();
    assert!(reason.starts_with("not a subject of the gate statement"), "{reason}");
    let schema = finding_schema();
    for finding in &findings {
        let errors: Vec<String> = schema.iter_errors(finding).map(|e| format!("{e} at {}", e.instance_path)).collect();
        assert!(errors.is_empty(), "{finding}: {errors:?}");
    }
    // A call joined from two requests is held to the gate as `trace --gate` holds it.
    server.post_json("/v1/traces", &[&recording_lines(AS_EVENTS)[0]]);
    server.post_json("/v1/logs", &[&recording_lines(AS_EVENTS_LOGS)[0]]);
    assert_eq!(calls(&server, "unvouched", OPENAI), 2.0);
    assert_eq!(calls(&server, "matched", OPENAI), 0.0);
    let dir = tempfile::tempdir().unwrap();
    let (spans, events) = (dir.path().join("spans.jsonl"), dir.path().join("logs.jsonl"));
    std::fs::write(&spans, format!("{}\n", recording_lines(AS_EVENTS)[0])).unwrap();
    std::fs::write(&events, format!("{}\n", recording_lines(AS_EVENTS_LOGS)[0])).unwrap();
    let traced =
        exec(bin().arg("trace").args([&spans, &events]).args(["--format", "json", "--packets", PACKETS]).args([
            "--gate",
            gate,
            "--trusted-key",
            public,
            "--config",
            settings,
        ]));
    let traced: Value = serde_json::from_str(&traced.stdout).unwrap_or_else(|_| panic!("{}", traced.describe()));
    let joined = server.findings().pop().unwrap();
    assert_eq!(joined["verdict"], "unvouched", "{joined:#}");
    assert_eq!(without_place(&joined), without_place(&traced["calls"][0]));
    assert!(schema.is_valid(&joined), "{joined:#}");
}

/// A restarted serve appends to the findings it wrote before, on a line of its own even
/// after a line cut short by a kill; a file that is not findings is refused, untouched.
fn serve_appends_to_its_own_findings_and_to_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("findings.jsonl");
    let first = Server::start_with(file.clone(), tempfile::tempdir().unwrap(), &[]);
    assert_eq!(send_recorded(&first, "node.traces.json").status, 200);
    let (code, stderr, before) = first.terminate();
    assert_eq!((code, before.lines().count()), (0, 2), "{stderr}\n{before}");
    let cut = format!("{before}{{\"formatVersion\":1,\"fi");
    std::fs::write(&file, &cut).unwrap();
    let second = Server::start_with(file.clone(), tempfile::tempdir().unwrap(), &[]);
    assert_eq!(send_recorded(&second, "node.traces.json").status, 200);
    let (code, stderr, after) = second.terminate();
    assert_eq!(code, 0, "{stderr}");
    let added =
        after.strip_prefix(&format!("{cut}\n")).unwrap_or_else(|| panic!("not appended after a newline: {after}"));
    assert_eq!(added, before, "the second run's findings are the first's");

    let packet = dir.path().join("packet.json");
    std::fs::copy(root().join(PACKETS).join("openai.json"), &packet).unwrap();
    let bytes = std::fs::read(&packet).unwrap();
    let refused =
        exec(bin().args(["serve", "--listen", "127.0.0.1:0", "--packets", PACKETS, "--findings"]).arg(&packet));
    assert_eq!(refused.code, 2, "{}", refused.describe());
    assert!(refused.stderr.contains("is not a findings file"), "{}", refused.describe());
    assert_eq!(std::fs::read(&packet).unwrap(), bytes, "a refused file is left as it was");
}

/// The recording of openai-v2 with content captured as events: its spans (model, no
/// messages) and its log records (the inference-details events with the messages), one
/// export request per line, as the SDK sent them to two endpoints.
const AS_EVENTS: &str = "tests/recordings/traces/openai-v2.content-as-events.jsonl";
const AS_EVENTS_LOGS: &str = "tests/recordings/traces/openai-v2.content-as-events.logs.jsonl";

fn recording_lines(path: &str) -> Vec<String> {
    std::fs::read_to_string(root().join(path)).unwrap().lines().map(str::to_owned).collect()
}

/// `trace` on the two files: each call's members as a finding has them (the file and line
/// name the file read, and serve's the request path, so they are left out).
fn traced_as_events() -> Vec<Value> {
    let out = exec(bin().args(["trace", AS_EVENTS, AS_EVENTS_LOGS, "--packets", PACKETS, "--format", "json"]));
    assert_eq!(out.code, 1, "{}", out.describe());
    let document: Value = serde_json::from_str(&out.stdout).unwrap();
    document["calls"].as_array().unwrap().iter().map(without_place).collect()
}

fn without_place(call: &Value) -> Value {
    let mut call = call.clone();
    for key in ["file", "line", "formatVersion"] {
        call.as_object_mut().unwrap().remove(key);
    }
    call
}

fn by_verdict(calls: &[Value]) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    for call in calls {
        *out.entry(call["verdict"].as_str().unwrap().to_owned()).or_insert(0.0) += 1.0;
    }
    out
}

/// The spans sent to /v1/traces and their events to /v1/logs, in separate requests and in
/// either order, are the calls `trace` judges reading both files: each judged once, with
/// the same verdict, its finding the same; with `--join-window 0` each request is judged
/// alone, as before the window (each span not judgeable, each event on its own).
fn serve_joins_a_span_and_its_events_sent_in_separate_requests_as_trace_joins_them() {
    let traced = traced_as_events();
    assert_eq!(traced.len(), 5, "{traced:#?}");
    let expected_findings: Vec<&Value> = traced.iter().filter(|c| c["verdict"] != "matched").collect();
    assert_eq!(expected_findings.len(), 2, "{traced:#?}");
    let spans = recording_lines(AS_EVENTS);
    let events = recording_lines(AS_EVENTS_LOGS);
    let spans: Vec<&str> = spans.iter().map(String::as_str).collect();
    let events: Vec<&str> = events.iter().map(String::as_str).collect();
    for (first, then) in
        [(("/v1/traces", &spans), ("/v1/logs", &events)), (("/v1/logs", &events), ("/v1/traces", &spans))]
    {
        let server = Server::start(&[]);
        server.post_json(first.0, first.1);
        assert_eq!(server.metric("packetproof_calls_held"), 5.0, "{} first", first.0);
        assert!(server.verdicts().is_empty(), "nothing is judged before its other part: {:?}", server.verdicts());
        server.post_json(then.0, then.1);
        // Judged in the request that made each call whole: counted and written before its answer.
        assert_eq!(server.metric("packetproof_calls_held"), 0.0);
        assert_eq!(server.verdicts(), by_verdict(&traced), "{} first", first.0);
        let findings: Vec<Value> = server.findings().iter().map(without_place).collect();
        let expected: Vec<Value> = expected_findings.iter().map(|c| (*c).clone()).collect();
        assert_eq!(findings, expected, "{} first", first.0);
        let schema = finding_schema();
        assert!(server.findings().iter().all(|f| schema.is_valid(f)));
        assert_eq!(server.metric("packetproof_calls_expired_total{reason=\"window\"}"), 0.0);
    }

    let apart = Server::start(&["--join-window", "0"]);
    apart.post_json("/v1/traces", &spans);
    assert_eq!(apart.metric("packetproof_calls_held"), 0.0);
    assert_eq!(apart.verdicts().get("not-judgeable"), Some(&5.0));
    apart.post_json("/v1/logs", &events);
    let mut expected = by_verdict(&traced);
    expected.insert("not-judgeable".into(), 5.0);
    assert_eq!(apart.verdicts(), expected);
    assert_eq!(apart.findings().len(), 7);
}

/// A span whose events never come is judged when its window ends, as `trace` judges the
/// span alone, with a note saying what did not arrive; its finding is written then.
fn serve_judges_a_held_call_with_what_it_has_when_its_window_ends() {
    let server = Server::start(&["--join-window", "1"]);
    let spans = recording_lines(AS_EVENTS);
    server.post_json("/v1/traces", &[&spans[0]]);
    assert_eq!(server.metric("packetproof_calls_held"), 1.0);
    // Counted once its finding is written.
    server.wait_metric("packetproof_calls_expired_total{reason=\"window\"}", 1.0);
    assert_eq!(server.metric("packetproof_calls_held"), 0.0);
    assert_eq!(server.verdicts().get("not-judgeable"), Some(&1.0));
    let findings = server.findings();
    assert_eq!(findings.len(), 1, "{findings:?}");
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.jsonl");
    std::fs::write(&first, format!("{}\n", spans[0])).unwrap();
    let alone = exec(bin().arg("trace").arg(&first).args(["--format", "json", "--packets", PACKETS]));
    assert_eq!(alone.code, 1, "{}", alone.describe());
    let alone: Value = serde_json::from_str(&alone.stdout).unwrap();
    assert_eq!(findings[0]["verdict"], alone["calls"][0]["verdict"]);
    assert_eq!(findings[0]["reason"], alone["calls"][0]["reason"]);
    let notes = findings[0]["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("join window (1 s) ended")), "{notes:?}");
    assert!(finding_schema().is_valid(&findings[0]), "{:#}", findings[0]);
    // Its events arriving after the window are judged on their own when theirs ends.
    server.post_json("/v1/logs", &[&recording_lines(AS_EVENTS_LOGS)[0]]);
    server.wait_metric("packetproof_calls_expired_total{reason=\"window\"}", 2.0);
    assert_eq!(server.verdicts().get("matched"), Some(&1.0));
}

/// SIGTERM while calls are held: they are judged with what arrived, their findings
/// written, exit 0.
fn serve_judges_the_calls_held_when_it_stops() {
    let server = Server::start(&[]);
    let spans = recording_lines(AS_EVENTS);
    let spans: Vec<&str> = spans.iter().map(String::as_str).collect();
    server.post_json("/v1/traces", &spans);
    assert_eq!(server.metric("packetproof_calls_held"), 5.0);
    assert!(server.findings().is_empty());
    let (code, stderr, findings) = server.terminate();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("5 calls held for the rest of their records were judged with what arrived"), "{stderr}");
    let findings: Vec<Value> = findings.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(findings.len(), 5, "{findings:?}");
    for finding in &findings {
        assert_eq!(finding["verdict"], "not-judgeable", "{finding:#}");
        assert!(finding["notes"].to_string().contains("as the receiver stopped"), "{finding:#}");
    }
}

/// With room for one held call, a second one makes the first be judged with what it has;
/// the second is still joined when its events come.
fn serve_judges_the_oldest_held_call_to_make_room() {
    let server = Server::start(&["--join-capacity", "1"]);
    let spans = recording_lines(AS_EVENTS);
    server.post_json("/v1/traces", &[&spans[0]]);
    assert!(server.findings().is_empty());
    server.post_json("/v1/traces", &[&spans[1]]);
    assert_eq!(server.metric("packetproof_calls_held"), 1.0);
    assert_eq!(server.metric("packetproof_calls_expired_total{reason=\"capacity\"}"), 1.0);
    let findings = server.findings();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(
        (&findings[0]["spanId"], &findings[0]["verdict"]),
        (&json_str("58a5dbbbbdf78971"), &json_str("not-judgeable"))
    );
    assert!(findings[0]["notes"].to_string().contains("to make room (at most 1 calls are held)"), "{:#}", findings[0]);
    server.post_json("/v1/logs", &[&recording_lines(AS_EVENTS_LOGS)[1]]);
    assert_eq!(server.metric("packetproof_calls_held"), 0.0);
    let traced = traced_as_events();
    let second = traced.iter().find(|c| c["spanId"] == "743bd3c09185389a").unwrap();
    assert_eq!(without_place(&server.findings()[1]), *second);
}

fn json_str(text: &str) -> Value {
    Value::String(text.to_owned())
}
