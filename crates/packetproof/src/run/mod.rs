//! Run directories: prepare → (fresh agent) → evaluate → complete, and `verify`.
//! The file formats (`format`) are the Node skill's, field for field, so either
//! tool reads the other's run directories; the rules are stricter (see the module
//! docs of each step below).
//!
//! Decisions the contract leaves open, made here once:
//! - **Which packet is evaluated.** `--packet FILE` when given; otherwise the packet
//!   is rebuilt from `agent-request.json` (what the agent saw) and `eval-context.json`
//!   (what was held back), plus the contract's fixed fields (`packetVersion` 1,
//!   `taskType`, `promptMode`, `attempt` 1). The rebuilt packet must then reproduce
//!   its own `exactInputHash` and `checksum`, so any edit to either file is caught.
//! - **Missing files.** A missing `agent-request.json` or raw output is an error
//!   (exit 2, nothing written). A missing manifest, eval context or snapshot is an
//!   evaluation failure recorded in evaluation.json (a Google run cannot be
//!   evaluated without them; the contract says evaluation *fails*).
//! - **Stops.** Failures in the `packet`, `schema-snapshot` and `json-parse` stages
//!   end evaluation: nothing after them could be trusted. Schema failures do not stop
//!   it, so one run shows every problem of the output.
//! - **Which run files evaluation reads.** As in the reference evaluator, only a
//!   text-JSON (Google) run is judged against its held-back manifest and snapshot
//!   (stage `schema-snapshot`); other answers are judged against the packet's
//!   outputSchema, and their manifest and snapshot are `verify`'s and `complete`'s
//!   business. The rules themselves live in `crate::evaluator`.
//! - **Not completed is a failure of `verify`.** A prepared or evaluated run without
//!   completion.json is not completed fresh-agent evidence (contract: "Completion
//!   provenance"), so `verify` reports it as a `run::completion` finding and fails.

pub(crate) mod attestation;
pub(crate) mod audit;
pub(crate) mod complete;
pub mod evaluate;
pub(crate) mod format;
mod ownership;
pub mod paths;
pub mod prepare;
pub(crate) mod provider_request;
mod runs_root;
mod snapshots;

pub use complete::CompleteRequest;
pub use evaluate::EvaluateRequest;
pub use ownership::{open_to_append, refuse_foreign_output, refuse_foreign_page, OutputKind};

use crate::JsonPath;
use crate::{fsutil, packet, Config, Error, Result};
use paths::{RunDir, MANIFEST, MANIFEST_FILES};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// The rules a packet must pass before `prepare` makes a run of it: every one that
/// applies (`crate::judge` supplies them; the lifecycle does not choose its own).
pub(crate) type PacketGate<'a> = &'a dyn Fn(&Value) -> Vec<crate::Finding>;

/// The rules a run must pass before `evaluate`, `complete` or `attest` acts on it,
/// checked under the run's lock (`given`: the packet the run was prepared from, if known).
pub(crate) type RunGate<'a> = &'a dyn Fn(&Run, Option<&Value>) -> Vec<crate::Finding>;

/// The gate of `attest`: the findings, and the rules that did not run with why
/// (signed into the receipt).
pub(crate) type AttestGate<'a> =
    &'a dyn Fn(&std::path::Path, Option<&Value>) -> (Vec<crate::Finding>, Vec<crate::Skipped>);

/// Open and lock a run directory for a step that writes it (prepare, evaluate,
/// complete), then remove the temp files a killed step left: under the lock no
/// live writer can own them. Steps on one run directory thus run one at a time.
pub(crate) fn lock_run_dir(path: &std::path::Path) -> Result<(fsutil::Dir, fsutil::Lock)> {
    let dir = fsutil::Dir::open(path)?;
    let lock = fsutil::Lock::on(&dir)?;
    dir.remove_stale_temps()?;
    Ok((dir, lock))
}

/// Where a path really leads: the file itself when it exists (through symlinks),
/// else its canonical parent joined with its name.
fn real_path(path: &std::path::Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    match (path.parent().and_then(|p| p.canonicalize().ok()), path.file_name()) {
        (Some(parent), Some(name)) => parent.join(name),
        _ => path.to_path_buf(),
    }
}

/// Two manifest fields naming one file (or a field naming the manifest itself)
/// would let one step overwrite another's receipt: refused.
fn refuse_shared_names(manifest: &RunFile, files: &[RunFile], dir: &RunDir) -> Result<()> {
    let mut seen = vec![(MANIFEST, real_path(&manifest.path))];
    for ((field, _), file) in MANIFEST_FILES.iter().zip(files) {
        let real = real_path(&file.path);
        if let Some((other, _)) = seen.iter().find(|(_, p)| *p == real) {
            let origin = format!("{} $.{field}", dir.show(MANIFEST));
            return Err(Error::refused(
                origin,
                format!("file name {:?} is also the run's {other}; each run file must be its own", file.name),
            ));
        }
        seen.push((field, real));
    }
    Ok(())
}

