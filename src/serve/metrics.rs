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
            "Requests admitted and not yet answered (being read, waiting for a worker or judged)",
            in_flight.clone(),
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
            held,
            expired,
            ignored,
            closed,
            models,
        }
    }
    /// One judged call.
    pub(crate) fn call(&self, judged: &Judged) {
        let (verdict, packet) = match &judged.verdict {
            Verdict::Matched { packet } => ("matched", packet.as_str()),
            Verdict::Mismatched { packet, .. } => ("mismatched", packet.as_deref().unwrap_or_default()),
            Verdict::Unreviewed { .. } => ("unreviewed", ""),
            Verdict::NotJudgeable { .. } => ("not-judgeable", ""),
            Verdict::Unvouched { packet, .. } => ("unvouched", packet.as_str()),
            Verdict::Conforms { .. } => ("conforms", ""),
        };
        let model = self.model_label(judged.call.model());
        self.calls.get_or_create(&vec![("verdict", verdict.into()), ("packet", packet.into()), ("model", model)]).inc();
        if let Some(expiry) = judged.expired() {
            self.expired.get_or_create(&vec![("reason", expiry.name().to_owned())]).inc();
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

    fn model_label(&self, model: Option<&str>) -> String {
        match model {
            None => String::new(),
            Some(model) if self.models.contains(model) => model.to_owned(),
            Some(_) => "other".into(),
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
}
