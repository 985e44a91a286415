//! `[evaluator]`: the suite's own evaluator of agent answers, run like the
//! `[exporter]` (`crate::process`: in the suite's directory, its own process group,
//! bounded output, killed at its timeout).
//!
//! Input: every argument has `{run_dir}` replaced by the run directory's absolute
//! path (as `prepare` wrote it, with the agent's `raw-output.json`), `{packet}` by a
//! file holding the runtime packet the packet stage judged, and `{output}` by a file
//! holding the exact bytes of the answer under evaluation. Standard input is empty.
//! The evaluator reads; it writes nothing into the run (packetproof writes the
//! evaluation).
//!
//! Output: one strict JSON object on stdout, the reference's `evaluation.json`:
//! `ok` (a boolean), `failures` (`[{"stage", "message"}]`, non-empty stage names,
//! empty exactly when `ok`), and optionally `earliestFailureStage` (the first
//! failure's stage, null when none; filled in when left out). Every other key is
//! kept as printed; packetproof adds `rawOutputChecksum`. Exit status 0, or 1 with
//! `ok: false` (the reference's convention); anything else is no evaluation (exit 2).

use crate::config::Evaluator;
use crate::evaluator::Failure;
use crate::jsonpath::JsonPath;
use crate::Invocation;
use crate::{canonical, fsutil, process, Error, Result};
use serde_json::{Map, Value};
use std::path::Path;
use std::time::Duration;

pub(crate) const RUN_DIR: &str = "{run_dir}";
pub(crate) const PACKET: &str = "{packet}";
pub(crate) const OUTPUT: &str = "{output}";

/// What the suite's evaluator concluded about one answer.
#[derive(Debug, Clone)]
pub(crate) struct Verdict {
    pub(crate) ok: bool,
    pub(crate) failures: Vec<Failure>,
    /// The document it printed, `earliestFailureStage` filled in.
    pub(crate) document: Map<String, Value>,
}

/// Run the suite's evaluator on the answer `raw` to `packet` in `run_dir`.
pub(crate) fn evaluate(
    evaluator: &Evaluator,
    config: &Invocation,
    run_dir: &Path,
    packet: &Value,
    raw: &[u8],
) -> Result<Verdict> {
    let fail = |reason: String| Error::Evaluator {
        run: run_dir.display().to_string(),
        command: format!("{:?}", evaluator.command),
        reason,
    };
    if !config.policy().run_exporter {
        return Err(fail("is not run here (verify runs it only with --run-exporter)".into()));
    }
    let run_dir = std::path::absolute(run_dir).map_err(|e| Error::io(run_dir, e))?;
    let scratch = fsutil::Scratch::new()?;
    let (packet_file, output_file) =
        (scratch.path().join("runtime-packet.json"), scratch.path().join("raw-output.json"));
    fsutil::write_atomic(&packet_file, canonical::to_pretty(packet).as_bytes())?;
    fsutil::write_atomic(&output_file, raw)?;
    let (run_dir, packet_file, output_file) =
        (run_dir.to_string_lossy(), packet_file.to_string_lossy(), output_file.to_string_lossy());
    let program = process::Program {
        command: &evaluator.command,
        placeholders: &[(RUN_DIR, &run_dir), (PACKET, &packet_file), (OUTPUT, &output_file)],
        root: &config.settings().root,
        timeout: Duration::from_secs(evaluator.timeout_seconds),
        max_bytes: config.settings().limits.max_file_bytes,
        output_name: "the evaluator's output",
    };
    let ran = process::run(&program).map_err(fail)?;
    let code = ran.status.code();
    if !matches!(code, Some(0 | 1)) {
        return Err(fail(format!("failed ({}){}", ran.status, process::tail(&ran.stderr))));
    }
    let document =
        canonical::parse(&ran.stdout).map_err(|e| fail(format!("printed invalid JSON: {}", e.in_file("stdout"))))?;
    let verdict = read(document).map_err(|(path, expected)| fail(format!("printed {path}: expected {expected}")))?;
    if code == Some(1) && verdict.ok {
        return Err(fail("exited 1 (a failed evaluation) but printed \"ok\": true".into()));
    }
    Ok(verdict)
}

