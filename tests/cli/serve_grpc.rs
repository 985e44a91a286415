//! `serve` over OTLP/gRPC: the exporters' recorded protobuf requests sent as unary gRPC
//! calls over HTTP/2 (h2c) to the port that takes OTLP/HTTP, answered as gRPC answers
//! (`grpc-status` in the trailers, or alone for a refusal) and judged as the same bytes
//! are judged over HTTP.

use super::{calls, recorded, Server, OPENAI};
use libtest_mimic::Trial;
use std::net::SocketAddr;
use std::process::Command;

pub fn trials() -> Vec<Trial> {
    let mut trials = crate::trials![
        serve_takes_otlp_grpc_calls_on_the_same_port,
        serve_answers_a_bad_grpc_call_with_its_status,
        serve_bounds_what_one_http2_connection_may_hold_open,
        half_sent_grpc_calls_take_no_place_from_another_exporter,
        one_connection_holds_at_most_half_the_reading_budget
    ];
    let exporter = "import opentelemetry.sdk, opentelemetry.exporter.otlp.proto.grpc";
    let present = Command::new("python3").args(["-c", exporter]).output().is_ok_and(|o| o.status.success());
    let name = crate::support::test_name(module_path!(), "serve_takes_the_python_grpc_exporter_live");
    let missing = (!present)
        .then(|| "needs python3 with opentelemetry-sdk and opentelemetry-exporter-otlp-proto-grpc".to_owned());
    let live = crate::support::trial(name, serve_takes_the_python_grpc_exporter_live);
    trials.push(crate::support::needs("opentelemetry-grpc-exporter", missing, live));
    trials
}

pub(super) const TRACES: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
pub(super) const LOGS: &str = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";

/// What a gRPC call was answered.
pub(super) struct Answered {
    status: u16,
    headers: http::HeaderMap,
    data: Vec<u8>,
    trailers: Option<http::HeaderMap>,
}

impl Answered {
    /// `grpc-status`: in the trailers, or in the headers of a trailers-only answer.
    pub(super) fn grpc_status(&self) -> Option<String> {
        let from = |map: &http::HeaderMap| map.get("grpc-status").map(|v| v.to_str().unwrap().to_owned());
        self.trailers.as_ref().and_then(from).or_else(|| from(&self.headers))
    }
}

/// `message` framed as one gRPC message: the compressed flag, the length, the bytes.
pub(super) fn framed(compressed: bool, message: &[u8]) -> Vec<u8> {
    let mut out = vec![u8::from(compressed)];
    out.extend((message.len() as u32).to_be_bytes());
    out.extend(message);
    out
}

/// One unary call over HTTP/2 without TLS, as gRPC clients make it.
pub(super) fn call(addr: SocketAddr, path: &str, extra: &[(&str, &str)], body: Vec<u8>) -> Answered {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (client, connection) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(connection);
        let mut client = client.ready().await.unwrap();
        let mut request = http::Request::post(format!("http://{addr}{path}")).header("te", "trailers");
        if !extra.iter().any(|(k, _)| *k == "content-type") {
            request = request.header("content-type", "application/grpc");
        }
        for (name, value) in extra {
            request = request.header(*name, *value);
        }
        let (response, mut stream) = client.send_request(request.body(()).unwrap(), false).unwrap();
        stream.send_data(bytes::Bytes::from(body), true).unwrap();
        let (head, mut body) = response.await.unwrap().into_parts();
        let mut data = Vec::new();
        while let Some(chunk) = body.data().await {
            let chunk = chunk.unwrap();
            body.flow_control().release_capacity(chunk.len()).unwrap();
            data.extend_from_slice(&chunk);
        }
        let trailers = body.trailers().await.unwrap();
        Answered { status: head.status.as_u16(), headers: head.headers, data, trailers }
    })
}

