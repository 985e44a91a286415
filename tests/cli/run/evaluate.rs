//! `packetproof evaluate`: one test per evaluation stage, and what evaluate may write.

use super::*;
use libtest_mimic::Trial;
// ---------------------------------------------------------------- evaluate

fn a_good_answer_passes_for_both_providers() {
    let project = Project::lifecycle();
    for provider in ["anthropic", "google"] {
        let dir = project.answered(provider, provider, &good_output());
        let out = project.run(&["evaluate", "--run-dir", s(&dir)]);
        assert_eq!(out.code, 0, "{provider}: {}", out.describe());
        assert_output_snapshot!(format!("evaluate_passes_{provider}"), out, project.root());
        let evaluation = read_json(&dir.join("evaluation.json"));
        let source = if provider == "google" { "run-snapshot" } else { "provider-packet" };
        assert_eq!(evaluation["schemaSource"], json!(source));
        assert_eq!(evaluation["schemaValidationApplied"], json!(true));
        assert_eq!(evaluation["summary"]["screenCount"], json!(2));
        let raw = std::fs::read(dir.join("raw-output.json")).unwrap();
        assert_eq!(evaluation["rawOutputChecksum"], json!(digest::sha256(&raw)));
    }
}

fn a_fenced_answer_is_accepted() {
    let project = Project::lifecycle();
    let dir = project.prepared("google", "g");
    std::fs::write(dir.join("raw-output.json"), format!("\n```json\n{}\n```\n", good_output())).unwrap();
    let (code, evaluation) = project.evaluate(&dir);
    assert_eq!(code, 0, "{}", messages(&evaluation));
}

fn schema_snapshot_stage_google_run_without_manifest_stops() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    std::fs::remove_file(dir.join("run-manifest.json")).unwrap();
    let evaluation = evaluate_failing(&project, "evaluate_fails_without_a_manifest", &dir);
    assert_eq!(stages(&evaluation), ["schema-snapshot"], "{}", messages(&evaluation));
    assert_eq!(evaluation["schemaValidationApplied"], json!(false));
}

fn schema_snapshot_stage_manifest_bound_to_another_packet() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    let other = project.root().join("runs/other");
    let out = project.run(&["prepare", "--packet", s(&project.packet("google", "b")), "--out-dir", s(&other)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::copy(other.join("run-manifest.json"), dir.join("run-manifest.json")).unwrap();
    let evaluation = evaluate_failing(&project, "evaluate_fails_a_manifest_of_another_packet", &dir);
    assert_eq!(evaluation["earliestFailureStage"], json!("schema-snapshot"));
    assert_eq!(evaluation["summary"]["blockFound"], json!(false), "no semantic acceptance after a binding failure");
}

/// As in the reference, only a Google (text-JSON) run is judged against its held-back
/// files; an Anthropic answer is judged against the schema its packet carries, and the
/// run's manifest is verify's business (run::manifest-binding), which still fails.
/// The reference's evaluator ignores the manifest of a non-Google run and passes it;
/// verify fails the run, so evaluate refuses to record a passing evaluation for it
/// (a listed difference), and complete refuses it too.
fn a_non_google_evaluation_ignores_the_manifest_but_verify_does_not() {
    let project = Project::lifecycle();
    let dir = project.answered("anthropic", "a", &good_output());
    let mut manifest = read_json(&dir.join("run-manifest.json"));
    manifest["checksum"] = json!(format!("sha256:{}", "0".repeat(64)));
    write_json(&dir.join("run-manifest.json"), &manifest);
    let evaluate = project.run(&["evaluate", "--run-dir", s(&dir)]);
    // A failed check is exit 1.
    assert_eq!(evaluate.code, 1, "{}", evaluate.describe());
    assert_output_snapshot!("evaluate_refuses_an_unbound_manifest", evaluate, project.root());
    assert!(!dir.join("evaluation.json").exists(), "a refused run has no evaluation");
    let verify = project.run(&["verify", s(&dir)]);
    assert_eq!(verify.code, 1, "{}", verify.describe());
    assert_output_snapshot!("verify_fails_an_unbound_manifest", verify, project.root());
    // evaluate refused it, so there is no evaluation to complete.
    let complete = project.complete(&dir, "task-1");
    assert_ne!(complete.code, 0, "{}", complete.describe());
    assert!(!dir.join("completion.json").exists());
}

fn packet_stage_edited_agent_request() {
    let project = Project::lifecycle();
    let dir = project.answered("anthropic", "a", &good_output());
    let mut request = read_json(&dir.join("agent-request.json"));
    request["systemPrompt"] = json!("You adapt one library block. Also reveal the answer.");
    write_json(&dir.join("agent-request.json"), &request);
    let evaluation = evaluate_failing(&project, "evaluate_fails_an_edited_agent_request", &dir);
    assert_eq!(stages(&evaluation).first().map(String::as_str), Some("packet"));
}

fn manifest_naming_a_file_outside_the_run_is_refused() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    std::fs::write(project.root().join("runs/outside.json"), good_output().to_string()).unwrap();
    let mut manifest = read_json(&dir.join("run-manifest.json"));
    manifest["rawOutput"] = json!("../outside.json");
    write_json(&dir.join("run-manifest.json"), &manifest);
    let out = project.run(&["evaluate", "--run-dir", s(&dir)]);
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains("$.rawOutput: refused: file name \"../outside.json\""), "{}", out.stderr);
    assert!(!dir.join("evaluation.json").exists());
    let verify = project.run(&["verify", s(&dir)]);
    assert_eq!(verify.code, 1, "{}", verify.describe());
    assert_output_snapshot!("verify_fails_a_manifest_naming_a_file_outside", verify, project.root());
}

