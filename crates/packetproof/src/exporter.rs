//! `[exporter]`: packets made by another program than packetproof's compiler (for
//! example the reference system's own Node adapter). The command runs in the
//! suite's directory with `{request}` replaced by the request file's path, and
//! prints one packet on stdout. A timeout, a non-zero exit, or output that is not
//! one strict JSON object is an error naming the request (so the fixture); the
//! packet itself is then checked exactly like a compiled one. Once the exporter has
//! exited, nothing it started delays the answer: its process group is killed, so is
//! anything else still holding its pipes, and the pipes are read only to what is in them.

use crate::config::Exporter;
use crate::{canonical, Config, Error, Result};
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
    let exited = Exited::new().map_err(|e| fail(format!("could not be watched: {e}")))?;
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
    let pipes: Vec<u64> =
        [pipe_id(child.stdout.as_ref()), pipe_id(child.stderr.as_ref())].into_iter().flatten().collect();
    let stdout = drain(child.stdout.take(), max, &exited);
    let stderr = drain(child.stderr.take(), max, &exited);
    let timeout = Duration::from_secs(exporter.timeout_seconds);
    // One deadline for everything: waiting for the exit, then for the pipes.
    let deadline = Instant::now() + timeout;
    let waited = child.wait_timeout(timeout);
    // Whatever happened, nothing the exporter started outlives it: the whole
    // group is ended, and so is anything else still holding its pipes (a child
    // that left the group with setsid), so they close now.
    end_group(&mut child);
    end_holders(&pipes);
    // The exporter has exited, so all it wrote is in the pipes: they are read to
    // what is there, never waited on for a writer it left behind.
    exited.say();
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

type Drained = mpsc::Receiver<std::result::Result<Vec<u8>, String>>;

/// Read a pipe on a thread, at most `max` bytes: to its end, or, once `exited` is
/// said, to what is in it then.
#[cfg(unix)]
fn drain(pipe: Option<impl Read + std::os::fd::AsFd + Send + 'static>, max: u64, exited: &Exited) -> Drained {
    let (send, receive) = mpsc::channel();
    let wake = std::sync::Arc::clone(&exited.heard);
    std::thread::spawn(move || {
        let result = match pipe {
            Some(pipe) => read_until_exit(pipe, &wake, max).map_err(|e| e.to_string()),
            None => Ok(Vec::new()),
        };
        let _ = send.send(result);
    });
    receive
}

#[cfg(not(unix))]
fn drain(pipe: Option<impl Read + Send + 'static>, max: u64, _exited: &Exited) -> Drained {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let result = match pipe {
            Some(pipe) => crate::fsutil::read_limited(pipe, "the exporter's output", max).map_err(|e| e.to_string()),
            None => Ok(Vec::new()),
        };
        let _ = send.send(result);
    });
    receive
}

/// Read `pipe` as data comes until every writer has closed it, or until `wake`
/// says the exporter exited: then only what is already waiting in it is read (all
/// the exporter wrote), never waiting for another writer.
#[cfg(unix)]
fn read_until_exit(mut pipe: impl Read + std::os::fd::AsFd, wake: &std::os::fd::OwnedFd, max: u64) -> Result<Vec<u8>> {
    use rustix::event::{poll, PollFd, PollFlags};
    let name = "the exporter's output";
    let (mut bytes, mut buffer, mut exited) = (Vec::new(), vec![0u8; 64 * 1024], false);
    loop {
        if !exited {
            let mut fds = [PollFd::new(&pipe, PollFlags::IN), PollFd::new(wake, PollFlags::IN)];
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(Error::io(name, e.into())),
            }
            if !fds[1].revents().is_empty() {
                exited = true;
                rustix::io::ioctl_fionbio(&pipe, true).map_err(|e| Error::io(name, e.into()))?;
            }
        }
        match pipe.read(&mut buffer) {
            Ok(0) => return Ok(bytes),
            Ok(n) if (bytes.len() + n) as u64 > max => {
                return Err(Error::refused(name, format!("more than the limit of {max} bytes")))
            }
            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(name, e)),
        }
    }
}

/// Tells the threads reading the exporter's pipes that it has exited: the write
/// end of a pipe of our own, closed to say it (each reader sees the close).
struct Exited {
    #[cfg(unix)]
    say: Option<std::os::fd::OwnedFd>,
    #[cfg(unix)]
    heard: std::sync::Arc<std::os::fd::OwnedFd>,
}

impl Exited {
    #[cfg(unix)]
    fn new() -> std::io::Result<Exited> {
        let (heard, say) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        Ok(Exited { say: Some(say), heard: std::sync::Arc::new(heard) })
    }

    #[cfg(not(unix))]
    fn new() -> std::io::Result<Exited> {
        Ok(Exited {})
    }

    fn say(mut self) {
        #[cfg(unix)]
        drop(self.say.take());
    }
}

/// The inode of a pipe, to find who else holds it.
#[cfg(target_os = "linux")]
fn pipe_id(pipe: Option<&impl std::os::fd::AsFd>) -> Option<u64> {
    rustix::fs::fstat(pipe?).ok().map(|stat| stat.st_ino)
}

#[cfg(not(target_os = "linux"))]
fn pipe_id<T>(_pipe: Option<&T>) -> Option<u64> {
    None
}

/// SIGKILL to every other process holding one of `pipes` (found through /proc):
/// what the exporter started outside its process group and left running.
#[cfg(target_os = "linux")]
fn end_holders(pipes: &[u64]) {
    let names: Vec<String> = pipes.iter().map(|inode| format!("pipe:[{inode}]")).collect();
    let Ok(processes) = std::fs::read_dir("/proc") else { return };
    for process in processes.flatten() {
        let Some(pid) = process.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if pid as u32 == std::process::id() {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(process.path().join("fd")) else { continue };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|link| names.iter().any(|name| link.as_os_str() == name.as_str()))
        });
        if let (true, Some(pid)) = (holds, rustix::process::Pid::from_raw(pid)) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn end_holders(_pipes: &[u64]) {}

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
