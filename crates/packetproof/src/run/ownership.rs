//! One rule for every output option (`wire --out`, `export --out`, `attest --out`,
//! `evaluate --report`, `test --junit`, `test --attestation`, `serve --findings`): a command
//! writes a file of its own or nothing. Refused:
//! - one of the command's own inputs, harness.toml or a project resource file
//!   (schema snapshot, Builder schema, Google suffix);
//! - a file named like a run's evidence or harness.toml, wherever it is;
//! - anything inside a run directory or a golden case folder (a folder holding
//!   run-manifest.json or agent-request.json), unless it is that command's own
//!   file of that run (the caller decides that and does not ask);
//! - an existing file that is not a regular file, or that is not empty and does
//!   not hold what this command writes.
//!
//! Non-regular files are refused again by the write itself ([`crate::fsutil::Dir::write`]).

use super::paths::{AGENT_REQUEST, COMPLETION, EVAL_CONTEXT, MANIFEST, RAW_OUTPUT, VALIDATION_SCHEMA};
use crate::{canonical, fsutil, Config, Error, Result};
use serde_json::Value;
use std::path::Path;

/// A golden case folder's packet (`crate::corpus::PACKET_FILE`; the corpus is a
/// layer above runs, so the name is repeated here).
const GOLDEN_PACKET: &str = "runtime-packet.json";

/// Names that are always some run's evidence, wherever they are.
const RUN_FILE_NAMES: [&str; 7] =
    [MANIFEST, COMPLETION, AGENT_REQUEST, EVAL_CONTEXT, VALIDATION_SCHEMA, RAW_OUTPUT, super::attestation::FILE];

/// What an output option writes: how an existing file of that kind is recognized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// `evaluate --report`: an evaluation document.
    Evaluation,
    /// `export --out`: a runtime packet.
    Packet,
    /// `wire --out`: a provider request body.
    RequestBody,
    /// `attest --out`: a DSSE envelope (never replaced: receipts are written once).
    Attestation,
    /// `test --junit`: a JUnit XML report.
    Junit,
    /// `test --attestation`: the signed gate statement (never replaced, like a receipt).
    GateStatement,
    /// `serve --findings`: JSON lines of findings, appended to (never replaced).
    Findings,
}

impl OutputKind {
    fn what(self) -> &'static str {
        match self {
            OutputKind::Evaluation => "an evaluation",
            OutputKind::Packet => "a runtime packet",
            OutputKind::RequestBody => "a provider request body",
            OutputKind::Attestation => "absent (an attestation is written once, never over a file)",
            OutputKind::Junit => "a JUnit report",
            OutputKind::GateStatement => "absent (a gate statement is written once, never over a file)",
            OutputKind::Findings => "a findings file (JSON lines, each a finding with its verdict)",
        }
    }

    /// Whether `bytes` (non-empty) are what this option writes.
    fn is_ours(self, bytes: &[u8]) -> bool {
        if self == OutputKind::Junit {
            let text = String::from_utf8_lossy(bytes);
            return text.starts_with("<?xml") && text.contains("<testsuites");
        }
        if self == OutputKind::Findings {
            return is_finding_line(bytes);
        }
        let Ok(Value::Object(value)) = canonical::parse(bytes) else { return false };
        let has = |key: &str| value.contains_key(key);
        match self {
            OutputKind::Evaluation => has("proofClass") && value.get("failures").is_some_and(Value::is_array),
            OutputKind::Packet => has("packetVersion"),
            // The three APIs' bodies: Anthropic/OpenAI chat `messages`, OpenAI
            // responses `input`, Gemini `contents`; never a packet or a run file.
            OutputKind::RequestBody => {
                (has("messages") || has("input") || has("contents")) && !has("packetVersion") && !has("kind")
            }
            OutputKind::Attestation | OutputKind::Junit | OutputKind::GateStatement | OutputKind::Findings => false,
        }
    }
}

