//! The RFC 8785 reference vectors from `../shared/vectors/rfc8785/` (datatest-stable): each
//! `input/*.json` must canonicalize to `output/` byte for byte. When they are absent, one test,
//! `interop::rfc8785`, is reported as ignored with the reason (failed under CI).

#[path = "canonical/expect.rs"]
mod expect;
#[path = "support/mod.rs"]
mod support;

use std::path::Path;

const RFC_DIR: &str = "../shared/vectors/rfc8785";

fn rfc_present() -> bool {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(RFC_DIR).join("input").is_dir()
}

fn rfc8785_vector(file: &Path, input: Vec<u8>) -> expect::Result {
    let name = file.file_name().ok_or("no file name")?;
    let output = file.parent().and_then(Path::parent).ok_or("no parent")?.join("output").join(name);
    let expected = std::fs::read(&output).map_err(|e| format!("{}: {e}", output.display()))?;
    expect::expect_canonical(&file.display().to_string(), &input, &expected)
}

fn main() -> std::process::ExitCode {
    if !rfc_present() {
        return support::absent_corpus("interop::rfc8785", &Path::new(env!("CARGO_MANIFEST_DIR")).join(RFC_DIR));
    }
    // The harness defines `fn main`; defined in this block, it runs only when the vectors are there.
    datatest_stable::harness! {
        { test = rfc8785_vector, root = "../shared/vectors/rfc8785/input", pattern = r"^[^/]+\.json$" },
    }
    main()
}
