//! The provenance commands: `wire` (the provider request body a packet implies, or
//! the check of a captured one) and `attest` (sign a completed run). The library
//! (`crate::wire`, `crate::run::attestation`) returns data; this module reads the
//! files the flags name and hands the results to [`print`](super::print).

use super::print;
use crate::wire::{self, Api};
use crate::{canonical, fsutil, Config, Format, Result, Status};
use std::path::Path;

/// `--api`: one of the names [`Api::name`] gives.
pub fn parse_api(name: &str) -> std::result::Result<Api, String> {
    Api::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Api::ALL.iter().map(|api| api.name()).collect();
        format!("unknown API {name:?}; expected one of {}", names.join(", "))
    })
}

/// `wire`: the body (stdout, or `--out` written atomically), or with `--check` the
/// findings on a captured request.
pub fn wire(
    config: &Config,
    packet: &Path,
    api: Api,
    check: Option<&Path>,
    out: Option<&Path>,
    format: Format,
) -> Result<Status> {
    let shown = packet.display().to_string();
    if let Some(out) = out.filter(|_| check.is_none()) {
        crate::run::refuse_foreign_output(out, crate::run::OutputKind::RequestBody, config, &[packet])?;
    }
    let value = fsutil::read_json(packet, config.limits.max_file_bytes)?;
    let Some(captured) = check else {
        let body = canonical::to_pretty(&wire::body(&value, api, config, &shown)?);
        print::notes(&wire::notes(&value, api, &shown));
        match out {
            Some(out) => fsutil::write_atomic(out, body.as_bytes())?,
            None => print::bytes(body.as_bytes())?,
        }
        return Ok(Status::Holds);
    };
    let bytes = fsutil::read_bytes(captured, config.limits.max_file_bytes)?;
    let captured = wire::capture::parse(&bytes, &captured.display().to_string(), api)?;
    let outcome = wire::check(&value, api, &captured, config, &shown, wire::CHECK)?;
    print::outcomes(&[outcome], format)
}

/// `attest`: sign a completed run with a PKCS#8 PEM Ed25519 key.
pub fn attest(config: &Config, run_dir: &Path, key: &Path, out: Option<&Path>) -> Result<Status> {
    let key = crate::attest::keys::signing_key(key)?;
    let written = crate::run::attestation::attest(config, run_dir, &key, out)?;
    print::attested(&written, &crate::attest::keys::key_id(&key.verifying_key()))?;
    Ok(Status::Holds)
}

/// `verify --trusted-key`: the SPKI PEM public keys.
pub fn trusted_keys(paths: &[std::path::PathBuf]) -> Result<Vec<ed25519_dalek::VerifyingKey>> {
    paths.iter().map(|path| crate::attest::keys::verifying_key(path)).collect()
}
