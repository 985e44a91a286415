//! Data-driven canonical JSON suite: every `tests/vectors/canonical/*.json` against its
//! `.canon` (exact bytes) or `.error` (`line:column` + message fragment), and the RFC 8785
//! reference vectors from `../shared/vectors/rfc8785/` when present; when they are absent,
//! one test, `rfc8785_vector`, is reported as ignored with the reason (libtest-mimic, not
//! datatest-stable, which cannot mark a case ignored).

use libtest_mimic::{Arguments, Failed, Trial};
use packetproof::canonical::{self, MAX_DEPTH};
use serde_json::Value;
use std::path::{Path, PathBuf};

type Result = std::result::Result<(), Box<dyn std::error::Error>>;

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut trials = vectors(&root.join("tests/vectors/canonical"), "canonical_vector", canonical_vector);
    assert!(!trials.is_empty(), "no canonical vector found");
    if rfc_present() {
        trials.extend(vectors(&root.join(RFC_DIR).join("input"), "rfc8785_vector", rfc8785_vector));
    } else {
        eprintln!("RFC 8785 reference vectors are ignored: {RFC_DIR} is absent");
        trials.push(Trial::test("rfc8785_vector", || Ok(())).with_kind("interop").with_ignored_flag(true));
    }
    libtest_mimic::run(&args, trials).exit();
}

/// One trial per `*.json` directly in `dir`, named `<prefix>::<file name>`.
fn vectors(dir: &Path, prefix: &str, test: fn(&Path, Vec<u8>) -> Result) -> Vec<Trial> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Trial::test(format!("{prefix}::{name}"), move || {
                let input = std::fs::read(&file).map_err(|e| Failed::from(format!("{}: {e}", file.display())))?;
                test(&file, input).map_err(|e| Failed::from(e.to_string()))
            })
        })
        .collect()
}

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

fn canonical_vector(file: &Path, input: Vec<u8>) -> Result {
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

fn expect_canonical(path: &str, input: &[u8], expected: &[u8]) -> Result {
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

const RFC_DIR: &str = "../shared/vectors/rfc8785";

fn rfc_present() -> bool {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(RFC_DIR).join("input").is_dir()
}

fn rfc8785_vector(file: &Path, input: Vec<u8>) -> Result {
    let name = file.file_name().ok_or("no file name")?;
    let output = file.parent().and_then(Path::parent).ok_or("no parent")?.join("output").join(name);
    let expected = std::fs::read(&output).map_err(|e| format!("{}: {e}", output.display()))?;
    expect_canonical(&file.display().to_string(), &input, &expected)
}
