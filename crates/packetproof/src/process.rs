//! A program of the suite's, run to completion: the `[exporter]` (one packet per
//! request) and the `[evaluator]` (one evaluation per answer). It runs in the suite's
//! directory, leads a process group of its own, and is killed at its timeout; its
//! output is read to a bound. Once it has exited, nothing it started delays the
//! answer: its process group is killed, so is anything else still holding its pipes
//! (a child that left the group with setsid), and the pipes are read only to what
//! is in them.

#[cfg(unix)]
use crate::{Error, Result};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// Held while a program is started and while the processes holding a program's pipes
/// are looked for ([`end_holders`]), so the two never overlap: a child another thread
/// is starting holds a copy of every pipe open in this process until it execs (only
/// then does close-on-exec close them), and would be taken for a holder and killed.
/// (Several trials run programs at once: the gate's mutation self-test saw it.)
static SPAWNING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// What to run and how long to wait for it.
pub(crate) struct Program<'a> {
    /// The program and its arguments, as the settings name them.
    pub(crate) command: &'a [String],
    /// Each placeholder and what it is replaced by in every argument.
    pub(crate) placeholders: &'a [(&'a str, &'a str)],
    /// The suite's directory: where it runs, and what a relative program path is under.
    pub(crate) root: &'a Path,
    pub(crate) timeout: Duration,
    /// The most stdout (and stderr) may hold.
    pub(crate) max_bytes: u64,
    /// What its output is called in an error ("the exporter's output").
    pub(crate) output_name: &'static str,
}

/// How the program ended, and what it printed.
pub(crate) struct Ran {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: String,
}

/// Run `program` to its end. `Err(reason)`: it could not start, did not finish within
/// its timeout (it is killed), or printed more than the bound; the caller names who.
pub(crate) fn run(program: &Program) -> std::result::Result<Ran, String> {
    let mut command = Command::new(resolve(&program.command[0], program.root));
    for arg in &program.command[1..] {
        let arg = program.placeholders.iter().fold(arg.clone(), |arg, (name, value)| arg.replace(name, value));
        command.arg(arg);
    }
    own_process_group(&mut command);
    let exited = Exited::new().map_err(|e| format!("could not be watched: {e}"))?;
    command.current_dir(program.root).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let spawned = {
        let _alone = SPAWNING.lock().unwrap_or_else(|e| e.into_inner());
        command.spawn()
    };
    let mut child = spawned.map_err(|e| format!("could not start: {e}"))?;
    // Both pipes are drained while the program runs, or a large output would fill
    // the pipe and the program would block until the timeout.
    let (max, name) = (program.max_bytes, program.output_name);
    let pipes: Vec<u64> =
        [pipe_id(child.stdout.as_ref()), pipe_id(child.stderr.as_ref())].into_iter().flatten().collect();
    let stdout = drain(child.stdout.take(), max, name, &exited);
    let stderr = drain(child.stderr.take(), max, name, &exited);
    // One deadline for everything: waiting for the exit, then for the pipes.
    let deadline = Instant::now() + program.timeout;
    let waited = child.wait_timeout(program.timeout);
    // Whatever happened, nothing the program started outlives it: the whole
    // group is ended, and so is anything else still holding its pipes (a child
    // that left the group with setsid), so they close now.
    end_group(&mut child);
    end_holders(&pipes);
    // The program has exited, so all it wrote is in the pipes: they are read to
    // what is there, never waited on for a writer it left behind.
    exited.say();
    let Some(status) = waited.map_err(|e| format!("could not be waited for: {e}"))? else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("did not finish within {}s and was killed", program.timeout.as_secs()));
    };
    let left = || deadline.saturating_duration_since(Instant::now());
    let stderr = String::from_utf8_lossy(&stderr.recv_timeout(left()).unwrap_or(Ok(Vec::new())).unwrap_or_default())
        .into_owned();
    // A failed program's stdout does not matter; its stderr says why.
    let stdout = match stdout.recv_timeout(left()) {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(e)) if status.success() => return Err(e),
        Err(_) if status.success() => return Err("exited, but its output did not end within the timeout".into()),
        _ => Vec::new(),
    };
    Ok(Ran { status, stdout, stderr })
}

/// The program leads a process group of its own, so that it and everything it
/// starts can be ended together ([`end_group`]).
#[cfg(unix)]
fn own_process_group(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

#[cfg(not(unix))]
fn own_process_group(_command: &mut Command) {}

/// SIGKILL to the program's process group (its pid is the group's id). A group
/// already gone (ESRCH) is fine: nothing was left running. While any member
/// lives the kernel never reuses the group's id; only when none is left could a
/// new group take it in the moment since the program was reaped (wait-timeout
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
fn resolve(name: &str, root: &Path) -> PathBuf {
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
fn drain(
    pipe: Option<impl Read + std::os::fd::AsFd + Send + 'static>,
    max: u64,
    name: &'static str,
    exited: &Exited,
) -> Drained {
    let (send, receive) = mpsc::channel();
    let wake = std::sync::Arc::clone(&exited.heard);
    std::thread::spawn(move || {
        let result = match pipe {
            Some(pipe) => read_until_exit(pipe, &wake, max, name).map_err(|e| e.to_string()),
            None => Ok(Vec::new()),
        };
        let _ = send.send(result);
    });
    receive
}

#[cfg(not(unix))]
fn drain(pipe: Option<impl Read + Send + 'static>, max: u64, name: &'static str, _exited: &Exited) -> Drained {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let result = match pipe {
            Some(pipe) => crate::fsutil::read_limited(pipe, name, max).map_err(|e| e.to_string()),
            None => Ok(Vec::new()),
        };
        let _ = send.send(result);
    });
    receive
}

/// Read `pipe` as data comes until every writer has closed it, or until `wake`
/// says the program exited: then only what is already waiting in it is read (all
/// the program wrote), never waiting for another writer.
#[cfg(unix)]
fn read_until_exit(
    mut pipe: impl Read + std::os::fd::AsFd,
    wake: &std::os::fd::OwnedFd,
    max: u64,
    name: &str,
) -> Result<Vec<u8>> {
    use rustix::event::{poll, PollFd, PollFlags};
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

/// Tells the threads reading the program's pipes that it has exited: the write
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
        let (heard, say) = cloexec_pipe()?;
        Ok(Exited { say: Some(say), heard: std::sync::Arc::new(heard) })
    }

    #[cfg(not(unix))]
    fn new() -> std::io::Result<Exited> {
        Ok(Exited {})
    }

    fn say(self) {
        #[cfg(unix)]
        drop(self.say);
    }
}

/// A pipe no program we start inherits.
#[cfg(all(unix, not(target_vendor = "apple")))]
fn cloexec_pipe() -> rustix::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
}

/// macOS has no pipe2: the flag is set just after, as std's own pipes do there.
#[cfg(target_vendor = "apple")]
fn cloexec_pipe() -> rustix::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    let (read, write) = rustix::pipe::pipe()?;
    for end in [&read, &write] {
        rustix::io::fcntl_setfd(end, rustix::io::FdFlags::CLOEXEC)?;
    }
    Ok((read, write))
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
/// what the program started outside its process group and left running.
#[cfg(target_os = "linux")]
fn end_holders(pipes: &[u64]) {
    let _alone = SPAWNING.lock().unwrap_or_else(|e| e.into_inner());
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

/// The last lines of the program's stderr, for the error message.
pub(crate) fn tail(stderr: &str) -> String {
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
