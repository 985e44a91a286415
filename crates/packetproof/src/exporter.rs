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

/// The placeholder replaced by the request file's path.
pub(crate) const REQUEST: &str = "{request}";

/// Run the exporter on `request` and return the packet it printed.
pub(crate) fn export(exporter: &Exporter, config: &Config, request: &Path) -> Result<Value> {
    let shown = request.display().to_string();
    let fail =
        |reason: String| Error::Exporter { request: shown.clone(), command: format!("{:?}", exporter.command), reason };
    let request = if request.is_absolute() { request.to_path_buf() } else { config.root.join(request) };
    let request = request.to_string_lossy();
    let program = process::Program {
        command: &exporter.command,
        placeholders: &[(REQUEST, &request)],
        root: &config.root,
        timeout: Duration::from_secs(exporter.timeout_seconds),
        max_bytes: config.limits.max_file_bytes,
        output_name: "the exporter's output",
    };
    let ran = process::run(&program).map_err(fail)?;
    if !ran.status.success() {
        return Err(fail(format!("failed ({}){}", ran.status, process::tail(&ran.stderr))));
    }
    let packet =
        canonical::parse(&ran.stdout).map_err(|e| fail(format!("printed invalid JSON: {}", e.in_file("stdout"))))?;
    if !packet.is_object() {
        return Err(fail("printed JSON that is not a packet object".into()));
    }
    Ok(packet)
}