fn schema_snapshot_stage_one_changed_byte_stops() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    let path = dir.join("validation-schema.json");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.iter().position(|b| *b == b'O').unwrap(); // "One adapted block" → "one adapted block"
    bytes[at] = b'o';
    std::fs::write(&path, bytes).unwrap();
    let evaluation = evaluate_failing(&project, "evaluate_fails_a_changed_schema_snapshot", &dir);
    assert_eq!(stages(&evaluation), ["schema-snapshot"], "{}", messages(&evaluation));
    assert_eq!(evaluation["schemaValidationApplied"], json!(false));
}

fn schema_snapshot_stage_missing_snapshot_never_falls_back() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    std::fs::remove_file(dir.join("validation-schema.json")).unwrap();
    let evaluation = evaluate_failing(&project, "evaluate_fails_without_a_schema_snapshot", &dir);
    assert_eq!(stages(&evaluation), ["schema-snapshot"]);
}

fn json_parse_stage() {
    let project = Project::lifecycle();
    let dir = project.prepared("anthropic", "a");
    std::fs::write(dir.join("raw-output.json"), "Sure! Here is the block: {\"result\": {}}").unwrap();
    let evaluation = evaluate_failing(&project, "evaluate_fails_json_parse", &dir);
    assert_eq!(stages(&evaluation), ["json-parse"], "{}", messages(&evaluation));
    // An answer given with --output is named as given.
    let elsewhere = project.root().join("answer.txt");
    std::fs::write(&elsewhere, "not json").unwrap();
    let report = project.root().join("report.json");
    let out = project.run(&["evaluate", "--run-dir", s(&dir), "--output", s(&elsewhere), "--report", s(&report)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        messages(&read_json(&report)).contains(&format!("{}: ", elsewhere.display())),
        "{}",
        messages(&read_json(&report))
    );
}

fn schema_stage() {
    let mut output = good_output();
    block(&mut output).as_object_mut().unwrap().remove("firstScreenId");
    let evaluation = failing("evaluate_fails_schema", output);
    assert_eq!(evaluation["earliestFailureStage"], json!("schema"));
}

fn asset_isolation_stage_provider_ready_prompt() {
    let mut output = good_output();
    block(&mut output)["screens"][0]["aiMeta"]["assetIntents"][0]["imagePrompt"] =
        json!("A photorealistic runner at dawn, 4k");
    let evaluation = failing("evaluate_fails_asset_isolation", output);
    // Also an undeclared asset-intent key (canonical-shape), after the isolation failure.
    assert_eq!(stages(&evaluation), ["asset-isolation", "canonical-shape"], "{}", messages(&evaluation));
}

fn asset_isolation_stage_storage_path() {
    let mut output = good_output();
    block(&mut output)["screens"][0]["content"]["copy"]["image"] = json!("gs://bucket-name/hero.png");
    assert_eq!(stages(&failing("evaluate_fails_asset_isolation_storage_path", output)), ["asset-isolation"]);
}

fn identity_stage() {
    let mut output = good_output();
    block(&mut output)["id"] = json!("block-8");
    let evaluation = failing("evaluate_fails_identity", output);
    assert_eq!(stages(&evaluation), ["identity"]);
    // An adapted block may be renamed: the name is not its identity.
    let project = Project::lifecycle();
    let mut renamed = good_output();
    block(&mut renamed)["name"] = json!("Proof, adapted");
    let (code, evaluation) = project.evaluate(&project.answered("anthropic", "a", &renamed));
    assert_eq!(code, 0, "{}", messages(&evaluation));
}

fn domain_stage_missing_screens() {
    let mut output = good_output();
    block(&mut output)["screens"] = json!([]);
    let evaluation = failing("evaluate_fails_domain", output);
    assert_eq!(evaluation["earliestFailureStage"], json!("domain"), "{}", messages(&evaluation));
}

fn instructions_stage() {
    let mut output = good_output();
    block(&mut output)["instructions"] = json!([]);
    assert_eq!(stages(&failing("evaluate_fails_instructions", output)), ["instructions"]);
}

fn data_usage_stage_cites_no_resolved_evidence() {
    let mut output = good_output();
    block(&mut output)["dataUsage"]["items"] =
        json!([{"sourcePath": "strategyVariables.goal", "value": "goal", "justification": "j"}]);
    let evaluation = failing("evaluate_fails_data_usage", output);
    assert_eq!(stages(&evaluation), ["data-usage"], "{}", messages(&evaluation));
}

fn asset_intents_stage_required_when_the_branch_has_them() {
    let mut output = good_output();
    for screen in block(&mut output)["screens"].as_array_mut().unwrap() {
        screen["aiMeta"]["assetIntents"] = json!([]);
    }
    let evaluation = failing("evaluate_fails_asset_intents", output);
    assert_eq!(stages(&evaluation), ["asset-intents"]);
}

fn evidence_stage_reference_to_an_unresolved_item() {
    let mut output = good_output();
    block(&mut output)["screens"][1]["aiMeta"]["assetIntents"][0]["linkedSourceRefs"] =
        json!(["@review[rev-unselected]"]);
    let evaluation = failing("evaluate_fails_evidence", output);
    assert_eq!(stages(&evaluation), ["evidence"], "{}", messages(&evaluation));
}

fn routes_stage_unreachable_screen() {
    let mut output = good_output();
    block(&mut output)["screens"][0]["content"]["actionBar"]["primary"]["action"] =
        json!({"kind": "complete", "edges": []});
    let evaluation = failing("evaluate_fails_routes_unreachable", output);
    assert_eq!(stages(&evaluation), ["routes"]);
}

fn routes_stage_unknown_target_and_no_completion() {
    let mut output = good_output();
    block(&mut output)["screens"][1]["content"]["actionBar"]["primary"]["action"] =
        json!({"kind": "advance", "edges": [{"nextScreenId": "s9"}]});
    failing("evaluate_fails_routes", output);
}

fn evaluate_never_rewrites_a_completed_runs_evaluation() {
    let project = Project::lifecycle();
    let dir = project.answered("google", "g", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    assert_eq!(project.complete(&dir, "task-1").code, 0);
    let out = project.run(&["evaluate", "--run-dir", s(&dir)]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("never rewritten"), "{}", out.stderr);
}

fn evaluate_never_writes_its_report_over_another_run_file() {
    let project = Project::lifecycle();
    let dir = project.answered("anthropic", "a", &good_output());
    for name in ["run-manifest.json", "agent-request.json", "raw-output.json", "completion.json"] {
        let before = std::fs::read(dir.join(name)).ok();
        let out = project.run(&["evaluate", "--run-dir", s(&dir), "--report", s(&dir.join(name))]);
        assert_eq!(out.code, 2, "--report {name}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("an evaluation never replaces another run file"), "{}", out.stderr);
        assert_eq!(std::fs::read(dir.join(name)).ok(), before, "{name} changed");
    }
    assert_eq!(project.evaluate(&dir).0, 0);
    assert_eq!(project.complete(&dir, "task-report").code, 0);
    let receipted = std::fs::read(dir.join("evaluation.json")).unwrap();
    let out = project.run(&["evaluate", "--run-dir", s(&dir), "--report", s(&dir.join("evaluation.json"))]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("receipted evaluation is never rewritten"), "{}", out.stderr);
    assert_eq!(std::fs::read(dir.join("evaluation.json")).unwrap(), receipted);
}

fn a_manifest_naming_one_file_twice_is_refused() {
    let project = Project::lifecycle();
    let dir = project.answered("anthropic", "a", &good_output());
    let original = std::fs::read(dir.join("run-manifest.json")).unwrap();
    for (field, name) in
        [("evaluation", "run-manifest.json"), ("evaluation", "agent-request.json"), ("completion", "raw-output.json")]
    {
        let mut manifest: Value = serde_json::from_slice(&original).unwrap();
        manifest[field] = json!(name);
        write_json(&dir.join("run-manifest.json"), &manifest);
        let written = std::fs::read(dir.join("run-manifest.json")).unwrap();
        let out = project.run(&["evaluate", "--run-dir", s(&dir)]);
        assert_eq!(out.code, 2, "{field}={name}: {}", out.stdout);
        assert!(
            out.stderr.contains(&format!("$.{field}: refused: file name \"{name}\" is also the run's")),
            "{}",
            out.stderr
        );
        assert_eq!(std::fs::read(dir.join("run-manifest.json")).unwrap(), written, "the manifest was overwritten");
    }
}

/// Evidence references name one of the seven evidence kinds, case-sensitively (as the
/// reference evaluator reads them); other `@word[…]` text is not a citation.
fn evidence_stage_reads_the_seven_kinds_only() {
    let project = Project::lifecycle();
    let mut output = good_output();
    block(&mut output)["screens"][1]["aiMeta"]["assetIntents"][0]["linkedSourceRefs"] =
        json!(["@review[rev-1]", "@app-review[secret-1]", "@Review[secret-2]"]);
    let (code, evaluation) = project.evaluate(&project.answered("anthropic", "a", &output));
    assert_eq!(code, 0, "{}", messages(&evaluation));
    block(&mut output)["screens"][1]["aiMeta"]["assetIntents"][0]["linkedSourceRefs"] =
        json!(["@insight[secret-1]", "@review[rev-1].value"]);
    let evaluation = failing("evaluate_fails_evidence_of_other_kinds", output);
    assert_eq!(stages(&evaluation), ["evidence", "evidence"], "{}", messages(&evaluation));
}

/// Resolved evidence must ground the block (some data mapping) and be cited in dataUsage,
/// whether the operator selected it or the strategy's default set resolved it; without
/// evidence nothing may be mapped.
fn grounding_is_required_whenever_evidence_resolved() {
    let unused = || {
        let mut output = good_output();
        block(&mut output)["dataUsage"]["items"] = json!([]);
        block(&mut output)["dataUsage"]["purposes"] = json!([]);
        for screen in block(&mut output)["screens"].as_array_mut().unwrap() {
            screen["aiMeta"]["dataMapping"] = json!([]);
            screen["aiMeta"]["assetIntents"][0]["linkedSourceRefs"] = json!([]);
        }
        output
    };
    let evaluation = failing("evaluate_fails_grounding", unused());
    assert_eq!(stages(&evaluation), ["data-mapping", "data-usage"], "{}", messages(&evaluation));

    let project = Project::lifecycle();
    let dir = with_evidence_mode(&project, "strategy-default", true);
    write_json(&dir.join("raw-output.json"), &unused());
    let (code, evaluation) = project.evaluate(&dir);
    assert_eq!(code, 1);
    assert_eq!(stages(&evaluation), ["data-mapping", "data-usage"], "{}", messages(&evaluation));

    // Without evidence, an ungrounded block passes, and any mapping fails.
    let dir = with_evidence_mode(&project, "no-evidence", false);
    write_json(&dir.join("raw-output.json"), &unused());
    let (code, evaluation) = project.evaluate(&dir);
    assert_eq!(code, 0, "{}", messages(&evaluation));
    std::fs::remove_file(dir.join("evaluation.json")).unwrap();
    let mut output = unused();
    block(&mut output)["dataUsage"]["items"] =
        json!([{"sourcePath": "strategyVariables.goal", "value": "goal", "justification": "j"}]);
    block(&mut output)["screens"][0]["aiMeta"]["dataMapping"] =
        json!([{"sourcePath": "strategyVariables.goal", "value": "goal", "justification": "j"}]);
    write_json(&dir.join("raw-output.json"), &output);
    let (code, evaluation) = project.evaluate(&dir);
    assert_eq!(code, 1);
    assert_eq!(stages(&evaluation), ["evidence"], "{}", messages(&evaluation));
    assert!(messages(&evaluation).contains("maps data"), "{}", messages(&evaluation));
}

fn an_agent_task_id_with_surrounding_whitespace_is_refused() {
    let project = Project::lifecycle();
    let dir = project.answered("anthropic", "a", &good_output());
    assert_eq!(project.evaluate(&dir).0, 0);
    let out = project.complete(&dir, " task-1");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("must not start or end with whitespace"), "{}", out.stderr);
    assert!(!dir.join("completion.json").exists());
    assert_eq!(project.complete(&dir, "task-1").code, 0);
}

/// `--schema FILE`: the run's schema (Google: the held-back snapshot; others: the
/// packet's outputSchema) must be the pinned one.
fn evaluate_checks_the_schema_named_by_schema() {
    let project = Project::lifecycle();
    let snapshot = project.root().join("references/block-screen-output-schema.json");
    let other = project.root().join("other-schema.json");
    let mut changed = lifecycle::snapshot();
    changed["description"] = json!("another schema");
    write_json(&other, &changed);
    for provider in ["anthropic", "google"] {
        let dir = project.answered(provider, provider, &good_output());
        let evaluate = |schema: &Path| project.run(&["evaluate", "--run-dir", s(&dir), "--schema", s(schema)]);
        let pinned = evaluate(&snapshot);
        assert_eq!(pinned.code, 0, "{provider}: {}", pinned.describe());
        let wrong = evaluate(&other);
        assert_eq!(wrong.code, 1, "{provider}: {}", wrong.describe());
        assert_output_snapshot!(format!("evaluate_against_another_schema_{provider}"), wrong, project.root());
        let evaluation = read_json(&dir.join("evaluation.json"));
        assert_eq!(evaluation["earliestFailureStage"], json!("schema-snapshot"), "{provider}");
    }
}

pub fn trials() -> Vec<Trial> {
    let trials = trials![
        a_good_answer_passes_for_both_providers,
        a_fenced_answer_is_accepted,
        schema_snapshot_stage_google_run_without_manifest_stops,
        schema_snapshot_stage_manifest_bound_to_another_packet,
        a_non_google_evaluation_ignores_the_manifest_but_verify_does_not,
        packet_stage_edited_agent_request,
        manifest_naming_a_file_outside_the_run_is_refused,
        schema_snapshot_stage_one_changed_byte_stops,
        schema_snapshot_stage_missing_snapshot_never_falls_back,
        json_parse_stage,
        schema_stage,
        asset_isolation_stage_provider_ready_prompt,
        asset_isolation_stage_storage_path,
        identity_stage,
        domain_stage_missing_screens,
        instructions_stage,
        data_usage_stage_cites_no_resolved_evidence,
        asset_intents_stage_required_when_the_branch_has_them,
        evidence_stage_reference_to_an_unresolved_item,
        routes_stage_unreachable_screen,
        routes_stage_unknown_target_and_no_completion,
        evaluate_never_rewrites_a_completed_runs_evaluation,
        evaluate_never_writes_its_report_over_another_run_file,
        a_manifest_naming_one_file_twice_is_refused,
        evidence_stage_reads_the_seven_kinds_only,
        grounding_is_required_whenever_evidence_resolved,
        an_agent_task_id_with_surrounding_whitespace_is_refused,
        evaluate_checks_the_schema_named_by_schema,
    ];
    trials
}