/// A file of a run: its name inside the run directory and its resolved path.
#[derive(Debug, Clone)]
pub(crate) struct RunFile {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
}

/// An opened run directory: its manifest (if any) and where each file lives.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) dir: RunDir,
    pub(crate) manifest: Option<Map<String, Value>>,
    pub(crate) manifest_file: RunFile,
    pub(crate) agent_request: RunFile,
    pub(crate) eval_context: RunFile,
    pub(crate) schema: RunFile,
    pub(crate) raw_output: RunFile,
    pub(crate) evaluation: RunFile,
    pub(crate) completion: RunFile,
    pub(crate) max_bytes: u64,
    /// The taskType and promptMode a rebuilt packet may have (the run files do not carry them).
    fixed: Fixed,
    /// What was read, kept: every check of one judgement reads a file once.
    read: Read,
}

/// The files of a run as first read (bytes, parsed objects) and its rebuilt packet:
/// one `Run` is one look at the directory, shared by the checks of one judgement
/// (a step holds the run's lock meanwhile). What failed is not kept: asked again,
/// it fails again with its own error.
#[derive(Debug, Default)]
struct Read {
    bytes: Kept<Vec<u8>>,
    objects: Kept<Map<String, Value>>,
    packet: OnceLock<Value>,
}

/// What was read of each file, by its resolved path.
type Kept<T> = Mutex<Vec<(PathBuf, Arc<T>)>>;

fn kept<T>(list: &Kept<T>, path: &std::path::Path) -> Option<Arc<T>> {
    let list = list.lock().unwrap_or_else(|e| e.into_inner());
    list.iter().find(|(p, _)| p == path).map(|(_, value)| Arc::clone(value))
}

fn keep<T>(list: &Kept<T>, path: &std::path::Path, value: T) -> Arc<T> {
    let mut list = list.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, first)) = list.iter().find(|(p, _)| p == path) {
        return Arc::clone(first);
    }
    let value = Arc::new(value);
    list.push((path.to_path_buf(), Arc::clone(&value)));
    value
}

/// The fields a run's files do not carry: the contract profile's task types and prompt
/// modes. A rebuilt packet takes the pair its stored checksum binds (the checksum
/// covers both), or the first of each when none reproduces it (and the checksum
/// check then says so).
#[derive(Debug, Clone)]
pub(crate) struct Fixed {
    task_types: Vec<String>,
    prompt_modes: Vec<String>,
}

/// Every agent's values of one list, each once, in agent order.
fn every(config: &Config, list: impl Fn(&crate::profile::Profile) -> &Vec<String>) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for value in config.agents.all().iter().flat_map(list) {
        if !all.contains(value) {
            all.push(value.clone());
        }
    }
    all
}

impl Fixed {
    pub(crate) fn of(config: &Config) -> Fixed {
        let or = |list: &[String], fallback: &str| match list.is_empty() {
            true => vec![fallback.to_owned()],
            false => list.to_vec(),
        };
        Fixed {
            task_types: or(&every(config, |a| &a.task_types), packet::TASK_TYPE),
            prompt_modes: or(&every(config, |a| &a.prompt_modes), packet::PROMPT_MODE),
        }
    }

    /// Set taskType and promptMode in `packet`: the pair whose checksum is the stored one.
    /// (Every agent's: a run's files do not say which agent prepared it.)
    fn settle(&self, packet: &mut Map<String, Value>) {
        let put = |packet: &mut Map<String, Value>, task: &str, mode: &str| {
            packet.insert("taskType".into(), json!(task));
            packet.insert("promptMode".into(), json!(mode));
        };
        let stored = packet.get("checksum").and_then(Value::as_str).map(str::to_owned);
        let several = self.task_types.len() * self.prompt_modes.len() > 1;
        if let Some(stored) = stored.filter(|_| several) {
            for task in &self.task_types {
                for mode in &self.prompt_modes {
                    put(packet, task, mode);
                    if crate::digest::packet_checksum(packet) == stored {
                        return;
                    }
                }
            }
        }
        put(packet, &self.task_types[0], &self.prompt_modes[0]);
    }
}

impl Run {
    /// Open `dir`, read its manifest when present, and resolve every file name,
    /// refusing names that lead out of the directory.
    pub(crate) fn open(dir: &std::path::Path, config: &Config) -> Result<Run> {
        Run::open_reading(dir, config, Read::default())
    }

