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
    let run = assemble_run(&case, &config).unwrap();
    let intact = crate::run::Run::open(&run.dir, &config).unwrap();
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
        let damaged = intact.with_file(file, bytes, &config).unwrap();
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
