//! The `packetproof` command line: every clap structure, the dispatch to the
//! library, and the exit status (0 holds, 1 a check failed, 2 bad usage or
//! unreadable input). All terminal output goes through [`print`](mod@print). Nothing in the
//! library imports this module (a tidy test enforces it).

pub mod print;
mod provenance;
mod test;

use crate::config::Policy;
use crate::run::{self, CompleteRequest, EvaluateRequest};
use crate::{canonical, digest, fsutil, packet, Config, Error, Format, Outcome, Result, Status};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(name = "packetproof", version, about = "Conformance toolchain for exact LLM runtime packets")]
pub struct Cli {
    /// The exact Google text-JSON suffix to expect instead of the one harness.toml names.
    #[arg(long, global = true, value_name = "FILE")]
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
        #[arg(long, value_name = "FILE")]
        packet: PathBuf,
        #[arg(long, value_enum, default_value_t)]
        format: FormatArg,
    },
    /// Compile a request into a runtime packet (stdout, or --out written atomically).
    Export {
        #[arg(long, value_name = "FILE")]
        request: PathBuf,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Check (or rewrite) the output schema snapshot against its source.
    #[command(group(clap::ArgGroup::new("mode").required(true).args(["check", "write"])))]
    Schema {
        #[arg(long)]
        check: bool,
        #[arg(long)]
        write: bool,
        #[arg(long, value_enum, default_value_t)]
        format: FormatArg,
    },
    /// Rewrite the golden files of the fixtures whose name contains FILTER (never under CI).
    Bless { filter: Option<String> },
    /// Show which packets a prompt or schema change affects and enforce the release policy.
    ReleaseCheck {
        /// The git revision to compare with (default: the merge base with main).
        #[arg(long, value_name = "REV")]
        base: Option<String>,
        #[arg(long, value_enum, default_value_t)]
        format: ReleaseFormatArg,
    },
    /// Write a run directory for a fresh agent from a valid packet.
    Prepare {
        #[arg(long, value_name = "FILE")]
        packet: PathBuf,
        #[arg(long, value_name = "DIR")]
        out_dir: PathBuf,
        /// The runtime schema snapshot to pin (for packets made elsewhere); a non-Google
        /// packet's outputSchema must equal it. Default: the suite's, else the built-in one.
        #[arg(long, value_name = "FILE")]
        schema: Option<PathBuf>,
    },
    /// Write a working conformance suite into an empty folder (default: the current one).
    Init { dir: Option<PathBuf> },
    /// Run the conformance gate's trials (as `cargo test` does), from the binary.
    Test(test::TestArgs),
    /// Evaluate a run's raw output and write evaluation.json.
    Evaluate(EvaluateArgs),
    /// Write completion.json for a run whose evaluation passed.
    Complete(CompleteArgs),
    /// Check packets and run directories (searched recursively) against every rule.
    Verify(VerifyArgs),
    /// Print the exact provider request body a packet implies, or check a captured request.
    Wire {
        #[arg(long, value_name = "FILE")]
        packet: PathBuf,
        /// anthropic, openai-chat, openai-responses or gemini.
        #[arg(long, value_parser = provenance::parse_api)]
        api: crate::wire::Api,
        /// A captured request (a bare JSON body or a HAR file) to check instead of printing.
        #[arg(long, value_name = "CAPTURED", conflicts_with = "out")]
        check: Option<PathBuf>,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t)]
        format: FormatArg,
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
    },
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

/// `release-check --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ReleaseFormatArg {
    #[default]
    Markdown,
    Json,
}

