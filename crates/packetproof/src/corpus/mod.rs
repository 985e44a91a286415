//! Fixture discovery, shared by bless, the conformance runner and the release
//! check: a case is a directory under `paths.fixtures` holding `request.json`;
//! its golden files live under `paths.golden` at the same relative path.

pub(crate) mod derived;
mod expect;
pub(crate) use expect::Expectation;
pub(crate) mod layout;
pub(crate) mod record;

use crate::Invocation;
use crate::{fsutil, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub(crate) const REQUEST_FILE: &str = "request.json";
mod coverage;
pub(crate) use coverage::coverage_gaps;

pub(crate) const EXPECT_FILE: &str = "expect.toml";
pub(crate) const PACKET_FILE: &str = "runtime-packet.json";
pub(crate) const AGENT_REQUEST_FILE: &str = "agent-request.json";
pub(crate) const RUN_DIR: &str = "run";
/// The suite's `[evaluator]` verdict on the fixture's answer, blessed.
pub(crate) const VERDICT_FILE: &str = "evaluator-verdict.json";

/// One fixture.
#[derive(Debug, Clone)]
pub struct Case {
    /// Path of the case directory relative to the fixtures root, `/`-separated.
    pub name: String,
    /// The fixture directory.
    pub(crate) dir: PathBuf,
    /// The parsed (strict) `request.json`.
    pub request: Value,
    /// `golden/<name>/`, which may not exist yet.
    pub golden_dir: PathBuf,
    /// `expect.toml` of a negative case, when there is one.
    pub(crate) expect: Option<PathBuf>,
}

impl Case {
    pub fn request_path(&self) -> PathBuf {
        self.dir.join(REQUEST_FILE)
    }
    pub fn golden_packet(&self) -> PathBuf {
        self.golden_dir.join(PACKET_FILE)
    }
    pub fn golden_agent_request(&self) -> PathBuf {
        self.golden_dir.join(AGENT_REQUEST_FILE)
    }
    pub fn golden_verdict(&self) -> PathBuf {
        self.golden_dir.join(VERDICT_FILE)
    }

    /// Why this case has no golden packet to check, when it has none: a new case
    /// (never blessed) or a deleted packet (its agent view is still there).
    pub(crate) fn golden_missing(&self) -> Option<String> {
        if self.has_own_packet() || self.golden_packet().is_file() {
            return None;
        }
        let name = &self.name;
        let fix = format!("bless it with {}", bless_hint(&self.golden_dir, name));
        Some(if self.golden_agent_request().is_file() {
            format!("{} is missing (deleted?) beside its agent-request.json: {fix}", self.golden_packet().display())
        } else {
            format!("{name} has no golden packet yet ({}): {fix}", self.golden_packet().display())
        })
    }
}

/// The command that blesses `name`: `packetproof bless`, and where the suite is a Rust
/// crate's (a Cargo.toml above its golden folder) the `cargo test` form too; a Node team
/// with the npm package is told `npx packetproof bless`, and no Node or Python team is
/// told to run cargo.
pub(crate) fn bless_hint(golden_dir: &Path, name: &str) -> String {
    let cargo = golden_dir.ancestors().skip(1).take(4).any(|dir| dir.join("Cargo.toml").is_file());
    if cargo {
        return format!("`packetproof bless {name}` or `PACKETPROOF_BLESS=1 cargo test {name}`");
    }
    let suite = golden_dir.parent().unwrap_or(golden_dir);
    format!("`{} bless {name}`", crate::distribution::Distribution::of(suite).command())
}

/// Every case under `paths.fixtures`, sorted by name. An unreadable or invalid
/// request.json is an error naming the file (a corpus is never silently partial),
/// and so is a configured fixtures or golden directory that does not exist beside
/// the other one.
pub fn cases(config: &Invocation) -> Result<Vec<Case>> {
    // Without a settings file (the built-in defaults) there is no suite, and a settings
    // file beside neither corpus folder (a project that only checks runs) has no corpus.
    // With one folder there, the other must exist too: a misspelt path is an error.
    let (fixtures, golden) = (config.settings().paths.fixtures.is_dir(), config.settings().paths.golden.is_dir());
    if config.settings().file.is_none() || (!fixtures && !golden) {
        return Ok(Vec::new());
    }
    layout::require_dirs(config.settings())?;
    let root = &config.settings().paths.fixtures;
    let mut cases = Vec::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.map_err(|e| crate::Error::walk(e, root))?;
        if !entry.file_type().is_dir() || !entry.path().join(REQUEST_FILE).is_file() {
            continue;
        }
        let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
        cases.push(case_at(config, relative)?);
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(cases)
}

/// The case whose fixture folder is `relative` below `paths.fixtures` (its request read).
fn case_at(config: &Invocation, relative: &Path) -> Result<Case> {
    let name = relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
    let dir = config.settings().paths.fixtures.join(relative);
    let request = fsutil::read_json(&dir.join(REQUEST_FILE), config.settings().limits.max_file_bytes)?;
    let expect = Some(dir.join(EXPECT_FILE)).filter(|p| p.is_file());
    Ok(Case { golden_dir: config.settings().paths.golden.join(relative), name, dir, request, expect })
}

/// The case whose golden packet `file` is, when it is one (found without listing the
/// corpus: one path resolution and one request read, so judging one packet file stays
/// as fast as its rules).
pub(crate) fn case_of_golden_packet(config: &Invocation, file: &Path) -> Result<Option<Case>> {
    if config.settings().file.is_none() || file.file_name() != Some(std::ffi::OsStr::new(PACKET_FILE)) {
        return Ok(None);
    }
    let (Ok(real), Ok(golden)) = (file.canonicalize(), config.settings().paths.golden.canonicalize()) else {
        return Ok(None);
    };
    let Some(relative) = real.strip_prefix(&golden).ok().and_then(Path::parent).filter(|r| !r.as_os_str().is_empty())
    else {
        return Ok(None);
    };
    if !config.settings().paths.fixtures.join(relative).join(REQUEST_FILE).is_file() {
        return Ok(None);
    }
    let case = case_at(config, relative)?;
    Ok((!case.has_own_packet()).then_some(case))
}

/// The packet a case's request makes now: the suite's `[exporter]` when it names one,
/// else packetproof's compiler. bless, `packet::regenerates` and release-check use this.
pub(crate) fn produce(case: &Case, config: &Invocation) -> Result<Value> {
    match &config.settings().exporter {
        Some(exporter) if !config.policy().run_exporter => Err(crate::Error::Exporter {
            request: case.request_path().display().to_string(),
            command: format!("{:?}", exporter.command),
            reason: "is not run here (verify runs it only with --run-exporter)".into(),
        }),
        Some(exporter) => crate::exporter::export(exporter, config.settings(), &case.request_path()),
        None => crate::compile::compile(&case.request, config, &case.request_path().display().to_string()),
    }
}

/// The branch of a packet plus its provider: one row of the coverage table.
pub(crate) fn branch_row(packet: &Value) -> Value {
    let mut row = packet["resolvedBranch"].clone();
    if let Value::Object(map) = &mut row {
        map.insert("provider".into(), packet["provider"].clone());
        map.insert("agentId".into(), packet["agentId"].clone());
    }
    row
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectFile {
    fails: Vec<Expectation>,
    /// The packet under test, derived from another case's golden packet.
    packet: Option<derived::Derivation>,
    /// What the suite's `[evaluator]` must conclude about the fixture's answer.
    evaluator: Option<EvaluatorExpectation>,
}

/// expect.toml `[evaluator]`: the stage at which the suite's evaluator must fail the answer.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EvaluatorExpectation {
    pub(crate) stage: String,
}

impl Case {
    /// The checks this case must fail (empty for a positive case). Unknown keys
    /// and an empty list are errors: a typo must never turn a negative case positive.
    pub(crate) fn expectations(&self) -> Result<Vec<Expectation>> {
        let Some(file) = self.expect_file()? else { return Ok(Vec::new()) };
        let path = self.expect.as_deref().unwrap_or(&self.dir);
        if file.fails.is_empty() {
            return Err(crate::Error::Config {
                file: path.display().to_string(),
                message: "declares no failing check".into(),
            });
        }
        Ok(file.fails)
    }

    fn expect_file(&self) -> Result<Option<ExpectFile>> {
        let Some(path) = &self.expect else { return Ok(None) };
        let text = crate::fsutil::read_to_string(path, crate::fsutil::DEFAULT_MAX_BYTES)?;
        let file = toml::from_str(&text)
            .map_err(|e| crate::Error::Config { file: path.display().to_string(), message: e.to_string() })?;
        Ok(Some(file))
    }

    /// Whether this negative case checks a packet of its own (a hand-broken
    /// runtime-packet.json, or one derived by expect.toml `[packet]`) instead of a
    /// golden one. Such a case is never blessed. An unreadable expect.toml counts as
    /// one: its checks report the error.
    pub fn has_own_packet(&self) -> bool {
        self.own_packet().is_some()
            || self.expect_file().map_or(self.expect.is_some(), |f| f.is_some_and(|f| f.packet.is_some()))
    }

    /// The stage expect.toml `[evaluator]` says the suite's evaluator fails the answer at.
    pub(crate) fn evaluator_stage(&self) -> Result<Option<String>> {
        Ok(self.expect_file()?.and_then(|f| f.evaluator).map(|e| e.stage))
    }

    /// The case whose golden packet this negative case's packet is derived from.
    pub(crate) fn derived_from(&self) -> Result<Option<String>> {
        Ok(self.expect_file()?.and_then(|f| f.packet).map(|d| d.from))
    }

    /// The agent this case's packet belongs to: the suite's one agent, else the one its
    /// packet's (or, before its first bless, its request's) agentId names.
    pub(crate) fn agent<'c>(&self, config: &'c Invocation) -> &'c crate::profile::Profile {
        if !config.settings().agents.several() {
            return &config.settings().agents.all()[0];
        }
        match self.packet(config) {
            Ok(packet) => config.settings().agents.of_value(&packet),
            Err(_) => config.settings().agents.of_value(&self.request),
        }
    }

    /// The packet this case checks: its own (file or derivation), else the golden one.
    pub(crate) fn packet(&self, config: &Invocation) -> Result<Value> {
        if let Some(derivation) = self.expect_file()?.and_then(|f| f.packet) {
            let expect = self.expect.as_deref().unwrap_or(&self.dir);
            return derivation.derive(config.settings(), expect);
        }
        fsutil::read_json(&self.packet_under_test(), config.settings().limits.max_file_bytes)
    }

    /// A fixture that carries its own runtime-packet.json (a hand-broken packet
    /// of a negative case) is checked instead of the golden one, and never blessed.
    pub(crate) fn own_packet(&self) -> Option<PathBuf> {
        Some(self.dir.join(PACKET_FILE)).filter(|p| p.is_file())
    }

    /// The packet this case checks.
    pub(crate) fn packet_under_test(&self) -> PathBuf {
        self.own_packet().unwrap_or_else(|| self.golden_packet())
    }

    /// `run/`: the agent's artifacts for this case, when it has any.
    pub(crate) fn run_fixture(&self) -> Option<PathBuf> {
        Some(self.dir.join(RUN_DIR)).filter(|p| p.is_dir())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus_rows(config: &Invocation) -> Vec<Value> {
        cases(config)
            .unwrap()
            .iter()
            .map(|case| {
                let packet = crate::compile::compile(&case.request, config, &case.name).unwrap();
                branch_row(&packet)
            })
            .collect()
    }

    /// Every value of every resolvedBranch field, and every pair of values of
    /// (provider, evidenceMode, neighbours, insertionMode, sourceScope), is
    /// compiled by at least one case of the bundled corpus.
    #[test]
    fn corpus_covers_every_branch_value_and_every_pair() {
        let config =
            crate::Invocation::from(crate::Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap());
        let rows = corpus_rows(&config);
        let missing = coverage_gaps(&rows, config.settings());
        assert!(missing.is_empty(), "the corpus misses: {missing:#?}");
        assert!(rows.iter().any(|r| r["evidenceMode"] == "no-evidence"), "no-evidence case");
    }

    #[test]
    fn coverage_gaps_name_what_a_smaller_corpus_misses() {
        let config =
            crate::Invocation::from(crate::Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap());
        let rows: Vec<Value> = corpus_rows(&config)
            .into_iter()
            .filter(|r| r["evidenceMode"] != "no-evidence" && r["provider"] != "google")
            .collect();
        let missing: Vec<String> = coverage_gaps(&rows, config.settings()).iter().map(ToString::to_string).collect();
        assert!(missing.contains(&"evidenceMode=\"no-evidence\"".to_owned()), "{missing:#?}");
        assert!(missing.iter().any(|m| m.starts_with("provider=google with ")), "{missing:#?}");
    }

    /// What the reference's eval suite exercises with variable mappings, and the
    /// corpus must too: each `action`, a conflict, a no-evidence branch with mappings.
    fn mapping_gaps(packets: &[Value]) -> Vec<String> {
        let mappings = |p: &Value| p.pointer("/renderInput/variableMappings").and_then(Value::as_array).cloned();
        let mut missing = Vec::new();
        for action in crate::compile::MAPPING_ACTIONS {
            let used = packets.iter().filter_map(mappings).flatten().any(|m| m["action"] == action);
            if !used {
                missing.push(format!("a variable mapping with action {action}"));
            }
        }
        if !packets.iter().any(|p| p["resolvedBranch"]["hasVariableConflicts"] == true) {
            missing.push("a conflict (hasVariableConflicts)".into());
        }
        let no_evidence_with_mappings = packets.iter().any(|p| {
            p["resolvedBranch"]["evidenceMode"] == "no-evidence" && mappings(p).is_some_and(|m| !m.is_empty())
        });
        if !no_evidence_with_mappings {
            missing.push("a no-evidence branch with variable mappings".into());
        }
        missing
    }

    #[test]
    fn corpus_exercises_each_mapping_action_a_conflict_and_no_evidence_with_mappings() {
        let config =
            crate::Invocation::from(crate::Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap());
        let packets: Vec<Value> = cases(&config)
            .unwrap()
            .iter()
            .map(|case| crate::compile::compile(&case.request, &config, &case.name).unwrap())
            .collect();
        assert_eq!(mapping_gaps(&packets), Vec::<String>::new());
        // The same test on a corpus without the mapping-actions case names what it lacks.
        let without: Vec<Value> = packets
            .into_iter()
            .filter(|p| {
                p.pointer("/renderInput/target/blockId")
                    .and_then(Value::as_str)
                    .is_some_and(|id| !id.contains("mapping"))
            })
            .filter(|p| p["resolvedBranch"]["evidenceMode"] != "no-evidence")
            .collect();
        let missing = mapping_gaps(&without);
        assert!(missing.contains(&"a no-evidence branch with variable mappings".to_owned()), "{missing:#?}");
        assert!(missing.contains(&"a variable mapping with action create".to_owned()), "{missing:#?}");
    }
}
