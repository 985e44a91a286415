//! `packetproof attest`: sign a completed run (a DSSE envelope over an in-toto statement).

use crate::flags::SuffixArg;
use crate::print;
use crate::settings::Settings;
use packetproof::{Result, Status};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct AttestArgs {
    /// The completed run directory.
    pub run_dir: PathBuf,
    /// Ed25519 private key, PKCS#8 PEM (`openssl genpkey -algorithm ed25519`).
    #[arg(long, value_name = "KEY.pem")]
    pub key: PathBuf,
    /// Where to write the envelope (default RUN_DIR/attestation.json; never overwritten).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub suffix: SuffixArg,
}

/// Sign the run with a PKCS#8 PEM Ed25519 key.
pub fn run(settings: &Settings, args: AttestArgs) -> Result<Status> {
    let config = settings.load()?;
    let key = packetproof::attest::keys::signing_key(&args.key)?;
    let judged = packetproof::judge::attest(&config, &args.run_dir, &key, args.out.as_deref())?;
    print::attested(&judged.value, &packetproof::attest::keys::key_id(&key.verifying_key()))?;
    print::skipped(&judged.skipped)?;
    Ok(Status::Holds)
}
