//! The `packetproof` command line: every clap structure, the dispatch to the
//! library, and the exit status (0 holds, 1 a check failed, 2 bad usage or
//! unreadable input). All terminal output goes through [`print`](mod@print). Nothing in the
//! library imports this module (a tidy test enforces it).

pub mod args;
pub mod print;
mod review;

pub use args::*;

use crate::run::{self, CompleteRequest, EvaluateRequest};
use crate::{canonical, digest, fsutil, packet, Config, Error, Format, Outcome, Result, Status};
use clap::Parser;
use std::path::Path;
use std::process::ExitCode;

pub fn main() -> ExitCode {
    let cli = Cli::parse();
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
    let config = |suffix: &SuffixArg| load_config(suffix.google_suffix_file.as_deref());
    match cli.command {
        Command::Canon { file, hash } => canon(file.as_deref(), hash),
        Command::Validate { packet, format, suffix } => validate(&config(&suffix)?, &packet, format.into()),
        Command::Export { request, out, suffix } => {
            // Compile first, write after: nothing is written on refusal.
            let text = crate::compile::export(&config(&suffix)?, &request)?;
            match out {
                Some(path) => fsutil::write_atomic(&path, text.as_bytes())?,
                None => print::bytes(text.as_bytes())?,
            }
            Ok(Status::Holds)
        }
        Command::Schema { write, format, .. } => schema(&load_config(None)?, write, format.into()),
        Command::Bless(args) => bless(args),
        Command::ReleaseCheck { base, format } => {
            let report = crate::release::check(&load_config(None)?, base.as_deref())?;
            print::release(&report, format.into())?;
            Ok(Status::from_ok(report.ok))
        }
        Command::Prepare { packet, out_dir, suffix } => {
            let written = run::prepare::prepare(&config(&suffix)?, &packet, &out_dir)?;
            print::prepared(&out_dir, &written);
            Ok(Status::Holds)
        }
        Command::Evaluate(args) => evaluate(&config(&args.suffix)?, args),
        Command::Complete(args) => {
            let agent_task = args.agent_task.clone();
            let written = run::complete::complete(&config(&args.suffix)?, &args.into())?;
            print::completed(&written, &agent_task);
            Ok(Status::Holds)
        }
        Command::Verify(args) => {
            let config = config(&args.suffix)?;
            let mut progress = print::ProgressLine::new();
            let found = crate::verify::verify_with_progress(&config, &args.paths, &mut |done, total, target| {
                progress.update(done, total, target)
            });
            progress.finish();
            print::verification(&found?, args.format.into(), args.verbose)
        }
    }
}

/// `packetproof bless`: every case (or, with --review, each changed case the
/// developer accepts), then the golden folders no fixture explains.
fn bless(args: BlessArgs) -> Result<Status> {
    if args.google_suffix_file.is_some() {
        return Err(Error::Usage(
            "bless writes golden files with the project's own suffix; --google-suffix-file is refused".into(),
        ));
    }
    let config = load_config(None)?;
    let mut status = if args.review {
        review::review(&config, args.filter.as_deref())?
    } else {
        let blessed = crate::bless::bless(&config, args.filter.as_deref())?;
        print::blessed(&blessed);
        Status::Holds
    };
    let action = args.unreferenced.into();
    let folders = crate::bless::unreferenced(&config, action)?;
    print::unreferenced(&folders, action);
    if action == crate::bless::Unreferenced::Reject && !folders.is_empty() {
        status = Status::Failed;
    }
    Ok(status)
}

impl From<EvaluateArgs> for EvaluateRequest {
    fn from(args: EvaluateArgs) -> Self {
        EvaluateRequest { run_dir: args.run_dir, packet: args.packet, output: args.output, report: args.report }
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

fn load_config(suffix: Option<&Path>) -> Result<Config> {
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
    if let Some(kind) = crate::provider::other_file_kind(&value) {
        return Err(Error::Usage(format!("{} is {kind}", path.display())));
    }
    let mut outcome = Outcome::new(path.display().to_string(), packet::validate(&value, config));
    outcome.notes = packet::key_order_notes(&value);
    Ok(print::outcomes(&[outcome], format))
}

/// `packetproof schema --check | --write`.
fn schema(config: &Config, write: bool, format: Format) -> Result<Status> {
    let snapshot = &config.paths.schema_snapshot;
    if write {
        print::schema_written(snapshot, crate::schema::write(config)?);
        return Ok(Status::Holds);
    }
    let findings = crate::schema::check(config)?;
    Ok(print::outcomes(&[Outcome::new(snapshot.display().to_string(), findings)], format))
}

fn evaluate(config: &Config, args: EvaluateArgs) -> Result<Status> {
    let format = args.format.into();
    let (evaluation, report) = run::evaluate::evaluate(config, &args.into())?;
    print::evaluation(&evaluation, &report, format);
    Ok(Status::from_ok(evaluation.ok))
}
