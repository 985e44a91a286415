//! `/metrics`, in the Prometheus (OpenMetrics) text format: calls by verdict, packet
//! and model; spans, requests and bytes received by signal; requests refused by kind;
//! request latency; the calls held for the rest of their records, those judged before
//! it arrived (by why) and the parts of calls not taken (by why).
//!
//! Label values that come from clients are bounded: a model label is one of the models
//! the reviewed packets name, and any other model is `other`, so a client sending a new
//! model name per call can neither grow the registry nor push a real model out of it.
//! Packet labels are the reviewed packets' files, a set fixed at start.

use super::body::Signal;
use packetproof::trace::verdict::Verdict;
use packetproof::trace::window::Ignored;
use packetproof::trace::{Counts, Judged};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::collections::BTreeSet;

type Labels = Vec<(&'static str, String)>;

pub(crate) struct Metrics {
    registry: Registry,
    calls: Family<Labels, Counter>,
    spans: Family<Labels, Counter>,
    requests: Family<Labels, Counter>,
    bytes: Family<Labels, Counter>,
    errors: Family<Labels, Counter>,
    latency: Histogram,
    pub(crate) in_flight: Gauge,
    /// Bytes of request bodies read and not yet answered (the reading budget in use).
    pub(crate) body_bytes: Gauge,
    held: Gauge,
    expired: Family<Labels, Counter>,
    ignored: Family<Labels, Counter>,
    closed: Family<Labels, Counter>,
    models: BTreeSet<String>,
}

impl Metrics {
    /// Counters of calls whose model labels are `models` (the reviewed packets') and `other`.
    pub(crate) fn new(models: BTreeSet<String>) -> Metrics {
        let mut registry = Registry::with_prefix("packetproof");
        let calls = Family::<Labels, Counter>::default();
        let spans = Family::<Labels, Counter>::default();
        let requests = Family::<Labels, Counter>::default();
        let bytes = Family::<Labels, Counter>::default();
        let errors = Family::<Labels, Counter>::default();
        let latency = Histogram::new(exponential_buckets(0.000_25, 2.0, 16));
        let in_flight = Gauge::default();
        let body_bytes = Gauge::default();
        let held = Gauge::default();
        let expired = Family::<Labels, Counter>::default();
        let ignored = Family::<Labels, Counter>::default();
        let closed = Family::<Labels, Counter>::default();
        registry.register(
            "calls",
            "GenAI calls judged, by verdict (matched, mismatched, unreviewed, not-judgeable), packet and model",
            calls.clone(),
        );
        registry.register("spans_received", "Spans (and log records) received, by signal", spans.clone());
        registry.register("requests", "Export requests judged and answered 200, by signal", requests.clone());
        registry.register("received_bytes", "Request body bytes received as sent, by signal", bytes.clone());
        registry.register("request_errors", "Requests refused, by kind (the HTTP status says which)", errors.clone());
        registry.register("request_duration_seconds", "Time from a request's admission to its answer", latency.clone());
        registry.register(
            "requests_in_flight",
            "Requests admitted and not yet answered (their body whole: waiting for a worker or judged)",
            in_flight.clone(),
        );
        registry.register(
            "body_bytes_held",
            "Bytes of request bodies read (or being read) and not yet answered, at most --queue plus --workers \
             times --max-body: a body takes them as they arrive",
            body_bytes.clone(),
        );
        registry.register(
            "calls_held",
            "Calls held for the rest of their records (a span without its messages, messages without their span), \
             at most --join-capacity",
            held.clone(),
        );
        registry.register(
            "calls_expired",
            "Calls judged before all their records arrived, by reason: window (the join window ended), capacity \
             (the oldest made room), size (too large to hold), stop (serve stopped)",
            expired.clone(),
        );
        registry.register(
            "call_parts_ignored",
            "Parts of calls (a call's records in one request) not judged, by reason: judged (the call was judged \
             whole already), repeated (a held call has this part: a request sent again)",
            ignored.clone(),
        );
        registry.register(
            "connections_closed",
            "Connections serve closed, by reason: header_timeout (no request within --header-timeout), \
             idle_timeout (none within --idle-timeout of the last), shed (every place was taken: the idlest made room)",
            closed.clone(),
        );
        Metrics {
            registry,
            calls,
            spans,
            requests,
            bytes,
            errors,
            latency,
            in_flight,
            body_bytes,
            held,
            expired,
            ignored,
            closed,
            models,
        }
    }
    /// One judged call.
    pub(crate) fn call(&self, judged: &Judged) {
        let mut tally = Tally::default();
        tally.add(self, judged);
        self.count(tally);
    }

    /// The calls of a tally, one registry update per label set.
    pub(crate) fn count(&self, tally: Tally) {
        for (verdict, packet, model, count) in tally.calls {
            let labels = vec![("verdict", verdict.to_owned()), ("packet", packet), ("model", model)];
            self.calls.get_or_create(&labels).inc_by(count);
        }
        for (reason, count) in tally.expired {
            self.expired.get_or_create(&vec![("reason", reason.to_owned())]).inc_by(count);
        }
    }

    /// How many calls the join window holds now.
    pub(crate) fn held(&self, held: usize) {
        self.held.set(i64::try_from(held).unwrap_or(i64::MAX));
    }

    /// The parts of calls the join window did not take.
    pub(crate) fn ignored(&self, ignored: Ignored) {
        for (reason, count) in [("judged", ignored.judged), ("repeated", ignored.repeated)] {
            if count > 0 {
                self.ignored.get_or_create(&vec![("reason", reason.to_owned())]).inc_by(count);
            }
        }
    }

    /// A connection serve closed, and why.
    pub(crate) fn closed(&self, why: super::connections::Closed) {
        self.closed.get_or_create(&vec![("reason", why.name().to_owned())]).inc();
    }

    /// One request judged: its spans and the bytes it was sent as.
    pub(crate) fn request(&self, signal: Signal, counts: &Counts, received: usize, seconds: f64) {
        let labels = vec![("signal", super::body::name(signal).to_owned())];
        self.requests.get_or_create(&labels).inc();
        self.spans.get_or_create(&labels).inc_by(counts.spans + counts.log_records);
        self.bytes.get_or_create(&labels).inc_by(received as u64);
        self.latency.observe(seconds);
    }

    /// One request refused, by kind (`malformed`, `too_large`, `queue_full`, …).
    pub(crate) fn error(&self, kind: &'static str) {
        self.errors.get_or_create(&vec![("kind", kind.to_owned())]).inc();
    }

    fn model_label<'a>(&self, model: Option<&'a str>) -> &'a str {
        match model {
            None => "",
            Some(model) if self.models.contains(model) => model,
            Some(_) => "other",
        }
    }

    /// The text exposition.
    pub(crate) fn encode(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }

    /// What was served, for the last line on stderr.
    pub(crate) fn summary(&self) -> String {
        let total = |family: &Family<Labels, Counter>, key: &'static str, values: &[&str]| -> u64 {
            values.iter().map(|v| family.get_or_create(&vec![(key, (*v).to_owned())]).get()).sum()
        };
        let requests = total(&self.requests, "signal", &["traces", "logs"]);
        let spans = total(&self.spans, "signal", &["traces", "logs"]);
        format!("{requests} requests judged ({spans} spans and log records)")
    }
}

