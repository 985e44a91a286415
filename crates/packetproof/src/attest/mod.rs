//! Signed receipts: a DSSE envelope ([`dsse`]) over an in-toto Statement v1
//! (`statement`) of a run-receipt `predicate`, signed with an Ed25519 key in
//! PEM ([`keys`]); each a serde type that `attest` writes and `verify` reads. Pure
//! data: which run files become subjects, and checking an attestation against a
//! run directory, live in `run::attestation`. A green conformance gate signs its
//! own statement ([`gate`]), which [`vouch`] reads for the commands that trust only
//! what the gate passed.

pub mod dsse;
pub mod gate;
pub mod keys;
pub(crate) mod predicate;
pub(crate) mod statement;
pub mod vouch;

/// `(JSON path, expected)`: where a file's shape is wrong and what belongs there.
pub(crate) type ShapeProblem = (crate::report::JsonPath, String);

pub(crate) use dsse::{Envelope, IN_TOTO_PAYLOAD_TYPE};
pub(crate) use predicate::Predicate;
pub(crate) use statement::{Statement, Subject};
