//! The admission path's accounting, as a property: whatever order bodies take bytes and
//! end in, a take succeeds exactly when the connection's share and the reading budget
//! both have room, the budget, the gauge and every share hold exactly the bytes of the
//! bodies still open, and all of it is given back when they end.

use super::*;
use proptest::prelude::*;

const BUDGET: usize = 64;
const CONNECTIONS: usize = 3;
const BODIES: usize = 6;

#[derive(Debug, Clone)]
enum Op {
    Take { body: usize, bytes: usize },
    End { body: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..BODIES, 1..=BUDGET / 2).prop_map(|(body, bytes)| Op::Take { body, bytes }),
        1 => (0..BODIES).prop_map(|body| Op::End { body }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_budget_and_the_shares_hold_exactly_the_open_bodies(ops in proptest::collection::vec(op(), 1..60)) {
        let reading = Arc::new(tokio::sync::Semaphore::new(BUDGET));
        let gauge = prometheus_client::metrics::gauge::Gauge::default();
        let shares: Vec<Share> = (0..CONNECTIONS).map(|_| Share::default()).collect();
        let share_limit = BUDGET / 2;
        // Body i is on connection i % CONNECTIONS; `held[i]` is what the model says it holds.
        let open = |i: usize| BodyBytes { permit: None, gauge: gauge.clone(), share: shares[i % CONNECTIONS].clone() };
        let mut bodies: Vec<BodyBytes> = (0..BODIES).map(open).collect();
        let mut held = [0usize; BODIES];
        for op in ops {
            match op {
                Op::Take { body, bytes } => {
                    let on_connection: usize = (0..BODIES).filter(|b| b % CONNECTIONS == body % CONNECTIONS).map(|b| held[b]).sum();
                    let total: usize = held.iter().sum();
                    let room = on_connection + bytes <= share_limit && total + bytes <= BUDGET;
                    let taken = bodies[body].take(&reading, bytes, share_limit);
                    prop_assert_eq!(taken.is_ok(), room, "take {} on body {}", bytes, body);
                    if room {
                        held[body] += bytes;
                    }
                }
                Op::End { body } => {
                    bodies[body] = open(body);
                    held[body] = 0;
                }
            }
            let total: usize = held.iter().sum();
            prop_assert_eq!(reading.available_permits(), BUDGET - total);
            prop_assert_eq!(gauge.get(), total as i64);
            for (c, share) in shares.iter().enumerate() {
                let own: usize = (0..BODIES).filter(|b| b % CONNECTIONS == c).map(|b| held[b]).sum();
                prop_assert_eq!(share.0.load(std::sync::atomic::Ordering::Relaxed), own);
            }
        }
        drop(bodies);
        prop_assert_eq!(reading.available_permits(), BUDGET);
        prop_assert_eq!(gauge.get(), 0);
        prop_assert!(shares.iter().all(|s| s.0.load(std::sync::atomic::Ordering::Relaxed) == 0));
    }

    /// A body's next bytes are due no later than its timeout, no earlier than the grace,
    /// and later the more it has sent.
    #[test]
    fn a_body_is_due_within_its_timeout_and_later_the_more_it_sent(
        sent in 0usize..10_000_000, more in 0usize..1_000_000, rate in 1u64..100_000, timeout in 1u64..120,
    ) {
        let pace = Pace { timeout: Duration::from_secs(timeout), min_rate: rate };
        let start = tokio::time::Instant::now();
        let due = pace.due(start, sent);
        prop_assert!(due <= start + pace.timeout);
        prop_assert!(due >= (start + GRACE).min(start + pace.timeout));
        prop_assert!(pace.due(start, sent + more) >= due);
    }
}
