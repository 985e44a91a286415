//! Ctrl-C held back while files written as one change are staged and renamed into
//! place (from the first temp file to the last rename: a caught signal leaves no temp
//! file either).
//! The renames are a few system calls, but a signal that arrives during one ends
//! the process as it returns (measured: one interrupted bless in 31 left a
//! golden case half written when the signals were not held). Held, SIGINT,
//! SIGTERM, SIGHUP and SIGQUIT wait until the last rename (and its sync) is done,
//! then end the process as they would have. SIGKILL cannot be held: what it
//! leaves, the readers of such a pair find (`golden::agent-request`).
//!
//! The mask is the calling thread's: where another thread takes these signals
//! (a test runner's workers), the process can still end between the renames.
//! Unix only: elsewhere the renames run with nothing held.

/// The signals held until dropped.
pub(crate) struct Held {
    previous: libc::sigset_t,
}

const HELD: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

impl Held {
    pub(crate) fn hold() -> Held {
        // SAFETY: sigemptyset/sigaddset initialise a local set, and pthread_sigmask
        // only reads it and writes the previous mask into another local.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for signal in HELD {
                libc::sigaddset(&mut set, signal);
            }
            let mut previous: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut previous);
            Held { previous }
        }
    }
}

impl Drop for Held {
    /// The previous mask again: a signal that came meanwhile is delivered now.
    fn drop(&mut self) {
        // SAFETY: restores the mask saved by `hold` on this thread.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.previous, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(signal: libc::c_int) -> bool {
        // SAFETY: reads this thread's mask into a local set.
        unsafe {
            let mut current: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut current);
            libc::sigismember(&current, signal) == 1
        }
    }

    #[test]
    fn ctrl_c_is_held_while_held_and_only_then() {
        assert!(!blocked(libc::SIGINT));
        let held = Held::hold();
        assert!(HELD.iter().all(|s| blocked(*s)));
        drop(held);
        assert!(HELD.iter().all(|s| !blocked(*s)));
    }

    /// Ctrl-C (and SIGTERM) is held while a write's temp file exists: a signal then waits
    /// for the rename, so it leaves no temp file behind.
    #[test]
    fn ctrl_c_waits_while_a_temp_file_exists() {
        use crate::fsutil::{is_temp_name, Dir, Replace};
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        let temp_exists = || {
            std::fs::read_dir(tmp.path()).unwrap().any(|e| e.unwrap().file_name().to_str().is_some_and(is_temp_name))
        };
        let during = std::cell::Cell::new(false);
        let hook = || {
            during.set(blocked(libc::SIGTERM) && blocked(libc::SIGINT) && temp_exists());
            Ok(())
        };
        dir.write_with("evaluation.json", b"new", Replace::Allowed, hook).unwrap();
        assert!(during.get(), "the temp file existed with SIGTERM and SIGINT held");
        assert!(!blocked(libc::SIGTERM) && !temp_exists(), "held no longer once renamed");
    }
}
