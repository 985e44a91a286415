//! `[exporter]`: packets made by another program than packetproof's compiler (for
//! example the reference system's own Node adapter). The command runs in the
//! suite's directory with `{request}` replaced by the request file's path, and
//! prints one packet on stdout. A timeout, a non-zero exit, or output that is not
//! one strict JSON object is an error naming the request (so the fixture); the
//! packet itself is then checked exactly like a compiled one. Once the exporter has
//! exited, nothing it started delays the answer: its process group is killed, so is
//! anything else still holding its pipes, and the pipes are read only to what is in them.

use crate::config::Exporter;
use crate::{canonical, process, Config, Error, Result};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// The text of each template the app keeps as code, as `[exporter] templates` prints
/// it: `(name under paths.prompts, text)`, by name. Empty when the suite declares none.
pub(crate) fn reported_templates(exporter: &Exporter, config: &Config) -> Result<Vec<(String, String)>> {
    if exporter.templates.is_empty() {
        return Ok(Vec::new());
    }
    let fail = |reason: String| Error::Exporter {
        request: "[exporter] templates".into(),
        command: format!("{:?}", exporter.templates),
        reason,
    };
    let printed = run(exporter, config, (&exporter.templates, &[]), "the templates the exporter reports", &fail)?;
    let Value::Object(map) = printed else {
        return Err(fail("printed JSON that is not an object of template names and texts".into()));
    };
    let mut templates = Vec::with_capacity(map.len());
    for (name, text) in map {
        if !crate::config::plain_template_name(&name) {
            return Err(fail(format!("printed the template name {name:?}, which is no path under paths.prompts")));
        }
        let Value::String(text) = text else {
            return Err(fail(format!("printed {name:?} with a value that is not its text (a string)")));
        };
        templates.push((name, text));
    }
    templates.sort();
    Ok(templates)
}

/// The placeholder replaced by the request file's path.
pub(crate) const REQUEST: &str = "{request}";

/// Run the exporter on `request` and return the packet it printed.
pub(crate) fn export(exporter: &Exporter, config: &Config, request: &Path) -> Result<Value> {
    let shown = request.display().to_string();
    let fail =
        |reason: String| Error::Exporter { request: shown.clone(), command: format!("{:?}", exporter.command), reason };
    let request = if request.is_absolute() { request.to_path_buf() } else { config.root.join(request) };
    let request = request.to_string_lossy();
    let placeholders = [(REQUEST, request.as_ref())];
    let packet = run(exporter, config, (&exporter.command, &placeholders), "the exporter's output", &fail)?;
    if !packet.is_object() {
        return Err(fail("printed JSON that is not a packet object".into()));
    }
    Ok(packet)
}

/// One of the exporter's commands run to its end, and the strict JSON it printed.
fn run(
    exporter: &Exporter,
    config: &Config,
    (command, placeholders): (&[String], &[(&str, &str)]),
    output_name: &'static str,
    fail: &dyn Fn(String) -> Error,
) -> Result<Value> {
    let program = process::Program {
        command,
        placeholders,
        root: &config.root,
        timeout: Duration::from_secs(exporter.timeout_seconds),
        max_bytes: config.limits.max_file_bytes,
        output_name,
    };
    let ran = process::run(&program).map_err(fail)?;
    if !ran.status.success() {
        return Err(fail(format!("failed ({}){}", ran.status, process::tail(&ran.stderr))));
    }
    canonical::parse(&ran.stdout).map_err(|e| fail(format!("printed invalid JSON: {}", e.in_file("stdout"))))
}

/// Where the copy of the reported template `name` is kept, or why there is none.
fn copy_path(config: &Config, name: &str) -> Result<std::path::PathBuf> {
    match &config.paths.prompts {
        Some(prompts) => Ok(prompts.join(name)),
        None => Err(Error::Config {
            file: config.file_name(),
            message: "[exporter] templates needs paths.prompts: the copies of the templates it reports are kept there"
                .into(),
        }),
    }
}

/// A reported template whose copy under paths.prompts is not its text.
struct Differing {
    name: String,
    text: String,
    path: std::path::PathBuf,
    /// Whether there is a copy at all.
    copied: bool,
}

/// Each reported template whose copy differs from what the app reports (none when the
/// suite declares no `[exporter] templates`).
fn differing_copies(config: &Config) -> Result<Vec<Differing>> {
    let Some(exporter) = &config.exporter else { return Ok(Vec::new()) };
    let mut differing = Vec::new();
    for (name, text) in reported_templates(exporter, config)? {
        let path = copy_path(config, &name)?;
        let copy = crate::fsutil::read_bytes(&path, config.limits.max_file_bytes).ok();
        if copy.as_deref() != Some(text.as_bytes()) {
            differing.push(Differing { name, text, path, copied: copy.is_some() });
        }
    }
    Ok(differing)
}

/// Each reported template whose copy is not its text: a finding of `corpus::lock` (the
/// copy is what the gate judges and signs).
pub(crate) fn reported_drift(config: &crate::Invocation) -> Result<Vec<crate::report::Finding>> {
    let finding = |d: Differing| {
        let what = if d.copied { "is not its copy" } else { "has no copy" };
        let shown = d.path.display().to_string();
        crate::report::Finding::new(
            crate::CorpusCheck::Lock,
            crate::report::Location::named(shown.clone()),
            format!(
                "the template {} the app keeps as code ([exporter] templates) {what} {shown}: \
                 re-bless with `packetproof bless` to review and keep it",
                d.name
            ),
        )
    };
    Ok(differing_copies(config.settings())?.into_iter().map(finding).collect())
}

/// Write the copy of each reported template whose copy differs; returns their names.
/// Written relative to paths.prompts: a symlink on the way (a folder that leads out of
/// it) or an entry that is no regular file is refused, never written through.
pub(crate) fn copy_reported(config: &Config) -> Result<Vec<String>> {
    let differing = differing_copies(config)?;
    let Some(prompts) = config.paths.prompts.as_ref().filter(|_| !differing.is_empty()) else { return Ok(Vec::new()) };
    let folder = crate::fsutil::Dir::open(prompts)?;
    let mut written = Vec::new();
    for differing in differing {
        folder.write(&differing.name, differing.text.as_bytes(), crate::fsutil::Replace::Allowed)?;
        written.push(differing.name);
    }
    Ok(written)
}
