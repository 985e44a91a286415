//! The self-test's shortcuts change no verdict: the damaged packets are the ones a
//! fresh sealed copy would be, and a run damaged in memory is judged as the same
//! damage on disk.

use super::tests::{golden, suite};
use super::*;
use crate::judge::fixture_run::assemble_run;

/// The self-test judges the very packets a fresh copy sealed whole would be, key
/// order included: one working copy restored member by member, and hashes
/// resumed from the first changed member, change no verdict.
#[test]
fn every_damaged_packet_is_the_one_a_fresh_copy_would_be() {
    let (_dir, config, _) = suite();
    for case in crate::corpus::cases(&config).unwrap() {
        let golden = golden(&case, &config);
        let sealer = digest::incremental::Sealer::new(&golden);
        let mut bench = workbench::Workbench::new(&golden);
        for mutation in packet_mutations(&golden, &case.request, &config) {
            let mut fresh = golden.clone();
            (mutation.edit)(&mut fresh);
            let damaged = bench.packet();
            (mutation.edit)(damaged);
            if mutation.rehash {
                digest::seal(&mut fresh);
                sealer.seal(damaged);
            }
            let shown = |p: &Map<String, Value>| serde_json::to_string(p).unwrap();
            assert_eq!(shown(damaged), shown(&fresh), "{}: {}", case.name, mutation.name);
            for check in [PacketCheck::Checksum, PacketCheck::ExactInputHash] {
                let (key, whole) = match check {
                    PacketCheck::Checksum => ("checksum", digest::packet_checksum(&fresh)),
                    _ => ("exactInputHash", digest::exact_input_hash(&fresh)),
                };
                let resumed =
                    if key == "checksum" { sealer.checksum(damaged) } else { sealer.exact_input_hash(damaged) };
                assert_eq!(resumed, whole, "{}: {} ({key})", case.name, mutation.name);
            }
            bench.restore();
        }
    }
}

/// A run damaged in memory gets the findings the same damage written to a copy gets.
#[test]
fn damage_in_memory_is_judged_as_damage_on_disk() {
    let (_dir, config, case) = suite();
    let run = assemble_run(&case, &config, Arc::new(crate::judge::Memo::new(&config))).unwrap();
    let intact = crate::run::Run::open(&run.dir, config.settings()).unwrap();
    type Damage = fn(&mut Vec<u8>);
    let edits: [(&str, Damage); 4] = [
        ("validation-schema.json", |b| b[10] ^= 1),
        ("run-manifest.json", |b| edit_json(b, |m| m["exactInputHash"] = json!("sha256:x"))),
        ("agent-request.json", |b| edit_json(b, |m| m["renderInput"] = json!({}))),
        ("raw-output.json", |b| b.extend_from_slice(b"\n")),
    ];
    for (file, edit) in edits {
        let mut bytes = std::fs::read(run.dir.join(file)).unwrap();
        edit(&mut bytes);
        let copy = run.copy().unwrap();
        std::fs::write(copy.dir.join(file), &bytes).unwrap();
        let damaged = intact.with_file(file, bytes, config.settings()).unwrap();
        for check in RunCheck::ALL {
            let on_disk = dispatch::on_run(*check, &copy.dir, Some(&run.packet), &[], &config);
            let in_memory = dispatch::on_opened(*check, &run.dir, Ok(&damaged), Some(&run.packet), &[], &config);
            let messages = |f: &[Finding]| {
                f.iter().map(|f| f.message.replace(&*copy.dir.to_string_lossy(), "RUN")).collect::<Vec<_>>()
            };
            let memory = |f: &[Finding]| {
                f.iter().map(|f| f.message.replace(&*run.dir.to_string_lossy(), "RUN")).collect::<Vec<_>>()
            };
            assert_eq!(memory(&in_memory), messages(&on_disk), "{file}: {check}");
            assert_eq!(in_memory.is_empty(), on_disk.is_empty());
        }
    }
}

/// `branch_truth::means_the_same` as it was first written: both packets copied,
/// their checksums and a blank operatorInstruction removed, the copies compared.
fn means_the_same_by_copies(golden: &Map<String, Value>, mutated: &Map<String, Value>) -> bool {
    let read = |packet: &Map<String, Value>| {
        let mut packet = packet.clone();
        packet.remove("checksum");
        if let Some(Value::Object(input)) = packet.get_mut("renderInput") {
            if input.get("operatorInstruction").and_then(Value::as_str).is_some_and(|i| i.trim().is_empty()) {
                input.shift_remove("operatorInstruction");
            }
        }
        packet
    };
    crate::numbers::same_map(&read(golden), &read(mutated))
}

