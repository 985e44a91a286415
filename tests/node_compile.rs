//! Compile-input parity with the reference validator: every case
//! of `../shared/interop/node-compile/cases/` runs as its own test, in-process
//! through the library (strict parse, then `compile::compile`, as `export` does).
//! packetproof must accept exactly what the reference accepted, and where the
//! reference refused with a verdict, report every one of its failure texts too.
//! The only allowed differences are the stricter refusals listed in
//! [`STRICTER`] (and in the README table "Where packetproof is stricter than the
//! reference"), each refused for that reason and no other. The cases run under
//! datatest-stable; when the corpus is absent, one test, `interop::node-compile`,
//! is reported as ignored with the reason (failed under CI).

#[path = "support/mod.rs"]
mod support;

use packetproof::{canonical, compile, Config, Error};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

type Result = std::result::Result<(), Box<dyn std::error::Error>>;

const CASES: &str = "../shared/interop/node-compile/cases";

/// Why packetproof refuses an input the reference accepts.
#[derive(Debug, Clone, Copy)]
enum Stricter {
    /// I-JSON: duplicate keys, lone surrogates, … (the parser refuses the bytes).
    StrictJson,
    /// harness.toml's forbidden value patterns (storage and media URLs, …).
    ForbiddenValue,
    /// harness.toml's provider and model allow-list.
    AllowList,
    /// Evidence refs: `{kind, id}` strings, once each, only under selected-only.
    EvidenceRefs,
    /// maxTokens absent or not a safe integer.
    MaxTokens,
}

impl Stricter {
    /// Finding message fragments that belong to this reason.
    fn fragments(self) -> &'static [&'static str] {
        match self {
            Stricter::StrictJson => &[],
            Stricter::ForbiddenValue => &["matches forbidden pattern"],
            Stricter::AllowList => &["allow-list"],
            Stricter::EvidenceRefs => &["refs are only allowed with selected-only", "duplicate ref", "expected a ref"],
            Stricter::MaxTokens => &["maxTokens is required", "past JavaScript's safe integers"],
        }
    }
}

/// The expected-difference table: case, reason.
const STRICTER: &[(&str, Stricter)] = &[
    ("c011", Stricter::MaxTokens),      // maxTokens absent
    ("c022", Stricter::ForbiddenValue), // a storage URL in the strategy description
    ("c029", Stricter::AllowList),      // the placeholder model `<project-model-id>`
    ("c035", Stricter::StrictJson),     // a duplicate JSON key
    ("c043", Stricter::EvidenceRefs),   // refs under strategy-default
    ("c051", Stricter::AllowList),      // provider `Google` (no such provider in harness.toml)
    ("interop", Stricter::AllowList),   // the placeholder model `<project-model-id>`
];

fn project() -> &'static packetproof::Invocation {
    static CONFIG: OnceLock<packetproof::Invocation> = OnceLock::new();
    CONFIG.get_or_init(|| {
        packetproof::Invocation::from(
            Config::load(Path::new(env!("CARGO_MANIFEST_DIR")), None).expect("harness.toml loads"),
        )
    })
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(CASES)
}

fn present() -> bool {
    cases_dir().is_dir()
}

fn main() -> std::process::ExitCode {
    if !present() {
        return support::absent_corpus("interop::node-compile", &cases_dir());
    }
    // The harness defines `fn main`; defined in this block, it runs only when the corpus is there.
    // `c001.json`, not its `.node.json` verdict or `.meta.json` notes.
    datatest_stable::harness! {
        { test = node_compile, root = "../shared/interop/node-compile/cases", pattern = r"^[^./]+\.json$" },
    }
    main()
}

fn node_compile(path: &Path, input: Vec<u8>) -> datatest_stable::Result<()> {
    node_compile_case(path, input).map_err(|e| e.to_string().into())
}

/// Our verdict: `Ok(())` accepted, `Err(Some(messages))` refused with findings,
/// `Err(None)` refused by the strict parser.
fn ours(name: &str, input: &[u8]) -> std::result::Result<std::result::Result<(), Option<Vec<String>>>, String> {
    let Ok(request) = canonical::parse(input) else { return Ok(Err(None)) };
    match compile::compile(&request, project(), name) {
        Ok(_) => Ok(Ok(())),
        Err(Error::Failed { findings, .. }) => Ok(Err(Some(findings.into_iter().map(|f| f.message).collect()))),
        Err(other) => Err(format!("{name}: compiling failed for another reason: {other}")),
    }
}

fn node_compile_case(path: &Path, input: Vec<u8>) -> Result {
    let name = path.file_stem().and_then(|n| n.to_str()).ok_or("no file name")?;
    let verdict_file = path.with_extension("node.json");
    let node: Value = serde_json::from_slice(&std::fs::read(&verdict_file)?)?;
    let node_ok = node["ok"].as_bool().ok_or(format!("{}: no boolean `ok`", verdict_file.display()))?;
    let node_failures: Vec<&str> =
        node["failures"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let ours = ours(name, &input)?;
    let exception = STRICTER.iter().find(|(case, _)| *case == name).map(|(_, why)| *why);
    match (node_ok, &ours, exception) {
        (true, Ok(()), None) | (false, Err(None), None) => Ok(()),
        (false, Err(Some(messages)), None) => {
            let missing: Vec<&&str> = node_failures.iter().filter(|m| !messages.iter().any(|o| o == **m)).collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!("{name}: both refuse, but these reference failures are not reported: {missing:?}\nours: {messages:#?}").into())
            }
        }
        (true, Err(refusal), Some(why)) => stricter_for(name, refusal, why),
        (_, _, Some(why)) => Err(format!(
            "{name}: listed as stricter ({why:?}) but the verdicts are reference ok={node_ok}, ours {ours:?}; \
             remove it from STRICTER and the README table"
        )
        .into()),
        (true, Err(refusal), None) => {
            Err(format!("{name}: the reference accepts it, packetproof refuses: {refusal:?}").into())
        }
        (false, Ok(()), None) => {
            Err(format!("{name}: the reference refuses it ({node_failures:?}), packetproof accepts").into())
        }
    }
}

/// A listed difference holds only when the refusal is for that reason alone.
fn stricter_for(name: &str, refusal: &Option<Vec<String>>, why: Stricter) -> Result {
    match (refusal, why) {
        (None, Stricter::StrictJson) => Ok(()),
        (Some(messages), why) if !messages.is_empty() => {
            let other: Vec<&String> =
                messages.iter().filter(|m| !why.fragments().iter().any(|f| m.contains(f))).collect();
            if other.is_empty() {
                Ok(())
            } else {
                Err(format!("{name}: refused for {why:?} and also for {other:?}").into())
            }
        }
        _ => Err(format!("{name}: expected a refusal for {why:?}, got {refusal:?}").into()),
    }
}
