//! Agreement with the reference (Node) evaluator: every case of `../shared/interop/node-eval/`
//! (204 agent outputs with the Node evaluator's stored verdict) is its own test. A case agrees
//! when `packetproof evaluate` reaches the same `ok` and the same `earliestFailureStage`; the
//! cases where packetproof deliberately differs are listed once, in [`EXPECTED_DIFFERENCES`],
//! with the reason (the README's table "Where packetproof is stricter than the reference").
//!
//! Each case is set up as the corpus README says: a settings root whose snapshot is the interop
//! Builder schema and whose Google suffix is the interop suffix, a run prepared from the case's
//! packet, then `runRemove` / `runAppend` / `runReplace`, then evaluate (with `--packet` when the
//! evaluated packet is not the prepared one). Everything runs in-process through the library.
//!
//! The cases run under datatest-stable (one test per `cases/<name>/case.json`). When
//! `../shared/interop` is absent the suite reports one test, `interop::node-eval`, as ignored
//! with the reason (never a passing test that did not run), and fails it under CI.

#[path = "support/mod.rs"]
mod support;

use datatest_stable::Utf8Path;
use packetproof::run::evaluate::EvaluateRequest;
use packetproof::{canonical, Config};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

type Result = std::result::Result<(), Box<dyn std::error::Error>>;

const CORPUS: &str = "../shared/interop/node-eval";

/// What packetproof does instead of the reference's verdict, and why. Every case not listed
/// here must agree with Node exactly; a listed case must really differ as described (so the
/// table cannot go stale).
enum Expected {
    /// Accepted where Node rejects.
    Accepted,
    /// Rejected at this stage where Node accepts or fails elsewhere.
    Stage(&'static str),
    /// Refused cleanly (no evaluation, an error naming the problem) where Node evaluates.
    Refused,
}

const STRICT_JSON: &str = "strict JSON (contract): refused at json-parse, not repaired";
const FALSY: &str =
    "Node bug: a falsy answer skips every check and passes; packetproof judges it and the schema rejects it";
const BRANCH_TRUTH: &str = "branch truth (issue 12): packets/vars.json keeps resolvedBranch.hasVariableConflicts false beside incompatible mappings in its own renderInput; packetproof refuses to prepare a run from a packet whose branch its renderInput contradicts";
const ONE_VERDICT: &str = "one rule book (issue 19): the reference's evaluator ignores a non-Google run's manifest; verify fails the run (run::manifest-binding), so evaluate never records a passing evaluation for it";
const ISOLATION: &str =
    "wider asset isolation (contract): generated media URLs and configured forbidden keys are refused too";

/// case name → (what packetproof does, why). Keep in step with the README table.
const EXPECTED_DIFFERENCES: &[(&str, Expected, &str)] = &[
    ("edge-duplicate-key", Expected::Stage("json-parse"), STRICT_JSON),
    ("edge-lone-surrogate", Expected::Stage("json-parse"), STRICT_JSON),
    ("edge-invalid-utf8-in-title", Expected::Stage("json-parse"), STRICT_JSON),
    ("m044", Expected::Stage("json-parse"), STRICT_JSON),
    ("edge-number-out-of-range", Expected::Stage("json-parse"), STRICT_JSON),
    ("edge-depth-200", Expected::Stage("json-parse"), STRICT_JSON),
    ("m066", Expected::Stage("json-parse"), STRICT_JSON),
    ("edge-falsy-null", Expected::Stage("schema"), FALSY),
    ("edge-falsy-empty-string", Expected::Stage("schema"), FALSY),
    ("edge-falsy-in-fence", Expected::Stage("schema"), FALSY),
    ("edge-falsy-zero-google", Expected::Stage("schema"), FALSY),
    ("m062", Expected::Stage("schema"), FALSY),
    ("edge-asset-value-url", Expected::Stage("asset-isolation"), ISOLATION),
    ("m019", Expected::Stage("asset-isolation"), ISOLATION),
    ("edge-asset-key-unlisted", Expected::Stage("asset-isolation"), ISOLATION),
    ("m028", Expected::Stage("asset-isolation"), ISOLATION),
    (
        "edge-identity-bind-word-present",
        Expected::Accepted,
        "Node bug: a variable bound to itself can never pass; packetproof accepts it when the id is realized",
    ),
    ("edge-anthropic-manifest-ignored", Expected::Refused, ONE_VERDICT),
    ("edge-vars-realized", Expected::Refused, BRANCH_TRUTH),
    ("edge-vars-source-other-case", Expected::Refused, BRANCH_TRUTH),
    ("edge-vars-source-hyphen-boundary", Expected::Refused, BRANCH_TRUTH),
    ("edge-vars-source-underscore-no-boundary", Expected::Refused, BRANCH_TRUTH),
    ("edge-vars-target-as-key", Expected::Refused, BRANCH_TRUTH),
    ("edge-vars-target-missing", Expected::Refused, BRANCH_TRUTH),
    ("edge-vars-unused-source-present", Expected::Refused, BRANCH_TRUTH),
    ("m025", Expected::Refused, BRANCH_TRUTH),
    ("m043", Expected::Refused, BRANCH_TRUTH),
    ("m063", Expected::Refused, BRANCH_TRUTH),
    (
        "m070",
        Expected::Refused,
        "stricter run check (README, run directories): a manifest file name leading out of the run directory is refused before evaluating",
    ),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn corpus() -> PathBuf {
    root().join(CORPUS)
}

fn corpus_present() -> bool {
    corpus().join("index.json").is_file()
}

fn main() -> std::process::ExitCode {
    if !corpus_present() {
        return support::absent_corpus("interop::node-eval", &corpus());
    }
    // The harness defines `fn main`; defined in this block, it runs only when the corpus is there.
    datatest_stable::harness! {
        { test = node_eval, root = "../shared/interop/node-eval/cases", pattern = r"^[^/]+/case\.json$" },
    }
    main()
}

fn node_eval(path: &Utf8Path) -> datatest_stable::Result<()> {
    node_eval_case(path.as_std_path()).map_err(|e| e.to_string().into())
}

/// A settings root for packets from the Node exporter (made once per process): the project's
/// harness.toml, the interop Builder schema as snapshot, the interop Google suffix.
fn config() -> &'static packetproof::Invocation {
    static CONFIG: OnceLock<(tempfile::TempDir, packetproof::Invocation)> = OnceLock::new();
    &CONFIG
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            let interop = corpus().join("..");
            std::fs::create_dir_all(dir.path().join("references")).unwrap();
            std::fs::copy(root().join("harness.toml"), dir.path().join("harness.toml")).unwrap();
            std::fs::copy(
                interop.join("block-screen-output-schema.json"),
                dir.path().join("references/block-screen-output-schema.json"),
            )
            .unwrap();
            let suffix = interop.join("google-suffix.txt");
            std::fs::copy(&suffix, dir.path().join("references/gemini-json-suffix.txt")).unwrap();
            let config = Config::load(dir.path(), Some(&suffix)).expect("settings root");
            // The Node exporter's packets carry generator prompts in asset examples: noted, not failed.
            let config = packetproof::Invocation::new(
                config,
                packetproof::CommandPolicy {
                    asset_example_prompts: Some(packetproof::config::Policy::Warn),
                    ..Default::default()
                },
            );
            (dir, config)
        })
        .1
}

