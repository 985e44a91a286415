//! serve's bounds. Its defaults take an SDK exporter's default batch, and each refusal
//! is said on stderr. Its connections: one that holds its place without a request (nothing sent, an
//! HTTP/2 preface and pings, a header line now and then, an idle keep-alive) is closed
//! after `--header-timeout` or `--idle-timeout` (given in milliseconds here), and when
//! every place is taken a new connection sheds the idlest, so `/healthz`, `/metrics` and
//! exporters are answered while idle connections fill the places.

use super::{read_answer, recorded, Server};
use libtest_mimic::Trial;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

pub fn trials() -> Vec<Trial> {
    crate::trials![
        serve_answers_health_metrics_and_exporters_while_idle_connections_fill_every_place,
        serve_closes_connections_that_send_no_request_in_time,
        serve_closes_a_keep_alive_connection_idle_past_its_timeout,
        serve_takes_an_sdk_default_batch_and_says_each_refusal_on_stderr,
        serve_keeps_findings_whole_lines_through_a_full_disk,
        a_body_that_trickles_is_refused_by_its_pace_while_another_is_judged
    ]
}

/// What a client waits for an answer at most; serve answers in milliseconds.
const PATIENCE: Duration = Duration::from_secs(20);

/// The HTTP/2 connection preface, an empty SETTINGS frame, then nothing.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";
/// An HTTP/2 PING frame.
const H2_PING: &[u8] = b"\0\0\x08\x06\0\0\0\0\0pingping";

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    stream
}

/// Whether serve closes `stream` within PATIENCE, reading (and dropping) what it answers.
fn closed_by_serve(stream: &mut TcpStream) -> bool {
    let started = Instant::now();
    let mut buffer = [0; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) if started.elapsed() < PATIENCE => continue,
            Ok(_) => return false,
            Err(e) => return matches!(e.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe),
        }
    }
}

/// `GET path` on a connection of its own, the answer read within PATIENCE.
fn get(addr: SocketAddr, path: &str) -> super::Answer {
    let mut stream = connect(addr);
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    read_answer(stream)
}

fn serve_answers_health_metrics_and_exporters_while_idle_connections_fill_every_place() {
    // Timeouts far longer than the test: only shedding can free a place.
    let server = Server::start(&["--max-connections", "4", "--header-timeout", "600", "--idle-timeout", "600"]);
    let addr = server.addr;
    let mut silent = vec![connect(addr), connect(addr)];
    let mut preface = connect(addr);
    preface.write_all(H2_PREFACE).unwrap();
    let mut trickle = connect(addr);
    trickle.write_all(b"POST /v1/traces HTTP/1.1\r\n").unwrap();
    silent.extend([preface, trickle]);
    for round in 0..3 {
        assert_eq!(get(addr, "/healthz").status, 200, "round {round}");
        assert!(get(addr, "/metrics").body_text().contains("packetproof_calls_held"), "round {round}");
        let (path, headers, body) = recorded("node.traces.json");
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(server.post(&path, &headers, &body).status, 200, "round {round}");
    }
    assert!(server.metric("packetproof_connections_closed_total{reason=\"shed\"}") >= 1.0);
    assert!(closed_by_serve(&mut silent[0]), "the idlest connection made room first");
}

fn serve_closes_connections_that_send_no_request_in_time() {
    let server = Server::start(&["--header-timeout", "200ms", "--idle-timeout", "300ms"]);
    let addr = server.addr;
    let started = Instant::now();
    let mut silent = connect(addr);
    assert!(closed_by_serve(&mut silent), "a connection that sends nothing");
    // A header line every 50 ms, for longer than the timeout allows.
    let mut trickle = connect(addr);
    trickle.write_all(b"POST /v1/traces HTTP/1.1\r\n").unwrap();
    let trickled = (0..100).all(|i| {
        std::thread::sleep(Duration::from_millis(50));
        trickle.write_all(format!("X-Line-{i}: 1\r\n").as_bytes()).is_ok()
    });
    assert!(!trickled || closed_by_serve(&mut trickle), "a request whose headers trickle");
    // An HTTP/2 preface, then a ping every 50 ms and never a request.
    let mut pinging = connect(addr);
    pinging.write_all(H2_PREFACE).unwrap();
    let pinged = (0..100).all(|_| {
        std::thread::sleep(Duration::from_millis(50));
        pinging.write_all(H2_PING).is_ok()
    });
    assert!(!pinged || closed_by_serve(&mut pinging), "an HTTP/2 connection that only pings");
    assert!(started.elapsed() < Duration::from_secs(15), "closed after the timeouts, not long after");
    assert!(server.metric("packetproof_connections_closed_total{reason=\"header_timeout\"}") >= 2.0);
}

