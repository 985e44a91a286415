//! The clap structures of the command line: every command, every argument, each
//! with a description (a unit test checks that none is left without one).

use super::{provenance, test};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use packetproof::config::Policy;
use packetproof::reporter::Kind;
use packetproof::Format;
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
    /// Also accepted before the command; shown only on the commands that take it.
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
        #[arg(long, value_parser = formats(OUTCOMES), default_value = OUTCOMES[0].name())]
        format: Format,
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
        #[arg(long, value_parser = formats(OUTCOMES), default_value = OUTCOMES[0].name())]
        format: Format,
    },
    /// List the rule book: every check, what it reads, what it needs before it can
    /// apply (without it the check says "not applicable" and why), and what it proves.
    Checks {
        /// `text` or `json`.
        #[arg(long, value_parser = formats(RULE_BOOK), default_value = RULE_BOOK[0].name())]
        format: Format,
    },
    /// Rewrite the golden files of the fixtures (never under CI); says new / updated / unchanged.
    Bless(BlessArgs),
    /// Show which packets a prompt or schema change affects and enforce the release policy.
    ReleaseCheck {
        /// The git revision to compare with (default: the merge base with main, else origin/main).
        #[arg(long, value_name = "REV")]
        base: Option<String>,
        /// `text` for a terminal, `markdown` for a pull-request comment, `json` for machines,
        /// `html` for one self-contained page (side-by-side prompt diffs) to attach to a CI run.
        #[arg(long, value_parser = formats(RELEASE), default_value = RELEASE[0].name())]
        format: Format,
    },
    /// Write a run directory for a fresh agent from a valid packet.
    Prepare {
        /// The runtime packet the run is prepared from (it must hold).
        #[arg(long, value_name = "FILE")]
        packet: PathBuf,
        /// The run directory to write (created; an existing one must hold the same preparation).
        #[arg(long, value_name = "DIR")]
        out_dir: PathBuf,
        /// The runtime schema snapshot to pin (for packets made elsewhere); a non-Google
        /// packet's outputSchema must equal it. Default: the suite's, else the built-in one.
        #[arg(long, value_name = "FILE")]
        schema: Option<PathBuf>,
        #[command(flatten)]
        suffix: SuffixArg,
    },
    /// Write a working conformance suite into an empty folder (default: the current one).
    ///
    /// The block builder's demo, or with --agent the smallest suite of one app agent. In a
    /// repository that has a suite already, write none: wire CI and the pre-commit hooks to that one.
    Init {
        /// The empty folder to write the suite into (default: the current directory).
        dir: Option<PathBuf>,
        /// Write the suite of one app agent of this name ([agents.NAME], its templates, one
        /// fixture, an exporter skeleton in the team's language) instead of the demo.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// The agent's template style.
        #[arg(long, value_enum, default_value_t, requires = "agent")]
        style: StyleArg,
        /// How the agent answers: plain text, or JSON in a schema (written as its schema file).
        #[arg(long, value_enum, default_value_t, requires = "agent")]
        output: OutputArg,
    },
    /// Run the conformance gate's trials (as `cargo test` does), from the binary.
    Test(test::TestArgs),
    /// Evaluate a run's raw output and write evaluation.json.
    Evaluate(EvaluateArgs),
    /// Write completion.json for a run whose evaluation passed.
    Complete(CompleteArgs),
    /// Check packets and run directories (searched recursively) against every rule.
    Verify(VerifyArgs),
    /// Hold OpenTelemetry traces and logs (OTLP JSON or protobuf) to reviewed packets: each GenAI
    /// call is matched, mismatched, unreviewed or not judgeable (and with --gate, unvouched or
    /// conforming to a vouched template).
    Trace(super::trace::TraceArgs),
    /// Judge GenAI calls live: an OTLP receiver (HTTP, protobuf or JSON, and gRPC on the same port;
    /// traces and logs) that SDK exporters and the Collector send to, with findings as JSON lines
    /// and /metrics.
    Serve(super::serve::ServeArgs),
    /// Print the exact provider request body a packet implies, or check a captured request.
    Wire {
        /// The runtime packet whose provider request body is printed or checked. Without it,
        /// `--check BODY --gate FILE` judges a production body with new data as `trace --gate`
        /// judges the call, against the suite's golden packets and vouched templates.
        #[arg(long, value_name = "FILE", required_unless_present = "gate")]
        packet: Option<PathBuf>,
        /// anthropic, openai-chat, openai-responses or gemini.
        #[arg(long, value_parser = provenance::parse_api)]
        api: packetproof::wire::Api,
        /// A captured request (a bare JSON body or a HAR file) to check instead of printing.
        #[arg(long, value_name = "CAPTURED", conflicts_with = "out")]
        check: Option<PathBuf>,
        /// With --check on a HAR: what stands in place of the API's origin in the request URL
        /// (a proxy, a gateway or a local capture server: `http://127.0.0.1:8080`); the API's
        /// own path (`/v1/messages`, …) must follow it. Default: the API's host.
        #[arg(long, value_name = "URL", requires = "check", value_parser = provenance::parse_base_url)]
        base_url: Option<String>,
        /// With --check: a gate statement (`packetproof test --attest`) that must vouch for the
        /// packet (without --packet: for the call's packet or the templates it renders).
        #[arg(long, value_name = "FILE", requires_all = ["check", "trusted_keys"])]
        gate: Option<PathBuf>,
        /// An Ed25519 public key (SPKI PEM) the gate statement must be signed by; repeatable.
        #[arg(long = "trusted-key", value_name = "PUB.pem", requires = "gate")]
        trusted_keys: Vec<PathBuf>,
        /// With --gate: the oldest gate statement taken, by the time it was signed (`30d`, `12h`,
        /// `90m`, `3600s`, or seconds); an older one vouches for nothing.
        #[arg(long, value_name = "AGE", requires = "gate", value_parser = crate::args::age)]
        gate_max_age: Option<std::time::Duration>,
        /// Write the body here instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// `text` or `json` (for --check).
        #[arg(long, value_parser = formats(OUTCOMES), default_value = OUTCOMES[0].name())]
        format: Format,
        #[command(flatten)]
        suffix: SuffixArg,
    },
    /// Sign a completed run: a DSSE envelope over an in-toto statement of its files.
    Attest {
        /// The completed run directory.
        run_dir: PathBuf,
        /// Ed25519 private key, PKCS#8 PEM (`openssl genpkey -algorithm ed25519`).
        #[arg(long, value_name = "KEY.pem")]
        key: PathBuf,
        /// Where to write the envelope (default RUN_DIR/attestation.json; never overwritten).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        #[command(flatten)]
        suffix: SuffixArg,
    },
    /// Print a shell completion script (e.g. `packetproof completions bash > /etc/bash_completion.d/packetproof`).
    Completions {
        /// bash, zsh, fish, powershell or elvish.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) of packetproof or of one of its commands (`packetproof man | man -l -`).
    Man {
        /// A command whose own page to print (default: the main page, which lists them all).
        command: Option<String>,
    },
}