    /// This run as it would be with the file `name` holding `bytes` (nothing is
    /// written): the mutation self-test damages a run's files in memory.
    pub(crate) fn with_file(&self, name: &str, bytes: Vec<u8>, config: &Config) -> Result<Run> {
        let read = Read::default();
        keep(&read.bytes, &self.dir.resolve(name, name)?, bytes);
        Run::open_reading(&self.dir.shown, config, read)
    }

    /// [`Run::open`], with what `read` already holds taken as read.
    fn open_reading(dir: &std::path::Path, config: &Config, read: Read) -> Result<Run> {
        let dir = RunDir::open(dir)?;
        let manifest_file = RunFile { name: MANIFEST.into(), path: dir.resolve(MANIFEST, &dir.show(MANIFEST))? };
        let held = kept(&read.bytes, &manifest_file.path);
        let manifest = match (held, manifest_file.path.symlink_metadata()) {
            (None, Err(_)) => None,
            (Some(bytes), _) => {
                Some(crate::canonical::parse(&bytes).map_err(|e| e.in_file(manifest_file.path.display()))?)
            }
            (None, Ok(_)) => Some(fsutil::read_json(&manifest_file.path, config.limits.max_file_bytes)?),
        };
        let manifest = match manifest {
            None => None,
            Some(Value::Object(map)) => Some(map),
            Some(_) => return Err(Error::shape(dir.show(MANIFEST), JsonPath::root(), "a JSON object")),
        };
        let mut files = Vec::with_capacity(MANIFEST_FILES.len());
        for (field, default) in MANIFEST_FILES {
            let origin = format!("{} $.{field}", dir.show(MANIFEST));
            let name = match manifest.as_ref().and_then(|m| m.get(field)) {
                None => default,
                Some(Value::String(name)) => name.as_str(),
                Some(_) => return Err(Error::shape(&origin, JsonPath::field(field), "a file name string")),
            };
            files.push(RunFile { name: name.to_owned(), path: dir.resolve(name, &origin)? });
        }
        refuse_shared_names(&manifest_file, &files, &dir)?;
        let [agent_request, eval_context, schema, raw_output, evaluation, completion] =
            <[RunFile; 6]>::try_from(files).expect("six manifest file fields");
        Ok(Run {
            dir,
            manifest,
            manifest_file,
            agent_request,
            eval_context,
            schema,
            raw_output,
            evaluation,
            completion,
            max_bytes: config.limits.max_file_bytes,
            fixed: Fixed::of(config),
            read,
        })
    }

    /// The run file that `path` really is (following symlinks), if any: a report
    /// written there would replace that file.
    pub(crate) fn file_at(&self, path: &std::path::Path) -> Option<&RunFile> {
        let target = real_path(path);
        [
            &self.manifest_file,
            &self.agent_request,
            &self.eval_context,
            &self.schema,
            &self.raw_output,
            &self.evaluation,
            &self.completion,
        ]
        .into_iter()
        .find(|file| real_path(&file.path) == target)
    }

    /// The bytes of a run file (as first read); a missing file is an error naming it.
    pub(crate) fn read(&self, file: &RunFile) -> Result<Arc<Vec<u8>>> {
        if let Some(bytes) = kept(&self.read.bytes, &file.path) {
            return Ok(bytes);
        }
        let bytes = fsutil::read_bytes(&file.path, self.max_bytes).map_err(|e| self.named(file, e))?;
        Ok(keep(&self.read.bytes, &file.path, bytes))
    }

    /// The bytes of a run file, or `None` when it does not exist.
    pub(crate) fn read_optional(&self, file: &RunFile) -> Result<Option<Arc<Vec<u8>>>> {
        if let Some(bytes) = kept(&self.read.bytes, &file.path) {
            return Ok(Some(bytes));
        }
        if file.path.symlink_metadata().is_err() {
            return Ok(None);
        }
        self.read(file).map(Some)
    }

    /// A run file parsed as a JSON object (once).
    pub(crate) fn read_object(&self, file: &RunFile) -> Result<Arc<Map<String, Value>>> {
        if let Some(object) = kept(&self.read.objects, &file.path) {
            return Ok(object);
        }
        let bytes = self.read(file)?;
        match crate::canonical::parse(&bytes).map_err(|e| e.in_file(self.dir.show(&file.name)))? {
            Value::Object(map) => Ok(keep(&self.read.objects, &file.path, map)),
            _ => Err(Error::shape(self.dir.show(&file.name), JsonPath::root(), "a JSON object")),
        }
    }

