//! The keys and the signing flags the commands share: `--trusted-key` (verify, wire,
//! trace, serve) and `--gate FILE` read with them.

use crate::print;
use packetproof::trace::{self, packets::Packets};
use packetproof::{Invocation, Result};
use std::path::{Path, PathBuf};

/// `--gate FILE --trusted-key PUB… [--gate-max-age AGE]`.
pub type GateArgs<'a> = (&'a Path, Vec<ed25519_dalek::VerifyingKey>, Option<std::time::Duration>);

/// `--gate FILE --trusted-key PUB…`: the file and the keys, read now, and the maximum age.
pub fn gate<'a>(
    file: Option<&'a Path>,
    keys: &[PathBuf],
    max_age: Option<std::time::Duration>,
) -> Result<Option<GateArgs<'a>>> {
    file.map(|file| Ok((file, trusted_keys(keys)?, max_age))).transpose()
}

/// `verify --trusted-key`: the SPKI PEM public keys.
pub fn trusted_keys(paths: &[PathBuf]) -> Result<Vec<ed25519_dalek::VerifyingKey>> {
    paths.iter().map(|path| packetproof::attest::keys::verifying_key(path)).collect()
}

/// `--gate FILE --trusted-key PUB…` (trace and serve): the gate statement, read with the
/// trusted keys, ready to hold verdicts to; a note when calls cannot conform to templates.
pub(crate) fn vouching(
    gate: Option<&Path>,
    trusted_keys: &[PathBuf],
    max_age: Option<std::time::Duration>,
    config: &Invocation,
    packets: &Packets,
) -> Result<Option<trace::vouched::Vouching>> {
    let Some(file) = gate else { return Ok(None) };
    let keys = self::trusted_keys(trusted_keys)?;
    let gate = packetproof::attest::vouch::Gate::read(file, &keys, config.settings(), max_age)?;
    let vouching = trace::vouched::Vouching::new(gate, config, packets);
    if let Some(why) = vouching.templates_unavailable() {
        print::note(&format!("calls are not matched to templates: {why}"));
    }
    Ok(Some(vouching))
}
