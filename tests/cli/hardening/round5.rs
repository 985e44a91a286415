//! Round 5's untried surfaces, attacked: `--partition` arithmetic at the integers'
//! edges, and a tampered `packetproof.lock` (not JSON, wrong shapes, pins outside the
//! suite, a device or a symlink in its place, past the read bound). Each ends with
//! an exit code and a message naming what was wrong: never a panic, a hang, or a
//! file read outside the suite.

use crate::support::{Output, Project};
use libtest_mimic::Trial;

pub fn trials() -> Vec<Trial> {
    crate::trials![partitions_at_the_integers_edges_never_panic, a_tampered_lock_is_named_and_never_crashes]
}

#[track_caller]
fn no_crash(out: &Output, what: &str) {
    assert!(!out.stderr.contains("panicked") && !out.stdout.contains("panicked"), "{what}: {}", out.describe());
    assert!(out.code == 0 || out.code == 1 || out.code == 2 || out.code == 101, "{what}: {}", out.describe());
}

fn partitions_at_the_integers_edges_never_panic() {
    let folder = Project::empty();
    folder.init();
    let max = u64::MAX;
    let refused = [
        "count:1/0".to_owned(),
        "hash:0/0".to_owned(),
        format!("count:{}/{}", u128::from(max) + 1, u128::from(max) + 2),
        "count:-1/2".to_owned(),
        "count:1/2/3".to_owned(),
        "count:/".to_owned(),
        format!("hash:{max}/{}", max - 1),
    ];
    for bad in &refused {
        let out = folder.run_in("suite", &["test", "--list", "--partition", bad]);
        no_crash(&out, bad);
        assert_eq!(out.code, 2, "{bad}: {}", out.describe());
        assert!(out.stderr.contains("--partition") || out.stderr.contains("partition"), "{bad}: {}", out.describe());
    }
    // The largest shard count is valid: the last shard of u64::MAX holds no trial.
    for edge in [format!("count:{max}/{max}"), format!("hash:{max}/{max}"), format!("count:1/{max}")] {
        let out = folder.run_in("suite", &["test", "--list", "--partition", &edge]);
        no_crash(&out, &edge);
        assert_eq!(out.code, 0, "{edge}: {}", out.describe());
    }
}

fn a_tampered_lock_is_named_and_never_crashes() {
    let folder = Project::empty();
    let suite = folder.init();
    let lock = suite.join("packetproof.lock");
    assert!(lock.is_file(), "init's suite is blessed with a lock");
    let pinned = std::fs::read_to_string(&lock).unwrap();
    let digest = format!("sha256:{}", "0".repeat(64));
    let outside = pinned.replacen("\"files\": {", &format!("\"files\": {{\"../../../etc/passwd\": \"{digest}\","), 1);
    assert_ne!(outside, pinned);
    let tampered: [(&str, Vec<u8>); 6] = [
        ("not JSON", b"{\"formatVersion\": 1, \"files\": ".to_vec()),
        ("files not an object", br#"{"formatVersion": 1, "files": 5}"#.to_vec()),
        ("another format", br#"{"formatVersion": 99, "files": {}}"#.to_vec()),
        ("a digest not a digest", pinned.replacen("sha256:", "md5:", 1).into_bytes()),
        ("a pin outside the suite", outside.into_bytes()),
        (
            "past the read bound",
            [b"{\"formatVersion\": 1, \"files\": {}, \"x\": \"".to_vec(), vec![b'a'; 80 << 20]].concat(),
        ),
    ];
    for (what, bytes) in tampered {
        std::fs::write(&lock, bytes).unwrap();
        let out = folder.run_in("suite", &["test"]);
        no_crash(&out, what);
        assert_ne!(out.code, 0, "{what}: {}", out.describe());
        let said = format!("{}{}", out.stdout, out.stderr);
        assert!(said.contains("packetproof.lock"), "{what}: {}", out.describe());
        assert!(!said.contains("root:x:0:0"), "{what}: a file outside the suite was read: {}", out.describe());
    }
    // A device or a symlink out of the suite in the lock's place is refused, not read.
    std::fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &lock).unwrap();
    let out = folder.run_in("suite", &["test"]);
    no_crash(&out, "a symlink to /dev/zero");
    assert_ne!(out.code, 0, "{}", out.describe());
    // Restored, the suite is green again: nothing was written meanwhile.
    std::fs::remove_file(&lock).unwrap();
    std::fs::write(&lock, &pinned).unwrap();
    let out = folder.run_in("suite", &["test"]);
    assert_eq!(out.code, 0, "{}", out.describe());
}
