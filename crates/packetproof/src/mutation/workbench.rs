//! One working copy of a golden packet for all of a case's mutations: each edit
//! damages it, and afterwards only the members the edit changed are copied back
//! from the golden packet. A fresh whole copy per mutation (the packet's schema is
//! half its size) cost more than the checks that judged it.

use crate::digest::incremental::identical;
use serde_json::{Map, Value};

pub(super) struct Workbench<'a> {
    golden: &'a Map<String, Value>,
    work: Map<String, Value>,
}

impl<'a> Workbench<'a> {
    pub(super) fn new(golden: &'a Map<String, Value>) -> Self {
        Workbench { golden, work: golden.clone() }
    }

    /// The working copy, the golden packet exactly (values and key order) until edited.
    pub(super) fn packet(&mut self) -> &mut Map<String, Value> {
        &mut self.work
    }

    /// Make the working copy the golden packet again, key order included: an edit
    /// that moved a key is undone too, since a check may read members in order.
    pub(super) fn restore(&mut self) {
        let same_keys = self.work.len() == self.golden.len() && self.work.keys().eq(self.golden.keys());
        if !same_keys {
            self.work = self.golden.clone();
            return;
        }
        for ((_, work), (_, golden)) in self.work.iter_mut().zip(self.golden) {
            if !identical(work, golden) {
                *work = golden.clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Whatever an edit did (a member changed, removed, added, a nested key moved),
    /// the restored copy is the golden packet with its key order.
    #[test]
    fn a_restored_copy_is_the_golden_packet_in_its_order() {
        let golden = json!({"a": 1, "b": {"x": 1, "y": [1, 2]}, "c": "text"}).as_object().unwrap().clone();
        let order = |map: &Map<String, Value>| serde_json::to_string(map).unwrap();
        let mut bench = Workbench::new(&golden);
        type Edit = Box<dyn Fn(&mut Map<String, Value>)>;
        let edits: Vec<Edit> = vec![
            Box::new(|p| p["c"] = json!("other")),
            Box::new(|p| {
                p.remove("a");
            }),
            Box::new(|p| {
                p.insert("d".into(), json!(null));
            }),
            Box::new(|p| {
                let b = p["b"].as_object_mut().unwrap();
                let x = b.remove("x").unwrap();
                b.insert("x".into(), x);
            }),
            Box::new(|p| p["b"]["y"][1] = json!(3)),
        ];
        for edit in edits {
            edit(bench.packet());
            assert_ne!(order(bench.packet()), order(&golden));
            bench.restore();
            assert_eq!(order(bench.packet()), order(&golden));
        }
    }
}
