//! `packetproof bless [FILTER]`: (re)write the golden files of the cases whose
//! name contains FILTER. Under CI it never writes: golden files change only by a
//! deliberate local command, and the change is then reviewed.

use crate::corpus::{self, Case};
use crate::env::Env;
use crate::{canonical, compile, fsutil, provider, Config, Error, Result};
use serde_json::Value;

/// Bless the matching cases; returns their names. Refused under CI.
pub fn bless(config: &Config, filter: Option<&str>) -> Result<Vec<String>> {
    if Env::current()?.ci {
        return Err(Error::refused(
            "bless",
            "CI is set: golden files are never written under CI; bless locally and commit",
        ));
    }
    let matching: Vec<Case> =
        corpus::cases(config)?.into_iter().filter(|c| filter.is_none_or(|f| c.name.contains(f))).collect();
    if matching.is_empty() {
        return Err(Error::Usage(format!(
            "no fixture under {} matches {:?}",
            config.paths.fixtures.display(),
            filter.unwrap_or("")
        )));
    }
    // A case with its own (hand-broken) packet has nothing to bless.
    let (selected, negative): (Vec<Case>, Vec<Case>) = matching.into_iter().partition(|c| c.own_packet().is_none());
    if selected.is_empty() {
        let names: Vec<&str> = negative.iter().map(|c| c.name.as_str()).collect();
        return Err(Error::refused(
            names.join(", "),
            "carries its own runtime-packet.json (a negative case); such cases are never blessed",
        ));
    }
    for case in &selected {
        bless_case(config, case)?;
    }
    Ok(selected.into_iter().map(|c| c.name).collect())
}

/// Compile first, write after: a refused request leaves its golden files alone.
pub fn bless_case(config: &Config, case: &Case) -> Result<()> {
    let packet = compile::compile(&case.request, config, &case.request_path().display().to_string())?;
    let agent_request = provider::agent_request(packet.as_object().expect("a compiled packet is an object"));
    std::fs::create_dir_all(&case.golden_dir).map_err(|e| Error::io(&case.golden_dir, e))?;
    write(&case.golden_packet(), &packet)?;
    write(&case.golden_agent_request(), &agent_request)
}

fn write(path: &std::path::Path, value: &Value) -> Result<()> {
    fsutil::write_atomic(path, canonical::to_pretty(value).as_bytes())
}

/// `PACKETPROOF_BLESS=1 cargo test [FILTER]` asks the conformance runner to
/// re-bless the cases whose golden packet no longer regenerates.
pub fn requested_by_env() -> Result<bool> {
    Ok(Env::current()?.bless)
}

/// Bless one case from a test; under CI this refuses and says so.
pub fn bless_from_test(config: &Config, case: &Case) -> Result<()> {
    if Env::current()?.ci {
        return Err(Error::refused(
            &case.name,
            "PACKETPROOF_BLESS is set but so is CI: golden files are never written under CI",
        ));
    }
    if case.own_packet().is_some() {
        return Err(Error::refused(
            &case.name,
            "carries its own runtime-packet.json (a negative case); it is never blessed",
        ));
    }
    bless_case(config, case)
}
