//! The `packetproof` command line: every clap structure, the dispatch to the
//! library, and the exit status (0 holds, 1 a check failed, 2 the command could
//! not run: [`Error::exit_status`](packetproof::Error::exit_status) says for which
//! kinds). All terminal output goes through [`print`](mod@print). This is its own
//! crate, so nothing in the library can import it, and clap is no part of the
//! library's API.

mod args;
mod print;
mod provenance;
mod review;
mod serve;
mod shell;
mod test;
mod trace;

use args::*;

use packetproof::judge::{Judged, Step};
use packetproof::reporter::Event;
use packetproof::run::{self, CompleteRequest, EvaluateRequest};
use packetproof::{canonical, digest, fsutil, Config, Error, Format, Outcome, Result, Status};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

// See Cargo.toml: the allocator is part of parsing speed. Benchmarks use the same one.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its `mimalloc.h`; the Rust bindings name no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// The gate allocates and frees its working memory all the time, and mimalloc gives
/// idle pages back to the kernel, which zeroes them (as transparent huge pages) when
/// they are taken again: a sixth of the gate's CPU time. A batch that ends in
/// seconds keeps what it freed instead; `serve` keeps the default.
fn keep_freed_memory() {
    // SAFETY: called before any thread is spawned (mi_option_set is not thread safe);
    // -1 is mimalloc's documented value for "never purge".
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

/// The commit this binary was built from (see build.rs): `init`'s workflow pins the
/// action to it. None for a build outside git.
const BUILT_FROM: Option<&str> = option_env!("PACKETPROOF_BUILT_FROM");

fn main() -> ExitCode {
    let cli = args::parse();
    if let Command::Test(args) = &cli.command {
        keep_freed_memory();
        // Exit codes as cargo test's: 0 passed, 101 a trial failed (2: could not run).
        return test::main(&cli, args).unwrap_or_else(|error| {
            print::error(&error);
            ExitCode::from(2)
        });
    }
    match dispatch(cli) {
        Ok(status) => ExitCode::from(status.exit_status()),
        Err(error) => {
            print::error(&error);
            ExitCode::from(error.exit_status())
        }
    }
}

/// `--google-suffix-file`, given before the command or after it.
pub(crate) fn suffix_of(cli: &Cli) -> Option<&Path> {
    cli.google_suffix_file.as_deref().or(cli.command.suffix().map(PathBuf::as_path))
}

/// Run one parsed command.
fn dispatch(cli: Cli) -> Result<Status> {
    let given = suffix_of(&cli).map(Path::to_path_buf);
    let suffix = given.as_deref();
    let policy = cli.asset_example_prompts;
    let load_config = |suffix| load_config(cli.config.as_deref(), suffix, policy);
    let suite = |command: &str| -> Result<Config> {
        let config = load_config(suffix)?;
        config.require_suite(command)?;
        Ok(config)
    };
    match cli.command {
        // The suffix belongs to packets made elsewhere; these commands read none.
        Command::Canon { .. }
        | Command::Schema { .. }
        | Command::Checks { .. }
        | Command::ReleaseCheck { .. }
        | Command::Init { .. }
        | Command::Completions { .. }
        | Command::Man { .. }
            if suffix.is_some() =>
        {
            Err(Error::Usage(format!(
                "--google-suffix-file is for commands that read packets made elsewhere ({}); this one does not take it",
                args::suffix_takers().join(", ")
            )))
        }
        Command::Canon { file, hash } => canon(file.as_deref(), hash),
        Command::Validate { packet, format, .. } => validate(&checking(load_config(suffix)?), &packet, format),
        Command::Export { request, out, .. } => {
            // Compile first, write after: nothing is written on refusal.
            let config = load_config(suffix)?;
            if let Some(out) = &out {
                run::refuse_foreign_output(out, run::OutputKind::Packet, &config, &[&request])?;
            }
            let Judged { value: text, skipped } = packetproof::judge::export(&config, &request)?;
            print::skipped_notes(&skipped);
            match out {
                Some(path) => fsutil::write_atomic(&path, text.as_bytes())?,
                None => print::bytes(text.as_bytes())?,
            }
            Ok(Status::Holds)
        }
        Command::Checks { format } => {
            print::reported(format, Event::RuleBook)?;
            Ok(Status::Holds)
        }
        Command::Schema { write, format, .. } => schema(&load_config(suffix)?, write, format),
        Command::Bless(_) if suffix.is_some() => Err(Error::Usage(
            "bless writes golden files with the project's own suffix; --google-suffix-file is refused".into(),
        )),
        Command::Bless(args) => bless(&suite("bless")?, args),
        Command::ReleaseCheck { base, format } => {
            let report = packetproof::release::check(&suite("release-check")?, base.as_deref())?;
            print::reported(format, Event::Release(&report))?;
            Ok(Status::from_ok(report.ok))
        }
        Command::Prepare { packet, out_dir, schema, .. } => {
            let mut config = checking(load_config(suffix)?);
            if schema.is_some() {
                config.paths.schema_snapshot = schema;
            }
            // Refused exactly when `verify` of this file would fail (a golden packet of
            // the suite is also recompiled), judged on the bytes prepare then reads.
            let Judged { value: written, skipped } = packetproof::judge::prepare(&config, &packet, &out_dir)?;
            print::prepared(&out_dir, &written)?;
            print::skipped(&skipped)?;
            Ok(Status::Holds)
        }
        Command::Evaluate(args) => evaluate(&load_config(suffix)?, args),
        Command::Complete(args) => {
            let agent_task = args.agent_task.clone();
            let judged = packetproof::judge::complete(&load_config(suffix)?, &args.into())?;
            let (written, runs_root) = &judged.value;
            print::completed(written, &agent_task, runs_root)?;
            print::skipped(&judged.skipped)?;
            Ok(Status::Holds)
        }
        Command::Verify(args) => {
            let keys = provenance::trusted_keys(&args.trusted_keys)?;
            let mut config = load_config(suffix)?;
            config.run_exporter = args.run_exporter;
            let progress = print::ProgressLine::new();
            let found =
                packetproof::verify::verify_with_progress(&config, &args.paths, &keys, &|done, total, target| {
                    progress.update(done, total, target)
                });
            progress.finish();
            let mut found = found?;
            if let Some(file) = &args.gate {
                let gate = packetproof::attest::vouch::Gate::read(file, &keys, &config, args.gate_max_age)?;
                packetproof::verify::hold_to_gate(&mut found, &gate);
            }
            print::reported(args.format, Event::Verified { found: &found, verbose: args.verbose })?;
            let status = Status::from_ok(found.counts().1 == 0);
            // An unreadable file is exit 2 here as in validate: the report above says which.
            let unreadable = packetproof::verify::unreadable(&found.outcomes);
            if !unreadable.is_empty() {
                return Err(Error::refused(unreadable.join(", "), "could not be read (see the report above)"));
            }
            // The suite's exporter failing is exit 2 (could not run), as in bless.
            if let Some(failure) = packetproof::check::exporter_failure(&found.outcomes, &config) {
                return Err(failure);
            }
            Ok(status)
        }
        Command::Init { dir, agent, style, output } => {
            let dir = dir.unwrap_or_else(|| PathBuf::from("."));
            let agent =
                agent.map(|name| packetproof::init::AgentRequest { name, style: style.into(), output: output.into() });
            let options = packetproof::init::Options { agent, writes: golden_writes()?, built_from: BUILT_FROM };
            let done = packetproof::init::run(&dir, &options)?;
            print::initialized(&dir, &done)?;
            if done.workflow_unpinned {
                print::note(&format!(
                    "{} not written: this packetproof was built outside a git checkout, so there is no commit to pin \
                     its GitHub Action to (build it from a checkout, or with PACKETPROOF_REVISION set)",
                    if done.in_repository.is_some() {
                        packetproof::init::REPOSITORY_WORKFLOW
                    } else {
                        packetproof::init::WORKFLOW_PATH
                    }
                ));
            }
            Ok(Status::Holds)
        }
        Command::Trace(args) => trace::run(&checking(load_config(suffix)?), &args),
        Command::Serve(args) => serve::run(&checking(load_config(suffix)?), &args),
        Command::Test(_) => Err(Error::Internal("`test` runs through cli::main".into())),
        Command::Wire { packet, api, check, base_url, out, format, gate, trusted_keys, gate_max_age, .. } => {
            let gate = provenance::gate(gate.as_deref(), &trusted_keys, gate_max_age)?;
            let capture = provenance::Capture { file: check.as_deref(), base_url: base_url.as_deref(), gate };
            let config = checking(load_config(suffix)?);
            match packet {
                Some(packet) => provenance::wire(&config, &packet, api, capture, out.as_deref(), format),
                None => provenance::wire_production(&config, api, capture, format),
            }
        }
        Command::Attest { run_dir, key, out, .. } => {
            provenance::attest(&load_config(suffix)?, &run_dir, &key, out.as_deref())
        }
        Command::Completions { shell } => shell::completions(shell),
        Command::Man { command } => shell::man(command.as_deref()),
    }
}

/// Settings for a command that checks files it is given (validate, prepare, wire,
/// trace): it never runs a program they name, so a golden packet of a suite with an
/// `[exporter]` is judged without `packet::regenerates`, which says why (as `verify`
/// without `--run-exporter`).
fn checking(mut config: Config) -> Config {
    config.run_exporter = false;
    config
}

/// Whether golden files may be written in this process: decided here, once, and passed down.
pub(crate) fn golden_writes() -> Result<packetproof::bless::GoldenWrites> {
    Ok(packetproof::bless::GoldenWrites::from_env(&packetproof::env::Env::current()?))
}

/// `packetproof bless`: every case (or, with --review, each changed case the
/// developer accepts), then the golden folders no fixture explains.
fn bless(config: &Config, args: BlessArgs) -> Result<Status> {
    let writes = golden_writes()?;
    let mut status = if args.review {
        review::review(config, args.filter.as_deref(), writes)?
    } else {
        let blessed = packetproof::bless::bless(config, args.filter.as_deref(), writes)?;
        print::blessed(&blessed.cases)?;
        print::skipped(&blessed.skipped)?;
        Status::Holds
    };
    let action = args.unreferenced.into();
    let folders = packetproof::bless::unreferenced(config, action, writes)?;
    print::unreferenced(&folders, action)?;
    if action == packetproof::bless::Unreferenced::Reject && !folders.is_empty() {
        status = Status::Failed;
    }
    // A review that rejected a change leaves the lock as it was: what it pins was not all accepted.
    if status == Status::Holds && args.filter.is_none() {
        print::pinned(packetproof::bless::pin(config, writes)?)?;
    }
    Ok(status)
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

/// `validate` is `verify` of one packet: the same rules, the same verdict.
fn validate(config: &Config, path: &Path, format: Format) -> Result<Status> {
    let value = fsutil::read_json(path, config.limits.max_file_bytes)?;
    packetproof::provider::expect_packet(&value, &path.display().to_string())?;
    print::outcomes(&[packetproof::judge::packet_file(path, &value, config, Step::Validate)], format)
}

/// `packetproof schema --check | --write`.
fn schema(config: &Config, write: bool, format: Format) -> Result<Status> {
    let snapshot = config.snapshot_name();
    if write {
        print::schema_written(&snapshot, packetproof::schema::write(config)?)?;
        return Ok(Status::Holds);
    }
    let findings = packetproof::schema::check(config)?;
    print::outcomes(&[Outcome::new(snapshot, findings)], format)
}

fn evaluate(config: &Config, args: EvaluateArgs) -> Result<Status> {
    let format = args.format;
    let judged = packetproof::judge::evaluate(config, &args.into())?;
    let (evaluation, report) = &judged.value;
    print::reported(format, Event::Evaluated { evaluation, report, skipped: &judged.skipped })?;
    Ok(Status::from_ok(evaluation.ok))
}
