//! A packet file judged whole: the golden packet of a suite's fixture is judged
//! with the request it was made from (so `packet::regenerates` and
//! `packet::branch-isolation` apply), any other packet on its own.

use super::{judge, Origin, Step, Subject};
use crate::corpus::Case;
use crate::{Config, Outcome};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The golden packets of the corpus cases that have no packet of their own, by
/// resolved path: found once, so each judged file costs one path resolution.
pub(crate) struct GoldenPackets<'a>(BTreeMap<PathBuf, &'a Case>);

impl<'a> GoldenPackets<'a> {
    pub(crate) fn of(corpus: &'a [Case]) -> Self {
        let cases = corpus.iter().filter(|c| !c.has_own_packet());
        GoldenPackets(cases.filter_map(|c| Some((c.golden_packet().canonicalize().ok()?, c))).collect())
    }

    pub(crate) fn case_of(&self, file: &Path) -> Option<&'a Case> {
        self.0.get(&file.canonicalize().ok()?).copied()
    }
}

/// Every rule that applies to the packet read from `file`, as `step` asks: the one
/// verdict `validate`, `verify`, `prepare`, `wire` and `trace` give a packet file.
pub fn packet_file(file: &Path, value: &Value, config: &Config, step: Step) -> Outcome {
    match crate::corpus::cases(config) {
        Ok(corpus) => packet_in(file, value, &GoldenPackets::of(&corpus), config, step),
        Err(e) => {
            let mut outcome = Outcome::new(file.display().to_string(), Vec::new());
            for check in [crate::PacketCheck::Regenerates, crate::PacketCheck::BranchIsolation] {
                outcome.skip(check, format!("the suite's fixtures could not be read: {e}"));
            }
            judge(&mut outcome, &Subject::packet(value, None), config, step);
            crate::numbers::quote_as_written_in(&mut outcome.findings, file, config.limits.max_file_bytes);
            outcome.notes.extend(crate::packet::notes(value, config));
            outcome
        }
    }
}

/// [`packet_file`] with the corpus's golden packets found once (`verify` judges many files).
pub(crate) fn packet_in(file: &Path, value: &Value, golden: &GoldenPackets, config: &Config, step: Step) -> Outcome {
    let mut outcome = Outcome::new(file.display().to_string(), Vec::new());
    let origin = golden.case_of(file).map(Origin::Case);
    judge(&mut outcome, &Subject::packet(value, origin), config, step);
    crate::numbers::quote_as_written_in(&mut outcome.findings, file, config.limits.max_file_bytes);
    outcome.notes.extend(crate::packet::notes(value, config));
    outcome
}
