//! Small settings tables: `[suite]`, `[checks]` and `[canonical]`.

use serde::Deserialize;
use std::collections::BTreeMap;

/// `[suite]`: what names the suite in a gate statement, so that a statement of
/// another suite is refused. Without a name, the folder harness.toml is in names it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SuiteSettings {
    pub(crate) name: Option<String>,
}

/// `[checks]`: the suite may turn a check off only explicitly, with the reason,
/// which every command then reports beside the check it did not run.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Checks {
    /// Check name (`packet::renders-from-input`) to the reason it is off here.
    #[serde(default)]
    pub(crate) skip: BTreeMap<String, String>,
}

/// `[canonical]`: hashes made by other canonicalizers.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Canonical {
    /// Accept a stored exactInputHash or checksum made with the reference's key order
    /// (JavaScript `localeCompare`, ICU root collation) where it differs from RFC 8785,
    /// with a note naming it. packetproof never writes such hashes.
    #[serde(default)]
    pub accept_locale_key_order: bool,
}