/// Refuse `out` unless this command may write it (see the module docs). `inputs`
/// are the files the command reads.
pub fn refuse_foreign_output(out: &Path, kind: OutputKind, config: &Config, inputs: &[&Path]) -> Result<()> {
    let refuse = |why: String| Err(Error::refused(out.display(), why));
    let protected = inputs.iter().map(|p| p.to_path_buf()).chain(project_files(config));
    if protected.into_iter().any(|input| fsutil::same_file(out, &input)) {
        return refuse("is an input of this command or a project file (harness.toml, schema, suffix); an output never replaces one".into());
    }
    let name = out.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if RUN_FILE_NAMES.contains(&name) || name == crate::config::FILE_NAME {
        return refuse(format!("{name} is a run's or the project's file; an output is never written over one"));
    }
    if let Some(run) = enclosing_run(out) {
        return refuse(format!(
            "is inside the run directory or golden case folder {} (only that run's own steps write there); write it outside any run",
            run.display()
        ));
    }
    existing_is_owned(out, kind)
}

/// Open `out` to append to it, under the one rule for outputs (see the module docs): a
/// missing file is created; an existing one must be a regular file (checked on the
/// opened descriptor, so the path cannot be swapped after the check) whose first line
/// is what `kind` writes. A last line left without its newline (a process killed
/// mid-write) gets one, so the next line starts on a line of its own.
pub fn open_to_append(out: &Path, kind: OutputKind, config: &Config, inputs: &[&Path]) -> Result<std::fs::File> {
    use std::io::{Read, Seek, SeekFrom, Write};
    refuse_foreign_output(out, kind, config, inputs)?;
    let mut file = fsutil::open_append(out)?;
    let len = file.metadata().map_err(|e| Error::io(out, e))?.len();
    if len == 0 {
        return Ok(file);
    }
    let mut head = Vec::new();
    (&file).take(APPEND_HEAD_BYTES).read_to_end(&mut head).map_err(|e| Error::io(out, e))?;
    if !kind.is_ours(&head) {
        return Err(Error::refused(
            out.display(),
            format!("exists and is not {}; it is never appended to", kind.what()),
        ));
    }
    let mut last = [0u8];
    file.seek(SeekFrom::End(-1)).and_then(|_| file.read_exact(&mut last)).map_err(|e| Error::io(out, e))?;
    if last != *b"\n" {
        file.write_all(b"\n").map_err(|e| Error::io(out, e))?;
    }
    Ok(file)
}

/// How much of an existing file is read to recognize it before appending (a line of
/// findings is far shorter: its texts are bounded excerpts).
const APPEND_HEAD_BYTES: u64 = 1 << 20;

/// Whether the first line of `head` is a JSON object with a `formatVersion` and a
/// `verdict` (schemas/serve-finding.schema.json).
fn is_finding_line(head: &[u8]) -> bool {
    let Some(end) = head.iter().position(|b| *b == b'\n') else { return false };
    let Ok(Value::Object(first)) = canonical::parse(&head[..end]) else { return false };
    first.contains_key("formatVersion") && first.get("verdict").is_some_and(Value::is_string)
}

/// harness.toml (the built-in settings: where it would be) and the resource files it names.
fn project_files(config: &Config) -> Vec<std::path::PathBuf> {
    let settings = config.file.clone().unwrap_or_else(|| config.root.join(crate::config::FILE_NAME));
    let paths = &config.paths;
    let resources = [&paths.schema_snapshot, &paths.builder_schema, &paths.google_suffix];
    std::iter::once(settings).chain(resources.into_iter().flatten().cloned()).collect()
}

/// `prepare --out-dir DIR`: a run directory is never made inside another run or a
/// golden case folder, nor in a golden case folder itself (agent-request.json
/// beside runtime-packet.json, and no run manifest).
pub(crate) fn refuse_run_inside_another(out_dir: &Path) -> Result<()> {
    if let Some(run) = enclosing_run(out_dir) {
        return Err(Error::refused(
            out_dir.display(),
            format!(
                "is inside the run directory or golden case folder {}; prepare a run outside any other",
                run.display()
            ),
        ));
    }
    let holds = |name: &str| out_dir.join(name).symlink_metadata().is_ok();
    if holds(AGENT_REQUEST) && holds(GOLDEN_PACKET) && !holds(MANIFEST) {
        return Err(Error::refused(
            out_dir.display(),
            "holds agent-request.json beside runtime-packet.json (a golden case folder); prepare a run in a folder of its own",
        ));
    }
    Ok(())
}