/// `--google-suffix-file`, on the commands that read packets made elsewhere (the others
/// refuse it: bless and release-check compare with golden files, which carry the project's
/// own suffix; canon, schema and init read no packet).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SuffixArg {
    /// The exact Google text-JSON suffix to expect instead of the one harness.toml names, for
    /// packets made by another exporter (such as the Node exporter's google-suffix.txt).
    #[arg(long = "google-suffix-file", value_name = "FILE")]
    pub file: Option<PathBuf>,
}

impl Command {
    /// The `--google-suffix-file` given after the command, on a command that takes it.
    pub fn suffix(&self) -> Option<&PathBuf> {
        match self {
            Command::Validate { suffix, .. }
            | Command::Export { suffix, .. }
            | Command::Prepare { suffix, .. }
            | Command::Wire { suffix, .. }
            | Command::Attest { suffix, .. } => suffix.file.as_ref(),
            Command::Evaluate(args) => args.suffix.file.as_ref(),
            Command::Complete(args) => args.suffix.file.as_ref(),
            Command::Verify(args) => args.suffix.file.as_ref(),
            Command::Test(args) => args.suffix.file.as_ref(),
            Command::Trace(args) => args.suffix.file.as_ref(),
            Command::Serve(args) => args.suffix.file.as_ref(),
            Command::Canon { .. }
            | Command::Schema { .. }
            | Command::Checks { .. }
            | Command::Bless(_)
            | Command::ReleaseCheck { .. }
            | Command::Init { .. }
            | Command::Completions { .. }
            | Command::Man { .. } => None,
        }
    }
}

