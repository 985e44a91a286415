//! Signed receipts: a DSSE envelope ([`dsse`]) over an in-toto Statement v1
//! ([`statement`]) of a run-receipt [`predicate`], signed with an Ed25519 key in PEM ([`keys`]). Pure data: which
//! run files become subjects, and checking an attestation against a run
//! directory, live in `run::attestation`.

pub mod dsse;
pub mod keys;
pub mod predicate;
pub mod statement;

pub use dsse::{Envelope, IN_TOTO_PAYLOAD_TYPE};
pub use predicate::{Predicate, PREDICATE_TYPE};
pub use statement::{DigestSet, Statement, Subject, STATEMENT_TYPE};