/// Whether a mutation leaves the packet meaning the same is decided in place as the
/// copies decided it: for every mutation of every fixture of the project's corpus and
/// of an `init` suite, and for edits made to sit at the boundary (a blank, a blank of
/// spaces and a non-blank instruction, one that is not a string, a checksum alone, a
/// number spelled another way, a renderInput that is not an object).
#[test]
fn a_mutation_means_the_same_as_the_copies_said() {
    let (_dir, init, _) = suite();
    let project = Invocation::from(crate::Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap());
    type Damage = fn(&mut Map<String, Value>);
    let boundary: [Damage; 9] = [
        |p| p["renderInput"]["operatorInstruction"] = json!(""),
        |p| p["renderInput"]["operatorInstruction"] = json!(" \n "),
        |p| p["renderInput"]["operatorInstruction"] = json!("Use the brand voice."),
        |p| p["renderInput"]["operatorInstruction"] = json!(null),
        |p| p["checksum"] = json!("sha256:other"),
        |p| p["attempt"] = json!(1.0),
        |p| p["renderInput"] = json!("text"),
        |p| {
            p.remove("checksum");
        },
        |p| {
            p["renderInput"].as_object_mut().unwrap().shift_remove("operatorInstruction");
        },
    ];
    let (mut same, mut compared) = (0, 0);
    for config in [&init, &project] {
        for case in crate::corpus::cases(config).unwrap().iter().filter(|c| c.expect.is_none()) {
            let golden = golden(case, config);
            let mut variants: Vec<Map<String, Value>> = Vec::new();
            for damage in boundary {
                let mut damaged = golden.clone();
                damage(&mut damaged);
                variants.push(damaged.clone());
                // The same damage on a golden packet that has a blank instruction of its own.
                let mut blank = golden.clone();
                blank["renderInput"]["operatorInstruction"] = json!("  ");
                variants.push(blank.clone());
                damage(&mut blank);
                variants.push(blank);
            }
            for mutation in packet_mutations(&golden, &case.request, config) {
                let mut damaged = golden.clone();
                (mutation.edit)(&mut damaged);
                if mutation.rehash {
                    digest::seal(&mut damaged);
                }
                variants.push(damaged);
            }
            for damaged in &variants {
                for (a, b) in [(&golden, damaged), (damaged, &golden)] {
                    let by_copies = means_the_same_by_copies(a, b);
                    assert_eq!(branch_truth::means_the_same(a, b).is_some(), by_copies, "{}: {b:?}", case.name);
                    same += usize::from(by_copies);
                    compared += 1;
                }
            }
        }
    }
    // Both answers occurred: the comparison can tell the two apart.
    assert!(same > 0 && same < compared, "{same} of {compared}");
}

/// Each case with the packets to judge of it.
type CasePackets = Vec<(Case, Vec<Value>)>;

/// The golden packet of every positive fixture of `config`, a copy of it in another
/// key order and its damaged copies (every `keep`-th of them: judging them all, for
/// every fixture of the project's corpus, takes minutes in a debug build).
fn packets_to_judge(config: &Invocation, keep: usize) -> CasePackets {
    let cases = crate::corpus::cases(config).unwrap().into_iter().filter(|c| c.expect.is_none());
    cases
        .map(|case| {
            let golden = golden(&case, config);
            let mut reordered: Map<String, Value> = golden.clone().into_iter().rev().collect();
            let input = golden["renderInput"].as_object().unwrap().clone();
            reordered["renderInput"] = Value::Object(input.into_iter().rev().collect());
            let mut packets = vec![Value::Object(golden.clone()), Value::Object(reordered)];
            for mutation in packet_mutations(&golden, &case.request, config).into_iter().step_by(keep) {
                let mut damaged = golden.clone();
                (mutation.edit)(&mut damaged);
                if mutation.rehash {
                    digest::seal(&mut damaged);
                }
                packets.push(Value::Object(damaged));
            }
            (case, packets)
        })
        .collect()
}

/// Every damaged copy of the `init` suite's fixtures, every fifth of the project's.
fn suites_to_judge() -> (tempfile::TempDir, Vec<(Invocation, CasePackets)>) {
    let (dir, init, _) = suite();
    let project = Invocation::from(crate::Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap());
    let (init_packets, project_packets) = (packets_to_judge(&init, 1), packets_to_judge(&project, 5));
    (dir, vec![(init, init_packets), (project, project_packets)])
}