/// The Python and Node exporters' protobuf requests, plain and gzipped, traces and logs:
/// answered `grpc-status: 0` with the empty export response, and judged as over HTTP.
fn serve_takes_otlp_grpc_calls_on_the_same_port() {
    let server = Server::start(&["--join-window", "0"]);
    let traces = recorded("python.traces.pb").2;
    let answered = call(server.addr, TRACES, &[], framed(false, &traces));
    assert_eq!((answered.status, answered.grpc_status().as_deref()), (200, Some("0")));
    assert_eq!(answered.data, [0; 5], "the empty ExportTraceServiceResponse, framed");
    assert!(answered.trailers.is_some(), "the status is a trailer after the message");
    assert_eq!(calls(&server, "matched", OPENAI), 1.0);
    assert_eq!(calls(&server, "unreviewed", ""), 1.0);
    assert_eq!(calls(&server, "not-judgeable", ""), 1.0);

    let gzipped = flate2_gzip(&recorded("node.traces.pb").2);
    let answered = call(server.addr, TRACES, &[("grpc-encoding", "gzip")], framed(true, &gzipped));
    assert_eq!(answered.grpc_status().as_deref(), Some("0"));
    assert_eq!(calls(&server, "matched", OPENAI), 2.0);

    let logs = recorded("python.logs.pb").2;
    assert_eq!(call(server.addr, LOGS, &[], framed(false, &logs)).grpc_status().as_deref(), Some("0"));
    assert_eq!(calls(&server, "matched", OPENAI), 3.0);
    assert_eq!(server.metric("packetproof_requests_total{signal=\"logs\"}"), 1.0);
    // And OTLP/HTTP on the same port, as before.
    assert_eq!(super::send_recorded(&server, "node.traces.json").status, 200);
    assert_eq!(calls(&server, "matched", OPENAI), 4.0);
}

/// A call that is not one export request, a compressed message without gzip, an
/// encoding not offered: a gRPC status each (not retried), serve lives on; a request
/// that is no gRPC call gets the HTTP answer.
fn serve_answers_a_bad_grpc_call_with_its_status() {
    let server = Server::start(&["--join-window", "0"]);
    for (headers, body, status, says) in [
        (&[][..], framed(false, b"\xff\xff"), "3", "not an OTLP protobuf ExportTraceServiceRequest"),
        (&[][..], vec![0, 0, 0, 0, 9, 1], "3", "declares a message of 9 bytes"),
        (&[][..], framed(true, b"x"), "3", "grpc-encoding is not gzip"),
        (&[("grpc-encoding", "br")][..], framed(false, b""), "12", "neither gzip nor identity"),
    ] {
        let answered = call(server.addr, TRACES, headers, body);
        assert_eq!((answered.status, answered.grpc_status().as_deref()), (200, Some(status)), "{says}");
        assert!(answered.data.is_empty() && answered.trailers.is_none(), "{says}: a trailers-only answer");
        let message = answered.headers.get("grpc-message").map(|m| m.to_str().unwrap().to_owned());
        assert!(message.as_deref().is_some_and(|m| m.contains(says)), "{says}: {message:?}");
    }
    assert_eq!(server.metric("packetproof_request_errors_total{kind=\"malformed\"}"), 3.0);
    let not_grpc = call(server.addr, TRACES, &[("content-type", "application/json")], b"{}".to_vec());
    assert_eq!((not_grpc.status, not_grpc.grpc_status()), (415, None));
    let answered = call(server.addr, TRACES, &[], framed(false, &recorded("python.traces.pb").2));
    assert_eq!(answered.grpc_status().as_deref(), Some("0"), "serve lives on");
}

/// The Python SDK's own OTLP/gRPC exporter (grpcio), plain and gzip: three calls each.
fn serve_takes_the_python_grpc_exporter_live() {
    let server = Server::start(&["--join-window", "0"]);
    let script = crate::support::root().join("scripts/record/otlp_grpc_client.py");
    let packet = crate::support::root().join(OPENAI);
    let out = crate::support::exec(Command::new("python3").arg(script).arg(server.addr.port().to_string()).arg(packet));
    assert_eq!(out.code, 0, "{}", out.describe());
    assert_eq!(calls(&server, "matched", OPENAI), 2.0);
    assert_eq!(calls(&server, "unreviewed", ""), 2.0);
    assert_eq!(calls(&server, "not-judgeable", ""), 2.0);
    assert_eq!(server.metric("packetproof_request_errors_total{kind=\"malformed\"}"), 0.0);
}