fn serve_closes_a_keep_alive_connection_idle_past_its_timeout() {
    let server = Server::start(&["--idle-timeout", "100ms"]);
    let mut stream = connect(server.addr);
    for _ in 0..2 {
        write!(stream, "GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr).unwrap();
        let mut answer = [0; 1024];
        let read = stream.read(&mut answer).unwrap();
        assert!(answer[..read].starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&answer[..read]));
    }
    assert!(closed_by_serve(&mut stream), "a keep-alive connection idle past --idle-timeout");
    let metrics = get(server.addr, "/metrics").body_text();
    assert!(metrics.contains("packetproof_connections_closed_total{reason=\"idle_timeout\"} 1"), "{metrics}");
}

/// An OTLP/JSON export of `spans` chat spans, each with a prompt of `prompt` bytes.
fn batch(spans: usize, prompt: usize) -> Vec<u8> {
    let text = "x".repeat(prompt);
    let spans: Vec<serde_json::Value> = (0..spans)
        .map(|i| {
            let messages = serde_json::json!([{"role": "user", "parts": [{"type": "text", "content": text}]}]);
            let attribute = |key: &str, value: &str| serde_json::json!({"key": key, "value": {"stringValue": value}});
            serde_json::json!({"traceId": format!("{i:032x}"), "spanId": format!("{i:016x}"), "name": "chat gpt-5",
                "attributes": [attribute("gen_ai.operation.name", "chat"), attribute("gen_ai.request.model", "gpt-5"),
                               attribute("gen_ai.input.messages", &messages.to_string())]})
        })
        .collect();
    let export = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.openai_v2"}, "spans": spans}]}]});
    export.to_string().into_bytes()
}

/// The Python SDK's BatchSpanProcessor sends up to 512 spans a request; with prompts of
/// about 9 KB that is past 4 MiB (the old default, which lost such batches to 413).
fn serve_takes_an_sdk_default_batch_and_says_each_refusal_on_stderr() {
    let body = batch(512, 9 << 10);
    assert!(body.len() > 4 << 20, "{}", body.len());
    let server = Server::start(&[]);
    let json = ("Content-Type", "application/json");
    let taken = server.post("/v1/traces", &[json], &body);
    assert_eq!(taken.status, 200, "{}", taken.body_text());
    let zipped = server.post("/v1/traces", &[json, ("Content-Encoding", "gzip")], &super::gzip(&body));
    assert_eq!(zipped.status, 200, "{}", zipped.body_text());
    // The same calls sent again (gzipped) are the same calls: judged once.
    assert_eq!(server.findings().len(), 512, "every call of the batch is judged, once");

    let small = Server::start(&["--max-body", "1000"]);
    for _ in 0..3 {
        assert_eq!(small.post("/v1/traces", &[json], &batch(1, 2000)).status, 413);
    }
    let said = small.stderr.recv_timeout(PATIENCE).expect("a refusal said on stderr");
    assert!(said.starts_with("packetproof serve: refused a request: 413 Payload Too Large (too_large): "), "{said}");
    assert!(said.contains("--max-body"), "{said}");
    assert_eq!(small.metric("packetproof_request_errors_total{kind=\"too_large\"}"), 3.0);
    let (_, rest, _) = small.terminate();
    assert!(!rest.contains("refused a request"), "one line per kind per period: {rest}");
}

