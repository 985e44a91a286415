//! packetproof: exact LLM runtime packets, proven.
//!
//! One module per concern:
//! - [`canonical`]: strict JSON parsing and RFC 8785 canonical bytes
//! - [`digest`]: `sha256:` digests, `exactInputHash`, `checksum`
//! - [`config`]: harness.toml, every path and policy
//! - [`packet`]: the contract's packet rules
//! - [`report`]: findings and how they print
//! - [`fsutil`]: reads with clear errors, atomic writes
//! - [`compile`]: compile input → runtime packet (branch, render input, prompts)
//! - [`schema`]: the runtime output schema source and its generated snapshot
//! - [`corpus`]: fixture discovery; [`bless`]: golden files
//! - [`run`]: run directories: prepare, evaluate, complete, verify
//! - [`release`]: the release check of prompt changes

pub mod attest;
pub mod bless;
pub mod canonical;
pub mod checks;
pub mod cli;
pub mod compile;
pub mod config;
pub mod corpus;
pub mod digest;
mod error;
pub mod fsutil;
pub mod mutation;
pub mod packet;
pub mod provider;
pub mod release;
pub mod report;
pub mod run;
pub mod schema;
pub mod wire;

pub use config::Config;
pub use error::{Error, Result};
pub use report::{Finding, Format, Outcome};
