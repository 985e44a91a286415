//! packetproof: exact LLM runtime packets, proven.
//!
//! One module per concern:
//! - [`canonical`]: strict JSON parsing and RFC 8785 canonical bytes
//! - [`digest`]: `sha256:` digests, `exactInputHash`, `checksum`
//! - [`config`]: harness.toml, every path and policy
//! - [`packet`]: the contract's packet rules
//! - [`report`]: findings and how they print
//! - [`fsutil`]: reads with clear errors, atomic writes
//! - [`run`]: run directories: prepare, evaluate, complete, verify

pub mod canonical;
pub mod cli;
pub mod config;
pub mod digest;
mod error;
pub mod fsutil;
pub mod packet;
pub mod provider;
pub mod report;
pub mod run;

pub use config::Config;
pub use error::{Error, Result};
pub use report::{Finding, Format, Outcome};
