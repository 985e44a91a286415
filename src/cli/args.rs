//! The clap structures of the command line: every command, every argument, each
//! with a description (a unit test checks that none is left without one).

use crate::Format;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Settings: every path and policy lives in harness.toml (unknown keys are errors), found in the
current directory or a parent, or in the directory PACKETPROOF_ROOT names.

Environment:
  PACKETPROOF_ROOT   the project directory (holding harness.toml)
  CI                 set (not empty, 0 or false): golden files are never written
  PACKETPROOF_BLESS  1 or true: `cargo test` re-blesses stale golden files
  NO_COLOR           no colours, even on a terminal

Exit status: 0 everything holds, 1 a check failed, 2 bad usage or unreadable input.";

#[derive(Debug, Parser)]
#[command(
    name = "packetproof",
    version,
    about = "Conformance toolchain for exact LLM runtime packets",
    after_help = AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// `--google-suffix-file`, on the commands that read or write Google packets
/// made by another exporter (not on bless or release-check, which compare with
/// golden files carrying the project's own suffix).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SuffixArg {
    /// The exact Google text-JSON suffix to expect instead of the one harness.toml names
    /// (`paths.google_suffix`), for packets made by another exporter.
    #[arg(long, value_name = "FILE")]
    pub google_suffix_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the canonical (RFC 8785) bytes of a JSON file, or its sha256 digest.
    Canon {
        /// The JSON file; `-` or nothing reads standard input.
        file: Option<PathBuf>,
        /// Print `sha256:<hex>` and a newline instead of the canonical bytes.
        #[arg(long)]
        hash: bool,
    },
    /// Check a runtime packet against every rule of the contract.
    Validate {
        /// The runtime packet (runtime-packet.json) to check.
        #[arg(long, value_name = "FILE")]
        packet: PathBuf,
        /// `text`: one line per finding; `json`: the outcome as a document.
        #[arg(long, value_enum, default_value_t)]
        format: FormatArg,
        #[command(flatten)]
        suffix: SuffixArg,
    },
    /// Compile a request into a runtime packet (stdout, or --out written atomically).
    Export {
        /// The compile input (a fixture's request.json).
        #[arg(long, value_name = "FILE")]
        request: PathBuf,
        /// Write the packet here (atomically, only when it compiles) instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        #[command(flatten)]
        suffix: SuffixArg,
    },
    /// Check (or rewrite) the output schema snapshot against its source.
    #[command(group(clap::ArgGroup::new("mode").required(true).args(["check", "write"])))]
    Schema {
        /// Fail when the vendored Builder schema or the snapshot generated from it changed.
        #[arg(long)]
        check: bool,
        /// Regenerate the snapshot (harness.toml `paths.schema_snapshot`) from the vendored schema.
        #[arg(long)]
        write: bool,
        /// `text` or `json` (for --check).
        #[arg(long, value_enum, default_value_t)]
        format: FormatArg,
    },
    /// Rewrite the golden files of the fixtures (never under CI); says new / updated / unchanged.
    Bless(BlessArgs),
    /// Show which packets a prompt or schema change affects and enforce the release policy.
    ReleaseCheck {
        /// The git revision to compare with (default: the merge base with main, else origin/main).
        #[arg(long, value_name = "REV")]
        base: Option<String>,
        /// `text` for a terminal, `markdown` for a pull-request comment, `json` for machines.
        #[arg(long, value_enum, default_value_t)]
        format: ReleaseFormatArg,
    },
    /// Write a run directory for a fresh agent from a valid packet.
    Prepare {
        /// The runtime packet the run is prepared from (it must hold).
        #[arg(long, value_name = "FILE")]
        packet: PathBuf,
        /// The run directory to write (created; an existing one must hold the same preparation).
        #[arg(long, value_name = "DIR")]
        out_dir: PathBuf,
        #[command(flatten)]
        suffix: SuffixArg,
    },
    /// Evaluate a run's raw output and write evaluation.json.
    Evaluate(EvaluateArgs),
    /// Write completion.json for a run whose evaluation passed.
    Complete(CompleteArgs),
    /// Check packets and run directories (searched recursively) against every rule.
    Verify(VerifyArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub struct BlessArgs {
    /// Bless only the fixtures whose name contains this text (default: every fixture).
    pub filter: Option<String>,
    /// Show each changed case's grouped diff and ask accept / reject / skip (needs a terminal).
    #[arg(long)]
    pub review: bool,
    /// What to do with golden folders that belong to no fixture.
    #[arg(long, value_enum, default_value_t, value_name = "ACTION")]
    pub unreferenced: UnreferencedArg,
    /// Refused: golden files always carry the project's own Google suffix.
    #[arg(long, value_name = "FILE", hide = true)]
    pub google_suffix_file: Option<PathBuf>,
}

/// `bless --unreferenced`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum UnreferencedArg {
    /// List them; bless still succeeds.
    #[default]
    Warn,
    /// List them and fail (exit 1).
    Reject,
    /// Remove their golden files, and the folders once empty.
    Delete,
}