/// The packet rules the memo keeps read the packet alone: with its request at hand
/// or without, each finds the same. (The gate shares their findings between a
/// fixture's trials, which have the request, and its run's steps, which do not.)
#[test]
fn a_rule_that_reads_the_packet_alone_finds_the_same_with_its_request() {
    let (_dir, suites) = suites_to_judge();
    let rules: Vec<PacketCheck> =
        PacketCheck::ALL.iter().copied().filter(|c| crate::judge::memo::reads_the_packet_alone((*c).into())).collect();
    assert!(rules.len() >= 5 && !rules.contains(&PacketCheck::Regenerates), "{rules:?}");
    let mut failing = 0;
    for (config, cases) in &suites {
        for (case, packets) in cases {
            for packet in packets {
                for rule in &rules {
                    let alone = dispatch::on_packet(*rule, packet, None, config).unwrap().findings;
                    let with_request = dispatch::on_packet(*rule, packet, Some(Origin::Case(case)), config);
                    assert_eq!(alone, with_request.unwrap().findings, "{}: {rule}", case.name);
                    failing += usize::from(!alone.is_empty());
                }
            }
        }
    }
    assert!(failing > 0, "the damaged packets fail some rule");
}

/// A memo asked in any order, for any packet, at any step, gives what judging afresh
/// gives (findings, the rules that ran and those skipped, with why); asked under
/// other settings it judges under those.
#[test]
fn a_memo_of_the_packet_rules_changes_no_verdict() {
    let (_dir, suites) = suites_to_judge();
    let steps = [Step::Prepare, Step::Evaluate, Step::Complete, Step::Verify, Step::Test];
    let shown = |o: &crate::Outcome| format!("{:?} {:?} {:?}", o.findings, o.ran, o.skipped);
    for (config, cases) in &suites {
        let memo = crate::judge::Memo::new(config);
        let warn = crate::config::Policy::Warn;
        let policy = crate::CommandPolicy { asset_example_prompts: Some(warn), ..config.policy() };
        let warn = Invocation::new(config.settings().clone(), policy);
        for (case, packets) in cases {
            // The golden packet and its reordered copy asked again last: the memo answers them.
            for (i, packet) in packets.iter().chain(&packets[..2]).enumerate() {
                let step = steps[i % steps.len()];
                let fresh = crate::judge::packet(packet, None, config, step);
                let kept = crate::judge::packet_memo(packet, config, step, Some(&memo));
                assert_eq!(shown(&kept), shown(&fresh), "{}: packet {i} at {step:?}", case.name);
            }
            for packet in &packets[..2] {
                let fresh = crate::judge::packet(packet, None, &warn, Step::Test);
                assert_eq!(shown(&crate::judge::packet_memo(packet, &warn, Step::Test, Some(&memo))), shown(&fresh));
                let origin = Some(Origin::Case(case));
                for rule in PacketCheck::ALL {
                    let fresh = dispatch::on_packet(*rule, packet, origin, config).map_err(|e| e.to_string());
                    let kept = memo.on_packet(*rule, packet, origin, config);
                    let findings = |c: Result<crate::check::Checked, String>| c.map(|c| c.findings);
                    assert_eq!(findings(kept), findings(fresh), "{}: {rule}", case.name);
                }
            }
        }
    }
}

/// Compiled once per fixture, the request judges as compiling it for each check did:
/// `packet::regenerates` and branch isolation find the same in every packet.
#[test]
fn a_request_compiled_once_judges_as_one_compiled_per_check() {
    let (_dir, suites) = suites_to_judge();
    for (config, cases) in &suites {
        assert!(config.settings().exporter.is_none(), "without an exporter, produce is the compiler's packet");
        for (case, packets) in cases {
            let file = case.request_path().display().to_string();
            let produced = crate::corpus::produce(case, config);
            let compiled = produced.as_ref().map(Value::clone).map_err(|e| e.to_string());
            let once = check::Isolation::compiled(&case.request, compiled, config);
            let each = check::Isolation::of(&case.request, config, &file);
            for packet in packets {
                let map = packet.as_object().unwrap();
                assert_eq!(once.check(map, config), each.check(map, config), "{}", case.name);
                let fresh = check::packet::regenerates(case, packet, config).unwrap();
                let given = dispatch::regenerates_from(case, packet, &produced, config).unwrap();
                assert_eq!(given.findings, fresh.findings, "{}", case.name);
                assert_eq!(given.mismatch.is_some(), fresh.mismatch.is_some(), "{}", case.name);
            }
        }
    }
}
