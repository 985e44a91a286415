//! `[exporter]`: packets made by another program than packetproof's compiler (for
//! example the reference system's own Node adapter). The command runs in the
//! suite's directory with `{request}` replaced by the request file's path, and
//! prints one packet on stdout. A timeout, a non-zero exit, or output that is not
//! one strict JSON object is an error naming the request (so the fixture); the
//! packet itself is then checked exactly like a compiled one.

use crate::config::Exporter;
use crate::{canonical, fsutil, Config, Error, Result};
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// The placeholder replaced by the request file's path.
pub(crate) const REQUEST: &str = "{request}";

/// Run the exporter on `request` and return the packet it printed.
pub(crate) fn export(exporter: &Exporter, config: &Config, request: &Path) -> Result<Value> {
    let shown = request.display().to_string();
    let fail =
        |reason: String| Error::Exporter { request: shown.clone(), command: format!("{:?}", exporter.command), reason };
    let request = if request.is_absolute() { request.to_path_buf() } else { config.root.join(request) };
    let mut command = Command::new(program(&exporter.command[0], &config.root));
    for arg in &exporter.command[1..] {
        command.arg(arg.replace(REQUEST, &request.to_string_lossy()));
    }
    own_process_group(&mut command);
    let mut child = command
        .current_dir(&config.root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("could not start: {e}")))?;
    // Both pipes are drained while the exporter runs, or a large packet would fill
    // the pipe and the exporter would block until the timeout.
    let max = config.limits.max_file_bytes;
    let stdout = drain(child.stdout.take(), max);
    let stderr = drain(child.stderr.take(), max);
    let timeout = Duration::from_secs(exporter.timeout_seconds);
    // One deadline for everything: waiting for the exit, then for the pipes.
    let deadline = Instant::now() + timeout;
    let waited = child.wait_timeout(timeout);
    // Whatever happened, nothing the exporter started outlives it: the whole
    // group is ended, so a child left holding the pipes closes them now.
    end_group(&mut child);
    let Some(status) = waited.map_err(|e| fail(format!("could not be waited for: {e}")))? else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(fail(format!("did not finish within {}s and was killed", exporter.timeout_seconds)));
    };
    let left = || deadline.saturating_duration_since(Instant::now());
    let stderr_text =
        String::from_utf8_lossy(&stderr.recv_timeout(left()).unwrap_or(Ok(Vec::new())).unwrap_or_default())
            .into_owned();
    if !status.success() {
        return Err(fail(format!("failed ({status}){}", tail(&stderr_text))));
    }
    let bytes = stdout
        .recv_timeout(left())
        .map_err(|_| fail("exited, but its output did not end within the timeout".into()))?
        .map_err(fail)?;
    let packet =
        canonical::parse(&bytes).map_err(|e| fail(format!("printed invalid JSON: {}", e.in_file("stdout"))))?;
    if !packet.is_object() {
        return Err(fail("printed JSON that is not a packet object".into()));
    }
    Ok(packet)
}

/// The exporter leads a process group of its own, so that it and everything it
/// starts can be ended together ([`end_group`]).
#[cfg(unix)]
fn own_process_group(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

#[cfg(not(unix))]
fn own_process_group(_command: &mut Command) {}

/// SIGKILL to the exporter's process group (its pid is the group's id). A group
/// already gone (ESRCH) is fine: nothing was left running. While any member
/// lives the kernel never reuses the group's id; only when none is left could a
/// new group take it in the moment since the exporter was reaped (wait-timeout
/// reaps as it waits), a window of microseconds this accepts.
#[cfg(unix)]
fn end_group(child: &mut std::process::Child) {
    let _ = rustix::process::kill_process_group(rustix::process::Pid::from_child(child), rustix::process::Signal::KILL);
}

#[cfg(not(unix))]
fn end_group(child: &mut std::process::Child) {
    let _ = child.kill();
}

/// A program named by a relative path (`./export.sh`) is the suite's; a bare name is looked up on PATH.
fn program(name: &str, root: &Path) -> PathBuf {
    let path = Path::new(name);
    if path.is_relative() && path.components().count() > 1 {
        root.join(path)
    } else {
        path.to_path_buf()
    }
}

/// Read a pipe to its end on a thread, at most `max` bytes.
fn drain(pipe: Option<impl Read + Send + 'static>, max: u64) -> mpsc::Receiver<std::result::Result<Vec<u8>, String>> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let result = match pipe {
            Some(pipe) => fsutil::read_limited(pipe, "the exporter's output", max).map_err(|e| e.to_string()),
            None => Ok(Vec::new()),
        };
        let _ = send.send(result);
    });
    receive
}

/// The last lines of the exporter's stderr, for the error message.
fn tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let text = lines[lines.len().saturating_sub(5)..].join(" | ");
    // The end says why it failed: the excerpt is of the last characters.
    let skipped = text.chars().count().saturating_sub(crate::report::MAX_EXCERPT_CHARS);
    let end: String = text.chars().skip(skipped).collect();
    let elided = if skipped > 0 { format!("({skipped} characters before) …") } else { String::new() };
    if crate::report::looks_like_a_key(&text) {
        return format!(": {}", crate::report::excerpt(&text));
    }
    format!(": {elided}{}", crate::report::excerpt(&end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quoted_stderr_is_its_bounded_escaped_end_and_never_a_key() {
        let long = format!("{}\nwhy: the adapter crashed\u{202e}\n", "noise ".repeat(1000));
        let quoted = tail(&long);
        assert!(quoted.ends_with("why: the adapter crashed\\u{202e}\""), "{quoted}");
        assert!(quoted.len() < 300 && quoted.contains("characters before"), "{quoted}");
        let key = tail("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA\n");
        assert!(!key.contains("MC4CAQ") && key.contains("look like a key"), "{key}");
    }
}
