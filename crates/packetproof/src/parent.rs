//! The process this one stops with: under the npm package's shim
//! (`PACKETPROOF_PARENT_PID`), SIGTERM when the shim dies, even by SIGKILL, so the binary
//! never outlives it holding a port. Linux's parent-death signal; on other Unix systems
//! (macOS has none) a thread that looks at the parent once a second; on Windows nothing.

/// Ask for SIGTERM when `parent` dies; a parent already gone by now is the same signal,
/// sent at once.
pub fn stop_with(parent: u32) {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getpid, getppid, kill_process, set_parent_process_death_signal, Signal};
        if set_parent_process_death_signal(Some(Signal::TERM)).is_ok()
            && getppid().is_none_or(|pid| pid.as_raw_nonzero().get().unsigned_abs() != parent)
        {
            let _ = kill_process(getpid(), Signal::TERM);
        }
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        // The parent's death reparents this process: its parent id changes.
        let watch = move || loop {
            if std::os::unix::process::parent_id() != parent {
                let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::TERM);
                return;
            }
            std::thread::sleep(std::time::Duration::from_secs(1));
        };
        let _ = std::thread::Builder::new().name("parent-watch".into()).spawn(watch);
    }
    #[cfg(not(unix))]
    let _ = parent;
}
