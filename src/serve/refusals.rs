//! Requests refused, counted on /metrics and said on stderr, where an operator looks: a
//! 413 or a 400 is not retried by exporters, so its calls are lost unless someone reads
//! why. At most one line per kind every [`EVERY`], saying how many were refused since,
//! so a flood of refusals does not flood the log.

use super::http::Refused;
use super::metrics::Metrics;
use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The least time between two lines of one kind of refusal.
const EVERY: Duration = Duration::from_secs(10);

#[derive(Default)]
pub(crate) struct Refusals {
    /// By kind: when it was last said, and how many were refused since.
    said: Mutex<HashMap<&'static str, (Instant, u64)>>,
}

impl Refusals {
    /// Count `refused` on /metrics and say it on stderr, unless its kind was said lately.
    pub(super) fn refuse(&self, metrics: &Metrics, refused: &Refused) {
        metrics.error(refused.kind);
        if let Some(line) = self.line(refused, Instant::now()) {
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }

    /// The line to say for `refused` at `now`, if one is due.
    fn line(&self, refused: &Refused, now: Instant) -> Option<String> {
        let mut said = self.said.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let since = match said.get_mut(refused.kind) {
            Some((last, unsaid)) if now.duration_since(*last) < EVERY => {
                *unsaid += 1;
                return None;
            }
            Some((_, unsaid)) => std::mem::take(unsaid),
            None => 0,
        };
        said.insert(refused.kind, (now, 0));
        let more = match since {
            0 => String::new(),
            n => format!(" ({n} more of this kind since the last line)"),
        };
        Some(format!(
            "packetproof serve: refused a request: {} {} ({}): {}{more}",
            refused.status.as_u16(),
            refused.status.canonical_reason().unwrap_or_default(),
            refused.kind,
            refused.message
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[test]
    fn each_kind_is_said_at_most_once_a_period_with_how_many_went_unsaid() {
        let refusals = Refusals::default();
        let large = Refused::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", "the body is larger than 9 bytes");
        let full = Refused::new(StatusCode::TOO_MANY_REQUESTS, "queue_full", "the work queue is full");
        let t0 = Instant::now();
        let first = refusals.line(&large, t0).unwrap();
        assert_eq!(
            first,
            "packetproof serve: refused a request: 413 Payload Too Large (too_large): the body is larger than 9 bytes"
        );
        assert!(refusals.line(&full, t0).is_some(), "another kind is said on its own");
        assert_eq!(refusals.line(&large, t0 + Duration::from_secs(1)), None);
        assert_eq!(refusals.line(&large, t0 + Duration::from_secs(2)), None);
        let later = refusals.line(&large, t0 + EVERY).unwrap();
        assert!(later.ends_with("(2 more of this kind since the last line)"), "{later}");
    }
}
