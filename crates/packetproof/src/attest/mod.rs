//! Signed receipts: a DSSE envelope ([`dsse`]) over an in-toto Statement v1
//! (`statement`), signed with an Ed25519 key in PEM ([`keys`]). Pure data: which
//! run files become subjects, and checking an attestation against a run
//! directory, live in `run::attestation`.

pub mod dsse;
pub mod keys;
pub(crate) mod statement;

pub(crate) use dsse::{Envelope, IN_TOTO_PAYLOAD_TYPE};
pub(crate) use statement::Subject;
