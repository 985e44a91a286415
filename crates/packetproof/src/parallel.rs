//! Work spread over every core, with results in input order (so reports are the
//! same whatever the number of cores). Plain `std::thread::scope` over a shared
//! counter: nothing here needs a work-stealing pool.

use std::sync::atomic::{AtomicUsize, Ordering};

/// One worker per core the process may use.
pub(crate) fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `f` applied to every item by `workers` threads; the results come back in the
/// order of `items`. Each worker takes the next unclaimed item when it is done with
/// one, so at most `workers` calls of `f` run at once: what a call holds while it
/// runs (a parsed packet) is bounded by the number of workers, not of items.
pub(crate) fn map_in_order<T: Sync, R: Send>(items: &[T], workers: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = workers.clamp(1, items.len().max(1));
    if workers == 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let (f, next) = (&f, &next);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { return mine };
                        mine.push((i, f(item)));
                    }
                })
            })
            .collect();
        // A panicking worker panics the caller, as the same call without threads would.
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    done.sort_unstable_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn results_keep_the_input_order_for_any_number_of_workers() {
        let items: Vec<u64> = (0..500).collect();
        let expected: Vec<u64> = items.iter().map(|i| i * i).collect();
        for workers in [0, 1, 2, 3, 8, 1000] {
            // Uneven work, so workers finish out of order.
            let squares = map_in_order(&items, workers, |&i| {
                if i % 7 == 0 {
                    std::hint::black_box((0..20_000).sum::<u64>());
                }
                i * i
            });
            assert_eq!(squares, expected, "{workers} workers");
        }
        assert!(map_in_order(&[] as &[u8], 4, |&b| b).is_empty());
    }

    #[test]
    fn no_more_items_are_in_hand_at_once_than_there_are_workers() {
        let (live, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let items: Vec<usize> = (0..200).collect();
        let workers = 3;
        map_in_order(&items, workers, |_| {
            let now = live.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            std::hint::black_box((0..5_000).sum::<u64>());
            live.fetch_sub(1, Ordering::SeqCst);
        });
        let most = most.into_inner();
        assert!((1..=workers).contains(&most), "{most} items in hand at once with {workers} workers");
    }
}
