//! `packetproof verify PATH…`: every applicable check on packets and run
//! directories, whatever stage they are at. A directory is searched recursively
//! for packets (`runtime-packet*.json`, or any JSON object with `packetVersion`),
//! run directories (those with run-manifest.json, or agent-request.json without a
//! packet beside it), and golden case folders (agent-request.json beside
//! runtime-packet.json, which must be exactly that packet's agent view).

use crate::judge::{self, Step};
use crate::run::paths::{self, AGENT_REQUEST};
use crate::Invocation;
use crate::{
    fsutil, parallel, Check, CorpusCheck, Error, Finding, InputCheck, JsonPath, Location, Outcome, Result, RunCheck,
    Skipped,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod discover;

use discover::{discover, real, Target};

/// The target name of the corpus layout check in a report.
pub(crate) const CORPUS_LAYOUT: &str = "corpus layout (fixtures and golden folders)";

/// What `verify` found: one outcome per target, every check that ran, and every
/// check that could not apply somewhere, with why.
#[derive(Debug, Default)]
#[must_use = "a verification dropped is a failure nobody sees"]
pub struct Verification {
    pub outcomes: Vec<Outcome>,
    /// The checks that ran on at least one target, in registry order.
    pub checks: Vec<Check>,
    /// Each distinct (check, reason) that kept a check from running on a target.
    pub skipped: Vec<Skipped>,
    /// The outcomes that are of packet files, by index, with the file and the sha256
    /// (hex) and exactInputHash of the very bytes that were judged (when [`Digests::Take`]).
    pub(crate) packet_files: Vec<(usize, PathBuf, PacketDigest)>,
    /// Whether the packet files' digests were taken, so [`hold_to_gate`] can hold them.
    pub(crate) digests: Digests,
}

/// Whether `verify` takes the sha256 of each packet file's bytes as it reads them:
/// what `--gate` holds to the gate. Hashing a file costs about as much as checking
/// its `checksum`, so a verify without a gate does not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Digests {
    #[default]
    Skip,
    Take,
}

impl Verification {
    fn add(&mut self, outcome: Outcome) {
        for check in &outcome.ran {
            if !self.checks.contains(check) {
                self.checks.push(*check);
            }
        }
        for skipped in &outcome.skipped {
            if !self.skipped.contains(skipped) {
                self.skipped.push(skipped.clone());
            }
        }
        self.outcomes.push(outcome);
    }

    fn finish(&mut self) {
        self.checks.sort();
        self.skipped.sort_by_key(|s| s.check);
    }

    /// How many targets hold and how many failed.
    pub fn counts(&self) -> (usize, usize) {
        let hold = self.outcomes.iter().filter(|o| o.ok()).count();
        (hold, self.outcomes.len() - hold)
    }
}

/// Called as each target is done, from whichever worker checked it: (targets done,
/// targets in all, the target just checked).
pub(crate) type Progress<'a> = &'a (dyn Fn(usize, usize, &str) + Sync);

/// The targets of `outcomes` whose files could not be read (`verify` exits 2).
pub fn unreadable(outcomes: &[Outcome]) -> Vec<&str> {
    outcomes
        .iter()
        .filter(|o| o.findings.iter().any(|f| f.check == Check::Input(InputCheck::VerifyUnreadable)))
        .map(|o| o.target.as_str())
        .collect()
}

/// One outcome per packet and run directory found under `paths`.
pub fn verify(config: &Invocation, paths: &[PathBuf]) -> Result<Vec<Outcome>> {
    verify_with_keys(config, paths, &[])
}

/// `verify`, with the keys a run's attestation must be signed by (none: an
/// attestation present is still checked against the run's files). Outcomes come
/// in the order found; targets are verified on every core ([`parallel`]), each
/// worker holding one parsed file at a time.
pub(crate) fn verify_with_keys(
    config: &Invocation,
    paths: &[PathBuf],
    keys: &[ed25519_dalek::VerifyingKey],
) -> Result<Vec<Outcome>> {
    Ok(verify_with_progress(config, paths, keys, Digests::Skip, &|_, _, _| {})?.outcomes)
}

