//! The clap structures of the command line: every command, every argument, each
//! with a description (a unit test checks that none is left without one).

use super::cmd::{self, test};
use super::serve;
use crate::flags::{PolicyArg, SuffixArg};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

/// The text after `packetproof --help`: where the settings come from, then every
/// variable and every exit status from the library's own tables (`env::VARIABLES`,
/// `EXIT_STATUSES`), so the help cannot name a variable or a code the program does not have.
pub fn after_help() -> String {
    let mut text = String::from(
        "Settings: every path and policy lives in harness.toml (unknown keys are errors), found in the\n\
         current directory or a parent, or in the directory PACKETPROOF_ROOT names.\n\nEnvironment:\n",
    );
    let width = packetproof::env::VARIABLES.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    for (name, meaning) in packetproof::env::VARIABLES {
        text.push_str(&format!("  {name:width$}  {meaning}\n"));
    }
    text.push_str("\nExit status (`test`: as `cargo test`, 101 when a trial failed):\n");
    for (code, meaning, covers) in packetproof::EXIT_STATUSES {
        let covers = if covers.is_empty() { String::new() } else { format!(": {covers}") };
        text.push_str(&format!("  {code}  {meaning}{covers}\n"));
    }
    text.trim_end().to_owned()
}

/// The command line's clap definition with its generated help: what `--help`, the
/// manual page and the completions show.
pub fn cli_command() -> clap::Command {
    Cli::command().after_help(after_help())
}

/// The process's arguments, parsed against [`cli_command`] (exits on `--help` or bad usage, as clap does).
pub fn parse() -> Cli {
    let mut command = cli_command();
    let matches = command.get_matches_mut();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut command).exit())
}

/// The commands that take `--google-suffix-file`, as clap defines them: the one list the
/// refusal of the option names.
pub fn suffix_takers() -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .filter(|c| c.get_arguments().any(|a| a.get_long() == Some(SUFFIX_OPTION)))
        .map(|c| c.get_name().to_owned())
        .collect()
}

/// The option's name (clap's `long`).
const SUFFIX_OPTION: &str = "google-suffix-file";

#[derive(Debug, Parser)]
#[command(name = "packetproof", version, about = "Conformance toolchain for exact LLM runtime packets")]
pub struct Cli {
    /// Also accepted before the command; shown only on the commands that take it, and
    /// refused before any other ([`Command::suffix_arg`]).
    #[arg(long, value_name = "FILE", hide = true)]
    pub google_suffix_file: Option<PathBuf>,
    /// The settings file (default: harness.toml in PACKETPROOF_ROOT, else in the current
    /// directory or a parent, else the built-in settings).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Whether generator prompts in asset examples fail a packet or are only noted
    /// (harness.toml packet.asset_example_prompts): `warn` for another exporter's packets.
    #[arg(long, global = true, value_enum, value_name = "POLICY")]
    pub asset_example_prompts: Option<PolicyArg>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the canonical (RFC 8785) bytes of a JSON file, or its sha256 digest.
    Canon(cmd::canon::CanonArgs),
    /// Check a runtime packet against every rule of the contract.
    Validate(cmd::validate::ValidateArgs),
    /// Compile a request into a runtime packet (stdout, or --out written atomically).
    Export(cmd::export::ExportArgs),
    /// Check (or rewrite) the output schema snapshot against its source.
    Schema(cmd::schema::SchemaArgs),
    /// List the rule book: every check, what it reads, what it needs before it can
    /// apply (without it the check says "not applicable" and why), and what it proves.
    Checks(cmd::checks::ChecksArgs),
    /// Rewrite the golden files of the fixtures (never under CI); says new / updated / unchanged.
    Bless(cmd::bless::BlessArgs),
    /// Show which packets a prompt or schema change affects and enforce the release policy.
    ReleaseCheck(cmd::release_check::ReleaseCheckArgs),
    /// Write a run directory for a fresh agent from a valid packet.
    Prepare(cmd::prepare::PrepareArgs),
    /// Write a working conformance suite into an empty folder (default: the current one).
    ///
    /// The block builder's demo, or with --agent the smallest suite of one app agent. In a
    /// repository that has a suite already, write none: wire CI and the pre-commit hooks to that one.
    Init(cmd::init::InitArgs),
    /// Run the conformance gate's trials (as `cargo test` does), from the binary.
    Test(test::TestArgs),
    /// Evaluate a run's raw output and write evaluation.json.
    Evaluate(cmd::evaluate::EvaluateArgs),
    /// Write completion.json for a run whose evaluation passed.
    Complete(cmd::complete::CompleteArgs),
    /// Check packets and run directories (searched recursively) against every rule.
    Verify(cmd::verify::VerifyArgs),
    /// Hold OpenTelemetry traces and logs (OTLP JSON or protobuf) to reviewed packets: each GenAI
    /// call is matched, mismatched, unreviewed or not judgeable (and with --gate, unvouched or
    /// conforming to a vouched template).
    Trace(cmd::trace::TraceArgs),
    /// Judge GenAI calls live: an OTLP receiver (HTTP, protobuf or JSON, and gRPC on the same port;
    /// traces and logs) that SDK exporters and the Collector send to, with findings as JSON lines
    /// and /metrics.
    Serve(serve::ServeArgs),
    /// Print the exact provider request body a packet implies, or check a captured request.
    Wire(cmd::wire::WireArgs),
    /// Sign a completed run: a DSSE envelope over an in-toto statement of its files.
    Attest(cmd::attest::AttestArgs),
    /// Print a shell completion script (e.g. `packetproof completions bash > /etc/bash_completion.d/packetproof`).
    Completions(cmd::completions::CompletionsArgs),
    /// Print the manual page (roff) of packetproof or of one of its commands (`packetproof man | man -l -`).
    Man(cmd::man::ManArgs),
}

