//! Golden files are (re)written here and nowhere else, through one guarded entry,
//! `write_golden`: never under CI (golden files change only by a deliberate local
//! command, and the change is then reviewed), never for a negative case (its
//! hand-broken packet is the point), compiled before anything is written (a
//! refused request leaves its golden files alone), judged by every packet rule that
//! applies (a packet an exporter made that fails one is reported, never written), and
//! a file whose bytes would not change is not rewritten.
//!
//! Two callers ask: `packetproof bless [FILTER]` ([`bless`], or [`plan`] then
//! [`apply`] per accepted case for `bless --review`) and the conformance runner
//! under `PACKETPROOF_BLESS=1` (`bless_from_test`). Each case is reported as
//! new, updated or unchanged.
//!
//! Whether golden files may be written is decided once per process, from the
//! environment, by the command or test runner ([`GoldenWrites::from_env`], as
//! insta's `snapshot_update_behavior`), and passed down to every writer.

use crate::corpus::{self, Case};
use crate::env::Env;
use crate::Invocation;
use crate::{canonical, fsutil, provider, Error, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// May golden files be written? Decided once from the environment and passed down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoldenWrites {
    /// Under CI: never (golden files change only by a deliberate local command).
    /// `bless_requested` keeps `PACKETPROOF_BLESS`, so a test can say why it refuses.
    Never { bless_requested: bool },
    /// Locally: `packetproof bless` writes; tests report stale golden files.
    OnCommand,
    /// Locally with `PACKETPROOF_BLESS=1`: tests re-bless stale golden files too.
    FromTests,
}

impl GoldenWrites {
    /// The decision `env` makes: `CI` forbids every write, `PACKETPROOF_BLESS` lets tests write.
    pub fn from_env(env: &Env) -> GoldenWrites {
        match (env.ci, env.bless) {
            (true, bless_requested) => GoldenWrites::Never { bless_requested },
            (false, true) => GoldenWrites::FromTests,
            (false, false) => GoldenWrites::OnCommand,
        }
    }

    /// Whether tests were asked to re-bless (under CI they then fail, saying why).
    pub(crate) fn tests_bless(self) -> bool {
        matches!(self, GoldenWrites::FromTests | GoldenWrites::Never { bless_requested: true })
    }

    /// Ok when `requester` may write `origin`'s golden files; a refusal saying why otherwise.
    fn permit(self, origin: &str, requester: Requester) -> Result<()> {
        let reason = match (self, requester) {
            // The first golden files of a new suite: no reviewed file exists that a write could change.
            (_, Requester::Init) | (GoldenWrites::OnCommand | GoldenWrites::FromTests, Requester::Command) => {
                return Ok(())
            }
            (GoldenWrites::FromTests, Requester::Test) => return Ok(()),
            (GoldenWrites::OnCommand, Requester::Test) => "tests re-bless golden files only under PACKETPROOF_BLESS=1",
            (GoldenWrites::Never { .. }, Requester::Command) => {
                "CI is set: golden files are never written under CI; bless locally and commit"
            }
            (GoldenWrites::Never { .. }, Requester::Test) => {
                "PACKETPROOF_BLESS is set but so is CI: golden files are never written under CI"
            }
        };
        Err(Error::refused(origin, reason))
    }
}

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
    /// The rules that did not run on the packet, with why.
    pub skipped: Vec<crate::Skipped>,
    packet_text: String,
    view_text: String,
    /// The suite's evaluator's verdict on the fixture's answer, when it has both.
    verdict_text: Option<String>,
}

impl Pending {
    /// The golden agent-request.json, when blessing rewrites it.
    pub fn rewritten_view(&self) -> Option<PathBuf> {
        let file = self.case.golden_agent_request();
        (!holds(&file, self.view_text.as_bytes())).then_some(file)
    }

