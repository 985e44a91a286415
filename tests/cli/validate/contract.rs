//! One negative packet per contract rule, each its own trial: the edit, and the
//! JSON paths that must be the only findings, on a packet built here and (ignored
//! when absent) on the interop packets.

use super::{failing, read_packet, suffix_args, warn_args, write_json, ROOT};
use crate::support::run;
use crate::support::{self, interop_dir};
use libtest_mimic::{Failed, Trial};
use packetproof::{digest, Config};
use serde_json::{json, Map, Number, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn config() -> Config {
    Config::load(Path::new(ROOT), None).expect("harness.toml loads")
}

pub(super) fn rehash(packet: &mut Map<String, Value>) {
    digest::seal(packet);
}

/// A small valid packet of our own, so the contract negatives run without interop.
pub(super) fn built_packet(google: bool) -> Map<String, Value> {
    let user = "Adapt the saved testimonial block to slot 3 of the onboarding flow.\nKeep the tone calm.";
    let effective = if google { format!("{user}{}", config().google_suffix) } else { user.to_owned() };
    let mut packet = json!({
        "packetVersion": 1,
        "agentId": "updateBlockFromLibrary",
        "taskType": "block-update",
        "promptMode": "library-adapt",
        "attempt": 1,
        "provider": if google { "google" } else { "anthropic" },
        "model": if google { "gemini-2.5-pro" } else { "claude-sonnet-4-5" },
        "maxTokens": 64000,
        "promptPaths": ["system/library-adapt.md", "partials/evidence-selected.md"],
        "promptVersions": { "system/library-adapt.md": "v4", "partials/evidence-selected.md": "v2" },
        "systemPrompt": "You adapt one saved block to a new place in a screen plan. Answer with one block.",
        "userMessage": user,
        "effectiveUserMessage": effective,
        "renderInput": {
            "sourceExample": { "scope": "project", "blueprint": { "assetExamples": [ { "slotKey": "hero", "style": "calm" } ] } },
            "target": {
                "slot": 3, "screen": "welcome",
                "predecessor": { "name": "Goal" }, "successor": { "name": "Plan" }, "themeSummary": { "accent": "teal" }
            },
            "evidence": {
                "requestedMode": "selected-only", "mode": "selected-only",
                "items": [ { "id": "ev-1", "accessible": true, "text": "People like short steps." } ]
            },
            "operatorInstruction": "Keep the tone calm."
        },
        "resolvedBranch": {
            "agentId": "updateBlockFromLibrary",
            "insertionMode": "staged",
            "sourceScope": "project",
            "evidenceMode": "selected-only",
            "neighbours": "both",
            "hasVariableConflicts": false,
            "hasAssetIntents": true,
            "hasTargetTheme": true,
            "operatorInstructionPresent": true
        }
    });
    if !google {
        packet["outputSchema"] = json!({
            "name": "submit_block",
            "schema": { "type": "object", "required": ["block"], "properties": { "block": { "type": "object" } } }
        });
    }
    let Value::Object(mut packet) = packet else { unreachable!() };
    rehash(&mut packet);
    packet
}

#[derive(Clone, Copy, PartialEq)]
enum Applies {
    All,
    Google,
    NotGoogle,
}

/// How a case finishes the packet after its edit.
#[derive(Clone, Copy)]
enum Finish {
    /// Recompute both hashes, so only the rule under test fails.
    Rehash,
    /// The edit already set the hashes as it wants them.
    AsIs,
    /// Recompute, then write this literal JSON number text in place of the double it
    /// parses to (as the edit inserted it).
    RehashThenWrite(&'static str),
}

/// A contract case: edit the packet and return the JSON paths that must be the only findings.
struct Case {
    name: &'static str,
    applies: Applies,
    finish: Finish,
    edit: fn(&mut Map<String, Value>) -> Vec<String>,
}

fn path(key: &str) -> String {
    format!("$.{key}")
}

fn version_path(prompt_path: &str) -> String {
    format!("$.promptVersions[{}]", Value::from(prompt_path))
}

fn all_version_paths(p: &Map<String, Value>) -> Vec<String> {
    p["promptVersions"].as_object().unwrap().keys().map(|k| version_path(k)).collect()
}

fn first_prompt_path(p: &Map<String, Value>) -> String {
    p["promptPaths"][0].as_str().unwrap().to_owned()
}

macro_rules! branch_cases {
    ($($field:literal => $bad:expr),* $(,)?) => {
        [$(
            Case { name: concat!("resolvedBranch.", $field, " invalid"), applies: Applies::All, finish: Finish::Rehash, edit: |p| {
                p["resolvedBranch"][$field] = json!($bad);
                vec![format!("$.resolvedBranch.{}", $field)]
            } },
            Case { name: concat!("resolvedBranch.", $field, " missing"), applies: Applies::All, finish: Finish::Rehash, edit: |p| {
                p["resolvedBranch"].as_object_mut().unwrap().remove($field);
                vec![format!("$.resolvedBranch.{}", $field)]
            } },
        )*]
    };
}

fn cases() -> Vec<Case> {
    let mut cases = vec![
        Case {
            name: "packetVersion 2",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["packetVersion"] = json!(2);
                vec![path("packetVersion")]
            },
        },
        Case {
            name: "packetVersion as a string",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["packetVersion"] = json!("1");
                vec![path("packetVersion")]
            },
        },
        Case {
            name: "attempt 2",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["attempt"] = json!(2);
                vec![path("attempt")]
            },
        },
        Case {
            name: "agentId of another agent",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["agentId"] = json!("updateBlock");
                vec![path("agentId"), "$.resolvedBranch.agentId".into()]
            },
        },
        Case {
            name: "taskType",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["taskType"] = json!("block-create");
                vec![path("taskType")]
            },
        },
        Case {
            name: "promptMode",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["promptMode"] = json!("fresh-compose");
                vec![path("promptMode")]
            },
        },
        Case {
            name: "provider unknown",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                p["provider"] = json!("acme");
                vec![path("provider")]
            },
        },
        Case {
            name: "provider missing",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                p.remove("provider");
                vec![path("provider")]
            },
        },
        Case {
            name: "model blank",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["model"] = json!(" \t ");
                vec![path("model")]
            },
        },
        Case {
            name: "model a number",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["model"] = json!(42);
                vec![path("model")]
            },
        },
        Case {
            name: "systemPrompt empty",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["systemPrompt"] = json!("");
                vec![path("systemPrompt")]
            },
        },
        Case {
            name: "effectiveUserMessage missing",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p.remove("effectiveUserMessage");
                vec![path("effectiveUserMessage")]
            },
        },
        Case {
            name: "maxTokens 0",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["maxTokens"] = json!(0);
                vec![path("maxTokens")]
            },
        },
        Case {
            name: "maxTokens negative",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["maxTokens"] = json!(-64000);
                vec![path("maxTokens")]
            },
        },
        Case {
            name: "maxTokens fractional",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["maxTokens"] = json!(6400.5);
                vec![path("maxTokens")]
            },
        },
        Case {
            name: "maxTokens a string",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["maxTokens"] = json!("64000");
                vec![path("maxTokens")]
            },
        },
        Case {
            name: "renderInput an array",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["renderInput"] = json!([]);
                vec![path("renderInput")]
            },
        },
        Case {
            name: "resolvedBranch a string",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["resolvedBranch"] = json!("staged");
                vec![path("resolvedBranch")]
            },
        },
        Case {
            name: "promptPaths empty",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["promptPaths"] = json!([]);
                let mut paths = all_version_paths(p);
                paths.push(path("promptPaths"));
                paths
            },
        },
        Case {
            name: "promptPaths duplicate",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                let first = first_prompt_path(p);
                let paths = p["promptPaths"].as_array_mut().unwrap();
                paths.push(json!(first));
                vec![format!("$.promptPaths[{}]", paths.len() - 1)]
            },
        },
        Case {
            name: "promptPaths blank entry",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["promptPaths"].as_array_mut().unwrap().push(json!(" "));
                let n = p["promptPaths"].as_array().unwrap().len();
                vec![format!("$.promptPaths[{}]", n - 1)]
            },
        },
        Case {
            name: "promptVersions missing a path",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                let first = first_prompt_path(p);
                p["promptVersions"].as_object_mut().unwrap().remove(&first);
                vec![version_path(&first)]
            },
        },
        Case {
            name: "promptVersions names an extra path",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["promptVersions"]["extra/unused.md"] = json!("v1");
                vec![version_path("extra/unused.md")]
            },
        },
        Case {
            name: "promptVersions blank version",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                let first = first_prompt_path(p);
                p["promptVersions"][first.as_str()] = json!("");
                vec![version_path(&first)]
            },
        },
        Case {
            name: "promptVersions an array",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["promptVersions"] = json!([]);
                vec![path("promptVersions")]
            },
        },
        Case {
            name: "resolvedBranch.agentId mismatch",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["resolvedBranch"]["agentId"] = json!("updateBlock");
                vec!["$.resolvedBranch.agentId".into()]
            },
        },
        Case {
            name: "resolvedBranch.agentId missing",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["resolvedBranch"].as_object_mut().unwrap().remove("agentId");
                vec!["$.resolvedBranch.agentId".into()]
            },
        },
        Case {
            name: "Google packet with outputSchema",
            applies: Applies::Google,
            finish: Finish::Rehash,
            edit: |p| {
                p.insert("outputSchema".into(), json!({ "name": "submit_block", "schema": { "type": "object" } }));
                vec![path("outputSchema")]
            },
        },
        Case {
            name: "Google packet with outputSchema null",
            applies: Applies::Google,
            finish: Finish::Rehash,
            edit: |p| {
                p.insert("outputSchema".into(), Value::Null);
                vec![path("outputSchema")]
            },
        },
        Case {
            name: "Google packet with the wrong suffix",
            applies: Applies::Google,
            finish: Finish::Rehash,
            edit: |p| {
                let user = p["userMessage"].as_str().unwrap().to_owned();
                p["effectiveUserMessage"] = json!(format!("{user}\n\nAnswer in JSON."));
                vec![path("effectiveUserMessage")]
            },
        },
        Case {
            name: "Google packet without the suffix",
            applies: Applies::Google,
            finish: Finish::Rehash,
            edit: |p| {
                p["effectiveUserMessage"] = p["userMessage"].clone();
                vec![path("effectiveUserMessage")]
            },
        },
        Case {
            name: "non-Google packet without outputSchema",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                p.remove("outputSchema");
                vec![path("outputSchema")]
            },
        },
        Case {
            name: "non-Google packet with outputSchema null",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                p["outputSchema"] = Value::Null;
                vec![path("outputSchema")]
            },
        },
        Case {
            name: "non-Google outputSchema without a name",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                p["outputSchema"].as_object_mut().unwrap().remove("name");
                vec!["$.outputSchema.name".into()]
            },
        },
        Case {
            name: "non-Google outputSchema.schema not an object",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                p["outputSchema"]["schema"] = json!(true);
                vec!["$.outputSchema.schema".into()]
            },
        },
        Case {
            name: "non-Google effectiveUserMessage differs from userMessage",
            applies: Applies::NotGoogle,
            finish: Finish::Rehash,
            edit: |p| {
                let user = p["userMessage"].as_str().unwrap().to_owned();
                p["effectiveUserMessage"] = json!(format!("{user} Also be brief."));
                vec![path("effectiveUserMessage")]
            },
        },
        Case {
            name: "unknown top-level field",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p.insert("debugNotes".into(), json!("kept for later"));
                vec![path("debugNotes")]
            },
        },
        Case {
            name: "forbidden key deep in renderInput",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["renderInput"]["target"]["layout"] = json!({ "layers": [ { "kind": "image" }, { "aiAssets": [] } ] });
                vec!["$.renderInput.target.layout.layers[1].aiAssets".into()]
            },
        },
        Case {
            name: "forbidden storage URI in a renderInput string",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["renderInput"]["target"]["layout"] = json!({ "hero": "gs://media-bucket/hero-original" });
                vec!["$.renderInput.target.layout.hero".into()]
            },
        },
        Case {
            name: "forbidden media URL in systemPrompt",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                let prompt = p["systemPrompt"].as_str().unwrap().to_owned();
                p["systemPrompt"] = json!(format!("{prompt}\nReuse https://cdn.example.com/img/hero-final.png as is."));
                vec![path("systemPrompt")]
            },
        },
        Case {
            name: "evidence items under no-evidence",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                // Consistent everywhere but in the items (packet::forbidden-material and
                // packet::branch-consistency both name them).
                p["resolvedBranch"]["evidenceMode"] = json!("no-evidence");
                p["renderInput"]["evidence"]["mode"] = json!("no-evidence");
                p["renderInput"]["evidence"]["requestedMode"] = json!("no-evidence");
                vec!["$.renderInput.evidence.items".into()]
            },
        },
        Case {
            name: "inaccessible evidence item",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["renderInput"]["evidence"]["items"][0]["accessible"] = json!(false);
                vec!["$.renderInput.evidence.items[0]".into()]
            },
        },
        Case {
            name: "inexact integer just past 2^53",
            applies: Applies::All,
            finish: Finish::Rehash,
            edit: |p| {
                p["renderInput"]["count"] = json!(9007199254740993u64);
                vec!["$.renderInput.count".into()]
            },
        },
        Case {
            name: "inexact integer past the u64 range",
            applies: Applies::All,
            finish: Finish::RehashThenWrite("123456789012345678901234567890"),
            edit: |p| {
                p["renderInput"]["count"] = Value::Number(Number::from_f64(123456789012345678901234567890.0).unwrap());
                vec!["$.renderInput.count".into()]
            },
        },
        Case {
            name: "exactInputHash in uppercase",
            applies: Applies::All,
            finish: Finish::AsIs,
            edit: |p| {
                rehash(p);
                p["exactInputHash"] =
                    json!(p["exactInputHash"].as_str().unwrap().to_uppercase().replace("SHA256:", "sha256:"));
                let checksum = digest::packet_checksum(p);
                p["checksum"] = json!(checksum);
                vec![path("exactInputHash")]
            },
        },
        Case {
            name: "checksum with a short hex",
            applies: Applies::All,
            finish: Finish::AsIs,
            edit: |p| {
                rehash(p);
                p["checksum"] = json!("sha256:16be3248");
                vec![path("checksum")]
            },
        },
        Case {
            name: "exactInputHash missing",
            applies: Applies::All,
            finish: Finish::AsIs,
            edit: |p| {
                p.remove("exactInputHash");
                let checksum = digest::packet_checksum(p);
                p["checksum"] = json!(checksum);
                vec![path("exactInputHash")]
            },
        },
    ];
    cases.extend(branch_cases! {
        "insertionMode" => "deferred",
        "sourceScope" => "global",
        "evidenceMode" => "all-evidence",
        "neighbours" => "left-only",
        "hasVariableConflicts" => "false",
        "hasAssetIntents" => 1,
        "hasTargetTheme" => Value::Null,
        "operatorInstructionPresent" => "yes",
    });
    cases
}

