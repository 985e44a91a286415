//! The held-back schema snapshots of the runs one invocation reads, hashed and parsed
//! once per distinct bytes. Every run of a suite holds the same snapshot (prepare
//! writes the suite's schema file), and each step and check that opens a run
//! hashes and parses it: the gate did so about eight times per fixture. Kept in the
//! invocation's context ([`Invocation::cache`]) by their whole bytes, compared in full
//! (cheaper than hashing them again), for the last few distinct snapshots.

use crate::canonical::{self, ParseError};
use crate::digest;
use crate::invocation::Recent;
use crate::Invocation;
use serde_json::Value;
use std::sync::{Arc, OnceLock};

/// How many distinct snapshots are kept (a suite has one per schema file; a damaged
/// copy the self-test judges passes through without evicting them for long).
const KEPT: usize = 4;

struct Snapshot {
    bytes: Arc<Vec<u8>>,
    sha256: String,
    parsed: OnceLock<Result<Arc<Value>, ParseError>>,
}

/// The snapshots an invocation has read, the most recently used first.
struct Known(Recent<Arc<Snapshot>>);

fn known(bytes: &Arc<Vec<u8>>, config: &Invocation) -> Arc<Snapshot> {
    let known = config.cache(|| Known(Recent::new(KEPT)));
    let is = |k: &Arc<Snapshot>| Arc::ptr_eq(&k.bytes, bytes) || k.bytes.as_slice() == bytes.as_slice();
    known.0.get_or_make(is, || {
        let sha256 = digest::sha256(bytes);
        Arc::new(Snapshot { bytes: Arc::clone(bytes), sha256, parsed: OnceLock::new() })
    })
}

/// `digest::sha256` of a snapshot's bytes.
pub(crate) fn sha256(bytes: &Arc<Vec<u8>>, config: &Invocation) -> String {
    known(bytes, config).sha256.clone()
}

/// `canonical::parse` of a snapshot's bytes, shared.
pub(crate) fn parsed(bytes: &Arc<Vec<u8>>, config: &Invocation) -> Result<Arc<Value>, ParseError> {
    let snapshot = known(bytes, config);
    snapshot.parsed.get_or_init(|| canonical::parse(&snapshot.bytes).map(Arc::new)).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is kept is what hashing and parsing the bytes afresh give, whichever
    /// snapshots were seen in between (more than are kept, the same bytes in
    /// another allocation, bytes that do not parse).
    #[test]
    fn a_kept_snapshot_is_the_one_its_bytes_make() {
        let config = Invocation::from(crate::Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap());
        let texts: Vec<Vec<u8>> = (0..2 * KEPT)
            .map(|i| format!("{{\"schema\": {{\"type\": \"object\", \"n\": {i}}}}}").into_bytes())
            .chain([b"{\"schema\": ".to_vec(), b"{\"a\": 1, \"a\": 2}".to_vec()])
            .collect();
        for round in 0..3 {
            for text in texts.iter().rev().skip(round) {
                let bytes = Arc::new(text.clone());
                assert_eq!(sha256(&bytes, &config), digest::sha256(text));
                let fresh = canonical::parse(text).map(Arc::new);
                assert_eq!(parsed(&bytes, &config).map_err(|e| e.to_string()), fresh.map_err(|e| e.to_string()));
            }
        }
    }
}