    /// The golden evaluator verdict blessing writes, when it changes: the file and a
    /// diff of its text (golden on the left, the evaluator's verdict now on the right).
    pub fn rewritten_verdict(&self) -> Option<(PathBuf, String)> {
        let text = self.verdict_text.as_deref()?;
        let file = self.case.golden_verdict();
        if holds(&file, text.as_bytes()) {
            return None;
        }
        let old = fsutil::read_to_string(&file, fsutil::DEFAULT_MAX_BYTES).unwrap_or_default();
        Some((file, crate::diff::unified(&old, text, ("golden verdict", "evaluator now"))))
    }
}

/// The cases whose name contains `filter`, compiled, each with what blessing it
/// would change. Nothing is written. Refused under CI.
pub fn plan(config: &Invocation, filter: Option<&str>, writes: GoldenWrites) -> Result<Vec<Pending>> {
    writes.permit("bless", Requester::Command)?;
    let matching: Vec<Case> =
        corpus::cases(config)?.into_iter().filter(|c| filter.is_none_or(|f| c.name.contains(f))).collect();
    if matching.is_empty() {
        return Err(Error::Usage(format!(
            "no fixture under {} matches {:?}",
            config.settings().paths.fixtures.display(),
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
/// The cases blessed and what changed, and each rule that did not run on some
/// case's packet, with why (once per check and reason).
pub fn bless(config: &Invocation, filter: Option<&str>, writes: GoldenWrites) -> Result<Blessed> {
    let mut done = Blessed::default();
    for pending in plan(config, filter, writes)? {
        apply(config, &pending, writes, Requester::Command)?;
        for skipped in &pending.skipped {
            if !done.skipped.contains(skipped) {
                done.skipped.push(skipped.clone());
            }
        }
        done.cases.push((pending.case.name, pending.change));
    }
    Ok(done)
}

/// Keep each template the app reports it keeps as code (`[exporter] templates`) as its
/// copy under paths.prompts, before anything is blessed against them; returns the
/// names written. Refused where blessing is.
pub fn copy_reported_templates(config: &Invocation, writes: GoldenWrites) -> Result<Vec<String>> {
    if config.settings().exporter.as_ref().is_none_or(|e| e.templates.is_empty()) {
        return Ok(Vec::new());
    }
    writes.permit("bless", Requester::Command)?;
    crate::exporter::copy_reported(config.settings())
}

/// Pin the suite's schema and templates as they are now in its lock file
/// (`packetproof.lock`), after the golden cases were blessed; returns whether the
/// lock changed. Refused where blessing is.
pub fn pin(config: &Invocation, writes: GoldenWrites) -> Result<bool> {
    writes.permit("bless", Requester::Command)?;
    crate::lock::write(config.settings())
}

/// What `bless` did.
#[derive(Debug, Default)]
pub struct Blessed {
    pub cases: Vec<(String, Change)>,
    pub skipped: Vec<crate::Skipped>,
}

/// Bless one case from a test; under CI this refuses and says so.
pub(crate) fn bless_from_test(config: &Invocation, case: &Case, writes: GoldenWrites) -> Result<()> {
    write_golden(config, case, writes, Requester::Test).map(|_| ())
}

/// The one way golden files are written (see the module docs).
pub(crate) fn write_golden(
    config: &Invocation,
    case: &Case,
    writes: GoldenWrites,
    requester: Requester,
) -> Result<Change> {
    writes.permit(&case.name, requester)?;
    let pending = pending(config, case.clone())?;
    apply(config, &pending, writes, requester)?;
    Ok(pending.change)
}

/// Write a planned case's golden files (only those whose bytes change), as one
/// change: both are written to temp files before either replaces its file, so a
/// refusal or an interrupt while writing leaves the case as it was. The packet is
/// renamed last: a packet beside an agent view not made from it (a kill between
/// the two renames) is a finding of `verify` and of the gate, and the next bless
/// rewrites both. Temp files a killed bless left in the case's folder are removed.
/// The golden directory itself must exist: a misspelt one is never created.
pub fn apply(config: &Invocation, pending: &Pending, writes: GoldenWrites, requester: Requester) -> Result<()> {
    let case = &pending.case;
    writes.permit(&case.name, requester)?;
    corpus::layout::require_dirs(config.settings())?;
    // Relative to the opened golden root, never through a symlink: a `golden/<case>`
    // that is a link (or has one on the way) is refused, never written through.
    let golden = fsutil::Dir::open(&config.settings().paths.golden)?;
    golden.create_dir_all(&case.name)?;
    let folder = golden.subdir(&case.name)?;
    // One writer per case at a time (trials bless on several threads), and only
    // under the lock are temp files surely stale, never a live writer's.
    let _lock = fsutil::Lock::on(&folder)?;
    folder.remove_stale_temps()?;
    let mut files = vec![
        (corpus::AGENT_REQUEST_FILE, pending.view_text.as_bytes()),
        (corpus::PACKET_FILE, pending.packet_text.as_bytes()),
    ];
    if let Some(verdict) = &pending.verdict_text {
        // Before the packet, which is renamed last (see above).
        files.insert(1, (corpus::VERDICT_FILE, verdict.as_bytes()));
    }
    folder.write_all(&changed(&case.golden_dir, &files), fsutil::Replace::Allowed)
}

/// The files of `files` (names in `dir`) whose JSON differs. Identical ones are left
/// alone (the file keeps its timestamp and no watcher fires), and so are ones that
/// hold the same values in other spellings (`1.0` for `1`): the gate compares golden
/// files by value, so bless's "unchanged" is its pass.
fn changed<'a>(dir: &Path, files: &[(&'a str, &'a [u8])]) -> Vec<(&'a str, &'a [u8])> {
    files.iter().copied().filter(|(name, bytes)| !holds(&dir.join(name), bytes)).collect()
}

/// Whether the file at `path` already holds `bytes`: the same bytes, or (both JSON)
/// the same values.
fn holds(path: &Path, bytes: &[u8]) -> bool {
    let Ok(old) = fsutil::read_bytes(path, fsutil::DEFAULT_MAX_BYTES) else { return false };
    old == bytes
        || matches!((canonical::parse(&old), canonical::parse(bytes)), (Ok(old), Ok(new)) if crate::numbers::same(&old, &new))
}

/// Compile a case (refused requests leave the golden files alone) and compare.
pub fn pending(config: &Invocation, case: Case) -> Result<Pending> {
    if case.has_own_packet() {
        return Err(Error::refused(
            &case.name,
            "checks a packet of its own (a negative case: expect.toml [packet] or runtime-packet.json); it is never blessed",
        ));
    }
    // A request that no longer compiles fails a check (as `packet::regenerates` says): exit 1.
    let packet = corpus::produce(&case, config)?;
    // A packet is blessed only if it passes every packet rule that applies to it (an
    // exporter's packet too): a golden file is what the gate then holds others to.
    let judged =
        crate::judge::packet(&packet, Some(crate::judge::Origin::Case(&case)), config, crate::judge::Step::Bless);
    if !judged.ok() {
        return Err(Error::Failed {
            file: format!("{} (made from {})", case.name, case.request_path().display()),
            findings: judged.findings,
        });
    }
    let skipped = judged.skipped;
    let agent_request = provider::agent_request(packet.as_object().expect("a compiled packet is an object"));
    let (packet_text, view_text) = (canonical::to_pretty(&packet), canonical::to_pretty(&agent_request));
    // The suite's evaluator judges the fixture's answer to the packet being blessed.
    let verdict_text =
        crate::judge::fixture_run::verdict_for(&case, &packet, config)?.map(|v| canonical::to_pretty(&v));
    let same = |path: &Path, text: &str| holds(path, text.as_bytes());
    let verdict_same = verdict_text.as_deref().is_none_or(|text| same(&case.golden_verdict(), text));
    let change = if !case.golden_packet().exists() {
        Change::New
    } else if same(&case.golden_packet(), &packet_text)
        && same(&case.golden_agent_request(), &view_text)
        && verdict_same
    {
        Change::Unchanged
    } else {
        Change::Updated
    };
    if change != Change::Unchanged {
        let retired = crate::packet::retired_values(&packet, config);
        if !retired.is_empty() {
            return Err(Error::Failed {
                file: format!("{} (made from {})", case.name, case.request_path().display()),
                findings: retired,
            });
        }
    }
    let golden = fsutil::read_json(&case.golden_packet(), config.settings().limits.max_file_bytes).ok();
    Ok(Pending { case, change, golden, packet, skipped, packet_text, view_text, verdict_text })
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
pub fn unreferenced(config: &Invocation, action: Unreferenced, writes: GoldenWrites) -> Result<Vec<PathBuf>> {
    let cases = corpus::cases(config)?;
    let folders = corpus::layout::layout(config.settings(), &cases)?.unreferenced_golden;
    if action == Unreferenced::Delete {
        writes.permit("bless --unreferenced delete", Requester::Command)?;
        for folder in &folders {
            for name in [corpus::PACKET_FILE, corpus::AGENT_REQUEST_FILE, corpus::VERDICT_FILE] {
                let file = folder.join(name);
                if file.is_file() {
                    std::fs::remove_file(&file).map_err(|e| Error::io(&file, e))?;
                }
            }
            // Only empty folders go, up to (not including) the golden root.
            for dir in folder.ancestors().take_while(|d| *d != config.settings().paths.golden) {
                if std::fs::remove_dir(dir).is_err() {
                    break;
                }
            }
        }
    }
    Ok(folders)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_writes_are_decided_by_ci_and_bless() {
        let env = |ci, bless| GoldenWrites::from_env(&Env { ci, bless, root: None, parent: None });
        assert_eq!(env(false, false), GoldenWrites::OnCommand);
        assert_eq!(env(false, true), GoldenWrites::FromTests);
        assert_eq!(env(true, true), GoldenWrites::Never { bless_requested: true });
        let (command, test, init) = (Requester::Command, Requester::Test, Requester::Init);
        assert!(env(false, false).permit("c", command).is_ok() && env(false, false).permit("c", test).is_err());
        assert!(env(false, true).permit("c", test).is_ok() && env(true, false).permit("c", init).is_ok());
        let refused = env(true, true).permit("c", test).unwrap_err().to_string();
        assert!(refused.contains("PACKETPROOF_BLESS is set but so is CI"), "{refused}");
        assert!(env(true, false).permit("c", command).unwrap_err().to_string().contains("bless locally"));
        assert!(env(true, true).tests_bless() && !env(true, false).tests_bless() && !env(false, false).tests_bless());
    }

    /// An atomic write replaces the file (a new inode); an untouched file keeps its own.
    #[cfg(unix)]
    #[test]
    fn identical_bytes_are_not_rewritten() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("golden.json");
        let opened = fsutil::Dir::open(dir.path()).unwrap();
        let write = |bytes: &[u8]| {
            let files = changed(dir.path(), &[("golden.json", bytes)]);
            opened.write_all(&files, fsutil::Replace::Allowed).unwrap();
            !files.is_empty()
        };
        let inode = |p: &Path| std::fs::metadata(p).unwrap().ino();
        assert!(write(b"{}\n"));
        let first = inode(&path);
        assert!(!write(b"{}\n"), "identical bytes were rewritten");
        assert_eq!(inode(&path), first);
        assert!(write(b"[]\n"));
        assert_eq!(std::fs::read(&path).unwrap(), b"[]\n");
    }

    /// A golden file that writes `1.0` for `1` holds the values bless would write: it
    /// is unchanged (the gate passes it too) and is left as it is.
    #[test]
    fn a_golden_file_with_the_same_values_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("golden.json"), b"{\"attempt\": 1.0, \"maxTokens\": 6.4e4}\n").unwrap();
        let blessed = b"{\n  \"attempt\": 1,\n  \"maxTokens\": 64000\n}\n";
        assert!(changed(dir.path(), &[("golden.json", blessed)]).is_empty());
        assert!(!changed(dir.path(), &[("golden.json", b"{\"attempt\": 2, \"maxTokens\": 64000}")]).is_empty());
    }
}