/// `init --style`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum StyleArg {
    /// minijinja / Jinja2 (`{{ name }}`).
    Jinja,
    /// mustache (`{{{name}}}`).
    #[default]
    Mustache,
    /// Python str.format (`{name}`).
    Format,
}

impl From<StyleArg> for packetproof::profile::Style {
    fn from(style: StyleArg) -> Self {
        match style {
            StyleArg::Jinja => Self::Jinja,
            StyleArg::Mustache => Self::Mustache,
            StyleArg::Format => Self::Format,
        }
    }
}

/// `init --output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputArg {
    /// Plain text: no outputSchema.
    #[default]
    Text,
    /// JSON in the agent's schema file: the packets carry it as outputSchema.
    Schema,
}

impl From<OutputArg> for packetproof::profile::Output {
    fn from(output: OutputArg) -> Self {
        match output {
            OutputArg::Text => Self::Text,
            OutputArg::Schema => Self::Schema,
        }
    }
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

impl From<UnreferencedArg> for packetproof::bless::Unreferenced {
    fn from(arg: UnreferencedArg) -> Self {
        match arg {
            UnreferencedArg::Warn => packetproof::bless::Unreferenced::Warn,
            UnreferencedArg::Reject => packetproof::bless::Unreferenced::Reject,
            UnreferencedArg::Delete => packetproof::bless::Unreferenced::Delete,
        }
    }
}

/// `--asset-example-prompts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyArg {
    Warn,
    Fail,
}

impl From<PolicyArg> for Policy {
    fn from(arg: PolicyArg) -> Policy {
        match arg {
            PolicyArg::Warn => Policy::Warn,
            PolicyArg::Fail => Policy::Fail,
        }
    }
}

/// The formats of each command's `--format`, the default first: those of the report
/// it prints ([`Kind::formats`]; `test`'s are libtest's, [`test::FORMATS`]).
pub const OUTCOMES: &[Format] = Kind::Outcomes.formats();
pub const VERIFICATION: &[Format] = Kind::Verification.formats();
pub const RULE_BOOK: &[Format] = Kind::RuleBook.formats();
pub const EVALUATION: &[Format] = Kind::Evaluation.formats();
pub const TRACE: &[Format] = Kind::Trace.formats();
pub const RELEASE: &[Format] = Kind::Release.formats();

/// `--format`: one of `offered` (the command's own formats), by name. Clap lists them
/// in the help, the completions and the manual page, and refuses any other format
/// as a usage error naming them.
pub fn formats(offered: &'static [Format]) -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(offered.iter().map(|format| format.name())).try_map(|name: String| {
        Format::from_name(&name).ok_or_else(|| format!("{name:?} names no format (a packetproof bug)"))
    })
}

#[derive(Debug, Clone, clap::Args)]
pub struct EvaluateArgs {
    #[command(flatten)]
    pub suffix: SuffixArg,
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
    #[arg(long, value_parser = formats(EVALUATION), default_value = EVALUATION[0].name())]
    pub format: Format,
    /// A schema snapshot to pin: the schema the answer is judged against (a Google run's
    /// held-back snapshot, else the packet's outputSchema) must be this one.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct CompleteArgs {
    #[command(flatten)]
    pub suffix: SuffixArg,
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
}