    /// Errors name the file as the user knows it (the run directory as given).
    fn named(&self, file: &RunFile, error: Error) -> Error {
        match error {
            Error::Io { source, .. } => Error::io(self.dir.shown.join(&file.name), source),
            other => other,
        }
    }

    /// The packet of this run: `given`, or rebuilt from agent-request.json and
    /// eval-context.json (see the module docs).
    pub(crate) fn packet<'a>(&'a self, given: Option<&'a Value>) -> Result<&'a Value> {
        if let Some(packet) = given {
            return Ok(packet);
        }
        if let Some(packet) = self.read.packet.get() {
            return Ok(packet);
        }
        let request = self.read_object(&self.agent_request)?;
        let context = self.read_object(&self.eval_context)?;
        let context = format::EvalContext::deserialize(context.as_ref())
            .map_err(|e| Error::shape(self.show(&self.eval_context), JsonPath::root(), e.to_string()))?;
        Ok(self.read.packet.get_or_init(|| rebuild_packet(&request, &context, &self.fixed)))
    }

    /// `file` as the user knows it, for messages.
    pub(crate) fn show(&self, file: &RunFile) -> String {
        self.dir.show(&file.name)
    }
}

/// The packet, rebuilt in the Node exporter's key order. Fields the two files do
/// not carry are the contract's fixed values; if the real packet had others, its
/// checksum will not reproduce and the packet stage says so.
pub(crate) fn rebuild_packet(request: &Map<String, Value>, context: &format::EvalContext, fixed: &Fixed) -> Value {
    let from = |map: &Map<String, Value>, key: &str| map.get(key).cloned().unwrap_or(Value::Null);
    let mut p = Map::new();
    p.insert("packetVersion".into(), json!(1));
    p.insert("agentId".into(), context.agent_id.clone());
    // Placed here for the key order; `Fixed::settle` picks their values once the rest is in.
    p.insert("taskType".into(), Value::Null);
    p.insert("promptMode".into(), Value::Null);
    p.insert("attempt".into(), json!(1));
    for key in ["provider", "model", "maxTokens"] {
        p.insert(key.into(), from(request, key));
    }
    p.insert("promptPaths".into(), context.prompt_paths.clone());
    p.insert("promptVersions".into(), context.prompt_versions.clone());
    p.insert("systemPrompt".into(), from(request, "systemPrompt"));
    p.insert("userMessage".into(), context.base_user_message.clone());
    p.insert("effectiveUserMessage".into(), from(request, "userMessage"));
    p.insert("renderInput".into(), context.render_input.clone());
    p.insert("resolvedBranch".into(), context.resolved_branch.clone());
    if let Some(schema) = request.get("outputSchema") {
        p.insert("outputSchema".into(), schema.clone());
    }
    if let Some(call) = request.get(crate::call::MEMBER) {
        p.insert(crate::call::MEMBER.into(), call.clone());
    }
    for (key, value) in &context.packet_fields {
        p.entry(key.clone()).or_insert_with(|| value.clone());
    }
    for key in ["exactInputHash", "checksum"] {
        p.insert(key.into(), from(request, key));
    }
    fixed.settle(&mut p);
    Value::Object(p)
}

/// Current UTC time as RFC 3339 with milliseconds (`2026-11-30T04:25:49.454Z`),
/// the format of JavaScript's `Date.prototype.toISOString`.
pub(crate) fn now_rfc3339() -> String {
    iso_string(jiff::Timestamp::now())
}

/// `Date.prototype.toISOString`: UTC, milliseconds truncated, never rounded.
fn iso_string(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Whether `text` is a real instant written exactly as `now_rfc3339` writes it
/// (a 30 February or a missing fraction is not).
pub(crate) fn is_rfc3339_millis(text: &str) -> bool {
    text.parse::<jiff::Timestamp>().is_ok_and(|at| iso_string(at) == text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_match_to_iso_string() {
        let at = |secs: i64, nanos: i32| iso_string(jiff::Timestamp::new(secs, nanos).unwrap());
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        // 2026-11-30T04:25:49.454Z, as the Node sample records it; toISOString truncates.
        assert_eq!(at(1_796_012_749, 454_999_999), "2026-11-30T04:25:49.454Z");
        assert_eq!(at(951_782_400, 7_000_000), "2000-02-29T00:00:00.007Z");
        assert!(is_rfc3339_millis(&now_rfc3339()));
        assert!(is_rfc3339_millis("2026-11-30T04:25:49.454Z"));
        for wrong in ["2026-11-30T04:25:49Z", "2026-02-30T04:25:49.454Z", "2026-11-30T04:25:49.454+00:00", ""] {
            assert!(!is_rfc3339_millis(wrong), "{wrong}");
        }
    }
}
