//! Golden files are (re)written here and nowhere else, through one guarded entry,
//! [`write_golden`]: never under CI (golden files change only by a deliberate local
//! command, and the change is then reviewed), never for a negative case (its
//! hand-broken packet is the point), compiled before anything is written (a
//! refused request leaves its golden files alone), judged by every packet rule that
//! applies (a packet an exporter made that fails one is reported, never written), and
//! a file whose bytes would not change is not rewritten.
//!
//! Two callers ask: `packetproof bless [FILTER]` ([`bless`], or [`plan`] then
//! [`apply`] per accepted case for `bless --review`) and the conformance runner
//! under `PACKETPROOF_BLESS=1` ([`bless_from_test`]). Each case is reported as
//! new, updated or unchanged.

use crate::corpus::{self, Case};
use crate::env::Env;
use crate::{canonical, fsutil, provider, Config, Error, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Who asks for golden files to be written; the refusals say it in their terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requester {
    /// `packetproof bless`.
    Command,
    /// `PACKETPROOF_BLESS=1 cargo test`.
    Test,
    /// `packetproof init`: the first golden files of a new suite's examples. Allowed
    /// under CI: there is no reviewed golden file yet that a write could change.
    Init,
}

/// What blessing does (or did) to one case's golden files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// No golden files yet.
    New,
    /// The golden files differ from what the request compiles to now.
    Updated,
    /// Already current: nothing is written.
    Unchanged,
}

impl Change {
    pub fn word(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Updated => "updated",
            Change::Unchanged => "unchanged",
        }
    }
}

/// One case's golden files as they are and as blessing would write them.
#[derive(Debug, Clone)]
pub struct Pending {
    pub case: Case,
    pub change: Change,
    /// The golden packet now (absent for a new case), for a diff.
    pub golden: Option<Value>,
    pub packet: Value,
    packet_text: String,
    view_text: String,
}

/// The cases whose name contains `filter`, compiled, each with what blessing it
/// would change. Nothing is written. Refused under CI.
pub fn plan(config: &Config, filter: Option<&str>) -> Result<Vec<Pending>> {
    refuse_under_ci("bless", Requester::Command)?;
    let matching: Vec<Case> =
        corpus::cases(config)?.into_iter().filter(|c| filter.is_none_or(|f| c.name.contains(f))).collect();
    if matching.is_empty() {
        return Err(Error::Usage(format!(
            "no fixture under {} matches {:?}",
            config.paths.fixtures.display(),
            filter.unwrap_or("")
        )));
    }
    // A case with its own (hand-broken) packet has nothing to bless.
    let (selected, negative): (Vec<Case>, Vec<Case>) = matching.into_iter().partition(|c| !c.has_own_packet());
    if selected.is_empty() {
        let names: Vec<&str> = negative.iter().map(|c| c.name.as_str()).collect();
        return Err(Error::refused(
            names.join(", "),
            "checks a packet of its own (a negative case: expect.toml [packet] or runtime-packet.json); such cases are never blessed",
        ));
    }
    selected.into_iter().map(|case| pending(config, case)).collect()
}

/// Bless every case whose name contains `filter`; returns each case with what
/// changed. Identical files are not rewritten. Refused under CI.
pub fn bless(config: &Config, filter: Option<&str>) -> Result<Vec<(String, Change)>> {
    let mut done = Vec::new();
    for pending in plan(config, filter)? {
        apply(config, &pending, Requester::Command)?;
        done.push((pending.case.name, pending.change));
    }
    Ok(done)
}

/// `PACKETPROOF_BLESS=1 cargo test [FILTER]` asks the conformance runner to
/// re-bless the cases whose golden packet no longer regenerates.
pub fn requested_by_env() -> Result<bool> {
    Ok(Env::current()?.bless)
}

/// Bless one case from a test; under CI this refuses and says so.
pub fn bless_from_test(config: &Config, case: &Case) -> Result<()> {
    write_golden(config, case, Requester::Test).map(|_| ())
}

/// The one way golden files are written (see the module docs).
pub fn write_golden(config: &Config, case: &Case, requester: Requester) -> Result<Change> {
    refuse_under_ci(&case.name, requester)?;
    let pending = pending(config, case.clone())?;
    apply(config, &pending, requester)?;
    Ok(pending.change)
}

/// Write a planned case's golden files (only those whose bytes change). The
/// golden directory itself must exist: a misspelt one is never created.
pub fn apply(config: &Config, pending: &Pending, requester: Requester) -> Result<()> {
    let case = &pending.case;
    refuse_under_ci(&case.name, requester)?;
    if pending.change == Change::Unchanged {
        return Ok(());
    }
    corpus::layout::require_dirs(config)?;
    std::fs::create_dir_all(&case.golden_dir).map_err(|e| Error::io(&case.golden_dir, e))?;
    write_if_changed(&case.golden_packet(), pending.packet_text.as_bytes())?;
    write_if_changed(&case.golden_agent_request(), pending.view_text.as_bytes())?;
    Ok(())
}