/// The packets the contract negatives run on.
#[derive(Debug, Clone, Copy)]
enum Base {
    BuiltAnthropic,
    BuiltGoogle,
    InteropAnthropic,
    InteropGoogle,
}

impl Base {
    const ALL: [Base; 4] = [Base::BuiltAnthropic, Base::BuiltGoogle, Base::InteropAnthropic, Base::InteropGoogle];

    fn label(self) -> &'static str {
        match self {
            Base::BuiltAnthropic => "built-anthropic",
            Base::BuiltGoogle => "built-google",
            Base::InteropAnthropic => "interop-anthropic",
            Base::InteropGoogle => "interop-google",
        }
    }

    fn google(self) -> bool {
        matches!(self, Base::BuiltGoogle | Base::InteropGoogle)
    }

    fn interop(self) -> bool {
        matches!(self, Base::InteropAnthropic | Base::InteropGoogle)
    }

    fn packet(self) -> Map<String, Value> {
        match self {
            Base::BuiltAnthropic => built_packet(false),
            Base::BuiltGoogle => built_packet(true),
            Base::InteropAnthropic => read_packet(&interop_dir().join("runtime-packet.anthropic.json")),
            Base::InteropGoogle => read_packet(&interop_dir().join("runtime-packet.google.json")),
        }
    }

    /// Arguments of `validate` (the interop samples append their own suffix and
    /// carry generator prompts in asset examples, noted under the `warn` policy).
    fn extra(self) -> Vec<PathBuf> {
        match self {
            Base::InteropGoogle => suffix_args(&interop_dir()),
            Base::InteropAnthropic => warn_args(),
            Base::BuiltAnthropic | Base::BuiltGoogle => Vec::new(),
        }
    }

    /// A trial on this base, ignored when it needs the absent interop folder.
    fn trial(self, name: String, test: impl FnOnce() -> Result<(), String> + Send + 'static) -> Trial {
        let trial = Trial::test(name, move || test().map_err(Failed::from));
        if self.interop() {
            support::interop_gate(trial, support::interop_present(), &support::interop_dir())
        } else {
            trial
        }
    }
}

