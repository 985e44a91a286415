//! The packet compiler, end to end: export through the CLI, the golden corpus,
//! branch isolation, interop parity with the Node compile input, refusals of bad
//! input, the schema snapshot check and bless.

use crate::support::{self, interop_dir};
use libtest_mimic::Trial;
use packetproof::report::{walk, Trail};

use packetproof::judge::Step;
use packetproof::{canonical, compile, corpus, provider, Config};

use serde_json::{json, Value};

use std::collections::BTreeSet;

use std::path::Path;

use std::process::Output;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn config() -> packetproof::Invocation {
    packetproof::Invocation::from(Config::load(root(), None).unwrap())
}

fn packetproof(project: &Path, args: &[&str]) -> Output {
    support::bin().args(args).env("PACKETPROOF_ROOT", project).output().unwrap()
}

fn strings(value: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    let mut trail = Trail::new(packetproof::JsonPath::root());
    walk(value, &mut trail, &mut |v, key, _| {
        out.extend(key);
        out.extend(v.as_str());
    });
    out
}

/// The cases whose packet under test is the blessed golden one (negative cases
/// with a hand-broken packet of their own have no golden files).
fn golden_cases(config: &packetproof::Invocation) -> Vec<corpus::Case> {
    corpus::cases(config).unwrap().into_iter().filter(|c| !c.has_own_packet()).collect()
}

/// A temporary copy of the project's sources (templates, schema, fixtures) with
/// golden files blessed from them, and its settings.
#[track_caller]
fn blessed_project() -> (support::Project, packetproof::Invocation) {
    let project = support::Project::corpus().blessed();
    let config = packetproof::Invocation::from(Config::load(project.root(), None).unwrap());
    (project, config)
}

fn export_is_deterministic_and_matches_what_bless_writes() {
    let (project, config) = blessed_project();
    let cases = golden_cases(&config);
    assert!(cases.len() >= 14, "corpus too small: {}", cases.len());
    for case in &cases {
        let request = case.request_path();
        let first = packetproof(project.root(), &["export", "--request", request.to_str().unwrap()]);
        assert!(first.status.success(), "{}: {}", case.name, String::from_utf8_lossy(&first.stderr));
        let second = packetproof(project.root(), &["export", "--request", request.to_str().unwrap()]);
        assert_eq!(first.stdout, second.stdout, "{}: two exports differ", case.name);
        let golden = std::fs::read(case.golden_packet()).unwrap();
        assert!(first.stdout == golden, "{}: export differs from the packet bless wrote", case.name);
    }
}

fn golden_packets_hold_and_agent_requests_follow_them() {
    let (_project, config) = blessed_project();
    for case in golden_cases(&config) {
        let packet = canonical::parse(&std::fs::read(case.golden_packet()).unwrap()).unwrap();
        let judged = packetproof::judge::packet_file(&case.golden_packet(), &packet, &config, Step::Validate);
        assert_eq!(judged.findings, Vec::new(), "{}", case.name);
        let agent = canonical::parse(&std::fs::read(case.golden_agent_request()).unwrap()).unwrap();
        assert_eq!(agent, provider::agent_request(packet.as_object().unwrap()), "{}", case.name);
        let branch = &packet["resolvedBranch"];
        prompt_paths_follow_the_branch(&case.name, &packet, &config);
        assert_eq!(packet["renderInput"]["evidence"]["mode"], branch["evidenceMode"], "{}", case.name);
        assert_eq!(packet["renderInput"]["evidence"]["requestedMode"], case.request["evidence"]["selection"]["mode"]);
    }
}

