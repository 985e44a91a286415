//! The `packetproof` command line (DESIGN §10). Exit status: 0 holds, 1 a check
//! failed, 2 bad usage or unreadable input.

use crate::{canonical, digest, fsutil, packet, run, Config, Error, Format, Outcome, Result};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(name = "packetproof", version, about = "Conformance toolchain for exact LLM runtime packets")]
pub struct Cli {
    /// The exact Google text-JSON suffix to expect instead of the one harness.toml names.
    #[arg(long, global = true, value_name = "FILE")]
    pub google_suffix_file: Option<PathBuf>,
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
        format: Format,
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
        format: Format,
    },
    /// Rewrite the golden files of the fixtures whose name contains FILTER (never under CI).
    Bless { filter: Option<String> },
    /// Show which packets a prompt or schema change affects and enforce the release policy.
    ReleaseCheck {
        /// The git revision to compare with (default: the merge base with main).
        #[arg(long, value_name = "REV")]
        base: Option<String>,
        #[arg(long, value_enum, default_value_t)]
        format: crate::release::ReportFormat,
    },
    /// Write a run directory for a fresh agent from a valid packet.
    Prepare {
        #[arg(long, value_name = "FILE")]
        packet: PathBuf,
        #[arg(long, value_name = "DIR")]
        out_dir: PathBuf,
    },
    /// Evaluate a run's raw output and write evaluation.json.
    Evaluate(run::EvaluateArgs),
    /// Write completion.json for a run whose evaluation passed.
    Complete(run::CompleteArgs),
    /// Check packets and run directories (searched recursively) against every rule.
    Verify(run::verify::VerifyArgs),
    /// Print the exact provider request body a packet implies, or check a captured request.
    Wire {
        #[arg(long, value_name = "FILE")]
        packet: PathBuf,
        /// anthropic, openai-chat, openai-responses or gemini.
        #[arg(long, value_parser = parse_api)]
        api: crate::wire::Api,
        /// A captured request (a bare JSON body or a HAR file) to check instead of printing.
        #[arg(long, value_name = "CAPTURED", conflicts_with = "out")]
        check: Option<PathBuf>,
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
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

/// What a command reports back to `main`.
pub enum Status {
    Holds,
    Failed,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(Status::Holds) => ExitCode::SUCCESS,
        Ok(Status::Failed) => ExitCode::from(1),
        Err(error) => {
            eprintln!("packetproof: {error}");
            ExitCode::from(2)
        }
    }
}

pub fn run(cli: Cli) -> Result<Status> {
    let suffix = cli.google_suffix_file.as_deref();
    match cli.command {
        Command::Canon { file, hash } => canon(file.as_deref(), hash),
        Command::Validate { packet, format } => validate(&load_config(suffix)?, &packet, format),
        Command::Export { request, out } => {
            crate::compile::export(&load_config(suffix)?, &request, out.as_deref()).map(|()| Status::Holds)
        }
        Command::Schema { write, format, .. } => crate::schema::run(&load_config(suffix)?, write, format),
        Command::Bless { .. } if suffix.is_some() => Err(Error::Usage(
            "bless writes golden files with the project's own suffix; --google-suffix-file is refused".into(),
        )),
        Command::Bless { filter } => crate::bless::run(&load_config(suffix)?, filter.as_deref()),
        Command::ReleaseCheck { base, format } => crate::release::run(&load_config(suffix)?, base.as_deref(), format),
        Command::Prepare { packet, out_dir } => run::prepare::command(&load_config(suffix)?, &packet, &out_dir),
        Command::Evaluate(args) => run::evaluate::command(&load_config(suffix)?, &args),
        Command::Complete(args) => run::complete::command(&load_config(suffix)?, &args),
        Command::Verify(args) => run::verify::command(&load_config(suffix)?, &args),
        Command::Wire { packet, api, check, out, format } => {
            wire(&load_config(suffix)?, &packet, api, check.as_deref(), out.as_deref(), format)
        }
        Command::Attest { run_dir, key, out } => {
            let key = crate::attest::keys::signing_key(&key)?;
            let written = run::attestation::attest(&load_config(suffix)?, &run_dir, &key, out.as_deref())?;
            println!(
                "{}: attested, signed by {}",
                written.display(),
                crate::attest::keys::key_id(&key.verifying_key())
            );
            Ok(Status::Holds)
        }
    }
}

fn parse_api(name: &str) -> std::result::Result<crate::wire::Api, String> {
    crate::wire::Api::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = crate::wire::Api::ALL.iter().map(|api| api.name()).collect();
        format!("unknown API {name:?}; expected one of {}", names.join(", "))
    })
}

/// `wire`: the body (stdout or --out), or with --check the findings on a captured request.
fn wire(
    config: &Config,
    packet: &Path,
    api: crate::wire::Api,
    check: Option<&Path>,
    out: Option<&Path>,
    format: Format,
) -> Result<Status> {
    let shown = packet.display().to_string();
    let value = fsutil::read_json(packet, config.limits.max_file_bytes)?;
    let Some(captured) = check else {
        let body = canonical::to_pretty(&crate::wire::body(&value, api, config, &shown)?);
        for note in crate::wire::notes(&value, api, &shown) {
            eprintln!("packetproof: note: {note}");
        }
        return match out {
            Some(out) => fsutil::write_atomic(out, body.as_bytes()).map(|()| Status::Holds),
            None => {
                print!("{body}");
                Ok(Status::Holds)
            }
        };
    };
    let bytes = fsutil::read_bytes(captured, config.limits.max_file_bytes)?;
    let captured = crate::wire::capture::parse(&bytes, &captured.display().to_string(), api)?;
    let outcome = crate::wire::check(&value, api, &captured, config, &shown, crate::wire::CHECK)?;
    print_outcomes(&[outcome], format)
}

pub(crate) fn load_config(suffix: Option<&Path>) -> Result<Config> {
    Config::load(&Config::find_root()?, suffix)
}

fn canon(file: Option<&Path>, hash: bool) -> Result<Status> {
    let (name, bytes) = match file {
        None => ("<stdin>".to_owned(), read_stdin()?),
        Some(p) if p == Path::new("-") => ("<stdin>".to_owned(), read_stdin()?),
        Some(p) => (p.display().to_string(), fsutil::read_bytes(p, fsutil::DEFAULT_MAX_BYTES)?),
    };
    let value = canonical::parse(&bytes).map_err(|e| e.in_file(name))?;
    let bytes = canonical::to_vec(&value);
    let mut stdout = std::io::stdout().lock();
    let written = if hash { writeln!(stdout, "{}", digest::sha256(&bytes)) } else { stdout.write_all(&bytes) };
    written.and_then(|()| stdout.flush()).map_err(|e| Error::io("<stdout>", e))?;
    Ok(Status::Holds)
}

fn read_stdin() -> Result<Vec<u8>> {
    fsutil::read_limited(std::io::stdin().lock(), "<stdin>", fsutil::DEFAULT_MAX_BYTES)
}

fn validate(config: &Config, path: &Path, format: Format) -> Result<Status> {
    let value = fsutil::read_json(path, config.limits.max_file_bytes)?;
    let mut outcome = Outcome::new(path.display().to_string(), packet::validate(&value, config));
    outcome.notes = packet::key_order_notes(&value);
    print_outcomes(&[outcome], format)
}

pub(crate) fn print_outcomes(outcomes: &[Outcome], format: Format) -> Result<Status> {
    print!("{}", Outcome::render(outcomes, format));
    Ok(if outcomes.iter().all(|o| o.ok) { Status::Holds } else { Status::Failed })
}