/// The evaluation document read by its contract: `Err((JSON path, what was expected))`.
fn read(document: Value) -> std::result::Result<Verdict, (String, &'static str)> {
    let at = |path: JsonPath| format!("stdout {path}");
    let Value::Object(mut document) = document else {
        return Err((at(JsonPath::root()), "an evaluation document (a JSON object)"));
    };
    let ok = document.get("ok").and_then(Value::as_bool).ok_or((at(JsonPath::field("ok")), "a boolean"))?;
    let listed =
        document.get("failures").and_then(Value::as_array).ok_or((at(JsonPath::field("failures")), "an array"))?;
    let mut failures = Vec::new();
    for (i, failure) in listed.iter().enumerate() {
        let path = JsonPath::field("failures").index(i);
        let stage = failure.get("stage").and_then(Value::as_str).filter(|s| !s.trim().is_empty());
        let stage = stage.ok_or((at(path.clone().key("stage")), "a stage name (a non-empty string)"))?;
        let message = failure.get("message").and_then(Value::as_str).ok_or((at(path.key("message")), "a string"))?;
        failures.push(Failure { stage: stage.to_owned().into(), message: message.to_owned() });
    }
    if ok != failures.is_empty() {
        let expected =
            if ok { "no failures, since \"ok\" is true" } else { "at least one failure, since \"ok\" is false" };
        return Err((at(JsonPath::field("failures")), expected));
    }
    let earliest = failures.first().map_or(Value::Null, |f| Value::from(f.stage.to_string()));
    match document.get("earliestFailureStage") {
        Some(given) if *given != earliest => {
            return Err((at(JsonPath::field("earliestFailureStage")), "the first failure's stage (null when none)"))
        }
        Some(_) => {}
        None => {
            document.insert("earliestFailureStage".into(), earliest);
        }
    }
    Ok(Verdict { ok, failures, document })
}

/// A verdict as a fixture's golden file records it: whether the answer passed, and
/// each failure's stage and message (what a maintainer's change to the evaluator changes).
pub(crate) fn golden(ok: bool, failures: &[Failure]) -> Value {
    let listed: Vec<Value> =
        failures.iter().map(|f| serde_json::json!({"stage": f.stage, "message": f.message})).collect();
    serde_json::json!({
        "ok": ok,
        "earliestFailureStage": failures.first().map(|f| f.stage.to_string()),
        "failures": listed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_document_is_read_by_its_contract() {
        let verdict = read(json!({"ok": false, "failures": [{"stage": "names", "message": "m"}], "x": 1})).unwrap();
        assert!(!verdict.ok && verdict.failures[0].stage == "names");
        assert_eq!(verdict.document["earliestFailureStage"], json!("names"));
        assert_eq!(verdict.document["x"], json!(1), "other keys are kept");
        assert!(read(json!({"ok": true, "failures": []})).unwrap().ok);
        let refused = |doc: Value| read(doc).err().unwrap();
        assert_eq!(refused(json!([])).0, "stdout $");
        assert_eq!(refused(json!({"failures": []})).0, "stdout $.ok");
        assert_eq!(refused(json!({"ok": true})).0, "stdout $.failures");
        assert_eq!(
            refused(json!({"ok": false, "failures": [{"stage": " ", "message": "m"}]})).0,
            "stdout $.failures[0].stage"
        );
        assert_eq!(refused(json!({"ok": false, "failures": [{"stage": "s"}]})).0, "stdout $.failures[0].message");
        assert_eq!(refused(json!({"ok": true, "failures": [{"stage": "s", "message": "m"}]})).0, "stdout $.failures");
        assert_eq!(refused(json!({"ok": false, "failures": []})).0, "stdout $.failures");
        let wrong = json!({"ok": false, "failures": [{"stage": "a", "message": "m"}], "earliestFailureStage": "b"});
        assert_eq!(refused(wrong).0, "stdout $.earliestFailureStage");
    }
}