/// The most label sets a [`Tally`] keeps before it is counted.
const TALLIED: usize = 16;

/// Judged calls counted by their labels, for [`Metrics::count`]: a request's calls are
/// counted together once it is judged, since a registry update for each call (labels
/// built, hashed and looked up under a lock) was 3% of serve's CPU time under a flood.
#[derive(Default)]
pub(crate) struct Tally {
    /// Verdict, packet and model labels, and how many calls have them.
    calls: Vec<(&'static str, String, String, u64)>,
    /// Calls judged before all their records arrived, by reason.
    expired: Vec<(&'static str, u64)>,
}

impl Tally {
    pub(crate) fn add(&mut self, metrics: &Metrics, judged: &Judged) {
        let (verdict, packet) = match &judged.verdict {
            Verdict::Matched { packet } => ("matched", packet.as_str()),
            Verdict::Mismatched { packet, .. } => ("mismatched", packet.as_deref().unwrap_or_default()),
            Verdict::Unreviewed { .. } => ("unreviewed", ""),
            Verdict::NotJudgeable { .. } => ("not-judgeable", ""),
            Verdict::Unvouched { packet, .. } => ("unvouched", packet.as_str()),
            Verdict::Conforms { .. } => ("conforms", ""),
        };
        let model = metrics.model_label(judged.call.model());
        self.add_labels(metrics, verdict, packet, model);
        if let Some(expiry) = judged.expired() {
            let reason = expiry.name();
            match self.expired.iter_mut().find(|(r, _)| *r == reason) {
                Some((_, count)) => *count += 1,
                None => self.expired.push((reason, 1)),
            }
        }
    }

    fn add_labels(&mut self, metrics: &Metrics, verdict: &'static str, packet: &str, model: &str) {
        // A request's calls have few label sets: a search costs less than a hash. A
        // request of many is counted as it goes, so the search stays short.
        match self.calls.iter_mut().find(|(v, p, m, _)| *v == verdict && p == packet && m == model) {
            Some((.., count)) => *count += 1,
            None => {
                if self.calls.len() == TALLIED {
                    metrics.count(std::mem::take(self));
                }
                self.calls.push((verdict, packet.to_owned(), model.to_owned(), 1));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_labels_are_the_reviewed_models_and_other_whatever_clients_send_first() {
        let metrics = Metrics::new(["gpt-5".to_owned()].into());
        for junk in 0..200 {
            assert_eq!(metrics.model_label(Some(&format!("junk-{junk}"))), "other");
        }
        assert_eq!(metrics.model_label(Some("gpt-5")), "gpt-5");
        assert_eq!(metrics.model_label(None), "");
    }

    #[test]
    fn a_tally_counts_what_counting_each_call_counts_however_many_label_sets_it_has() {
        let metrics = Metrics::new(["gpt-5".to_owned()].into());
        let mut tally = Tally::default();
        for call in 0..200 {
            tally.add_labels(&metrics, "unreviewed", "", "gpt-5");
            tally.add_labels(&metrics, "matched", &format!("packet-{}.json", call % 40), "other");
        }
        metrics.count(tally);
        let text = metrics.encode();
        let count = |labels: &str| {
            let line = format!("packetproof_calls_total{{{labels}}} ");
            text.lines().find_map(|l| l.strip_prefix(&line)).and_then(|n| n.parse::<u64>().ok())
        };
        assert_eq!(count(r#"verdict="unreviewed",packet="",model="gpt-5""#), Some(200));
        for packet in 0..40 {
            let labels = format!(r#"verdict="matched",packet="packet-{packet}.json",model="other""#);
            assert_eq!(count(&labels), Some(5), "{labels}");
        }
    }
}
