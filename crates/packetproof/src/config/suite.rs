//! `[evaluator]` and `[release]`: the suite's own evaluator of agent answers, and
//! how `release-check` reads a suite's `promptVersions`.

use serde::Deserialize;

/// `[evaluator]`: the suite's own evaluator of agent answers, run like the
/// `[exporter]` (`crate::suite_evaluator` says what it is given and must print).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evaluator {
    /// The program and its arguments; `{run_dir}`, `{packet}` and `{output}` are
    /// replaced by the paths of the run directory, the packet and the raw output.
    pub(crate) command: Vec<String>,
    /// Seconds before the evaluator is killed and the evaluation cannot be made.
    #[serde(default = "default_timeout")]
    pub(crate) timeout_seconds: u64,
}

fn default_timeout() -> u64 {
    60
}

/// `[release]`: release-check's reading of the suite's packets.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    #[serde(default)]
    pub(crate) prompt_versions: PromptVersions,
}

/// What a packet's `promptVersions` values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptVersions {
    /// The sha256 of each template's bytes (what packetproof's compiler writes).
    #[default]
    Digest,
    /// A name the suite's maintainers give each template version ("v3"): it must
    /// change exactly when the template's text does.
    Label,
}

/// `Err(message)` naming the setting when `[evaluator]` cannot be run as given.
pub(super) fn check_evaluator(evaluator: Option<&Evaluator>) -> Result<(), String> {
    let Some(evaluator) = evaluator else { return Ok(()) };
    if evaluator.command.first().is_none_or(|program| program.trim().is_empty()) {
        return Err("evaluator.command: expected the program and its arguments".into());
    }
    if evaluator.timeout_seconds == 0 {
        return Err("evaluator.timeout_seconds: expected at least 1".into());
    }
    Ok(())
}