fn expected_difference(name: &str) -> Option<&'static (&'static str, Expected, &'static str)> {
    EXPECTED_DIFFERENCES.iter().find(|(case, ..)| *case == name)
}

fn read_json(path: &Path) -> std::result::Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    canonical::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// A run prepared from `packet`, once per packet for the whole suite (cases copy it).
fn prepared_run(packet: &Path) -> std::result::Result<PathBuf, String> {
    static RUNS: OnceLock<(tempfile::TempDir, Mutex<HashMap<PathBuf, PathBuf>>)> = OnceLock::new();
    let (dir, runs) = RUNS.get_or_init(|| (tempfile::tempdir().expect("temp dir"), Mutex::default()));
    let mut runs = runs.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(run) = runs.get(packet) {
        return Ok(run.clone());
    }
    let run = dir.path().join(runs.len().to_string());
    // Only the run directory is wanted here; what did not apply to the packet is verify's to report.
    let _prepared = packetproof::judge::prepare(config(), packet, &run)
        .map_err(|e| format!("prepare {}: {e}", packet.display()))?;
    runs.insert(packet.to_path_buf(), run.clone());
    Ok(run)
}

fn copy_dir(from: &Path, to: &Path) -> std::result::Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for entry in std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        std::fs::copy(entry.path(), to.join(entry.file_name())).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    Ok(())
}

