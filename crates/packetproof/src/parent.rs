//! The process this one stops with: under the npm package's shim
//! (`PACKETPROOF_PARENT_PID`), SIGTERM when the shim dies, even by SIGKILL, so the binary
//! never outlives it holding a port. Linux's parent-death signal; elsewhere nothing.

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
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
}
