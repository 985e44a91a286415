//! A packet file judged whole: the golden packet of a suite's fixture is judged
//! with the request it was made from (so `packet::regenerates` and
//! `packet::branch-isolation` apply), any other packet on its own.

use super::{judge, Origin, Step, Subject};
use crate::Invocation;
use crate::{Outcome, PacketCheck};
use serde_json::Value;
use std::path::Path;

/// Every rule that applies to the packet read from `file`, as `step` asks: the one
/// verdict `validate`, `verify`, `prepare`, `wire` and `trace` give a packet file.
/// Finding its fixture costs one path resolution (and, for a golden packet, one
/// request read), never a listing of the corpus.
pub fn packet_file(file: &Path, value: &Value, config: &Invocation, step: Step) -> Outcome {
    let mut outcome = Outcome::new(file.display().to_string(), Vec::new());
    let case = crate::corpus::case_of_golden_packet(config, file).unwrap_or_else(|e| {
        for check in [PacketCheck::Regenerates, PacketCheck::BranchIsolation] {
            outcome.skip(check, format!("the fixture this golden packet belongs to could not be read: {e}"));
        }
        None
    });
    judge(&mut outcome, &Subject::packet(value, case.as_ref().map(Origin::Case)), config, step);
    crate::numbers::quote_as_written_in(&mut outcome.findings, file, config.settings().limits.max_file_bytes);
    outcome.notes.extend(crate::packet::notes(value, config));
    outcome
}