/// A file size limit (RLIMIT_FSIZE, its signal ignored) is a full disk to serve: a write
/// past it is cut short, then fails. The request whose finding could not be written is
/// refused (503); the file keeps whole lines, and once there is room again the next
/// finding is a line of its own.
fn serve_keeps_findings_whole_lines_through_a_full_disk() {
    const ROOM: u64 = 3000;
    let dir = tempfile::tempdir().unwrap();
    let findings = dir.path().join("findings.jsonl");
    let mut command = crate::support::bin();
    // SAFETY: only async-signal-safe calls (signal, setrlimit) between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit { rlim_cur: ROOM, rlim_max: libc::RLIM_INFINITY };
            match libc::setrlimit(libc::RLIMIT_FSIZE, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let args = [std::ffi::OsString::from("--findings"), findings.clone().into(), "--join-window".into(), "0".into()];
    let server = Server::spawn_command(command, &args, std::process::Stdio::null(), findings.clone(), dir);
    let json = ("Content-Type", "application/json");
    let mut statuses = Vec::new();
    for i in 0..40 {
        let mut body = batch(1, 100);
        // Each request a call of its own.
        let text = String::from_utf8(body).unwrap().replace(&format!("{:016x}", 0), &format!("{i:016x}"));
        body = text.into_bytes();
        let status = server.post("/v1/traces", &[json], &body).status;
        statuses.push(status);
        if status == 503 {
            break;
        }
    }
    assert_eq!(statuses.last(), Some(&503), "the disk never filled: {statuses:?}");
    let whole_lines = |text: &str| text.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok());
    let text = std::fs::read_to_string(&findings).unwrap();
    assert!(text.ends_with('\n') && whole_lines(&text), "a cut line is left: {text:?}");
    assert_eq!(text.lines().count(), statuses.len() - 1, "one line per request answered 200");
    // Room again: the next finding is a line of its own.
    let pid = rustix::process::Pid::from_child(server.child.as_ref().unwrap());
    let unlimited = rustix::process::Rlimit { current: None, maximum: None };
    rustix::process::prlimit(Some(pid), rustix::process::Resource::Fsize, unlimited).unwrap();
    let mut body = String::from_utf8(batch(1, 100)).unwrap();
    body = body.replace(&format!("{:016x}", 0), &format!("{:016x}", 999));
    assert_eq!(server.post("/v1/traces", &[json], body.as_bytes()).status, 200);
    let text = std::fs::read_to_string(&findings).unwrap();
    assert!(whole_lines(&text), "{text:?}");
    assert_eq!(text.lines().count(), statuses.len());
}

/// A body is read at a pace (`--body-timeout`, `--body-min-rate`): one that sends a few
/// bytes and stalls is refused with 408 once its first 5 seconds have earned it nothing
/// more, one past the timeout likewise, and an exporter's batch sent meanwhile is judged.
fn a_body_that_trickles_is_refused_by_its_pace_while_another_is_judged() {
    let server = Server::start(&["--body-min-rate", "100000"]);
    let addr = server.addr;
    let started = Instant::now();
    let mut slow = connect(addr);
    write!(
        slow,
        "POST /v1/traces HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
                  Content-Length: 100000\r\n\r\n{{\"resourceSpans\": ["
    )
    .unwrap();
    let (path, headers, body) = recorded("node.traces.json");
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(server.post(&path, &headers, &body).status, 200, "an honest batch beside the slow body");
    let answer = read_answer(slow);
    assert_eq!(answer.status, 408, "{}", answer.head);
    assert!(
        answer.body_text().contains("slower than --body-min-rate (100000 bytes a second)"),
        "{}",
        answer.body_text()
    );
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(5) && waited < PATIENCE, "refused after {waited:?}");
    assert_eq!(server.metric("packetproof_request_errors_total{kind=\"read_slow\"}"), 1.0);

    let server = Server::start(&["--body-timeout", "1s"]);
    let mut stalled = connect(server.addr);
    write!(
        stalled,
        "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{{"
    )
    .unwrap();
    let answer = read_answer(stalled);
    assert_eq!(answer.status, 408, "{}", answer.head);
    assert!(answer.body_text().contains("did not arrive within --body-timeout (1 s)"), "{}", answer.body_text());
}
