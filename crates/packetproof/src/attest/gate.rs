//! The gate statement: what a green `packetproof test` vouches for, signed as a
//! DSSE envelope over an in-toto Statement v1. Its subjects are the golden packets
//! that passed (by the sha256 of their bytes, each with its exactInputHash); its
//! predicate names the suite, the files the verdict depended on (templates,
//! settings, schemas, exporter files) by digest, and which checks ran and which did
//! not, with why. The serde types only, one for writer and reader: a green gate
//! writes one (`conformance::gate`), [`super::vouch`] reads one back and decides
//! what it vouches for.

pub(crate) use super::statement::{DigestSet, STATEMENT_TYPE};
use serde::{Deserialize, Serialize};

/// The gate predicate's type: a URN, as the run receipt's, claiming no web address.
/// A change of its fields is a new major version: v2 adds when it was signed
/// (`signedAt`) and whether the tree was clean (`treeClean`).
pub const GATE_PREDICATE_TYPE: &str = "urn:packetproof:predicate:gate:v2";
/// The first version, still read: it records no signing time, so it is refused where a
/// maximum age is asked for.
pub const GATE_PREDICATE_TYPE_V1: &str = "urn:packetproof:predicate:gate:v1";

/// The statement a gate signs; one serde type, written by `test --attest` and read
/// by [`super::vouch`]. Unknown fields are refused in what packetproof defines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateStatement {
    #[serde(rename = "_type")]
    pub(crate) statement_type: String,
    pub subject: Vec<GateSubject>,
    #[serde(rename = "predicateType")]
    pub(crate) predicate_type: String,
    pub predicate: GatePredicate,
}

/// A golden packet that passed: its path in the suite, the sha256 of its bytes, and
/// (as an in-toto annotation) the exactInputHash it carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateSubject {
    pub name: String,
    pub(crate) digest: DigestSet,
    pub annotations: SubjectAnnotations,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubjectAnnotations {
    pub exact_input_hash: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatePredicate {
    pub packetproof: Tool,
    /// The commit the suite was checked out at; null outside a git checkout.
    pub commit: Option<String>,
    /// When the statement was signed, RFC 3339 in UTC (absent from v1 statements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_at: Option<String>,
    /// Whether the checkout had no uncommitted change when it was signed (false: signed
    /// with `--allow-dirty`, so `commit` is not all it vouched for); null outside a git
    /// checkout, absent from v1 statements.
    #[serde(default)]
    pub tree_clean: Option<bool>,
    pub suite: SuiteIdentity,
    pub materials: Vec<Material>,
    /// Every check that ran on some trial, by its rule book name.
    pub checks_ran: Vec<String>,
    /// Every trial that did not run, with why: a gate says what it does not vouch for.
    pub checks_skipped: Vec<SkippedTrial>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    pub version: String,
}

/// Which suite the statement is of: a statement of another suite is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteIdentity {
    pub name: String,
    /// `sha256:` of the suite's harness.toml bytes.
    pub settings: String,
}

/// A file the verdict depended on (in-toto's ResourceDescriptor: name and digest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Material {
    pub name: String,
    pub(crate) digest: DigestSet,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkippedTrial {
    pub trial: String,
    pub reason: String,
}

impl Material {
    /// The sha256 as lowercase hex.
    pub fn sha256(&self) -> &str {
        &self.digest.sha256
    }
}

impl GateSubject {
    /// The sha256 of the packet's bytes, as lowercase hex.
    pub fn sha256(&self) -> &str {
        &self.digest.sha256
    }
}
