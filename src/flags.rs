//! The flags several commands share, each defined once (ripgrep's habit): the Google
//! suffix, `--require`, `--asset-example-prompts`, each command's `--format` list, and
//! the gate (`GateFlags`). A leaf of the command line: the command modules (`cmd`,
//! `serve`) take their shared flags from here, never from the registry of commands
//! (`args`), which a tidy rule holds.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use packetproof::config::Policy;
use packetproof::reporter::Kind;
use packetproof::Format;
use std::path::PathBuf;

/// `--google-suffix-file`, on the commands that read packets made elsewhere (the others
/// refuse it: bless and release-check compare with golden files, which carry the project's
/// own suffix; canon, schema and init read no packet).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SuffixArg {
    /// The exact Google text-JSON suffix to expect instead of the one harness.toml names, for
    /// packets made by another exporter (such as the Node exporter's google-suffix.txt).
    #[arg(long = "google-suffix-file", value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// `--require FIELD` of the commands that judge production calls (`trace`, `serve`,
/// `wire`): a reviewed call field the call's telemetry must record.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RequireArg {
    /// A reviewed call field each call must record, or it is a finding (by default a field
    /// its telemetry leaves out is named as not judged): a call field of the packet format
    /// (`temperature`, `tools`, …), `output` or `maxTokens`; repeatable.
    #[arg(long = "require", value_name = "FIELD", value_parser = required_field)]
    pub fields: Vec<String>,
}

impl RequireArg {
    pub fn required(&self) -> packetproof::trace::settings::Required {
        let mut required = packetproof::trace::settings::Required::default();
        for field in &self.fields {
            // Each name was checked as it was parsed.
            let _ = required.add(field);
        }
        required
    }
}

fn required_field(name: &str) -> std::result::Result<String, String> {
    packetproof::trace::settings::Required::default().add(name).map(|()| name.to_owned())
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

/// The formats of each command's `--format`, the default first: those of the report
/// it prints ([`Kind::formats`]; `test`'s are libtest's, [`test::FORMATS`]).
pub const OUTCOMES: &[Format] = Kind::Outcomes.formats();
pub const VERIFICATION: &[Format] = Kind::Verification.formats();
pub const RULE_BOOK: &[Format] = Kind::RuleBook.formats();
pub const EVALUATION: &[Format] = Kind::Evaluation.formats();
pub const TRACE: &[Format] = Kind::Trace.formats();
pub const RELEASE: &[Format] = Kind::Release.formats();

/// `--format`: one of `offered` (the command's own formats), by name. Clap lists them
/// in the help, the completions and the manual page, and refuses any other format
/// as a usage error naming them.
pub fn formats(offered: &'static [Format]) -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(offered.iter().map(|format| format.name())).try_map(|name: String| {
        Format::from_name(&name).ok_or_else(|| format!("{name:?} names no format (a packetproof bug)"))
    })
}

/// `--gate FILE`, `--trusted-key PUB.pem` and `--gate-max-age AGE` of the commands that
/// judge production calls (`trace`, `serve`, `wire --check`): one definition, one rule
/// (each of the three needs the others it names). `verify` keeps its own: its
/// `--trusted-key` also checks run attestations, with no gate.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GateFlags {
    /// A gate statement (`packetproof test --attest`), signed by a --trusted-key: a call or
    /// packet counts only when the gate vouched for its packet, and a call no packet has may
    /// conform to a template it vouched for.
    #[arg(id = "gate", long = "gate", value_name = "FILE", requires = "trusted_keys")]
    pub file: Option<PathBuf>,
    /// An Ed25519 public key (SPKI PEM) the gate statement must be signed by; repeatable.
    #[arg(id = "trusted_keys", long = "trusted-key", value_name = "PUB.pem", requires = "gate")]
    pub trusted_keys: Vec<PathBuf>,
    /// With --gate: the oldest gate statement taken, by the time it was signed (`30d`, `12h`,
    /// `90m`, `3600s`, or seconds); an older one vouches for nothing.
    #[arg(id = "gate_max_age", long = "gate-max-age", value_name = "AGE", requires = "gate", value_parser = age)]
    pub max_age: Option<std::time::Duration>,
}

/// A gate statement's maximum age: a whole number with `d`, `h`, `m` or `s`, or seconds.
pub fn age(text: &str) -> std::result::Result<std::time::Duration, String> {
    let expected = || format!("{text:?} is not an age: a whole number with d, h, m or s (30d, 12h, 90m, 3600s)");
    let (number, unit) = match text.char_indices().last() {
        Some((i, 'd')) => (&text[..i], 86_400),
        Some((i, 'h')) => (&text[..i], 3_600),
        Some((i, 'm')) => (&text[..i], 60),
        Some((i, 's')) => (&text[..i], 1),
        _ => (text, 1),
    };
    let number: u64 = number.parse().map_err(|_| expected())?;
    match number.checked_mul(unit) {
        Some(0) => Err(format!("{text:?}: an age of zero refuses every statement")),
        Some(secs) => Ok(std::time::Duration::from_secs(secs)),
        None => Err(expected()),
    }
}

#[cfg(test)]
mod age_tests {
    #[test]
    fn an_age_is_a_whole_number_of_days_hours_minutes_or_seconds() {
        use std::time::Duration;
        assert_eq!(super::age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(super::age("12h"), Ok(Duration::from_secs(12 * 3_600)));
        assert_eq!(super::age("90m"), Ok(Duration::from_secs(5_400)));
        assert_eq!(super::age("3600s"), Ok(Duration::from_secs(3_600)));
        assert_eq!(super::age("60"), Ok(Duration::from_secs(60)));
        for bad in ["", "d", "-1d", "1.5d", "0d", "2w", "99999999999999999999d"] {
            assert!(super::age(bad).is_err(), "{bad}");
        }
    }
}