#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub suffix: SuffixArg,
    /// Packets, run directories, or directories to search for both.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// `text`: failures and their findings, then `N checked: H hold, F failed`; `json`: every
    /// result, the counts and the checks that ran.
    #[arg(long, value_parser = formats(VERIFICATION), default_value = VERIFICATION[0].name())]
    pub format: Format,
    /// List every file checked, not only the failures (text format).
    #[arg(short, long)]
    pub verbose: bool,
    /// An Ed25519 public key (SPKI PEM) whose signature a run's attestation.json must
    /// carry; repeatable (any one of them suffices).
    #[arg(long = "trusted-key", value_name = "PUB.pem")]
    pub trusted_keys: Vec<PathBuf>,
    /// A gate statement (`packetproof test --attest`): every packet found counts only when it
    /// vouches for the packet's bytes (`gate::vouched`); signed by a --trusted-key.
    #[arg(long, value_name = "FILE", requires = "trusted_keys")]
    pub gate: Option<PathBuf>,
    /// With --gate: the oldest gate statement taken, by the time it was signed (`30d`, `12h`,
    /// `90m`, `3600s`, or seconds); an older one vouches for nothing.
    #[arg(long, value_name = "AGE", requires = "gate", value_parser = age)]
    pub gate_max_age: Option<std::time::Duration>,
    /// Run the suite's `[exporter]` to check that golden packets regenerate (without it,
    /// verify runs no command harness.toml names and says which checks it left out).
    #[arg(long)]
    pub run_exporter: bool,
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

    /// Every command that takes `--google-suffix-file` hands it to the dispatch
    /// (`Command::suffix`): given after the command with the command's required
    /// arguments, it comes back.
    #[test]
    fn every_command_that_takes_the_suffix_hands_it_on() {
        let cli = Cli::command();
        let takers = suffix_takers();
        assert!(takers.len() >= 10, "{takers:?}");
        for name in takers {
            let command = cli.find_subcommand(&name).unwrap();
            let mut args = vec!["packetproof".to_owned(), name.clone()];
            // `wire --packet` is required unless `--gate` judges a production body.
            for arg in command.get_arguments().filter(|a| a.is_required_set() || a.get_id() == "packet") {
                // A value each parser accepts (`--api` checks its own, without possible values).
                let value = match arg.get_possible_values().first() {
                    Some(first) => first.get_name().to_owned(),
                    None if arg.get_id() == "api" => "anthropic".to_owned(),
                    None => "x".to_owned(),
                };
                if let Some(long) = arg.get_long() {
                    args.push(format!("--{long}"));
                }
                args.push(value);
            }
            args.extend(["--google-suffix-file".to_owned(), "suffix.txt".to_owned()]);
            let parsed = Cli::try_parse_from(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            assert_eq!(parsed.command.suffix().map(|p| p.to_str().unwrap()), Some("suffix.txt"), "{args:?}");
        }
    }
}

/// A gate statement's maximum age: a whole number with `d`, `h`, `m` or `s`, or seconds.
pub(crate) fn age(text: &str) -> std::result::Result<std::time::Duration, String> {
    let expected = || format!("{text:?} is not an age: a whole number with d, h, m or s (30d, 12h, 90m, 3600s)");
    let (number, unit) = match text.char_indices().last() {
        Some((i, 'd')) => (&text[..i], 86_400),
        Some((i, 'h')) => (&text[..i], 3_600),
        Some((i, 'm')) => (&text[..i], 60),
        Some((i, 's')) => (&text[..i], 1),
        _ => (text, 1),
    };
    let number: u64 = number.parse().map_err(|_| expected())?;
    match number.checked_mul(unit) {
        Some(0) => Err(format!("{text:?}: an age of zero refuses every statement")),
        Some(secs) => Ok(std::time::Duration::from_secs(secs)),
        None => Err(expected()),
    }
}

#[cfg(test)]
mod age_tests {
    #[test]
    fn an_age_is_a_whole_number_of_days_hours_minutes_or_seconds() {
        use std::time::Duration;
        assert_eq!(super::age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(super::age("12h"), Ok(Duration::from_secs(12 * 3_600)));
        assert_eq!(super::age("90m"), Ok(Duration::from_secs(5_400)));
        assert_eq!(super::age("3600s"), Ok(Duration::from_secs(3_600)));
        assert_eq!(super::age("60"), Ok(Duration::from_secs(60)));
        for bad in ["", "d", "-1d", "1.5d", "0d", "2w", "99999999999999999999d"] {
            assert!(super::age(bad).is_err(), "{bad}");
        }
    }
}
