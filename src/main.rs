//! The `packetproof` command line: clap's structure (`args`), the command line
//! resolved once (`hiargs`), the dispatch to one module per command (`cmd`), and
//! the exit status (0 holds, 1 a check failed, 2 the command could
//! not run: [`Error::exit_status`](packetproof::Error::exit_status) says for which
//! kinds). All terminal output goes through [`print`](mod@print). This is its own
//! crate, so nothing in the library can import it, and clap is no part of the
//! library's API.

mod args;
mod cmd;
mod flags;
mod hiargs;
mod print;
mod provenance;
mod serve;
mod settings;

use args::Command;
use hiargs::HiArgs;
use packetproof::{Result, Status};
use settings::Settings;
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

fn main() -> ExitCode {
    stop_with_the_parent();
    let hi = match HiArgs::new(args::parse()) {
        Ok(hi) => hi,
        Err(error) => return failed(&error, ExitCode::from(error.exit_status())),
    };
    if let Command::Test(args) = &hi.command {
        keep_freed_memory();
        // Exit codes as cargo test's: 0 passed, 101 a trial failed (2: could not run).
        return cmd::test::main(&hi.settings, args).unwrap_or_else(|error| failed(&error, ExitCode::from(2)));
    }
    match dispatch(hi.command, &hi.settings) {
        Ok(status) => ExitCode::from(status.exit_status()),
        Err(error) => failed(&error, ExitCode::from(error.exit_status())),
    }
}

/// Under the npm package's shim, stop when it dies (a bad value is said when the command
/// reads the environment).
fn stop_with_the_parent() {
    if let Ok(packetproof::env::Env { parent: Some(parent), .. }) = packetproof::env::Env::current() {
        packetproof::parent::stop_with(parent);
    }
}

fn failed(error: &packetproof::Error, code: ExitCode) -> ExitCode {
    print::error(error);
    code
}

/// Run one resolved command.
fn dispatch(command: Command, settings: &Settings) -> Result<Status> {
    match command {
        Command::Canon(args) => cmd::canon::run(args),
        Command::Validate(args) => cmd::validate::run(settings, args),
        Command::Export(args) => cmd::export::run(settings, args),
        Command::Schema(args) => cmd::schema::run(settings, args),
        Command::Checks(args) => cmd::checks::run(args),
        Command::Bless(args) => cmd::bless::run(settings, args),
        Command::ReleaseCheck(args) => cmd::release_check::run(settings, args),
        Command::Prepare(args) => cmd::prepare::run(settings, args),
        Command::Init(args) => cmd::init::run(args),
        Command::Test(_) => Err(packetproof::Error::Internal("`test` runs through main".into())),
        Command::Evaluate(args) => cmd::evaluate::run(settings, args),
        Command::Complete(args) => cmd::complete::run(settings, args),
        Command::Verify(args) => cmd::verify::run(settings, args),
        Command::Trace(args) => cmd::trace::run(settings, args),
        Command::Serve(args) => serve::run(settings, &args),
        Command::Wire(args) => cmd::wire::run(settings, args),
        Command::Attest(args) => cmd::attest::run(settings, args),
        Command::Completions(args) => cmd::completions::run(args, args::cli_command()),
        Command::Man(args) => cmd::man::run(args, args::cli_command()),
    }
}
