//! `[evaluator]` and `[release]`: the suite's own evaluator of agent answers, and
//! how `release-check` reads a suite's `promptVersions`.

use serde::Deserialize;

pub(super) use crate::profile::check_evaluator;
/// Declared beside the agents that carry one (`crate::profile`).
pub use crate::profile::Evaluator;

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