impl Command {
    /// The command's `--google-suffix-file`; `None` for a command that does not take it
    /// (its arguments have no [`SuffixArg`]): given before it, the option is refused.
    pub fn suffix_arg(&self) -> Option<&SuffixArg> {
        match self {
            Command::Validate(args) => Some(&args.suffix),
            Command::Export(args) => Some(&args.suffix),
            Command::Prepare(args) => Some(&args.suffix),
            Command::Wire(args) => Some(&args.suffix),
            Command::Attest(args) => Some(&args.suffix),
            Command::Evaluate(args) => Some(&args.suffix),
            Command::Complete(args) => Some(&args.suffix),
            Command::Verify(args) => Some(&args.suffix),
            Command::Test(args) => Some(&args.suffix),
            Command::Trace(args) => Some(&args.suffix),
            Command::Serve(args) => Some(&args.suffix),
            Command::Canon(_)
            | Command::Schema(_)
            | Command::Checks(_)
            | Command::Bless(_)
            | Command::ReleaseCheck(_)
            | Command::Init(_)
            | Command::Completions(_)
            | Command::Man(_) => None,
        }
    }

    /// Whether the suite's programs (`[exporter]`, `[evaluator]`) may run: a command that
    /// checks files it is given never runs a program they name; `verify` when asked.
    pub fn runs_suite_programs(&self) -> bool {
        match self {
            Command::Verify(args) => args.run_exporter,
            Command::Validate(_) | Command::Prepare(_) | Command::Wire(_) | Command::Trace(_) | Command::Serve(_) => {
                false
            }
            Command::Canon(_)
            | Command::Export(_)
            | Command::Schema(_)
            | Command::Checks(_)
            | Command::Bless(_)
            | Command::ReleaseCheck(_)
            | Command::Init(_)
            | Command::Test(_)
            | Command::Evaluate(_)
            | Command::Complete(_)
            | Command::Attest(_)
            | Command::Completions(_)
            | Command::Man(_) => true,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use clap::CommandFactory;

    /// `packetproof <command>` with the fewest arguments it parses with.
    pub(crate) fn least_args(command: &clap::Command) -> Vec<String> {
        let mut args = vec!["packetproof".to_owned(), command.get_name().to_owned()];
        let group_heads = command.get_groups().filter(|g| g.is_required_set()).filter_map(|g| g.get_args().next());
        let group_heads: Vec<_> = group_heads.collect();
        // `wire --packet` is required unless `--gate` judges a production body.
        let needed =
            |a: &&clap::Arg| a.is_required_set() || a.get_id() == "packet" || group_heads.contains(&a.get_id());
        for arg in command.get_arguments().filter(needed) {
            if let Some(long) = arg.get_long() {
                args.push(format!("--{long}"));
            }
            if !arg.get_action().takes_values() {
                continue;
            }
            // A value each parser accepts (`--api` checks its own, without possible values).
            args.push(match arg.get_possible_values().first() {
                Some(first) => first.get_name().to_owned(),
                None if arg.get_id() == "api" => "anthropic".to_owned(),
                None if arg.get_id() == "listen" => "127.0.0.1:0".to_owned(),
                None => "x".to_owned(),
            });
        }
        args
    }

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

    /// Every command that takes `--google-suffix-file` hands it to the dispatch
    /// (`Command::suffix_arg`): given after the command with the command's required
    /// arguments, it comes back.
    #[test]
    fn every_command_that_takes_the_suffix_hands_it_on() {
        let cli = Cli::command();
        let takers = suffix_takers();
        assert!(takers.len() >= 10, "{takers:?}");
        for name in takers {
            let mut args = least_args(cli.find_subcommand(&name).unwrap());
            args.extend(["--google-suffix-file".to_owned(), "suffix.txt".to_owned()]);
            let parsed = Cli::try_parse_from(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            let given = parsed.command.suffix_arg().and_then(|arg| arg.file.as_deref());
            assert_eq!(given.map(|p| p.to_str().unwrap()), Some("suffix.txt"), "{args:?}");
        }
    }
}
