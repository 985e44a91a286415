//! What a canonical JSON vector expects, shared by `canonical_vectors.rs` (the project's own
//! vectors) and `rfc8785_vectors.rs` (the RFC's, from `../shared`).

// Each test binary uses part of this module.
#![allow(dead_code)]
use packetproof::canonical::{self, MAX_DEPTH};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub type Result = datatest_stable::Result<()>;

fn sibling(path: &Path, extension: &str) -> PathBuf {
    path.with_extension(extension)
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

pub fn canonical_vector(file: &Path, input: Vec<u8>) -> Result {
    let canon = sibling(file, "canon");
    let error = sibling(file, "error");
    let path = file.display().to_string();
    let path = path.as_str();
    match (canon.is_file(), error.is_file()) {
        (true, false) => expect_canonical(path, &input, &std::fs::read(&canon)?),
        (false, true) => expect_refusal(path, &input, &std::fs::read_to_string(&error)?),
        _ => Err(format!("{path}: needs exactly one of .canon or .error next to it").into()),
    }
}

pub fn expect_canonical(path: &str, input: &[u8], expected: &[u8]) -> Result {
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
    if path.contains("depth_max") && depth(&value) != MAX_DEPTH {
        return Err(format!(
            "{path}: nests {} levels but MAX_DEPTH is {MAX_DEPTH}; regenerate the depth vectors",
            depth(&value)
        )
        .into());
    }
    Ok(())
}

fn expect_refusal(path: &str, input: &[u8], spec: &str) -> Result {
    let mut lines = spec.lines();
    let position = lines.next().ok_or("empty .error file")?.trim();
    let fragment = lines.next().ok_or(".error file needs a message fragment on line 2")?.trim();
    if path.contains("depth_over_max") {
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