/// `verify_with_keys`, reporting progress and the checks that ran, and taking each
/// packet file's digest when `digests` says so (for [`hold_to_gate`]).
pub fn verify_with_progress(
    config: &Invocation,
    paths: &[PathBuf],
    keys: &[ed25519_dalek::VerifyingKey],
    digests: Digests,
    progress: Progress,
) -> Result<Verification> {
    verify_on(config, paths, (keys, digests), parallel::workers(), progress)
}

/// What discovery found under one path: indices into the list of distinct targets,
/// and whether this is where the target was first found (it is checked and reported once).
struct Found<'p> {
    path: &'p Path,
    targets: Vec<(usize, bool)>,
}

fn verify_on(
    config: &Invocation,
    paths: &[PathBuf],
    (keys, digests): (&[ed25519_dalek::VerifyingKey], Digests),
    workers: usize,
    progress: Progress,
) -> Result<Verification> {
    // Golden folders of the project's own corpus are also recompiled and checked
    // for branch isolation: what `cargo test` runs as packet::regenerates.
    let corpus = crate::corpus::cases(config)?;
    // `verify A A`, or a folder and a run inside it: each target is checked once.
    let mut distinct: Vec<Target> = Vec::new();
    let mut seen: std::collections::HashMap<PathBuf, usize> = std::collections::HashMap::new();
    let mut found = Vec::new();
    for path in paths {
        let mut targets = Vec::new();
        for (target, real) in discover(path, config.settings())? {
            let next = distinct.len();
            let index = *seen.entry(real).or_insert(next);
            if index == next {
                distinct.push(target);
            }
            targets.push((index, index == next));
        }
        found.push(Found { path, targets });
    }
    let done = std::sync::atomic::AtomicUsize::new(0);
    let mut verified = parallel::map_in_order(&distinct, workers, |target| {
        let checked = verify_target(target, keys, digests, config);
        if let Some((outcome, _)) = &checked {
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, distinct.len(), &outcome.target);
        }
        checked
    });
    // A JSON file that turned out not to be a packet was never a target.
    let is_target: Vec<bool> = verified.iter().map(Option::is_some).collect();
    let mut found_all = Verification { digests, ..Verification::default() };
    let mut runs = Vec::new();
    for Found { path, targets } in found {
        if !targets.iter().any(|&(index, _)| is_target[index]) {
            let mut outcome = Outcome::new(
                path.display().to_string(),
                vec![Finding::new(
                    Check::Input(InputCheck::VerifyNothingFound),
                    Location::named(path.display().to_string()),
                    "no packet or run directory found here",
                )],
            );
            outcome.ran(Check::Input(InputCheck::VerifyNothingFound));
            found_all.add(outcome);
        }
        for (index, first) in targets {
            let Some((outcome, digest)) = verified[index].take().filter(|_| first) else { continue };
            match &distinct[index] {
                Target::Run(dir) => runs.push((found_all.outcomes.len(), dir.clone())),
                Target::Packet(file) | Target::MaybePacket(file) => {
                    found_all.packet_files.push((found_all.outcomes.len(), file.clone(), digest))
                }
                _ => {}
            }
            found_all.add(outcome);
        }
    }
    flag_reused_tasks(&mut found_all.outcomes, &runs, config);
    // Verifying the corpus (or a folder in it) also checks that nothing in it is skipped.
    let corpus_roots = [real(&config.settings().paths.golden), real(&config.settings().paths.fixtures)];
    let touches = |p: &PathBuf| corpus_roots.iter().any(|r| real(p).starts_with(r) || r.starts_with(real(p)));
    if !corpus.is_empty() && paths.iter().any(touches) {
        let mut outcome = Outcome::new(CORPUS_LAYOUT, Vec::new());
        let layout = Check::Corpus(CorpusCheck::Layout);
        match judge::decide(layout, &judge::Subject::corpus(), config, Step::Verify) {
            Ok(()) => {
                outcome.findings = judge::dispatch::run(layout, &judge::Subject::corpus(), config)?.findings;
                outcome.ran(layout);
            }
            Err(reason) => outcome.skip(layout, reason),
        }
        found_all.add(outcome);
    }
    found_all.finish();
    Ok(found_all)
}

