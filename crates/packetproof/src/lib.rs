//! packetproof: exact LLM runtime packets, proven.
//!
//! The modules form layers; a module uses only the layers below it (`tests/tidy.rs`
//! checks it, and that nothing here prints). The command line is its own crate, the
//! workspace's root package, so nothing here can import it. What is `pub` is what a
//! user of the library needs (the command line is the first such user, the tests and
//! benchmarks the others); everything else is `pub(crate)` or private, so the compiler
//! reports code nothing uses.
//!
//! - leaves: [`error`](Error), [`canonical`] (strict parsing, RFC 8785 bytes),
//!   `rules` (the rule book: every [`Check`] declared once), [`report`] (findings, outcomes, status,
//!   the output formats), `jsonpath`, `parallel`
//!   (work over every core, results in input order);
//! - infrastructure: [`env`](mod@env) (every environment variable, parsed once), [`config`]
//!   (harness.toml), [`invocation`] (the settings with what a command decided, and the
//!   files the gate reads once), [`digest`], [`fsutil`] (bounded, regular-only reads; directory-relative
//!   atomic writes; directory locks), `numbers` (JSON numbers by value, quoted as written),
//!   [`diff`], [`call`] (the rest of a call: tools and settings, named once for every
//!   provider API), `git` (the only module that spawns git);
//! - the contract: `branch` (the branch's value sets as enums), [`packet`], [`provider`] (the agent's view), [`schema`], `schema_refs`
//!   (validation schemas that would recurse forever are refused before compiling);
//! - producers: [`compile`] (compile input → runtime packet), `evaluator` (the reference
//!   evaluator's rules over a parsed answer) and [`run`] (prepare, evaluate, complete run
//!   directories; receipts defined in `run::format`);
//! - checks over the corpus: [`corpus`] (fixture discovery, coverage, fixture runs)
//!   and [`check`] (the one dispatch from a [`Check`] to its function);
//! - provenance: [`wire`] (one spec per provider API, both ways: the request body a packet
//!   implies and a body read back; the captured-request check) and
//!   [`attest`] (DSSE, in-toto statements, Ed25519 keys), both pure data;
//! - applications: [`verify`] (every check on packets and run directories), [`trace`] (production
//!   traces held to reviewed packets), [`bless`] (the one guarded writer of golden files), `mutation`
//!   (the self-test), [`release`] (the release check), [`report_html`] (the HTML reports of
//!   `test` and `release-check`), [`conformance`] (the gate's trials, and the runner
//!   `packetproof test` runs them with: filter, shards, every core, outcomes as events),
//!   [`reporter`] (every event a command reports, in each format it offers).

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