/// Prepare the run of a case and apply its run edits; returns (run dir, packet to pass).
fn set_up(case_dir: &Path, case: &Value, temp: &Path) -> std::result::Result<(PathBuf, Option<PathBuf>), String> {
    let corpus = corpus();
    let provider = case["packet"].as_str().ok_or("case.json: $.packet: expected a string")?;
    let interop_packet = corpus.join(format!("../runtime-packet.{provider}.json"));
    let packet = case.get("packetFile").and_then(Value::as_str).map_or(interop_packet.clone(), |f| corpus.join(f));
    let prepared = if case.get("preparePacket").and_then(Value::as_str) == Some("interop") {
        interop_packet
    } else {
        packet.clone()
    };
    let run_dir = temp.join("run");
    copy_dir(&prepared_run(&prepared)?, &run_dir)?;
    for file in case.get("runRemove").and_then(Value::as_array).into_iter().flatten() {
        let file = file.as_str().ok_or("runRemove: expected file names")?;
        std::fs::remove_file(run_dir.join(file)).map_err(|e| format!("runRemove {file}: {e}"))?;
    }
    for (file, text) in case.get("runAppend").and_then(Value::as_object).into_iter().flatten() {
        let mut bytes = std::fs::read(run_dir.join(file)).map_err(|e| format!("runAppend {file}: {e}"))?;
        bytes.extend_from_slice(text.as_str().ok_or("runAppend: expected text")?.as_bytes());
        std::fs::write(run_dir.join(file), bytes).map_err(|e| format!("runAppend {file}: {e}"))?;
    }
    for file in case.get("runReplace").and_then(Value::as_array).into_iter().flatten() {
        let file = file.as_str().ok_or("runReplace: expected file names")?;
        std::fs::copy(case_dir.join("run").join(file), run_dir.join(file))
            .map_err(|e| format!("runReplace {file}: {e}"))?;
    }
    Ok((run_dir, (packet != prepared).then_some(packet)))
}

/// What packetproof concluded: `Ok((ok, earliestFailureStage))`, or `Err(refusal)`.
type Verdict = std::result::Result<(bool, Option<String>), String>;

fn evaluate_case(case_dir: &Path) -> std::result::Result<Verdict, String> {
    let case = read_json(&case_dir.join("case.json"))?;
    let temp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (run_dir, packet) = match set_up(case_dir, &case, temp.path()) {
        Ok(set) => set,
        // packetproof refusing to prepare a run from the packet is its verdict on the case.
        Err(refusal) if refusal.starts_with("prepare ") => return Ok(Err(refusal)),
        Err(e) => return Err(e),
    };
    let args = EvaluateRequest {
        run_dir,
        packet,
        output: Some(case_dir.join("output.json")),
        report: Some(temp.path().join("evaluation.json")),
        schema: None,
    };
    Ok(match packetproof::judge::evaluate(config(), &args) {
        Ok(packetproof::judge::Judged { value: (evaluation, _), .. }) => {
            let stage = evaluation.document.get("earliestFailureStage").and_then(Value::as_str).map(str::to_owned);
            Ok((evaluation.ok, stage))
        }
        Err(refusal) => Err(refusal.to_string()),
    })
}

fn show(verdict: &Verdict) -> String {
    match verdict {
        Ok((true, _)) => "ok".into(),
        Ok((false, stage)) => format!("failed at {}", stage.as_deref().unwrap_or("(no stage)")),
        Err(refusal) => format!("refused: {refusal}"),
    }
}

fn node_eval_case(path: &Path) -> Result {
    let case_dir = path.parent().ok_or("no case directory")?;
    let name = case_dir.file_name().and_then(|n| n.to_str()).ok_or("no case name")?;
    let case = read_json(&case_dir.join("case.json"))?;
    let ours = evaluate_case(case_dir)?;
    let node_report = case.get("nodeNoReport").is_some();
    let node = if node_report {
        None
    } else {
        let evaluation = read_json(&case_dir.join("node-evaluation.json"))?;
        let stage = evaluation["earliestFailureStage"].as_str().map(str::to_owned);
        Some((evaluation["ok"] == Value::Bool(true), stage))
    };
    let agrees = match (&node, &ours) {
        // Node died: any rejection without a crash is the sane target.
        (None, Ok((ok, _))) => !ok,
        (None, Err(_)) => true,
        (Some(node), Ok(ours)) => node == ours,
        (Some(_), Err(_)) => false,
    };
    let node_shown = node.clone().map_or("no evaluation (Node died)".to_owned(), |n| show(&Ok(n)));
    match (expected_difference(name), agrees) {
        (None, true) => Ok(()),
        (None, false) => Err(format!("{name}: Node {node_shown}, packetproof {}", show(&ours)).into()),
        (Some((_, expected, why)), _) => {
            let matches = match (expected, &ours) {
                (Expected::Accepted, Ok((true, _))) => true,
                (Expected::Stage(stage), Ok((false, Some(found)))) => found == stage,
                (Expected::Refused, Err(_)) => true,
                _ => false,
            };
            if matches && !agrees {
                Ok(())
            } else {
                Err(format!(
                    "{name}: listed as an expected difference ({why}), but packetproof {} (Node {node_shown}); update the table",
                    show(&ours)
                )
                .into())
            }
        }
    }
}