/// `verify --gate`: every packet file found counts only when `gate` vouches for the
/// bytes that were judged (`gate::vouched`; their digest was taken as they were read).
/// Run directories are held to their own receipts, not to the gate: their packet
/// is bound by the manifest, and the packet file itself is what the gate names.
/// An internal error when `found` was made without [`Digests::Take`]: no packet would be held.
pub fn hold_to_gate(found: &mut Verification, gate: &crate::attest::vouch::Gate) -> Result<()> {
    if found.digests != Digests::Take {
        return Err(Error::Internal("verify --gate needs each packet's digest: verify with Digests::Take".into()));
    }
    for (index, _, digest) in &found.packet_files {
        // A packet that could not be read has no digest, and is already a finding.
        if let Some((sha256, exact_input_hash)) = digest {
            gate.hold_digest(&mut found.outcomes[*index], sha256, exact_input_hash);
        }
    }
    let check = Check::Input(InputCheck::GateVouched);
    if !found.packet_files.is_empty() && !found.checks.contains(&check) {
        found.checks.push(check);
        found.checks.sort();
    }
    Ok(())
}

/// One target on one worker; `None` for a JSON file that turned out not to be a packet.
/// A packet's identity for `--gate`: the sha256 (hex) of its bytes and its exactInputHash.
type PacketDigest = Option<(String, String)>;

fn verify_target(
    target: &Target,
    keys: &[ed25519_dalek::VerifyingKey],
    digests: Digests,
    config: &Invocation,
) -> Option<(Outcome, PacketDigest)> {
    Some(match target {
        Target::Packet(file) => verify_packet(file, digests, config),
        Target::MaybePacket(file) => return verify_maybe_packet(file, digests, config),
        Target::Run(dir) => (verify_run(dir, keys, config), None),
        Target::AgentView(dir) => (verify_agent_view(dir, config), None),
        Target::Skipped(file, kind) => {
            let mut outcome = Outcome::new(file.display().to_string(), Vec::new());
            outcome.notes.push(format!("skipped: {kind}, not a regular file; never opened"));
            (outcome, None)
        }
    })
}

/// A packet file's bytes parsed as strict JSON, with their digest when `digests` asks.
fn read_packet(file: &Path, digests: Digests, config: &Invocation) -> Result<(Value, PacketDigest)> {
    let bytes = fsutil::read_bytes(file, config.settings().limits.max_file_bytes)?;
    let value = crate::canonical::parse(&bytes).map_err(|e| e.in_file(file.display()))?;
    let digest = (digests == Digests::Take).then(|| {
        let sha256 = crate::digest::sha256(&bytes).trim_start_matches("sha256:").to_owned();
        let exact = value.get("exactInputHash").and_then(Value::as_str).unwrap_or_default().to_owned();
        (sha256, exact)
    });
    Ok((value, digest))
}

/// A packet against every rule that applies to it; the golden packet of a corpus
/// case is also recompiled from its request and checked for branch isolation. A
/// file that cannot be read as strict JSON is unreadable (exit 2), as in `validate`.
fn verify_packet(file: &Path, digests: Digests, config: &Invocation) -> (Outcome, PacketDigest) {
    match read_packet(file, digests, config) {
        // An agent request or a compile input given as a packet: not judged as one
        // (16 contract findings would say nothing), refused as `validate` refuses it.
        Ok((value, digest)) => match crate::provider::expect_packet(&value, &file.display().to_string()) {
            Err(e) => (unreadable_file(file, &e), None),
            Ok(()) => (judge::packet_file(file, &value, config, Step::Verify), digest),
        },
        Err(e) => (unreadable_file(file, &e), None),
    }
}