/// The nearest folder at or above `out`'s directory that holds a run manifest or
/// an agent request: a run directory or a golden case folder.
fn enclosing_run(out: &Path) -> Option<std::path::PathBuf> {
    let real = super::real_path(out);
    real.ancestors()
        .skip(1)
        .find(|dir| [MANIFEST, AGENT_REQUEST].iter().any(|name| dir.join(name).symlink_metadata().is_ok()))
        .map(Path::to_path_buf)
}

/// An existing regular file may be replaced only when empty or when it holds
/// what this command writes; a missing file is fine.
fn existing_is_owned(path: &Path, kind: OutputKind) -> Result<()> {
    let written_once = matches!(kind, OutputKind::Attestation | OutputKind::GateStatement);
    if written_once && path.symlink_metadata().is_ok_and(|m| m.file_type().is_file()) {
        return Err(Error::refused(path.display(), format!("exists; {}", kind.what())));
    }
    if kind == OutputKind::Findings {
        // Appended to, however long it grew: its first line is read on the opened
        // descriptor by `open_to_append`.
        return existing_holds(path, kind.what(), |_| true);
    }
    existing_holds(path, kind.what(), |bytes| kind.is_ours(bytes))
}

/// An existing file at `path` is a regular file, and empty or `is_ours` (`what`
/// names what the command writes, for the refusal); a missing file is fine.
fn existing_holds(path: &Path, what: &str, is_ours: impl Fn(&[u8]) -> bool) -> Result<()> {
    let Ok(meta) = path.symlink_metadata() else { return Ok(()) };
    if !meta.file_type().is_file() {
        return Err(Error::refused(
            path.display(),
            format!("is {}; only a regular file is ever replaced", fsutil::kind(&meta.file_type())),
        ));
    }
    if meta.len() == 0 || fsutil::read_bytes(path, fsutil::DEFAULT_MAX_BYTES).is_ok_and(|bytes| is_ours(&bytes)) {
        Ok(())
    } else {
        Err(Error::refused(path.display(), format!("exists and is not {what}; it is never replaced")))
    }
}

/// `test --report FILE`: a page the command writes. Refused onto a project file,
/// into the suite's fixtures, golden files or templates (the gate's inputs), onto a
/// run's file or into a run directory, and onto an existing file that is not such
/// a page (`is_ours` reads its text).
pub fn refuse_foreign_page(page: &Path, config: &Config, what: &str, is_ours: impl Fn(&str) -> bool) -> Result<()> {
    let refuse = |why: String| Err(Error::refused(page.display(), why));
    if project_files(config).iter().any(|input| fsutil::same_file(page, input)) {
        return refuse("is a project file; a report never replaces one".into());
    }
    let name = page.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if RUN_FILE_NAMES.contains(&name) || name == crate::config::FILE_NAME {
        return refuse(format!("{name} is a run's or the project's file; a report is never written over one"));
    }
    if enclosing_run(page).is_some() {
        return refuse("is inside a run directory; write the report outside any run".into());
    }
    let parent = match page.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let inside = |dir: &Path| match (parent.canonicalize(), dir.canonicalize()) {
        (Ok(parent), Ok(dir)) => parent.starts_with(dir),
        _ => false,
    };
    let p = &config.paths;
    if let Some(dir) =
        [Some(&p.fixtures), Some(&p.golden), p.prompts.as_ref()].into_iter().flatten().find(|d| inside(d))
    {
        return refuse(format!("is inside {}, an input of the gate; write the report elsewhere", dir.display()));
    }
    existing_holds(page, what, |bytes| std::str::from_utf8(bytes).is_ok_and(&is_ours))
}
