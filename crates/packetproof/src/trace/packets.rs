//! The reviewed packets a trace is held to: each packet file named, and every packet
//! below a named folder (a `*.json` object with `packetVersion`; other JSON files there,
//! such as agent requests, are passed over). Each is judged by the rule book as every
//! command judges it: a packet that fails a rule is no reviewed packet, and the trace
//! is refused with its findings (exit 1, as `verify` would fail it).

use crate::judge::{self, Step};
use crate::Invocation;
use crate::JsonPath;
use crate::{fsutil, Error, Result, Skipped};
use serde_json::Value;
use sha2::Digest as _;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Whether `path` is a negative fixture's own packet: a file beside an `expect.toml`.
fn is_negative_fixture_packet(path: &Path) -> bool {
    path.parent().is_some_and(|dir| dir.join(crate::corpus::EXPECT_FILE).is_file())
}

/// What a call is compared with once its texts match.
#[derive(Debug, Clone)]
pub(crate) struct Reviewed {
    pub(crate) file: String,
    pub(crate) model: String,
    pub(crate) max_tokens: u64,
    /// The sha256 of the file's bytes (lowercase hex) and its exactInputHash: what a
    /// gate statement names it by.
    pub(crate) sha256: String,
    pub(crate) exact_input_hash: String,
    /// The SHA-256 of the system text; empty text: the request sends no system message.
    pub(crate) system: Digest,
    pub(crate) system_empty: bool,
    /// The rest of its call (`crate::call`), and its output format as a call asks for it.
    pub(crate) call: crate::call::Call,
    pub(crate) output: Value,
}

type Digest = [u8; 32];

/// A reviewed packet's texts and settings: what its slots were filled with, for the
/// slot contracts of `trace --gate`.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    pub(crate) agent_id: String,
    pub(crate) system: String,
    pub(crate) user: String,
    pub(crate) model: String,
    pub(crate) max_tokens: u64,
    pub(crate) sha256: String,
    pub(crate) exact_input_hash: String,
    pub(crate) call: crate::call::Call,
    pub(crate) output: Value,
}