fn unreadable_file(file: &Path, error: &Error) -> Outcome {
    let shown = file.display().to_string();
    let check = Check::Input(InputCheck::VerifyUnreadable);
    let mut outcome = Outcome::new(&shown, vec![Finding::new(check, Location::named(&shown), error.to_string())]);
    outcome.ran(check);
    outcome
}

/// Any other JSON file: verified as a packet if it holds an object with
/// `packetVersion`, else left alone. One that cannot be read as strict JSON is
/// unreadable, as `trace --packets` refuses it: it might be a packet, and a
/// folder is never reported checked past a file nobody could judge.
fn verify_maybe_packet(file: &Path, digests: Digests, config: &Invocation) -> Option<(Outcome, PacketDigest)> {
    let (value, digest) = match read_packet(file, digests, config) {
        Ok(read) => read,
        Err(e) => return Some((unreadable_file(file, &e), None)),
    };
    value.get("packetVersion")?;
    Some((judge::packet_file(file, &value, config, Step::Verify), digest))
}

/// A golden agent-request.json is exactly the agent view of the packet beside it.
fn verify_agent_view(dir: &Path, config: &Invocation) -> Outcome {
    let file = dir.join(AGENT_REQUEST);
    let shown = file.display().to_string();
    let read = |p: &Path| fsutil::read_json(p, config.settings().limits.max_file_bytes);
    let packet_file = dir.join(crate::corpus::PACKET_FILE);
    if !packet_file.is_file() {
        let case =
            dir.strip_prefix(&config.settings().paths.golden).map(|c| c.display().to_string()).unwrap_or_default();
        let message = format!(
            "{} is missing (deleted?) beside this agent-request.json: bless the case again with \
             `{} bless {case}`",
            packet_file.display(),
            crate::distribution::command_in(&config.settings().root)
        );
        return Outcome::new(
            shown.clone(),
            vec![Finding::new(Check::Input(InputCheck::GoldenAgentRequest), Location::named(shown), message)],
        );
    }
    let findings = match (read(&packet_file), read(&file)) {
        (Ok(Value::Object(packet)), Ok(request))
            if crate::numbers::same(&crate::provider::agent_request(&packet), &request) =>
        {
            Vec::new()
        }
        (Ok(Value::Object(_)), Ok(_)) => {
            vec![Finding::new(
                Check::Input(InputCheck::GoldenAgentRequest),
                Location::named(&shown),
                "is not the agent view of the runtime-packet.json beside it (re-bless)",
            )]
        }
        (Ok(_), Ok(_)) => {
            vec![Finding::new(
                Check::Input(InputCheck::GoldenAgentRequest),
                Location::named(&shown),
                "the packet beside it is not a JSON object",
            )]
        }
        (Err(e), _) | (_, Err(e)) => {
            vec![Finding::new(Check::Input(InputCheck::GoldenAgentRequest), Location::named(&shown), e.to_string())]
        }
    };
    let mut outcome = Outcome::new(shown, findings);
    outcome.ran(Check::Input(InputCheck::GoldenAgentRequest));
    outcome
}

fn verify_run(dir: &Path, keys: &[ed25519_dalek::VerifyingKey], config: &Invocation) -> Outcome {
    let mut outcome = judge::run_dir(dir, None, keys, config, Step::Verify);
    if keys.is_empty() && dir.join(crate::run::attestation::FILE).exists() {
        outcome
            .notes
            .push("attestation.json: digests and predicate checked; its signature is not (no --trusted-key)".into());
    }
    outcome.notes.push(format!("stage: {}", judge::stage(dir)));
    outcome.notes.extend(crate::run::audit::manifest_note(dir, config));
    outcome.notes.extend(crate::run::audit::completion_note(dir, config));
    crate::numbers::quote_as_written_under(&mut outcome.findings, dir, config.settings().limits.max_file_bytes);
    outcome
}

