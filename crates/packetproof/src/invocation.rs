//! What one invocation works with: the settings as harness.toml says ([`Config`]), what
//! the command decided for this run ([`CommandPolicy`], from its command line, never
//! from the file), for a run that reads the same files thousands of times the resource
//! files as first read (`read_once`), and the run's context: every cache of the library,
//! dropped with the run (`context`). It does not dereference to its settings: they are
//! [`Invocation::settings`], so a method of the settings is never taken for one of the
//! invocation's.

mod context;
mod read_once;
pub(crate) use context::{Recent, RunMark};
pub(crate) use read_once::Templates;

use crate::config::{Config, Policy};
use read_once::ReadOnce;
use std::sync::Arc;

/// What a command decides for its run, beside the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandPolicy {
    /// Whether the suite's programs (`[exporter]`, `[evaluator]`) may run. True for
    /// the commands that produce packets or judge answers; `verify` only when asked
    /// (`--run-exporter`), and the commands that check files they are given never, so
    /// checking files never runs code they name.
    pub run_exporter: bool,
    /// `--asset-example-prompts`: replaces harness.toml's `packet.asset_example_prompts`.
    pub asset_example_prompts: Option<Policy>,
}

impl Default for CommandPolicy {
    fn default() -> Self {
        CommandPolicy { run_exporter: true, asset_example_prompts: None }
    }
}

/// The settings with a command's policy: what every check, compile and run reads.
/// A function of the settings alone takes `&Config` and is handed
/// [`Invocation::settings`].
#[derive(Debug, Clone)]
pub struct Invocation {
    config: Arc<Config>,
    policy: CommandPolicy,
    /// Templates and schema files as first read ([`Invocation::reading_once`]).
    reads: Option<Arc<ReadOnce>>,
    /// The run's caches ([`Invocation::cache`]), shared by every clone.
    context: Arc<context::Context>,
}

impl From<Config> for Invocation {
    /// The settings under the default policy (programs run, the file's asset-prompt policy).
    fn from(config: Config) -> Invocation {
        Invocation::new(config, CommandPolicy::default())
    }
}

impl Invocation {
    pub fn new(config: Config, policy: CommandPolicy) -> Invocation {
        Invocation { config: Arc::new(config), policy, reads: None, context: Arc::default() }
    }

    /// The settings as loaded (harness.toml over the built-in defaults): what a
    /// function of the settings alone takes. The resource files are read through the
    /// invocation itself ([`Invocation::snapshot_bytes`] and the like), which decides
    /// whether they come from the run's first read or the disk.
    pub fn settings(&self) -> &Config {
        &self.config
    }

    /// What the command decided for this run.
    pub fn policy(&self) -> CommandPolicy {
        self.policy
    }

    /// This invocation reading each template and schema file once from now on (the
    /// conformance gate: the whole run sees one version of them).
    pub fn reading_once(&self) -> Invocation {
        Invocation { reads: Some(Arc::default()), context: Arc::default(), ..self.clone() }
    }

    /// Whether a generator prompt in an asset example fails a packet or is noted: the
    /// command's policy, else harness.toml's.
    pub fn asset_example_prompts(&self) -> Policy {
        self.policy.asset_example_prompts.unwrap_or(self.config.packet.asset_example_prompts)
    }
}