/// One trial per base packet (it must validate) and per applicable contract case
/// (it must fail with findings at exactly the paths the case names).
pub(super) fn contract_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for base in Base::ALL {
        trials.push(
            base.trial(format!("validate::contract::{}::base-validates", base.label()), move || base_validates(base)),
        );
        for (index, case) in cases().iter().enumerate() {
            if case.applies == Applies::Google && !base.google() || case.applies == Applies::NotGoogle && base.google()
            {
                continue;
            }
            let name = format!("validate::contract::{}::{}", base.label(), case.name);
            trials.push(base.trial(name, move || run_case(base, index)));
        }
    }
    trials
}

fn base_validates(base: Base) -> Result<(), String> {
    let temp = tempfile::tempdir().unwrap();
    let base_file = write_json(temp.path(), "base.json", &Value::Object(base.packet()));
    let mut args: Vec<PathBuf> = vec![PathBuf::from("validate")];
    args.extend(base.extra());
    args.push(PathBuf::from("--packet"));
    args.push(base_file);
    let output = run(&args);
    if output.code != 0 {
        return Err(format!("the base packet must validate\n{}", output.describe()));
    }
    Ok(())
}

/// The contract case `index` of [`cases`] on `base`.
fn run_case(base: Base, index: usize) -> Result<(), String> {
    let temp = tempfile::tempdir().unwrap();
    let case = &cases()[index];
    let mut packet = base.packet();
    let expected: BTreeSet<String> = (case.edit)(&mut packet).into_iter().collect();
    let mut bytes = match case.finish {
        Finish::AsIs => serde_json::to_vec_pretty(&packet).unwrap(),
        Finish::Rehash | Finish::RehashThenWrite(_) => {
            rehash(&mut packet);
            serde_json::to_vec_pretty(&packet).unwrap()
        }
    };
    if let Finish::RehashThenWrite(literal) = case.finish {
        let double = Number::from_f64(literal.parse().unwrap()).unwrap();
        let written = serde_json::to_string(&double).unwrap();
        let packet_text = String::from_utf8_lossy(&bytes).into_owned();
        if !packet_text.contains(&written) {
            return Err(format!("{written} not found in the packet text"));
        }
        bytes = packet_text.replace(&written, literal).into_bytes();
    }
    let file = temp.path().join("case.json");
    std::fs::write(&file, bytes).unwrap();
    let found = failing(&file, &base.extra())?;
    let paths: BTreeSet<String> = found.iter().map(|(_, p)| p.clone()).collect();
    if paths != expected {
        return Err(format!("expected findings at {expected:?}, found {found:?}"));
    }
    Ok(())
}
