//! What one run works out once and shares: every cache of the library lives here,
//! owned by the [`Invocation`] (its clones share it; [`Invocation::reading_once`]
//! starts a new one), and is dropped with the run's last clone. A cache is one value
//! of its own type ([`Invocation::cache`]), defined beside the code that fills it,
//! keyed by what its entries were made from and bounded ([`Recent`]). No cache lives
//! in a `static`: two runs in one process (the gate's tests, `serve`) never see each
//! other's entries, and nothing grows for as long as the process lives.

use super::Invocation;
use std::any::Any;
use std::sync::{Arc, Mutex, PoisonError};

/// The caches of one run, one of each type. Bounded by the number of cache types
/// (each module's own, a handful); each cache bounds its own entries. A cache holds
/// no clone of the invocation (it would keep the run alive: [`RunMark`] names a run).
#[derive(Default)]
pub(super) struct Context(Mutex<Vec<Arc<dyn Any + Send + Sync>>>);

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Context")
    }
}

impl Invocation {
    /// The run's cache of type `T`: `make` runs on first use (the judges of template
    /// conformance read every golden packet once), and every clone of the invocation
    /// shares what it made.
    pub(crate) fn cache<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        let mut made = self.context.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = made.iter().find_map(|any| any.clone().downcast::<T>().ok()) {
            return found;
        }
        let value = Arc::new(make());
        made.push(value.clone());
        value
    }

    /// Which run this invocation belongs to: equal for its clones, and for no other
    /// invocation while the mark is held. Holding it keeps no cache alive.
    pub(crate) fn run(&self) -> RunMark {
        RunMark(Arc::downgrade(&self.context))
    }
}

/// A run's mark ([`Invocation::run`]): what was worked out for one run is asked for
/// under the same run only. (A weak reference: the context's address is not reused
/// while a mark of it is held.)
#[derive(Debug, Clone)]
pub(crate) struct RunMark(std::sync::Weak<Context>);

impl PartialEq for RunMark {
    fn eq(&self, other: &RunMark) -> bool {
        self.0.ptr_eq(&other.0)
    }
}

/// The `cap` most recently used values, the newest first: asked for one that is not
/// kept, the oldest is dropped. A linear search, for the few entries a run reuses.
pub(crate) struct Recent<V> {
    cap: usize,
    kept: Mutex<Vec<V>>,
}

impl<V: Clone> Recent<V> {
    pub(crate) fn new(cap: usize) -> Recent<V> {
        Recent { cap, kept: Mutex::new(Vec::new()) }
    }

    /// The kept value `is` accepts, now the most recent.
    pub(crate) fn find(&self, is: impl Fn(&V) -> bool) -> Option<V> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let at = kept.iter().position(is)?;
        let value = kept.remove(at);
        kept.insert(0, value.clone());
        Some(value)
    }

    /// The kept value `is` accepts, else `make`'s, kept. `make` runs outside the
    /// lock: two threads may both make one, and the first kept is what both return.
    pub(crate) fn get_or_make(&self, is: impl Fn(&V) -> bool, make: impl FnOnce() -> V) -> V {
        if let Some(found) = self.find(&is) {
            return found;
        }
        let value = make();
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(first) = kept.iter().find(|v| is(v)) {
            return first.clone();
        }
        kept.insert(0, value.clone());
        kept.truncate(self.cap);
        value
    }

    /// [`Recent::get_or_make`] for a `make` that may fail: what failed is not kept.
    pub(crate) fn get_or_try<E>(&self, is: impl Fn(&V) -> bool, make: impl FnOnce() -> Result<V, E>) -> Result<V, E> {
        if let Some(found) = self.find(&is) {
            return Ok(found);
        }
        let value = make()?;
        Ok(self.get_or_make(is, || value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past its cap the least recently used value goes; a value asked for again is kept.
    #[test]
    fn recent_keeps_the_most_recently_used() {
        let recent = Recent::new(2);
        for n in [1, 2, 1, 3] {
            recent.get_or_make(|v| *v == n, || n);
        }
        assert_eq!(recent.find(|v| *v == 2), None, "2 was the least recently used");
        assert_eq!(recent.find(|v| *v == 1), Some(1));
        assert_eq!(recent.find(|v| *v == 3), Some(3));
        assert_eq!(recent.get_or_try(|v| *v == 4, || Err::<i32, _>("no")), Err("no"));
        assert_eq!(recent.find(|v| *v == 1), Some(1), "a failure keeps nothing");
    }

    /// Clones share one context; a run read once has its own, and drops it with itself.
    #[test]
    fn a_context_belongs_to_one_run() {
        let invocation =
            Invocation::from(crate::Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap());
        let clone = invocation.clone();
        assert!(invocation.run() == clone.run());
        assert!(Arc::ptr_eq(&invocation.cache(|| 1_u8), &clone.cache(|| 2_u8)));
        let once = invocation.reading_once();
        assert!(once.run() != invocation.run());
        assert_eq!(*once.cache(|| 3_u8), 3);
        let (weak, mark) = (Arc::downgrade(&once.cache(|| 0_u8)), once.run());
        drop(once);
        assert!(weak.upgrade().is_none(), "dropped with the run, though its mark is held");
        assert!(mark != invocation.reading_once().run());
    }
}
