//! The findings of the packet rules that read the packet alone, kept for each
//! packet one fixture's judgements see. A fixture's trials and the steps that
//! assemble its run (prepare, evaluate, complete, the run checks, the evaluator's
//! verdict) judge the same packet under the same settings about five times; each
//! rule now runs once per packet. Such a rule's findings are a function of the
//! rule, the packet and the settings, so the memo keys on all three: the packet
//! compared whole, key order included (a rule may read members in order), and the
//! run it was made for (its invocation's context, [`Invocation::run`]: the
//! settings, the command's policy and the resource files as that run read them;
//! asked under another, it runs the rule afresh). Whether a rule applies is still
//! decided by every judgement for its own step. A memo lives as long as the fixture
//! (or the step) that made it, and keeps the [`PACKETS`] most recently judged packets.

use super::dispatch;
use crate::check::Checked;
use crate::digest::incremental::identical;
use crate::invocation::{Recent, RunMark};
use crate::{Check, Finding, Invocation, PacketCheck, Reads};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// How many packets one memo keeps: a fixture's golden packet, the packets its run's
/// steps rebuild and the self-test's damaged copies of them, with room to spare.
pub(crate) const PACKETS: usize = 64;

/// A rule's findings, or why its inputs could not be read.
type Found = Result<Vec<Finding>, String>;

/// The rules' findings on each packet seen, for one set of settings.
pub(crate) struct Memo {
    /// The run the findings were made in.
    run: RunMark,
    /// The packets seen, compared whole, the most recently judged first.
    packets: Recent<(Arc<Value>, Arc<OnePacket>)>,
}

/// The findings of the rules that have run on one packet.
#[derive(Default)]
pub(crate) struct OnePacket(Mutex<Vec<(PacketCheck, Found)>>);

/// Whether `check` reads the packet and nothing else (no request, no run), so that
/// its findings depend on the packet and the settings only.
pub(crate) fn reads_the_packet_alone(check: Check) -> bool {
    matches!(check, Check::Packet(_)) && check.rule().reads == Reads::Packet
}

impl Memo {
    pub(crate) fn new(config: &Invocation) -> Memo {
        Memo { run: config.run(), packets: Recent::new(PACKETS) }
    }

    /// The findings kept for `packet` (a new entry the first time it is seen);
    /// `None` under settings the memo was not made for.
    pub(crate) fn rules(&self, packet: &Value, config: &Invocation) -> Option<Arc<OnePacket>> {
        if self.run != config.run() {
            return None;
        }
        let is = |(seen, _): &(Arc<Value>, Arc<OnePacket>)| identical(seen, packet);
        let (_, rules) = self.packets.get_or_make(is, || (Arc::new(packet.clone()), Arc::default()));
        Some(rules)
    }

    /// `check` on `packet` as [`dispatch::on_packet`] judges it, the findings of a
    /// rule that reads the packet alone from the memo (`origin` is not read by such
    /// a rule).
    pub(crate) fn on_packet(
        &self,
        check: PacketCheck,
        packet: &Value,
        origin: Option<super::Origin>,
        config: &Invocation,
    ) -> Result<Checked, String> {
        let run = || dispatch::on_packet(check, packet, origin, config).map_err(|e| e.to_string());
        if !reads_the_packet_alone(check.into()) {
            return run();
        }
        match self.rules(packet, config) {
            Some(rules) => rules.found(check, || run().map(|checked| checked.findings)).map(Checked::from),
            None => run(),
        }
    }
}

impl OnePacket {
    /// The findings of `check`, run by `run` the first time.
    pub(crate) fn found(&self, check: PacketCheck, run: impl FnOnce() -> Found) -> Found {
        let kept = |rules: &Self| {
            let list = rules.0.lock().unwrap_or_else(|e| e.into_inner());
            list.iter().find(|(seen, _)| *seen == check).map(|(_, found)| found.clone())
        };
        if let Some(found) = kept(self) {
            return found;
        }
        // Run outside the lock: two trials asking at once both run it, and agree.
        let found = run();
        let mut list = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !list.iter().any(|(seen, _)| *seen == check) {
            list.push((check, found.clone()));
        }
        found
    }
}
