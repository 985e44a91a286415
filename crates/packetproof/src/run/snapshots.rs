//! The held-back schema snapshots of the runs one process reads, hashed and parsed
//! once per distinct bytes. Every run of a suite holds the same snapshot (prepare
//! writes the suite's schema file), and each step and check that opens a run
//! hashes and parses it: the gate did so about eight times per fixture. Kept by
//! their whole bytes, compared in full, for the last few distinct snapshots.

use crate::canonical::{self, ParseError};
use crate::digest;
use serde_json::Value;
use std::sync::{Arc, Mutex, OnceLock};

/// How many distinct snapshots are kept (a suite has one per schema file; a damaged
/// copy the self-test judges passes through without evicting them for long).
const KEPT: usize = 4;

struct Snapshot {
    bytes: Arc<Vec<u8>>,
    sha256: String,
    parsed: OnceLock<Result<Arc<Value>, ParseError>>,
}

/// The most recently used first.
static KNOWN: Mutex<Vec<Arc<Snapshot>>> = Mutex::new(Vec::new());

fn known(bytes: &Arc<Vec<u8>>) -> Arc<Snapshot> {
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    let found = known.iter().position(|k| Arc::ptr_eq(&k.bytes, bytes) || k.bytes.as_slice() == bytes.as_slice());
    let snapshot = match found {
        Some(i) => known.remove(i),
        None => {
            let sha256 = digest::sha256(bytes);
            Arc::new(Snapshot { bytes: Arc::clone(bytes), sha256, parsed: OnceLock::new() })
        }
    };
    known.insert(0, Arc::clone(&snapshot));
    known.truncate(KEPT);
    snapshot
}

/// `digest::sha256` of a snapshot's bytes.
pub(crate) fn sha256(bytes: &Arc<Vec<u8>>) -> String {
    known(bytes).sha256.clone()
}

/// `canonical::parse` of a snapshot's bytes, shared.
pub(crate) fn parsed(bytes: &Arc<Vec<u8>>) -> Result<Arc<Value>, ParseError> {
    let snapshot = known(bytes);
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
        let texts: Vec<Vec<u8>> = (0..2 * KEPT)
            .map(|i| format!("{{\"schema\": {{\"type\": \"object\", \"n\": {i}}}}}").into_bytes())
            .chain([b"{\"schema\": ".to_vec(), b"{\"a\": 1, \"a\": 2}".to_vec()])
            .collect();
        for round in 0..3 {
            for text in texts.iter().rev().skip(round) {
                let bytes = Arc::new(text.clone());
                assert_eq!(sha256(&bytes), digest::sha256(text));
                let fresh = canonical::parse(text).map(Arc::new);
                assert_eq!(parsed(&bytes).map_err(|e| e.to_string()), fresh.map_err(|e| e.to_string()));
            }
        }
    }
}
