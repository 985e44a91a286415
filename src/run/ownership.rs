//! What a command may replace outside its own run files: only a regular file it
//! owns, that is one of the kind it writes itself. Never one of its own inputs,
//! harness.toml or another run's files (a receipt, a manifest, an evaluation a
//! completion binds), and never a device node, FIFO or symlink (see
//! [`crate::fsutil::Dir::write`]).

use super::paths::{AGENT_REQUEST, COMPLETION, EVAL_CONTEXT, MANIFEST, RAW_OUTPUT, VALIDATION_SCHEMA};
use crate::{canonical, fsutil, Config, Error, Result};
use serde_json::Value;
use std::path::Path;

/// Names that are always some run's evidence, wherever they are.
const RUN_FILE_NAMES: [&str; 6] = [MANIFEST, COMPLETION, AGENT_REQUEST, EVAL_CONTEXT, VALIDATION_SCHEMA, RAW_OUTPUT];

/// `evaluate --report FILE` outside the run's own evaluation.json: refused onto
/// an input of the command, a project file, a run file, a file inside a run
/// directory, or an existing file that is not an evaluation document.
pub(crate) fn refuse_foreign_report(report: &Path, config: &Config, inputs: &[Option<&Path>]) -> Result<()> {
    let refuse = |why: &str| Err(Error::refused(report.display(), why.to_owned()));
    let settings = config.file.clone().or_else(|| Some(config.root.join(crate::config::FILE_NAME)));
    let project_files = [settings, config.paths.schema_snapshot.clone(), config.paths.builder_schema.clone()];
    let own_inputs = inputs.iter().flatten().map(|p| p.to_path_buf());
    let project_files = project_files.into_iter().flatten();
    if own_inputs.chain(project_files).any(|input| fsutil::same_file(report, &input)) {
        return refuse("is an input of this command (or a project file); a report never replaces one");
    }
    let name = report.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if RUN_FILE_NAMES.contains(&name) || name == crate::config::FILE_NAME {
        return refuse(&format!("{name} is a run's or the project's file; a report is never written over one"));
    }
    let parent = match report.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if parent.join(MANIFEST).symlink_metadata().is_ok() {
        return refuse("is inside a run directory (only its own evaluation file is written there); write the report outside any run");
    }
    existing_is_owned(report, "an evaluation", |value| {
        value.get("proofClass").is_some() && value.get("failures").is_some_and(Value::is_array)
    })
}

/// `export --out FILE`: refused onto the request itself or onto an existing file
/// that is not a packet.
pub fn refuse_foreign_export(out: &Path, request: &Path, config: &Config) -> Result<()> {
    let project_files = [config.root.join(crate::config::FILE_NAME), request.to_path_buf()];
    if project_files.iter().any(|input| fsutil::same_file(out, input)) {
        return Err(Error::refused(out.display(), "is the request or harness.toml; an export never replaces one"));
    }
    existing_is_owned(out, "a runtime packet", |value| value.get("packetVersion").is_some())
}

/// An existing regular file may be replaced only when empty or when it holds
/// what this command writes (`is_ours`); a missing file is fine. Non-regular
/// files are refused by the write itself.
fn existing_is_owned(path: &Path, what: &str, is_ours: impl Fn(&Value) -> bool) -> Result<()> {
    let Ok(meta) = path.symlink_metadata() else { return Ok(()) };
    if !meta.file_type().is_file() {
        return Err(Error::refused(
            path.display(),
            format!("is {}; only a regular file is ever replaced", fsutil::kind(&meta.file_type())),
        ));
    }
    if meta.len() == 0 {
        return Ok(());
    }
    let owned = fsutil::read_bytes(path, fsutil::DEFAULT_MAX_BYTES)
        .ok()
        .and_then(|bytes| canonical::parse(&bytes).ok())
        .is_some_and(|value| is_ours(&value));
    if owned {
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
    let settings = config.file.clone().or_else(|| Some(config.root.join(crate::config::FILE_NAME)));
    let p = &config.paths;
    let project_files = [settings, p.schema_snapshot.clone(), p.builder_schema.clone(), p.google_suffix.clone()];
    if project_files.iter().flatten().any(|input| fsutil::same_file(page, input)) {
        return refuse("is a project file; a report never replaces one".into());
    }
    let name = page.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if RUN_FILE_NAMES.contains(&name) || name == crate::config::FILE_NAME {
        return refuse(format!("{name} is a run's or the project's file; a report is never written over one"));
    }
    let parent = match page.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if parent.join(MANIFEST).symlink_metadata().is_ok() {
        return refuse("is inside a run directory; write the report outside any run".into());
    }
    let inside = |dir: &Path| match (parent.canonicalize(), dir.canonicalize()) {
        (Ok(parent), Ok(dir)) => parent.starts_with(dir),
        _ => false,
    };
    if let Some(dir) =
        [Some(&p.fixtures), Some(&p.golden), p.prompts.as_ref()].into_iter().flatten().find(|d| inside(d))
    {
        return refuse(format!("is inside {}, an input of the gate; write the report elsewhere", dir.display()));
    }
    let Ok(meta) = page.symlink_metadata() else { return Ok(()) };
    if !meta.file_type().is_file() {
        let kind = fsutil::kind(&meta.file_type());
        return refuse(format!("is {kind}; only a regular file is ever replaced"));
    }
    let owned =
        meta.len() == 0 || fsutil::read_to_string(page, fsutil::DEFAULT_MAX_BYTES).is_ok_and(|text| is_ours(&text));
    if owned {
        Ok(())
    } else {
        refuse(format!("exists and is not {what}; it is never replaced"))
    }
}
