//! The command line resolved once, before any command runs (ripgrep's high-level
//! arguments over clap's low-level ones): where the settings are, the Google suffix
//! given before the command or after it, and what the command decides for its run
//! ([`CommandPolicy`]). The settings themselves load when a command asks for them, so
//! a command that reads none (canon, checks, init, completions, man) runs anywhere.

use crate::args::{Cli, Command};
use packetproof::config::Overrides;
use packetproof::{CommandPolicy, Config, Error, Invocation, Result};
use std::path::{Path, PathBuf};

/// A parsed command and how it loads its settings.
pub struct HiArgs {
    pub command: Command,
    pub settings: Settings,
}

/// Where the settings are, what replaces the file's suffix, and the command's policy.
pub struct Settings {
    /// `--config FILE`.
    file: Option<PathBuf>,
    /// `--google-suffix-file`.
    suffix: Option<PathBuf>,
    policy: CommandPolicy,
}

impl HiArgs {
    /// Resolve `cli`: refuses `--google-suffix-file` before a command that does not take it.
    pub fn new(cli: Cli) -> Result<HiArgs> {
        let suffix = suffix(&cli)?;
        let policy = CommandPolicy {
            run_exporter: cli.command.runs_suite_programs(),
            asset_example_prompts: cli.asset_example_prompts.map(Into::into),
        };
        Ok(HiArgs { settings: Settings { file: cli.config, suffix, policy }, command: cli.command })
    }
}

/// `--google-suffix-file`, given before the command or after it (before wins, as it
/// always has). The commands that take it are those whose arguments carry a
/// [`SuffixArg`](crate::args::SuffixArg), as clap defines them; before any other it is refused.
fn suffix(cli: &Cli) -> Result<Option<PathBuf>> {
    let after = cli.command.suffix_arg();
    match (&cli.google_suffix_file, after) {
        (Some(before), Some(_)) => Ok(Some(before.clone())),
        (None, after) => Ok(after.and_then(|arg| arg.file.clone())),
        // The suffix belongs to packets made elsewhere; this command reads none.
        (Some(_), None) => Err(Error::Usage(match cli.command {
            Command::Bless(_) => {
                "bless writes golden files with the project's own suffix; --google-suffix-file is refused".into()
            }
            _ => format!(
                "--google-suffix-file is for commands that read packets made elsewhere ({}); this one does not take it",
                crate::args::suffix_takers().join(", ")
            ),
        })),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    /// Every command refuses `--google-suffix-file` before it exactly when clap gives it
    /// no such option after it: the refusal cannot drift from the commands' arguments.
    #[test]
    fn the_suffix_is_refused_before_exactly_the_commands_that_do_not_take_it() {
        let takers = crate::args::suffix_takers();
        for command in Cli::command().get_subcommands() {
            let name = command.get_name();
            let mut args = crate::args::tests::least_args(command);
            args.splice(1..1, ["--google-suffix-file".to_owned(), "s.txt".to_owned()]);
            let cli = Cli::try_parse_from(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            let resolved = HiArgs::new(cli).map(|hi| hi.settings.suffix);
            match takers.iter().any(|t| t == name) {
                true => assert_eq!(resolved.unwrap(), Some(PathBuf::from("s.txt")), "{name}"),
                false => assert!(matches!(resolved, Err(Error::Usage(_))), "{name} must refuse it"),
            }
        }
    }

    /// Only the commands that check files they are given keep the suite's programs from running.
    #[test]
    fn the_policy_is_resolved_from_the_command_line() {
        let policy = |args: &[&str]| HiArgs::new(Cli::try_parse_from(args).unwrap()).unwrap().settings.policy;
        assert!(!policy(&["packetproof", "validate", "--packet", "p"]).run_exporter);
        assert!(!policy(&["packetproof", "verify", "p"]).run_exporter);
        assert!(policy(&["packetproof", "verify", "p", "--run-exporter"]).run_exporter);
        assert!(policy(&["packetproof", "bless"]).run_exporter);
        let warn = policy(&["packetproof", "--asset-example-prompts", "warn", "validate", "--packet", "p"]);
        assert_eq!(warn.asset_example_prompts, Some(packetproof::config::Policy::Warn));
        assert_eq!(policy(&["packetproof", "checks"]).asset_example_prompts, None);
    }
}
