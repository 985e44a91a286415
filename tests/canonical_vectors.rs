//! Data-driven canonical JSON suite (datatest-stable): every `tests/vectors/canonical/*.json`
//! against its `.canon` (exact bytes) or `.error` (`line:column` + message fragment), and the
//! RFC 8785 reference vectors from `../shared/vectors/rfc8785/` when present.

use datatest_stable::Utf8Path;
use packetproof::canonical::{self, MAX_DEPTH};
use serde_json::Value;
use std::path::{Path, PathBuf};

type Result = datatest_stable::Result<()>;

fn sibling(path: &Utf8Path, extension: &str) -> PathBuf {
    path.with_extension(extension).into_std_path_buf()
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn canonical_vector(path: &Utf8Path, input: Vec<u8>) -> Result {
    let canon = sibling(path, "canon");
    let error = sibling(path, "error");
    match (canon.is_file(), error.is_file()) {
        (true, false) => expect_canonical(path, &input, &std::fs::read(&canon)?),
        (false, true) => expect_refusal(path, &input, &std::fs::read_to_string(&error)?),
        _ => Err(format!("{path}: needs exactly one of .canon or .error next to it").into()),
    }
}

fn expect_canonical(path: &Utf8Path, input: &[u8], expected: &[u8]) -> Result {
    let value = canonical::parse(input).map_err(|e| format!("{path}: refused {e}, expected {}", show(expected)))?;
    let actual = canonical::to_vec(&value);
    if actual != expected {
        return Err(format!("{path}:\n  expected {}\n  actual   {}", show(expected), show(&actual)).into());
    }
    // The expected bytes are canonical themselves: a second pass changes nothing.
    let again = canonical::to_vec(&canonical::parse(expected).map_err(|e| format!("{path}: .canon refused: {e}"))?);
    if again != expected {
        return Err(format!("{path}: canonical form is not stable: {}", show(&again)).into());
    }
    if path.as_str().contains("depth_max") && depth(&value) != MAX_DEPTH {
        return Err(format!(
            "{path}: nests {} levels but MAX_DEPTH is {MAX_DEPTH}; regenerate the depth vectors",
            depth(&value)
        )
        .into());
    }
    Ok(())
}

fn expect_refusal(path: &Utf8Path, input: &[u8], spec: &str) -> Result {
    let mut lines = spec.lines();
    let position = lines.next().ok_or("empty .error file")?.trim();
    let fragment = lines.next().ok_or(".error file needs a message fragment on line 2")?.trim();
    if path.as_str().contains("depth_over_max") {
        let levels = input.iter().take_while(|&&b| b == b'[').count();
        if levels != MAX_DEPTH + 1 {
            return Err(format!(
                "{path}: nests {levels} levels but MAX_DEPTH is {MAX_DEPTH}; regenerate the depth vectors"
            )
            .into());
        }
    }
    match canonical::parse(input) {
        Ok(value) => {
            Err(format!("{path}: accepted (as {}), expected refusal at {position}", show(&canonical::to_vec(&value)))
                .into())
        }
        Err(e) => {
            let actual = format!("{}:{}", e.line, e.column);
            if actual != position || !e.message.contains(fragment) {
                return Err(format!("{path}: expected refusal at {position} containing {fragment:?}, got {e}").into());
            }
            Ok(())
        }
    }
}

const RFC_DIR: &str = "../shared/vectors/rfc8785";

fn rfc_present() -> bool {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(RFC_DIR).join("input").is_dir()
}

/// The reference inputs when present; otherwise one placeholder case that reports the skip
/// (datatest-stable refuses an empty or missing directory).
fn rfc_root() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if rfc_present() {
        root.join(RFC_DIR).join("input").display().to_string()
    } else {
        root.join("tests/vectors").display().to_string()
    }
}

fn rfc_pattern() -> &'static str {
    if rfc_present() {
        r"^[^/]+\.json$"
    } else {
        r"^README\.md$"
    }
}

fn rfc8785_vector(path: &Utf8Path, input: Vec<u8>) -> Result {
    if !rfc_present() {
        println!("SKIPPED: RFC 8785 reference vectors: {RFC_DIR} is absent");
        return Ok(());
    }
    let name = path.file_name().ok_or("no file name")?;
    let output = path.parent().and_then(Utf8Path::parent).ok_or("no parent")?.join("output").join(name);
    let expected = std::fs::read(&output).map_err(|e| format!("{output}: {e}"))?;
    expect_canonical(path, &input, &expected)
}

datatest_stable::harness! {
    { test = canonical_vector, root = "tests/vectors/canonical", pattern = r"^[^/]+\.json$" },
    { test = rfc8785_vector, root = rfc_root(), pattern = rfc_pattern() },
}
