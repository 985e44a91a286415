//! One module per command: its clap arguments beside the function that runs it. `serve`
//! (`crate::serve`, an OTLP receiver of several modules) is a module of its own at the top.

pub mod attest;
pub mod bless;
pub mod canon;
pub mod checks;
pub mod complete;
pub mod completions;
pub mod evaluate;
pub mod export;
pub mod init;
pub mod man;
pub mod prepare;
pub mod release_check;
pub mod schema;
pub mod test;
pub mod trace;
pub mod validate;
pub mod verify;
pub mod wire;

/// Whether golden files may be written in this process: decided here, once, and passed down.
pub(crate) fn golden_writes() -> packetproof::Result<packetproof::bless::GoldenWrites> {
    Ok(packetproof::bless::GoldenWrites::from_env(&packetproof::env::Env::current()?))
}