/// promptPaths: the two entry templates, then exactly one partial per branch
/// field, the one named after the resolved value; each version is the sha256 of
/// the template's bytes.
#[track_caller]
fn prompt_paths_follow_the_branch(case: &str, packet: &Value, config: &packetproof::Invocation) {
    let branch = &packet["resolvedBranch"];
    let flag = |field: &str, yes: &str, no: &str| if branch[field] == json!(true) { yes } else { no }.to_owned();
    let value = |field: &str| branch[field].as_str().unwrap().to_owned();
    let expected = [
        compile::SYSTEM_TEMPLATE.to_owned(),
        compile::USER_TEMPLATE.to_owned(),
        format!("branches/insertion/{}.md.j2", value("insertionMode")),
        format!("branches/source/{}.md.j2", value("sourceScope")),
        format!("branches/assets/{}.md.j2", flag("hasAssetIntents", "intents", "none")),
        format!("branches/neighbours/{}.md.j2", value("neighbours")),
        format!("branches/theme/{}.md.j2", flag("hasTargetTheme", "present", "absent")),
        format!("branches/evidence/{}.md.j2", value("evidenceMode")),
        format!("branches/variables/{}.md.j2", flag("hasVariableConflicts", "conflicts", "compatible")),
        format!("branches/operator/{}.md.j2", flag("operatorInstructionPresent", "present", "absent")),
    ];
    assert_eq!(packet["promptPaths"], json!(expected), "{case}");
    for path in &expected {
        let bytes = std::fs::read(config.settings().paths.prompts.as_ref().unwrap().join(path)).unwrap();
        assert_eq!(packet["promptVersions"][path], json!(packetproof::digest::sha256(&bytes)), "{case}: {path}");
    }
}

/// No string from a region the branch excluded occurs anywhere in any golden
/// packet (keys and values, prompts included), nor in the freshly compiled one.
fn excluded_text_never_reaches_a_packet() {
    let (_project, config) = blessed_project();
    let mut checked = 0;
    for case in golden_cases(&config) {
        let golden = canonical::parse(&std::fs::read(case.golden_packet()).unwrap()).unwrap();
        let fresh = compile::compile(&case.request, &config, &case.name).unwrap();
        let excluded = compile::excluded_text(&case.request, &config);
        // The corpus plants marked text in every case; the check must have something to find.
        for marker in ["UNSELECTED", "INACCESSIBLE", "ASSET-PROMPT", "Source-only survey"] {
            if serde_json::to_string(&case.request).unwrap().contains(marker) {
                assert!(
                    excluded.iter().any(|(_, t)| t.contains(marker)),
                    "{}: {marker} text not listed as excluded",
                    case.name
                );
            }
        }
        for packet in [&golden, &fresh] {
            let texts = strings(packet);
            for (path, text) in &excluded {
                assert!(
                    !texts.iter().any(|t| t.contains(text.as_str())),
                    "{}: excluded text from {path} occurs in the packet: {text:?}",
                    case.name
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "only {checked} excluded strings checked");
}

fn excluded_text_covers_unresolved_evidence_and_asset_prompts() {
    let config = config();
    let case = golden_cases(&config).into_iter().find(|c| c.name == "anthropic-staged-pred-selected").unwrap();
    let excluded = compile::excluded_text(&case.request, &config);
    let paths: BTreeSet<&str> = excluded.iter().map(|(p, _)| p.as_str()).collect();
    for expected in [
        "$.evidence.availableItems[1].value.description",
        "$.evidence.availableItems[2].value.description",
        "$.evidence.availableItems[3].value.description",
        "$.source.blueprint.assetExamples[0].promptTemplate",
        "$.source.blueprint.assetExamples[0].negativePrompt",
        "$.source.blueprint.dataUsage.items[0].value",
        "$.source.blueprint.screens[0].aiMeta.dataMapping[0].value",
    ] {
        assert!(paths.contains(expected), "{expected} missing from {paths:#?}");
    }
    assert!(!paths.iter().any(|p| p.starts_with("$.evidence.availableItems[0]")), "the selected item is not excluded");
}

/// Key sets, recursively (arrays item by item).
fn shape(value: &Value, path: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                let at = format!("{path}.{key}");
                out.insert(at.clone());
                shape(item, &at, out);
            }
        }
        Value::Array(items) => items.iter().enumerate().for_each(|(i, item)| shape(item, &format!("{path}[{i}]"), out)),
        _ => {}
    }
}