/// A text as a call recorded it: whole (its digest), or cut short (what was recorded).
pub(crate) enum Seen<'t> {
    Whole(&'t Digest),
    Cut(&'t str),
}

/// Reviewed packets by the digests of their exact (system, user) texts.
#[derive(Debug, Default)]
pub struct Packets {
    by_text: HashMap<(Digest, Digest), Vec<Reviewed>>,
    by_user: HashMap<Digest, Vec<Reviewed>>,
    systems: HashMap<Digest, usize>,
    count: usize,
    samples: Vec<Sample>,
    /// Each rule that did not run on some packet, with why (once per check and reason).
    pub(crate) skipped: Vec<Skipped>,
}

impl Packets {
    /// Read every packet under `paths`.
    pub fn load(paths: &[PathBuf], config: &Invocation) -> Result<Packets> {
        let mut packets = Packets::default();
        for path in paths {
            if path.is_dir() {
                for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
                    let entry = entry.map_err(|e| Error::io(path, e.into()))?;
                    let is_json = entry.path().extension().is_some_and(|ext| ext == "json");
                    if entry.file_type().is_file() && is_json {
                        packets.add(entry.path(), config, false)?;
                    }
                }
            } else {
                packets.add(path, config, true)?;
            }
        }
        if packets.count == 0 {
            let named: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            return Err(Error::NothingFound { what: "runtime packet".into(), place: named.join(", ") });
        }
        Ok(packets)
    }

    /// The suite's golden packets (`paths.golden`), as `test` finds them.
    pub fn of_suite(config: &Invocation, command: &str) -> Result<Packets> {
        config.settings().require_suite(command)?;
        Packets::load(std::slice::from_ref(&config.settings().paths.golden), config)
    }

    fn add(&mut self, path: &Path, config: &Invocation, named: bool) -> Result<()> {
        let shown = path.display().to_string();
        // A negative fixture's packet is broken on purpose (its expect.toml says how), even
        // when its bytes are a positive fixture's: a call is never credited to it.
        if is_negative_fixture_packet(path) {
            return match named {
                true => Err(Error::shape(
                    &shown,
                    JsonPath::root(),
                    "a reviewed packet (this is a negative fixture's, beside its expect.toml: name the golden packet)",
                )),
                false => Ok(()),
            };
        }
        let bytes = fsutil::read_bytes(path, config.settings().limits.max_file_bytes)?;
        let value = crate::canonical::parse(&bytes).map_err(|e| e.in_file(path.display()))?;
        if value.get("packetVersion").is_none() {
            return match named {
                true => {
                    crate::provider::expect_packet(&value, &shown)?;
                    Err(Error::shape(&shown, JsonPath::root(), "a runtime packet (an object with packetVersion)"))
                }
                false => Ok(()),
            };
        }
        let outcome = judge::packet_file(path, &value, config, Step::Trace);
        if !outcome.ok() {
            return Err(Error::Failed { file: shown, findings: outcome.findings });
        }
        for skipped in outcome.skipped {
            if !self.skipped.contains(&skipped) {
                self.skipped.push(skipped);
            }
        }
        let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let digest = |key: &str| -> Digest { sha2::Sha256::digest(text(key).as_bytes()).into() };
        let (system, user) = (digest("systemPrompt"), digest("effectiveUserMessage"));
        let reviewed = Reviewed {
            file: shown,
            model: text("model"),
            max_tokens: value.get("maxTokens").and_then(Value::as_f64).unwrap_or_default() as u64,
            sha256: crate::digest::sha256(&bytes).trim_start_matches("sha256:").to_owned(),
            exact_input_hash: text("exactInputHash"),
            system,
            system_empty: text("systemPrompt").is_empty(),
            // The rule book held the member to its form already (packet::contract).
            call: value.as_object().and_then(|p| crate::call::Call::of_packet(p).ok()).unwrap_or_default(),
            output: super::settings::output_of(&value),
        };
        self.samples.push(Sample {
            agent_id: text("agentId"),
            system: text("systemPrompt"),
            user: text("effectiveUserMessage"),
            model: reviewed.model.clone(),
            max_tokens: reviewed.max_tokens,
            sha256: reviewed.sha256.clone(),
            exact_input_hash: reviewed.exact_input_hash.clone(),
            call: reviewed.call.clone(),
            output: reviewed.output.clone(),
        });
        self.insert(reviewed, user);
        Ok(())
    }

    fn insert(&mut self, reviewed: Reviewed, user: Digest) {
        *self.systems.entry(reviewed.system).or_default() += 1;
        self.by_user.entry(user).or_default().push(reviewed.clone());
        self.by_text.entry((reviewed.system, user)).or_default().push(reviewed);
        self.count += 1;
    }

    /// The first reviewed packet whose system and user texts are these, or begin with
    /// them where they were recorded cut short.
    pub(crate) fn beginning_with(&self, system: Seen, user: Seen) -> Option<&Reviewed> {
        let fits = |text: &str, seen: &Seen| match seen {
            Seen::Whole(digest) => sha2::Sha256::digest(text.as_bytes()).as_slice() == digest.as_slice(),
            Seen::Cut(start) => text.starts_with(start),
        };
        let sample = self.samples.iter().find(|s| fits(&s.system, &system) && fits(&s.user, &user))?;
        let user: Digest = sha2::Sha256::digest(sample.user.as_bytes()).into();
        let system: Digest = sha2::Sha256::digest(sample.system.as_bytes()).into();
        self.by_text.get(&(system, user))?.first()
    }

    /// Every reviewed packet's texts and settings, in the order read.
    pub(crate) fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// The models the reviewed packets name, each once.
    pub fn models(&self) -> std::collections::BTreeSet<&str> {
        self.samples.iter().map(|s| s.model.as_str()).collect()
    }

    /// Every packet asking for this output format (`"json"`, a schema): for tests.
    #[cfg(test)]
    pub(crate) fn asking_for(mut self, output: Value) -> Packets {
        for reviewed in self.by_text.values_mut().chain(self.by_user.values_mut()).flatten() {
            reviewed.output = output.clone();
        }
        for sample in &mut self.samples {
            sample.output = output.clone();
        }
        self
    }

    /// Packets given by their texts, unjudged: for tests.
    #[cfg(test)]
    pub(crate) fn of_texts(packets: &[(&str, &str, &str, &str, u64)]) -> Packets {
        let mut out = Packets::default();
        for (file, system, user, model, max_tokens) in packets {
            let reviewed = Reviewed {
                file: file.to_string(),
                model: model.to_string(),
                max_tokens: *max_tokens,
                sha256: String::new(),
                exact_input_hash: String::new(),
                system: sha2::Sha256::digest(system.as_bytes()).into(),
                system_empty: system.is_empty(),
                call: crate::call::Call::default(),
                output: Value::from("text"),
            };
            out.samples.push(Sample {
                agent_id: String::new(),
                system: system.to_string(),
                user: user.to_string(),
                model: model.to_string(),
                max_tokens: *max_tokens,
                sha256: String::new(),
                exact_input_hash: String::new(),
                call: crate::call::Call::default(),
                output: Value::from("text"),
            });
            out.insert(reviewed, sha2::Sha256::digest(user.as_bytes()).into());
        }
        out
    }

    /// Each rule that did not run on some reviewed packet, with why.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// The packets with exactly these texts (by digest).
    pub(crate) fn with_text(&self, system: &Digest, user: &Digest) -> &[Reviewed] {
        self.by_text.get(&(*system, *user)).map_or(&[], Vec::as_slice)
    }

    /// The packets with this user text, whatever their system text.
    pub(crate) fn with_user(&self, user: &Digest) -> &[Reviewed] {
        self.by_user.get(user).map_or(&[], Vec::as_slice)
    }

    /// The reviewed packet read from `file`.
    pub(crate) fn reviewed(&self, file: &str) -> Option<&Reviewed> {
        self.by_text.values().flatten().find(|r| r.file == file)
    }

    /// How many packets have this system text.
    pub(crate) fn sharing_system(&self, system: &Digest) -> usize {
        self.systems.get(system).copied().unwrap_or(0)
    }
}
