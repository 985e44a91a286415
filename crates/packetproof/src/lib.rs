//! packetproof: exact LLM runtime packets, proven.
//!
//! The modules form layers, mapped once in the layer table of
//! [docs/architecture.md, "Where things are"](../../docs/architecture.md#where-things-are),
//! which `tests/tidy.rs` reads and enforces (and that nothing here prints). The command
//! line is its own crate, so nothing here can import it. What is `pub` is what a user of
//! the library needs (the command line, the tests, the benchmarks); everything else is
//! `pub(crate)` or private, so the compiler reports code nothing uses.

pub mod attest;
pub mod bless;
mod branch;
mod builtin;
pub mod call;
pub mod canonical;
pub mod check;
pub mod compile;
pub mod config;
pub mod conform;
pub mod conformance;
pub mod corpus;
pub mod diff;
pub mod digest;
pub mod distribution;
pub mod env;
mod error;
mod evaluator;
mod exporter;
mod forbidden;
pub mod fsutil;
mod git;
pub mod init;
pub mod invocation;
mod jsonpath;
pub mod judge;
mod lock;
mod mutation;
mod numbers;
mod otlp;
pub mod packet;
mod parallel;
pub mod parent;
mod process;
pub mod profile;
pub mod provider;
pub mod release;
pub mod report;
pub mod report_html;
pub mod reporter;
mod rules;
pub mod run;
pub mod schema;
mod schema_refs;
mod suite_evaluator;
pub mod template;
pub mod trace;
pub mod verify;
pub mod wire;

pub use config::Config;
pub use error::{Error, Result};
pub use invocation::{CommandPolicy, Invocation};
pub use report::{Finding, Findings, Format, JsonPath, Location, Outcome, Status, EXIT_STATUSES};
pub use rules::{Check, CorpusCheck, InputCheck, Need, PacketCheck, Reads, Rule, RunCheck, Skip, Skipped};

/// The project's root folder, where harness.toml, fixtures/, golden/ and tests/ are:
/// what the unit tests read (this crate sits two folders below it).
#[cfg(test)]
pub(crate) const PROJECT_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