fn interop_compile_input_resolves_like_the_node_packet() {
    let (input, node) = (interop_dir().join("compile-input.json"), interop_dir().join("runtime-packet.anthropic.json"));
    let config = config();
    let mut request = canonical::parse(&std::fs::read(input).unwrap()).unwrap();
    request["model"] = json!(config.settings().providers["anthropic"].models[0]);
    let node = canonical::parse(&std::fs::read(node).unwrap()).unwrap();
    let packet = compile::compile(&request, &config, "compile-input.json").unwrap();
    assert_eq!(packet["resolvedBranch"], node["resolvedBranch"]);
    let keys: Vec<&String> = packet.as_object().unwrap().keys().collect();
    let node_keys: Vec<&String> = node.as_object().unwrap().keys().collect();
    assert_eq!(keys, node_keys, "packet key order");
    let (mut ours, mut theirs) = (BTreeSet::new(), BTreeSet::new());
    shape(&packet["renderInput"], "$", &mut ours);
    shape(&node["renderInput"], "$", &mut theirs);
    // Deliberate difference: asset examples are compact pattern references here,
    // without the generator prompts the Node packet still carries.
    let prompts = [".promptTemplate", ".negativePrompt"];
    theirs.retain(|p| !(p.contains(".assetExamples[") && prompts.iter().any(|s| p.ends_with(s))));
    assert_eq!(ours, theirs);
}

fn bad_request(change: impl FnOnce(&mut Value)) -> Value {
    let mut request = golden_cases(&config())
        .into_iter()
        .find(|c| c.name == "anthropic-staged-both-selected-interop-shape")
        .unwrap()
        .request;
    change(&mut request);
    request
}