/// The same agent task id in two completions is one agent reused: both fail.
fn flag_reused_tasks(outcomes: &mut [Outcome], runs: &[(usize, PathBuf)], config: &Invocation) {
    let mut by_task: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, dir) in runs {
        let file = dir.join(paths::COMPLETION);
        let task = fsutil::read_json(&file, config.settings().limits.max_file_bytes)
            .ok()
            .and_then(|v| crate::run::format::recorded_task(&v).map(str::to_owned));
        if let Some(task) = task {
            by_task.entry(task).or_default().push(*i);
        }
    }
    for (task, users) in by_task.into_iter().filter(|(_, users)| users.len() > 1) {
        let names: Vec<String> = users.iter().map(|i| outcomes[*i].target.clone()).collect();
        for i in &users {
            let outcome = &mut outcomes[*i];
            outcome.findings.push(Finding::new(
                RunCheck::Completion,
                Location::in_file(paths::COMPLETION, JsonPath::field("agentTask")),
                format!("agent task {task:?} is recorded by {} runs: {names:?}", users.len()),
            ));
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_come_in_path_order_whatever_the_workers_and_each_json_file_is_read_once() {
        let root = Path::new(crate::PROJECT_ROOT);
        let config = crate::Invocation::from(crate::Config::load(root, None).unwrap());
        // Compiled here, not read from golden/: this test must not depend on the corpus being current.
        let request = crate::canonical::parse(
            &std::fs::read(root.join("fixtures/anthropic-staged-alone-default/request.json")).unwrap(),
        )
        .unwrap();
        let packet = crate::canonical::to_pretty(&crate::compile::compile(&request, &config, "request.json").unwrap())
            .into_bytes();
        let dir = tempfile::tempdir().unwrap();
        let tampered = String::from_utf8(packet.clone()).unwrap().replace("\"attempt\": 1", "\"attempt\": 2");
        let files: [(&str, &[u8]); 6] = [
            ("a/runtime-packet-1.json", &packet),
            ("b/copy.json", &packet),
            ("c/notes.json", b"{\"packetVersion-ish\": 1}"),
            ("d/broken.json", b"{\"packetVersion\": 1,"),
            ("e/runtime-packet-tampered.json", tampered.as_bytes()),
            ("f/runtime-packet-2.json", &packet),
        ];
        for (name, bytes) in files {
            let file = dir.path().join(name);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, bytes).unwrap();
        }
        // c holds no packet; a and b/copy.json were found already: checked and reported once.
        let paths =
            [dir.path().to_path_buf(), dir.path().join("c"), dir.path().join("a"), dir.path().join("b/copy.json")];
        let reports: Vec<String> = [1, 2, 7]
            .into_iter()
            .map(|workers| {
                serde_json::to_string(
                    &verify_on(&config, &paths, (&[], Digests::Skip), workers, &|_, _, _| {}).unwrap().outcomes,
                )
                .unwrap()
            })
            .collect();
        assert_eq!(reports[0], reports[1]);
        assert_eq!(reports[0], reports[2]);
        let outcomes = verify_on(&config, &paths, (&[], Digests::Skip), 2, &|_, _, _| {}).unwrap().outcomes;
        let shown: Vec<(String, bool)> = outcomes
            .iter()
            .map(|o| (o.target.strip_prefix(&*dir.path().to_string_lossy()).unwrap_or(&o.target).to_owned(), o.ok()))
            .collect();
        // A JSON file that does not parse might be a packet: unreadable, never passed over.
        let expected = [
            ("/a/runtime-packet-1.json", true),
            ("/b/copy.json", true),
            ("/d/broken.json", false),
            ("/e/runtime-packet-tampered.json", false),
            ("/f/runtime-packet-2.json", true),
            ("/c", false),
        ];
        assert_eq!(shown, expected.map(|(t, ok)| (t.to_owned(), ok)));
        assert_eq!(outcomes[2].findings[0].check, Check::Input(InputCheck::VerifyUnreadable), "{:?}", outcomes[2]);
        let nothing = Check::Input(InputCheck::VerifyNothingFound);
        assert_eq!(outcomes[5].findings[0].check, nothing, "c holds no packet: {:?}", outcomes[5]);
    }
}