/// Compile a case (refused requests leave the golden files alone) and compare.
pub(crate) fn pending(config: &Config, case: Case) -> Result<Pending> {
    if case.has_own_packet() {
        return Err(Error::refused(
            &case.name,
            "checks a packet of its own (a negative case: expect.toml [packet] or runtime-packet.json); it is never blessed",
        ));
    }
    // A request that no longer compiles fails a check (as `packet::regenerates` says): exit 1.
    let packet = corpus::produce(&case, config).map_err(Error::as_failed_check)?;
    // A packet is blessed only if it passes every packet rule that applies to it (an
    // exporter's packet too): a golden file is what the gate then holds others to.
    let mut findings = crate::judge::packet_findings(&packet, config);
    if let (Some(map), Ok(())) =
        (packet.as_object(), crate::judge::enabled(crate::PacketCheck::BranchIsolation, config))
    {
        let request = case.request_path().display().to_string();
        findings.extend(crate::check::branch_isolation(map, &case.request, config, &request));
    }
    if !findings.is_empty() {
        return Err(Error::Failed {
            file: format!("{} (made from {})", case.name, case.request_path().display()),
            findings,
        });
    }
    let agent_request = provider::agent_request(packet.as_object().expect("a compiled packet is an object"));
    let (packet_text, view_text) = (canonical::to_pretty(&packet), canonical::to_pretty(&agent_request));
    let same = |path: &Path, text: &str| {
        fsutil::read_bytes(path, fsutil::DEFAULT_MAX_BYTES).is_ok_and(|old| old == text.as_bytes())
    };
    let change = if !case.golden_packet().exists() {
        Change::New
    } else if same(&case.golden_packet(), &packet_text) && same(&case.golden_agent_request(), &view_text) {
        Change::Unchanged
    } else {
        Change::Updated
    };
    let golden = fsutil::read_json(&case.golden_packet(), config.limits.max_file_bytes).ok();
    Ok(Pending { case, change, golden, packet, packet_text, view_text })
}

/// Golden folders that belong to no fixture, and what `--unreferenced` does with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreferenced {
    /// List them; bless still succeeds.
    Warn,
    /// List them and fail.
    Reject,
    /// Remove their golden files (and the folder, once empty).
    Delete,
}

/// The golden folders no fixture explains; with `Delete`, removes their golden
/// files (never anything else) and the folders left empty. Returns the folders.
pub fn unreferenced(config: &Config, action: Unreferenced) -> Result<Vec<PathBuf>> {
    let cases = corpus::cases(config)?;
    let folders = corpus::layout::layout(config, &cases)?.unreferenced_golden;
    if action == Unreferenced::Delete {
        refuse_under_ci("bless --unreferenced delete", Requester::Command)?;
        for folder in &folders {
            for name in [corpus::PACKET_FILE, corpus::AGENT_REQUEST_FILE] {
                let file = folder.join(name);
                if file.is_file() {
                    std::fs::remove_file(&file).map_err(|e| Error::io(&file, e))?;
                }
            }
            // Only empty folders go, up to (not including) the golden root.
            for dir in folder.ancestors().take_while(|d| *d != config.paths.golden) {
                if std::fs::remove_dir(dir).is_err() {
                    break;
                }
            }
        }
    }
    Ok(folders)
}

fn refuse_under_ci(origin: &str, requester: Requester) -> Result<()> {
    if !Env::current()?.ci {
        return Ok(());
    }
    Err(Error::refused(
        origin,
        match requester {
            Requester::Command => "CI is set: golden files are never written under CI; bless locally and commit",
            Requester::Test => "PACKETPROOF_BLESS is set but so is CI: golden files are never written under CI",
            Requester::Init => return Ok(()),
        },
    ))
}

/// Identical bytes are left alone: the file keeps its timestamp and no watcher fires.
fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool> {
    if crate::fsutil::read_bytes(path, crate::fsutil::DEFAULT_MAX_BYTES).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    fsutil::write_atomic(path, bytes)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An atomic write replaces the file (a new inode); an untouched file keeps its own.
    #[cfg(unix)]
    #[test]
    fn identical_bytes_are_not_rewritten() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("golden.json");
        let inode = |p: &Path| std::fs::metadata(p).unwrap().ino();
        assert!(write_if_changed(&path, b"{}\n").unwrap());
        let first = inode(&path);
        assert!(!write_if_changed(&path, b"{}\n").unwrap(), "identical bytes were rewritten");
        assert_eq!(inode(&path), first);
        assert!(write_if_changed(&path, b"[]\n").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"[]\n");
    }
}