/// Each bad request is refused through the CLI with exit status 2, every problem
/// named with its JSON path (the whole of each refusal: one snapshot), and no output file.
fn bad_requests_are_refused_with_every_problem_and_nothing_written() {
    type Change = fn(&mut Value);
    let kinds: [(&str, Change); 21] = [
        ("unknown evidence ref", |r| r["evidence"]["selection"]["refs"][0]["id"] = json!("missing-item")),
        ("inaccessible selected item", |r| {
            r["evidence"]["selection"]["refs"] =
                json!([{"kind": "persona", "id": "anthropic-staged-both-selected-interop-shape-persona-locked"}])
        }),
        ("selected-only without refs", |r| r["evidence"]["selection"]["refs"] = json!([])),
        ("screens in the sequence", |r| r["target"]["sequence"][0]["screens"] = json!([{"id": "x"}])),
        ("screens in a neighbour", |r| r["target"]["successor"]["screens"] = json!([])),
        ("previewScreens and aiAssets", |r| {
            r["previewScreens"] = json!([]);
            r["source"]["blueprint"]["aiAssets"] = json!([]);
        }),
        ("storage, provider and media keys", |r| {
            r["target"]["strategy"]["storagePath"] = json!("x");
            r["evidence"]["availableItems"][0]["value"]["firestorePath"] = json!("y");
            r["target"]["strategy"]["providerResponse"] = json!({});
            r["target"]["strategy"]["expectedAnswer"] = json!({});
            r["target"]["themeSummary"]["posterUrl"] = json!("p");
            r["source"]["blueprint"]["screens"][0]["content"]["referenceImages"] = json!([]);
        }),
        ("provider records in the blueprint", |r| {
            r["source"]["blueprint"]["strategicBlock"]["generationModel"] = json!("m")
        }),
        ("generated media URL in a value", |r| {
            r["target"]["themeSummary"]["visualDirection"] = json!("like https://cdn.example.com/hero.png")
        }),
        ("forbidden key in another case", |r| r["source"]["blueprint"]["screens"][0]["PreviewScreens"] = json!([])),
        ("unknown provider", |r| r["provider"] = json!("mistral")),
        ("model outside the allow-list", |r| r["model"] = json!("claude-2")),
        ("maxTokens not a positive integer", |r| r["maxTokens"] = json!(1.5)),
        ("maxTokens past the safe integers", |r| r["maxTokens"] = json!(9_007_199_254_740_992_u64)),
        ("wrong types", |r| {
            r["insertionMode"] = json!("later");
            r["source"]["scope"] = json!("team");
            r["source"]["checksum"] = json!("fnv1a:1234ABCD");
            r["target"]["sequence"] = json!({});
            r["variableMappings"] = json!({});
        }),
        ("mappings without a known action", |r| {
            r["variableMappings"] = json!([{"sourceVariableId": "a", "targetVariableId": "b", "status": "compatible"}, {"action": "rename"}]);
        }),
        ("dataSemantics not restating aiMeta", |r| {
            r["source"]["blueprint"]["screens"][1]["aiMeta"]["variableRealizations"] =
                json!([{"variableId": "main_goal"}]);
            r["source"]["blueprint"]["dataSemantics"]["screens"].as_array_mut().unwrap().pop();
        }),
        ("blueprint members", |r| {
            r["source"]["blueprint"]["strategicBlock"]["taskId"] = json!("t");
            r["source"]["blueprint"]["strategicBlock"]["isFirstBlock"] = json!(true);
            let example = r["source"]["blueprint"]["assetExamples"][0].clone();
            r["source"]["blueprint"]["assetExamples"].as_array_mut().unwrap().push(example);
            r["source"]["blueprint"]["screens"][1]["id"] = json!(" ");
        }),
        // Inputs the reference crashes on get the rule they break.
        ("what crashes the reference: objects for arrays", |r| {
            r["source"]["blueprint"]["assetExamples"] = json!({});
            r["evidence"]["selection"]["refs"] = json!({"kind": "review"});
        }),
        ("what crashes the reference: a null screen", |r| {
            r["source"]["blueprint"]["screens"].as_array_mut().unwrap().insert(0, Value::Null);
        }),
        ("missing parts", |r| {
            let map = r.as_object_mut().unwrap();
            map.remove("target");
            map.remove("maxTokens");
            r["source"].as_object_mut().unwrap().remove("blueprint");
        }),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut transcript = String::new();
    for (i, (kind, change)) in kinds.into_iter().enumerate() {
        let request = dir.path().join(format!("request-{i}.json"));
        std::fs::write(&request, canonical::to_pretty(&bad_request(change))).unwrap();
        let out = dir.path().join(format!("packet-{i}.json"));
        let output: support::Output =
            packetproof(root(), &["export", "--request", request.to_str().unwrap(), "--out", out.to_str().unwrap()])
                .into();
        // A request that breaks a rule of compile::request is exit 1, as the reference's
        // validator exits 1 and as every command fails what breaks a rule.
        assert_eq!(output.code, 1, "{kind}: {}", output.describe());
        assert!(!out.exists(), "{kind}: a packet was written");
        transcript.push_str(&format!("=== {kind}\n{}\n", output.describe()));
    }
    assert_output_snapshot!(text: "export_refusals", transcript, dir.path());
}

fn refusal_is_an_error_listing_findings() {
    let request = bad_request(|r| {
        r["provider"] = json!("nobody");
        r["maxTokens"] = json!(0);
    });
    match compile::compile(&request, &config(), "req.json") {
        Err(packetproof::Error::Failed { file, findings }) => {
            assert_eq!(file, "req.json");
            let paths: Vec<String> = findings.iter().map(|f| f.path.to_string()).collect();
            // The reference's maxTokens rule first, then the allow-list packetproof adds.
            assert_eq!(paths, ["$.maxTokens", "$.provider"]);
            assert!(findings.iter().all(|f| f.check == compile::CHECK));
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
}

fn schema_check_fails_after_a_hand_edit_of_the_snapshot() {
    let project = support::Project::suite(&[]);
    let ok: support::Output = packetproof(project.root(), &["schema", "--check"]).into();
    assert_eq!(ok.code, 0, "{}", ok.describe());
    assert_output_snapshot!("schema_check_holds", ok, project.root());
    let snapshot = project.root().join("references/block-screen-output-schema.json");
    let original = std::fs::read_to_string(&snapshot).unwrap();
    // Parity is of the parsed schema: spacing and a missing final newline are the same JSON.
    for same in [original.replacen("  ", "    ", 1), original.trim_end().to_owned(), original.replace('\n', "\r\n")] {
        std::fs::write(&snapshot, &same).unwrap();
        let held: support::Output = packetproof(project.root(), &["schema", "--check"]).into();
        assert_eq!(held.code, 0, "{}", held.describe());
    }
    let edited = original.replacen("\"mustHave\"", "\"must\"", 1);
    std::fs::write(&snapshot, &edited).unwrap();
    let failed: support::Output = packetproof(project.root(), &["schema", "--check"]).into();
    assert_eq!(failed.code, 1, "{}", failed.describe());
    assert_output_snapshot!("schema_check_hand_edit_0", failed, project.root());
    // A snapshot edited since the last bless (here: never blessed) is never written over.
    let refused: support::Output = packetproof(project.root(), &["schema", "--write"]).into();
    assert_eq!(refused.code, 2, "{}", refused.describe());
    assert!(refused.stderr.contains("never writes over a file you edited"), "{}", refused.describe());
    assert_eq!(std::fs::read_to_string(&snapshot).unwrap(), edited);
    std::fs::remove_file(&snapshot).unwrap();
    let written: support::Output = packetproof(project.root(), &["schema", "--write"]).into();
    assert_eq!(written.code, 0, "{}", written.describe());
    assert_output_snapshot!("schema_write", written, project.root());
    assert_eq!(std::fs::read_to_string(&snapshot).unwrap(), original);
    assert_eq!(packetproof(project.root(), &["schema", "--check"]).status.code(), Some(0));
}

fn bless_writes_the_golden_files_and_never_under_ci() {
    let names = ["google-staged-both-selected", "openai-staged-succ-default"];
    let project = support::Project::suite(&names);
    let refused = project.bin().args(["bless"]).env("CI", "true").output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("never written under CI"));
    assert_eq!(std::fs::read_dir(project.path("golden")).unwrap().count(), 0, "bless wrote under CI");

    let blessed = packetproof(project.root(), &["bless", "google"]);
    assert!(blessed.status.success(), "{}", String::from_utf8_lossy(&blessed.stderr));
    let not_due = "  [packet::regenerates] not applicable: bless writes what the request makes now: there is nothing to regenerate\n";
    assert_eq!(String::from_utf8_lossy(&blessed.stdout), format!("new       google-staged-both-selected\n{not_due}"));
    let request = project.path("fixtures/google-staged-both-selected/request.json");
    let exported = packetproof(project.root(), &["export", "--request", request.to_str().unwrap()]);
    let golden = project.path("golden/google-staged-both-selected");
    assert_eq!(std::fs::read(golden.join("runtime-packet.json")).unwrap(), exported.stdout);
    let packet = canonical::parse(&exported.stdout).unwrap();
    let view = canonical::to_pretty(&provider::agent_request(packet.as_object().unwrap()));
    assert_eq!(std::fs::read_to_string(golden.join("agent-request.json")).unwrap(), view);
    assert!(!project.root().join("golden/openai-staged-succ-default").exists(), "the filter was ignored");
    let none = packetproof(project.root(), &["bless", "no-such-case"]);
    assert_eq!(none.status.code(), Some(2));
}

/// `verify golden` (the README's main job) recompiles each golden case of the
/// corpus: a template edit without re-blessing fails it, naming the case.
fn verify_golden_fails_when_a_template_changed_without_bless() {
    let case = "openai-staged-pred-no-evidence";
    let project = support::Project::suite(&[case]);
    let blessed = packetproof(project.root(), &["bless"]);
    assert!(blessed.status.success(), "{}", String::from_utf8_lossy(&blessed.stderr));
    let golden_arg = project.root().join("golden");
    let verify = || packetproof(project.root(), &["verify", golden_arg.to_str().unwrap()]);
    let ok = verify();
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stdout));
    let template = project.root().join("references/prompts/system.md.j2");
    let text = std::fs::read_to_string(&template).unwrap();
    std::fs::write(&template, text.replacen("# ", "# Edited: ", 1)).unwrap();
    let failed: support::Output = verify().into();
    assert_eq!(failed.code, 1, "{}", failed.describe());
    assert_output_snapshot!("verify_golden_template_changed", failed, project.root());
}

