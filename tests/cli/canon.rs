//! `packetproof canon`: refusals (each malformed class, too deep, unreadable) and
//! the canonical bytes and digest of a known input.

use crate::support::{run, run_with_stdin};
use libtest_mimic::Trial;
use std::ffi::OsStr;
// ---------------------------------------------------------------- canon: refusals

/// One malformed input per class: (class, file bytes, expected `line:column`, message fragment).
/// Positions are 1-based and point at the last character read of the offending token.
const MALFORMED: &[(&str, &[u8], &str, &str)] = &[
    ("duplicate key", br#"{"a":1,"a":2}"#, "1:10", "duplicate object key"),
    ("duplicate key, nested", b"{\"o\":{\n\"k\":1,\"k\":2}}", "2:9", "duplicate object key"),
    ("duplicate key via escape", br#"{"a":1,"\u0061":2}"#, "1:15", "duplicate object key"),
    ("lone leading surrogate escape", br#"["\ud800"]"#, "1:9", "lone surrogate"),
    ("lone trailing surrogate escape", br#""\udc00""#, "1:7", "lone surrogate"),
    ("raw surrogate bytes", b"\"\xed\xa0\x80\"", "1:2", "invalid UTF-8"),
    ("invalid UTF-8", b"{\"a\":\n\"\xff\"}", "2:2", "invalid UTF-8"),
    ("byte-order mark", b"\xef\xbb\xbf[]", "1:1", "byte-order mark"),
    ("number overflow", b"[1e400]", "1:6", "out of range"),
    ("negative number overflow", b"-1e400", "1:6", "out of range"),
    ("NaN", b"[NaN]", "1:2", "expected a JSON value"),
    ("Infinity", b"Infinity", "1:1", "expected a JSON value"),
    ("trailing data", b"[1] 2", "1:5", "trailing data"),
    ("trailing comma", b"{\"a\":[1,2,]}", "1:11", "trailing comma"),
    ("comment", b"// note\n{}", "1:1", "expected a JSON value"),
    ("single quotes", b"{'a':1}", "1:2", "key must be a string"),
    ("leading zero", b"[007]", "1:3", "invalid number"),
    ("empty file", b"", "1:1", "EOF while parsing a value"),
    ("whitespace only", b"\n\n", "3:1", "EOF while parsing a value"),
    ("truncated JSON", b"{\"a\":[1,{\"b\":", "1:13", "EOF while parsing"),
    ("unterminated string", b"[\"abc]", "1:6", "EOF while parsing a string"),
    ("bad escape", br#""a\qb""#, "1:4", "invalid escape"),
    ("raw control character in string", b"\"a\x01b\"", "1:3", "control character"),
    ("missing colon", br#"{"a" 1}"#, "1:6", "expected `:`"),
    ("unquoted key", b"{a:1}", "1:2", "key must be a string"),
];

fn canon_refuses_each_malformed_class_with_status_2_and_a_position() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, (class, bytes, position, fragment)) in MALFORMED.iter().enumerate() {
        let file = dir.path().join(format!("case{i:02}.json"));
        std::fs::write(&file, bytes).unwrap();
        let output = run([OsStr::new("canon"), file.as_os_str()]);
        let stderr = output.stderr.clone();
        let located = format!("{}:{position}:", file.display());
        if output.code != 2 || !output.stdout.is_empty() || !stderr.contains(&located) || !stderr.contains(fragment) {
            failures.push(format!(
                "{class}: expected status 2, empty stdout, stderr with {located:?} and {fragment:?}\n{}",
                output.describe()
            ));
        }
    }
    assert!(MALFORMED.len() >= 20);
    assert!(failures.is_empty(), "{} of {} classes wrong:\n{}", failures.len(), MALFORMED.len(), failures.join("\n\n"));
}

fn canon_refuses_too_deep_nesting_by_max_depth() {
    let dir = tempfile::tempdir().unwrap();
    let levels = packetproof::canonical::MAX_DEPTH + 1;
    let file = dir.path().join("deep.json");
    std::fs::write(&file, format!("{}{}", "[".repeat(levels), "]".repeat(levels))).unwrap();
    let output = run([OsStr::new("canon"), file.as_os_str()]);
    assert_eq!(output.code, 2, "{}", output.describe());
    assert!(output.stdout.is_empty());
    assert!(output.stderr.clone().contains(&format!("{}:1:{levels}: ", file.display())), "{}", output.describe());
}

fn canon_refuses_missing_file_and_directory_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-packet.json");
    for (class, path) in [("missing file", missing.as_path()), ("directory", dir.path())] {
        let output = run([OsStr::new("canon"), path.as_os_str()]);
        assert_eq!(output.code, 2, "{class}: {}", output.describe());
        assert!(output.stdout.is_empty(), "{class}: {}", output.describe());
        let stderr = output.stderr.clone();
        assert!(stderr.contains(&path.display().to_string()), "{class}: stderr does not name the file: {stderr}");
    }
    let output = run([OsStr::new("canon"), missing.as_os_str()]);
    assert!(output.stderr.clone().to_lowercase().contains("no such file"), "{}", output.describe());
    let output = run([OsStr::new("canon"), dir.path().as_os_str()]);
    assert!(output.stderr.clone().contains("directory"), "{}", output.describe());
}

fn canon_refuses_malformed_stdin_naming_stdin() {
    let output = run_with_stdin(["canon", "-"], b"{\"a\":1,\n \"a\":2}");
    assert_eq!(output.code, 2, "{}", output.describe());
    assert_output_snapshot!("canon_refuses_malformed_stdin", output);
}

fn canon_usage_errors_exit_2() {
    let output = run(["canon", "--no-such-flag"]);
    assert_eq!(output.code, 2, "{}", output.describe());
    assert_output_snapshot!("canon_usage_error", output);
}

// ---------------------------------------------------------------- canon: happy paths

const INPUT: &[u8] = b"{ \"b\": [1.0, \"\\u00e9\"],\n  \"a\": -0 }\n";
const CANONICAL: &[u8] = b"{\"a\":0,\"b\":[1,\"\xc3\xa9\"]}";
/// `printf '{"a":0,"b":[1,"\xc3\xa9"]}' | sha256sum`
const CANONICAL_SHA256: &str = "sha256:6a059a0fd139a758c00b61f78527f4ba4ea50e3d13d72527b7ff1d5f3795086d";

fn canon_prints_canonical_bytes_without_newline() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.json");
    std::fs::write(&file, INPUT).unwrap();
    let output = run([OsStr::new("canon"), file.as_os_str()]);
    assert_eq!(output.code, 0, "{}", output.describe());
    assert_eq!(output.stdout.as_bytes(), CANONICAL);
    assert!(output.stderr.is_empty(), "{}", output.describe());
}

fn canon_hash_prints_sha256_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.json");
    std::fs::write(&file, INPUT).unwrap();
    let output = run([OsStr::new("canon"), file.as_os_str(), OsStr::new("--hash")]);
    assert_eq!(output.code, 0, "{}", output.describe());
    assert!(output.stderr.is_empty(), "{}", output.describe());
    let stdout = output.stdout.clone();
    assert_eq!(stdout, format!("{CANONICAL_SHA256}\n"));
    let hex = stdout.trim_end().strip_prefix("sha256:").unwrap();
    assert!(hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
}

fn canon_reads_stdin_with_dash_or_no_file() {
    for args in [vec!["canon", "-"], vec!["canon"]] {
        let output = run_with_stdin(&args, INPUT);
        assert_eq!(output.code, 0, "{args:?}: {}", output.describe());
        assert_eq!(output.stdout.as_bytes(), CANONICAL, "{args:?}");
    }
    let output = run_with_stdin(["canon", "-", "--hash"], INPUT);
    assert_eq!(output.stdout.clone(), format!("{CANONICAL_SHA256}\n"));
}

pub fn trials() -> Vec<Trial> {
    let trials = trials![
        canon_refuses_each_malformed_class_with_status_2_and_a_position,
        canon_refuses_too_deep_nesting_by_max_depth,
        canon_refuses_missing_file_and_directory_with_status_2,
        canon_refuses_malformed_stdin_naming_stdin,
        canon_usage_errors_exit_2,
        canon_prints_canonical_bytes_without_newline,
        canon_hash_prints_sha256_line,
        canon_reads_stdin_with_dash_or_no_file,
    ];
    trials
}