impl From<UnreferencedArg> for crate::bless::Unreferenced {
    fn from(arg: UnreferencedArg) -> Self {
        match arg {
            UnreferencedArg::Warn => crate::bless::Unreferenced::Warn,
            UnreferencedArg::Reject => crate::bless::Unreferenced::Reject,
            UnreferencedArg::Delete => crate::bless::Unreferenced::Delete,
        }
    }
}

/// `--format` of the report commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FormatArg {
    #[default]
    Text,
    Json,
}

impl From<FormatArg> for Format {
    fn from(arg: FormatArg) -> Format {
        match arg {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
        }
    }
}

/// `release-check --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ReleaseFormatArg {
    #[default]
    Text,
    Markdown,
    Json,
}

impl From<ReleaseFormatArg> for crate::release::ReportFormat {
    fn from(arg: ReleaseFormatArg) -> Self {
        match arg {
            ReleaseFormatArg::Text => crate::release::ReportFormat::Text,
            ReleaseFormatArg::Markdown => crate::release::ReportFormat::Markdown,
            ReleaseFormatArg::Json => crate::release::ReportFormat::Json,
        }
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct EvaluateArgs {
    /// The run directory (as written by `prepare`).
    #[arg(long, value_name = "DIR")]
    pub run_dir: PathBuf,
    /// The runtime packet; default: rebuilt from agent-request.json + eval-context.json.
    #[arg(long, value_name = "FILE")]
    pub packet: Option<PathBuf>,
    /// The agent's raw output; default: the manifest's rawOutput (raw-output.json).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Where to write the evaluation; default: the manifest's evaluation (evaluation.json).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// `json` prints the evaluation document itself.
    #[arg(long, value_enum, default_value_t)]
    pub format: FormatArg,
    #[command(flatten)]
    pub suffix: SuffixArg,
}

#[derive(Debug, Clone, clap::Args)]
pub struct CompleteArgs {
    /// The evaluated run directory.
    #[arg(long, value_name = "DIR")]
    pub run_dir: PathBuf,
    /// The scenario this run exercised.
    #[arg(long, value_name = "S")]
    pub scenario: String,
    /// The run's id within the scenario.
    #[arg(long, value_name = "R")]
    pub run_id: String,
    /// The fresh agent's task id; must not appear in any other completion under the runs root.
    #[arg(long, value_name = "T")]
    pub agent_task: String,
    /// An evaluator note (at least one, none blank).
    #[arg(long = "note", value_name = "TEXT", required = true)]
    pub notes: Vec<String>,
    /// Where agent task ids must be unique; default: the run directory's parent.
    #[arg(long, value_name = "DIR")]
    pub runs_root: Option<PathBuf>,
    #[command(flatten)]
    pub suffix: SuffixArg,
}

#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// Packets, run directories, or directories to search for both.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// `text`: failures and their findings, then `N checked: H hold, F failed`; `json`: every
    /// result, the counts and the checks that ran.
    #[arg(long, value_enum, default_value_t)]
    pub format: FormatArg,
    /// List every file checked, not only the failures (text format).
    #[arg(short, long)]
    pub verbose: bool,
    #[command(flatten)]
    pub suffix: SuffixArg,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every argument of every command says what it is for.
    #[test]
    fn every_argument_has_a_description() {
        let cli = Cli::command();
        let mut missing = Vec::new();
        for command in cli.get_subcommands() {
            for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
                if arg.get_help().is_none() && !matches!(arg.get_id().as_str(), "help" | "version") {
                    missing.push(format!("{} {}", command.get_name(), arg.get_id()));
                }
            }
        }
        assert_eq!(missing, Vec::<String>::new());
    }

    /// --google-suffix-file is offered where a foreign suffix is accepted, and only there.
    #[test]
    fn the_suffix_option_is_offered_only_where_accepted() {
        let cli = Cli::command();
        let offered: Vec<&str> = cli
            .get_subcommands()
            .filter(|c| c.get_arguments().any(|a| a.get_id() == "google_suffix_file" && !a.is_hide_set()))
            .map(|c| c.get_name())
            .collect();
        assert_eq!(offered, ["validate", "export", "prepare", "evaluate", "complete", "verify"]);
    }
}
