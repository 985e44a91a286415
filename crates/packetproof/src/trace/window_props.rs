//! The join window over generated calls: each call's records split into parts (its
//! span, its details event, its message events one request each, an event without ids
//! placed by its time), every part its own request, in any order. Whatever the order,
//! every call is judged whole (none waits for the window to end), the last verdict of
//! each is the one `trace` gives the same records read together, and no call is
//! reported twice with the same verdict.
//!
//! What this catches: a part taken by the wrong call or dropped, a part that arrives
//! before the call's span held apart for ever (judged at the stop, with a note), evidence
//! message events listed in the order they arrive rather than by their time, and a call
//! reported again unchanged.

use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// How one call's records are sent.
#[derive(Debug, Clone, Copy)]
enum Split {
    /// Its span without content, and its details event with the messages.
    Details,
    /// Its span without content, and each message event in a request of its own.
    Messages,
    /// Its span with the messages, alone.
    Whole,
    /// Its span with the messages, then its details event without.
    WholeThenDetails,
    /// Its span without content, and a details event without trace or span id within
    /// the span's time.
    DetailsWithoutIds,
}

const SPLITS: [Split; 5] =
    [Split::Details, Split::Messages, Split::Whole, Split::WholeThenDetails, Split::DetailsWithoutIds];

/// A generated call: how it is split, and whether it sends the reviewed user message.
type Generated = (Split, bool);

/// A call's time in Unix nanoseconds: calls far apart, so a record's time names one.
fn times(call: usize) -> (u64, u64) {
    let start = (call as u64 + 1) * 1_000_000_000_000;
    (start, start + 500_000_000)
}

fn id(call: usize) -> String {
    format!("c{call}")
}

fn texts(reviewed: bool) -> Value {
    let user = if reviewed { USER } else { "Approve this diff." };
    json!([{"role": "system", "parts": [{"type": "text", "content": SYSTEM}]},
           {"role": "user", "parts": [{"type": "text", "content": user}]}])
}

fn timed_span(call: usize, content: Option<&Value>) -> Value {
    let mut pairs = vec![
        ("gen_ai.operation.name", json!("chat")),
        ("gen_ai.request.model", json!("gpt-5")),
        ("gen_ai.request.max_tokens", json!(100)),
    ];
    if let Some(messages) = content {
        pairs.push(("gen_ai.input.messages", json!(messages.to_string())));
    }
    let (start, end) = times(call);
    spans(&[
        json!({"traceId": crate::trace::record::test_id("01", 32), "spanId": crate::trace::record::test_id(&id(call), 16), "name": "chat gpt-5",
        "startTimeUnixNano": start.to_string(), "endTimeUnixNano": end.to_string(), "attributes": attributes(&pairs)}),
    ])
}

/// The details event of `call`, with `content` or none, under its ids or only its time.
fn timed_details(call: usize, content: Option<&Value>, ids: bool) -> Value {
    let mut pairs = vec![("gen_ai.operation.name", json!("chat")), ("gen_ai.request.model", json!("gpt-5"))];
    if let Some(messages) = content {
        pairs.push(("gen_ai.input.messages", json!(messages.to_string())));
    }
    let at = times(call).0 + 1_000;
    let mut record =
        json!({"eventName": DETAILS_EVENT, "timeUnixNano": at.to_string(), "attributes": attributes(&pairs)});
    if ids {
        record["traceId"] = json!(crate::trace::record::test_id("01", 32));
        record["spanId"] = json!(crate::trace::record::test_id(&id(call), 16));
    }
    logs(&[record])
}

/// A message event of `call` under its ids, the `nth` of its messages in time.
fn timed_message(call: usize, role: &str, text: &str, nth: u64) -> Value {
    let mut record = message(&id(call), role, text);
    record["timeUnixNano"] = json!((times(call).0 + nth * 1_000).to_string());
    record
}

/// Each part of `call` as a request of its own.
fn parts(call: usize, (split, reviewed): Generated) -> Vec<Value> {
    let messages = texts(reviewed);
    let user = messages[1]["parts"][0]["content"].as_str().unwrap();
    match split {
        Split::Details => vec![timed_span(call, None), timed_details(call, Some(&messages), true)],
        Split::Messages => vec![
            timed_span(call, None),
            logs(&[timed_message(call, "system", SYSTEM, 1)]),
            logs(&[timed_message(call, "user", user, 2)]),
        ],
        Split::Whole => vec![timed_span(call, Some(&messages))],
        Split::WholeThenDetails => vec![timed_span(call, Some(&messages)), timed_details(call, None, true)],
        Split::DetailsWithoutIds => vec![timed_span(call, None), timed_details(call, Some(&messages), false)],
    }
}

/// Generated calls, their parts, and an order to send them in, but for one pair whose
/// order is kept: a span before its details event without ids (that event, whole by
/// itself, is judged at once as a call of its own, with no span id, and the span coming
/// later is ignored as a part of it). One call's message events arrive in any order:
/// each is placed by its time.
fn sent() -> impl Strategy<Value = (Vec<Value>, Vec<usize>)> {
    let call = (prop::sample::select(&SPLITS[..]), any::<bool>());
    prop::collection::vec(call, 1..5).prop_flat_map(|calls| {
        let (mut requests, mut ordered) = (Vec::new(), Vec::new());
        for (i, call) in calls.iter().enumerate() {
            if matches!(call.0, Split::DetailsWithoutIds) {
                ordered.push((requests.len(), requests.len() + 1));
            }
            requests.extend(parts(i, *call));
        }
        let order = Just((0..requests.len()).collect::<Vec<_>>()).prop_shuffle();
        (Just(requests), order.prop_map(move |order| keep_order(order, &ordered)))
    })
}

/// `order` with each pair of requests `(first, then)` sent in that order.
fn keep_order(mut order: Vec<usize>, pairs: &[(usize, usize)]) -> Vec<usize> {
    for &(first, then) in pairs {
        let at = |request: usize, order: &[usize]| order.iter().position(|&r| r == request).unwrap();
        let (a, b) = (at(first, &order), at(then, &order));
        if a > b {
            order.swap(a, b);
        }
    }
    order
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_calls_parts_in_any_order_are_judged_as_trace_judges_them_together((requests, order) in sent()) {
        let packets = packets();
        let all: Vec<&Value> = requests.iter().collect();
        let expected = verdicts(&traced(&packets, &all));
        let t0 = Instant::now();
        let mut window = Window::new(10 * SECOND, 100);
        let timed: Vec<(&Value, Instant)> =
            order.iter().enumerate().map(|(k, &i)| (&requests[i], t0 + Duration::from_millis(k as u64))).collect();
        let judged = serve(&mut window, &packets, &timed);
        prop_assert_eq!(window.held(), 0, "a part still waits after every part came");
        prop_assert!(window.drain().is_empty());
        prop_assert!(judged.iter().all(|j| j.expired().is_none()), "{:#?}", judged);
        let mut last: BTreeMap<String, Verdict> = BTreeMap::new();
        for j in &judged {
            let before = last.insert(crate::trace::record::test_name(&j.call.span_id), j.verdict.clone());
            prop_assert!(before.as_ref() != Some(&j.verdict), "{} reported twice unchanged", j.call.span_id);
        }
        prop_assert_eq!(last.into_iter().collect::<Vec<_>>(), expected);
    }
}
