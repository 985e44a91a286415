//! How a command loads its settings: where they are, what replaces the file's Google
//! suffix, and the command's policy, as the command line resolved them (`hiargs`). A
//! leaf of the command line: every command module takes it, and it imports none.

use packetproof::config::Overrides;
use packetproof::{CommandPolicy, Config, Invocation, Result};
use std::path::{Path, PathBuf};

/// Where the settings are, what replaces the file's suffix, and the command's policy.
pub struct Settings {
    /// `--config FILE`.
    pub(crate) file: Option<PathBuf>,
    /// `--google-suffix-file`.
    pub(crate) suffix: Option<PathBuf>,
    pub(crate) policy: CommandPolicy,
}

impl Settings {
    /// The settings (see [`Config::discover`]) under the command's policy.
    pub fn load(&self) -> Result<Invocation> {
        self.load_with(None)
    }

    /// [`Settings::load`], pinning `schema` as the schema snapshot (`prepare --schema`).
    pub fn load_with(&self, schema: Option<&Path>) -> Result<Invocation> {
        let overrides = Overrides { google_suffix: self.suffix.as_deref(), schema_snapshot: schema };
        Ok(Invocation::new(Config::discover_with(self.file.as_deref(), overrides)?, self.policy))
    }

    /// The settings of a command that runs a corpus (bless, test, release-check): a
    /// harness.toml must exist.
    pub fn suite(&self, command: &str) -> Result<Invocation> {
        let invocation = self.load()?;
        invocation.settings().require_suite(command)?;
        Ok(invocation)
    }
}