fn refs_may_be_left_out_unless_the_mode_selects() {
    let dir = tempfile::tempdir().unwrap();
    let request = dir.path().join("request.json");
    let compiled = |mode: &str| {
        let value = bad_request(|r| {
            r["evidence"]["selection"] = json!({ "mode": mode });
        });
        std::fs::write(&request, canonical::to_pretty(&value)).unwrap();
        packetproof(root(), &["export", "--request", request.to_str().unwrap()])
    };
    for mode in ["strategy-default", "no-evidence"] {
        let out = compiled(mode);
        assert!(out.status.success(), "{mode}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = compiled("selected-only");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("$.evidence.selection.refs: selected-only evidence requires refs"));
}

fn bless_refuses_negative_cases_and_foreign_suffixes() {
    let out: support::Output = packetproof(root(), &["bless", "neg-packet-checksum"]).into();
    assert_eq!(out.code, 2, "{}", out.describe());
    assert_output_snapshot!("bless_refuses_a_negative_case", out);
    let suffix = root().join("references/gemini-json-suffix.txt");
    let out: support::Output =
        packetproof(root(), &["--google-suffix-file", suffix.to_str().unwrap(), "bless", "zz-none"]).into();
    assert_eq!(out.code, 2, "{}", out.describe());
    assert_output_snapshot!("bless_refuses_a_google_suffix", out);
    // After the command, bless does not even offer it (a usage error).
    let out: support::Output =
        packetproof(root(), &["bless", "--google-suffix-file", suffix.to_str().unwrap(), "zz-none"]).into();
    assert_eq!(out.code, 2, "{}", out.describe());
    assert_output_snapshot!("bless_usage_error", out);
}

/// Empty, `0` and `false` mean "not CI" (the insta convention); an empty root is an error.
fn the_environment_is_parsed_strictly() {
    let project = support::Project::suite(&["google-staged-both-selected"]);
    for local in ["", "0", "false"] {
        let out = project.bin().args(["bless", "google"]).env("CI", local).output().unwrap();
        assert!(out.status.success(), "CI={local:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = project.bin().args(["schema", "--check"]).env("PACKETPROOF_ROOT", "").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("PACKETPROOF_ROOT is set but empty"));
}

/// What the reference accepts, export accepts: open objects (unknown keys are
/// ignored and never rendered), action-style mappings, a same-value number
/// spelling of maxTokens, free summary fields, a checksum that stringifies right.
fn accepts_what_the_reference_accepts() {
    let request = bad_request(|r| {
        r["requestedBy"] = json!("operator-17");
        r["source"]["blueprint"]["screens"][0]["aiMeta"]["motivationSpec"] = json!({"class": "anything"});
        r["target"]["predecessor"]["screensCount"] = json!("2");
        r["target"]["sequence"][0]["order"] = json!(-1);
        r["evidence"]["selection"]["note"] = json!("picked by hand");
        r["evidence"]["availableItems"][1]["accessible"] = json!("yes");
        r["variableMappings"] = json!([
            {"action": "bind", "sourceVariableId": "main_goal", "targetVariableId": "goal"},
            {"action": "create", "sourceVariableId": "cups", "targetVariable": {"id": "glasses", "type": "number"}},
            {"action": "drop", "sourceVariableId": "tone"},
            {"action": "incompatible", "sourceVariableId": "streak", "resolution": "drop"}
        ]);
        r["source"]["checksum"] = json!(["fnv1a:0badc0de"]);
    });
    let mut text = canonical::to_pretty(&request);
    text = text.replace("\"maxTokens\": 64000", "\"maxTokens\": 6.4e+4");
    assert!(text.contains("6.4e+4"));
    let request = canonical::parse(text.as_bytes()).unwrap();
    let packet = compile::compile(&request, &config(), "lenient.json").unwrap();
    assert_eq!(packet["maxTokens"], json!(64000));
    assert_eq!(packet["resolvedBranch"]["hasVariableConflicts"], json!(true));
    let texts = strings(&packet);
    assert!(!texts.iter().any(|t| t.contains("operator-17") || t.contains("picked by hand")), "unknown keys rendered");
}

/// Non-Google packets carry the vendored Builder schema itself as outputSchema,
/// name and description included; Google packets carry none.
fn output_schema_is_the_vendored_builder_schema() {
    let config = config();
    let builder = canonical::parse(&config.builder_schema_bytes().unwrap().1).unwrap();
    assert_eq!(builder["name"], json!("submit_library_block_adaptation"));
    let mut seen = 0;
    for case in golden_cases(&config) {
        let packet = compile::compile(&case.request, &config, &case.name).unwrap();
        if packet["provider"] == "google" {
            assert!(packet.get("outputSchema").is_none(), "{}", case.name);
        } else {
            assert!(packet["outputSchema"] == builder, "{}: outputSchema is not the Builder schema", case.name);
            seen += 1;
        }
    }
    assert!(seen > 5, "only {seen} non-Google cases");
}

/// The vendored upstream is byte for byte the reference system's Builder schema copy.
fn interop_vendored_builder_schema_is_the_reference_copy() {
    let reference = std::fs::read(interop_dir().join("block-screen-output-schema.json")).unwrap();
    assert!(*config().builder_schema_bytes().unwrap().1 == *reference, "vendored copy drifted from the reference's");
}

/// The reference's own valid agent output validates against the snapshot packets carry.
fn interop_agent_output_validates_against_the_snapshot() {
    let output = canonical::parse(&std::fs::read(interop_dir().join("agent-output.json")).unwrap()).unwrap();
    let snapshot = packetproof::schema::snapshot(&config()).unwrap();
    let validator = jsonschema::validator_for(&snapshot["schema"]).unwrap();
    let errors: Vec<String> = validator.iter_errors(&output).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

pub fn trials() -> Vec<Trial> {
    let mut trials = trials![
        the_environment_is_parsed_strictly,
        export_is_deterministic_and_matches_what_bless_writes,
        golden_packets_hold_and_agent_requests_follow_them,
        excluded_text_never_reaches_a_packet,
        excluded_text_covers_unresolved_evidence_and_asset_prompts,
        bad_requests_are_refused_with_every_problem_and_nothing_written,
        refusal_is_an_error_listing_findings,
        schema_check_fails_after_a_hand_edit_of_the_snapshot,
        bless_writes_the_golden_files_and_never_under_ci,
        verify_golden_fails_when_a_template_changed_without_bless,
        refs_may_be_left_out_unless_the_mode_selects,
        bless_refuses_negative_cases_and_foreign_suffixes,
        accepts_what_the_reference_accepts,
        output_schema_is_the_vendored_builder_schema,
    ];
    trials.extend(interop_trials![
        interop_compile_input_resolves_like_the_node_packet,
        interop_vendored_builder_schema_is_the_reference_copy,
        interop_agent_output_validates_against_the_snapshot,
    ]);
    trials
}