impl From<ReleaseFormatArg> for crate::release::ReportFormat {
    fn from(arg: ReleaseFormatArg) -> Self {
        match arg {
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
    /// A schema snapshot to pin: the schema the answer is judged against (a Google run's
    /// held-back snapshot, else the packet's outputSchema) must be this one.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
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
}

#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// Packets, run directories, or directories to search for both.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    pub format: FormatArg,
    /// An Ed25519 public key (SPKI PEM) whose signature a run's attestation.json must
    /// carry; repeatable (any one of them suffices).
    #[arg(long = "trusted-key", value_name = "PUB.pem")]
    pub trusted_keys: Vec<PathBuf>,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Test(args) = &cli.command {
        // Exit codes as cargo test's: 0 passed, 101 a trial failed (2: could not run).
        return test::main(&cli, args).unwrap_or_else(|error| {
            print::error(&error);
            ExitCode::from(2)
        });
    }
    match dispatch(cli) {
        Ok(Status::Holds) => ExitCode::SUCCESS,
        Ok(Status::Failed) => ExitCode::from(1),
        Err(error) => {
            print::error(&error);
            ExitCode::from(2)
        }
    }
}

/// Run one parsed command.
pub fn dispatch(cli: Cli) -> Result<Status> {
    let suffix = cli.google_suffix_file.as_deref();
    let policy = cli.asset_example_prompts;
    let load_config = |suffix| load_config(cli.config.as_deref(), suffix, policy);
    let suite = |command: &str| -> Result<Config> {
        let config = load_config(suffix)?;
        config.require_suite(command)?;
        Ok(config)
    };
    match cli.command {
        Command::Canon { file, hash } => canon(file.as_deref(), hash),
        Command::Validate { packet, format } => validate(&load_config(suffix)?, &packet, format.into()),
        Command::Export { request, out } => {
            // Compile first, write after: nothing is written on refusal.
            let config = load_config(suffix)?;
            if let Some(out) = &out {
                // Only a packet this command wrote (or an empty file) is ever replaced.
                run::refuse_foreign_export(out, &request, &config)?;
            }
            let text = crate::compile::export(&config, &request)?;
            match out {
                Some(path) => fsutil::write_atomic(&path, text.as_bytes())?,
                None => print::bytes(text.as_bytes())?,
            }
            Ok(Status::Holds)
        }
        Command::Schema { write, format, .. } => schema(&load_config(suffix)?, write, format.into()),
        Command::Bless { .. } if suffix.is_some() => Err(Error::Usage(
            "bless writes golden files with the project's own suffix; --google-suffix-file is refused".into(),
        )),
        Command::Bless { filter } => {
            print::blessed(&crate::bless::bless(&suite("bless")?, filter.as_deref())?)?;
            Ok(Status::Holds)
        }
        Command::ReleaseCheck { base, format } => {
            let report = crate::release::check(&suite("release-check")?, base.as_deref())?;
            print::release(&report, format.into())?;
            Ok(Status::from_ok(report.ok))
        }
        Command::Prepare { packet, out_dir, schema } => {
            let mut config = load_config(suffix)?;
            if schema.is_some() {
                config.paths.schema_snapshot = schema;
            }
            let written = run::prepare::prepare(&config, &packet, &out_dir)?;
            print::prepared(&out_dir, &written)?;
            Ok(Status::Holds)
        }
        Command::Evaluate(args) => evaluate(&load_config(suffix)?, args),
        Command::Complete(args) => {
            let agent_task = args.agent_task.clone();
            let (written, runs_root) = run::complete::complete(&load_config(suffix)?, &args.into())?;
            print::completed(&written, &agent_task, &runs_root)?;
            Ok(Status::Holds)
        }
        Command::Verify(args) => {
            let keys = provenance::trusted_keys(&args.trusted_keys)?;
            let outcomes = crate::verify::verify_with_keys(&load_config(suffix)?, &args.paths, &keys)?;
            let status = print::outcomes(&outcomes, args.format.into())?;
            // An unreadable file is exit 2 here as in validate: the report above says which.
            let unreadable = crate::verify::unreadable(&outcomes);
            if !unreadable.is_empty() {
                return Err(Error::refused(unreadable.join(", "), "could not be read (see the report above)"));
            }
            Ok(status)
        }
        Command::Init { dir } => {
            let dir = dir.unwrap_or_else(|| PathBuf::from("."));
            print::initialized(&dir, &crate::init::init(&dir)?)?;
            Ok(Status::Holds)
        }
        Command::Test(_) => Err(Error::Usage("`test` runs through cli::main".into())),
        Command::Wire { packet, api, check, out, format } => {
            provenance::wire(&load_config(suffix)?, &packet, api, check.as_deref(), out.as_deref(), format.into())
        }
        Command::Attest { run_dir, key, out } => {
            provenance::attest(&load_config(suffix)?, &run_dir, &key, out.as_deref())
        }
    }
}

impl From<EvaluateArgs> for EvaluateRequest {
    fn from(args: EvaluateArgs) -> Self {
        EvaluateRequest {
            run_dir: args.run_dir,
            packet: args.packet,
            output: args.output,
            report: args.report,
            schema: args.schema,
        }
    }
}

impl From<CompleteArgs> for CompleteRequest {
    fn from(args: CompleteArgs) -> Self {
        CompleteRequest {
            run_dir: args.run_dir,
            scenario: args.scenario,
            run_id: args.run_id,
            agent_task: args.agent_task,
            notes: args.notes,
            runs_root: args.runs_root,
        }
    }
}

/// The settings (see [`Config::discover`]), with the global overrides applied.
pub(crate) fn load_config(file: Option<&Path>, suffix: Option<&Path>, policy: Option<PolicyArg>) -> Result<Config> {
    let mut config = Config::discover(file, suffix)?;
    if let Some(policy) = policy {
        config.packet.asset_example_prompts = policy.into();
    }
    Ok(config)
}

fn canon(file: Option<&Path>, hash: bool) -> Result<Status> {
    let (name, bytes) = match file {
        None => ("<stdin>".to_owned(), read_stdin()?),
        Some(p) if p == Path::new("-") => ("<stdin>".to_owned(), read_stdin()?),
        Some(p) => (p.display().to_string(), fsutil::read_bytes(p, fsutil::DEFAULT_MAX_BYTES)?),
    };
    let value = canonical::parse(&bytes).map_err(|e| e.in_file(name))?;
    let bytes = canonical::to_vec(&value);
    if hash {
        print::bytes(format!("{}\n", digest::sha256(&bytes)).as_bytes())?;
    } else {
        print::bytes(&bytes)?;
    }
    Ok(Status::Holds)
}

fn read_stdin() -> Result<Vec<u8>> {
    fsutil::read_limited(std::io::stdin().lock(), "<stdin>", fsutil::DEFAULT_MAX_BYTES)
}

fn validate(config: &Config, path: &Path, format: Format) -> Result<Status> {
    let value = fsutil::read_json(path, config.limits.max_file_bytes)?;
    let mut outcome = Outcome::new(path.display().to_string(), packet::validate(&value, config));
    outcome.notes = packet::notes(&value, config);
    crate::numbers::quote_as_written_in(&mut outcome.findings, path, config.limits.max_file_bytes);
    print::outcomes(&[outcome], format)
}

/// `packetproof schema --check | --write`.
fn schema(config: &Config, write: bool, format: Format) -> Result<Status> {
    let snapshot = config.snapshot_bytes()?.0;
    if write {
        print::schema_written(&snapshot, crate::schema::write(config)?)?;
        return Ok(Status::Holds);
    }
    let findings = crate::schema::check(config)?;
    print::outcomes(&[Outcome::new(snapshot, findings)], format)
}

fn evaluate(config: &Config, args: EvaluateArgs) -> Result<Status> {
    let format = args.format.into();
    let (evaluation, report) = run::evaluate::evaluate(config, &args.into())?;
    print::evaluation(&evaluation, &report, format)?;
    Ok(Status::from_ok(evaluation.ok))
}
