//! The npm shim and the JavaScript API pass a stop on: SIGINT, SIGTERM and SIGHUP sent
//! to Node reach the binary it started, and Node exits with the binary's status (the
//! shim) or as the signal would have ended it (the API, once its binaries exited). Run
//! from the source tree with `PACKETPROOF_BINARY` (no packing); ignored without Node.

use crate::support::{self, root};
use libtest_mimic::Trial;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn trials() -> Vec<Trial> {
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    let tests: [(&str, fn()); 3] = [
        (
            "the_shim_stops_serve_cleanly_and_exits_with_its_status",
            the_shim_stops_serve_cleanly_and_exits_with_its_status,
        ),
        ("the_shim_forwards_each_stop_signal_to_the_binary", the_shim_forwards_each_stop_signal_to_the_binary),
        ("the_api_stops_the_binaries_it_started", the_api_stops_the_binaries_it_started),
    ];
    let missing = (!node).then(|| "node not found".to_owned());
    tests
        .into_iter()
        .map(|(name, test)| {
            support::needs("node", missing.clone(), support::trial(support::test_name(module_path!(), name), test))
        })
        .collect()
}

fn shim() -> String {
    root().join("npm/packetproof/bin/packetproof.js").display().to_string()
}

fn signal(child: &std::process::Child, signal: rustix::process::Signal) {
    rustix::process::kill_process(rustix::process::Pid::from_child(child), signal).unwrap();
}

/// A stand-in binary: says it runs (the file `ready`), then waits up to 10 s for a stop
/// signal and exits 10 + a number of its own for it, writing its name to `got`.
fn stand_in(dir: &Path) -> std::path::PathBuf {
    let script = dir.join("stand-in.sh");
    let (ready, got) = (dir.join("ready").display().to_string(), dir.join("got").display().to_string());
    let text = format!(
        "#!/bin/sh\nfor s in INT:11 TERM:12 HUP:13; do trap \"echo ${{s%:*}} > '{got}'; exit ${{s#*:}}\" ${{s%:*}}; done\n\
         touch '{ready}'\ni=0\nwhile [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\nexit 3\n"
    );
    std::fs::write(&script, text).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    script
}

fn wait_for(file: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !file.exists() {
        assert!(Instant::now() < deadline, "{} never appeared", file.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `npx packetproof serve`, stopped by its supervisor: serve gets the signal, finishes
/// and exits 0, and so does the shim (it used to die alone, leaving serve listening).
fn the_shim_stops_serve_cleanly_and_exits_with_its_status() {
    for stop in [rustix::process::Signal::TERM, rustix::process::Signal::INT] {
        let mut node = Command::new("node")
            .args([shim().as_str(), "serve", "--listen", "127.0.0.1:0", "--packets", "tests/recordings/sdk/packets"])
            .current_dir(root())
            .env("PACKETPROOF_BINARY", env!("CARGO_BIN_EXE_packetproof"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(node.stderr.take().unwrap()).lines().map_while(Result::ok);
        let listening = lines.by_ref().find(|l| l.contains("listening on")).expect("serve listened");
        signal(&node, stop);
        // Node's status first: a shim that died alone leaves serve holding the pipe.
        let status = node.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{stop:?}: {listening}");
        let rest: Vec<String> = lines.collect();
        assert!(rest.iter().any(|l| l.contains("stopped after")), "{stop:?}: {}", rest.join("\n"));
    }
}

fn the_shim_forwards_each_stop_signal_to_the_binary() {
    for (stop, name, status) in [
        (rustix::process::Signal::INT, "INT", 11),
        (rustix::process::Signal::TERM, "TERM", 12),
        (rustix::process::Signal::HUP, "HUP", 13),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut node = Command::new("node")
            .arg(shim())
            .env("PACKETPROOF_BINARY", stand_in(dir.path()))
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        wait_for(&dir.path().join("ready"));
        signal(&node, stop);
        assert_eq!(node.wait().unwrap().code(), Some(status), "SIG{name}: the binary's own status");
        let got = std::fs::read_to_string(dir.path().join("got")).unwrap_or_default();
        assert_eq!(got.trim(), name, "SIG{name} reached the binary");
    }
}

/// A script awaiting an API call is stopped: the binary the call started gets the
/// signal, and the script then ends as the signal ends it.
fn the_api_stops_the_binaries_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("api.js");
    let api = root().join("npm/packetproof/index.js").display().to_string();
    std::fs::write(&script, format!("require({api:?}).checks().then(() => console.log('resolved'), (e) => console.log('rejected', e.exitCode));\n")).unwrap();
    let mut node = Command::new("node")
        .arg(&script)
        .env("PACKETPROOF_BINARY", stand_in(dir.path()))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&dir.path().join("ready"));
    signal(&node, rustix::process::Signal::TERM);
    let status = node.wait().unwrap();
    let got = std::fs::read_to_string(dir.path().join("got")).unwrap_or_default();
    assert_eq!(got.trim(), "TERM", "the binary the API started got SIGTERM");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(15), "Node ends as SIGTERM ends it: {status:?}");
}