/// An HTTP/2 connection may hold few requests open at once (what it sends before a request
/// is admitted waits in buffers serve bounds): the settings serve announces.
fn serve_bounds_what_one_http2_connection_may_hold_open() {
    let server = Server::start(&[]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let streams = runtime.block_on(async {
        let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let (mut client, mut connection) = h2::client::handshake(tcp).await.unwrap();
        let request = http::Request::get(format!("http://{}/healthz", server.addr)).body(()).unwrap();
        let (response, _) = client.send_request(request, true).unwrap();
        let mut response = std::pin::pin!(response);
        // The connection is driven here, so its settings can be read once the answer came.
        tokio::select! {
            answered = &mut response => assert_eq!(answered.unwrap().status(), 200),
            ended = &mut connection => panic!("the connection ended first: {ended:?}"),
        }
        connection.max_concurrent_send_streams()
    });
    assert_eq!(streams, 32, "hyper's default is 200");
}

/// Round 6: one HTTP/2 connection with 32 half-sent Export calls held every place, and
/// every other exporter's call was refused. Each holds only the bytes it sent now: with
/// one worker and a queue of one, a second exporter's call is taken and judged.
fn half_sent_grpc_calls_take_no_place_from_another_exporter() {
    let server = Server::start(&["--workers", "1", "--queue", "1", "--join-window", "0"]);
    let traces = recorded("python.traces.pb").2;
    let message = framed(false, &traces);
    let (addr, head) = (server.addr, message[..10].to_vec());
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let attacker = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            let (client, connection) = h2::client::handshake(tcp).await.unwrap();
            let driven = tokio::spawn(connection);
            let mut open = Vec::new();
            for _ in 0..32 {
                open.push(half_sent(&client, addr, &head).await);
            }
            // Held open until the other exporter was answered.
            tokio::task::spawn_blocking(move || finished.recv()).await.unwrap().ok();
            drop(open);
            driven.abort();
        });
    });
    server.wait_for("packetproof_body_bytes_held", 320.0);
    let answered = call(server.addr, TRACES, &[], message);
    assert_eq!((answered.status, answered.grpc_status().as_deref()), (200, Some("0")));
    assert_eq!(calls(&server, "matched", OPENAI), 1.0);
    done.send(()).unwrap();
    attacker.join().unwrap();
}

/// One HTTP/2 connection may hold at most half the reading budget: with one worker and a
/// queue of one (a budget of two bodies), a connection's second nearly whole body is
/// refused (UNAVAILABLE, retried) while its first is held, and another exporter's call
/// is still taken.
fn one_connection_holds_at_most_half_the_reading_budget() {
    let traces = recorded("python.traces.pb").2;
    let message = framed(false, &traces);
    let max = message.len().to_string();
    let server = Server::start(&["--workers", "1", "--queue", "1", "--join-window", "0", "--max-body", &max]);
    let (addr, nearly) = (server.addr, message[..message.len() - 1].to_vec());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let held_bytes = (message.len() - 1) as f64;
    let held = runtime.block_on(async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (client, connection) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(connection);
        // Driven here (the connection is a task of this thread) until serve holds `bytes`.
        let holds = |bytes: f64| {
            let server = &server;
            async move {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
                while server.metric("packetproof_body_bytes_held") != bytes && std::time::Instant::now() < deadline {
                    tokio::task::yield_now().await;
                }
                assert_eq!(server.metric("packetproof_body_bytes_held"), bytes);
            }
        };
        let kept = half_sent(&client, addr, &nearly).await;
        holds(held_bytes).await;
        let (refused, _) = half_sent(&client, addr, &nearly).await;
        let refused = refused.await.unwrap();
        let status = refused.headers().get("grpc-status").map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(status.as_deref(), Some("14"), "{refused:?}");
        let says = refused.headers().get("grpc-message").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
        assert!(says.contains("share"), "{says}");
        holds(held_bytes).await;
        kept
    });
    let answered = call(server.addr, TRACES, &[], message);
    assert_eq!((answered.status, answered.grpc_status().as_deref()), (200, Some("0")));
    drop(held);
}

/// An Export call on `client` that has sent `head` of its message and not ended.
async fn half_sent(
    client: &h2::client::SendRequest<bytes::Bytes>,
    addr: SocketAddr,
    head: &[u8],
) -> (h2::client::ResponseFuture, h2::SendStream<bytes::Bytes>) {
    let mut client = client.clone().ready().await.unwrap();
    let request = http::Request::post(format!("http://{addr}{TRACES}"))
        .header("te", "trailers")
        .header("content-type", "application/grpc")
        .body(())
        .unwrap();
    let (response, mut stream) = client.send_request(request, false).unwrap();
    stream.send_data(bytes::Bytes::from(head.to_vec()), false).unwrap();
    (response, stream)
}

fn flate2_gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}
