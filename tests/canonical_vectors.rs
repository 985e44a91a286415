//! Data-driven canonical JSON suite (datatest-stable): every `tests/vectors/canonical/*.json`
//! against its `.canon` (exact bytes) or `.error` (`line:column` + message fragment). The RFC
//! 8785 reference vectors are `rfc8785_vectors.rs`.

#[path = "canonical/expect.rs"]
mod expect;

datatest_stable::harness! {
    { test = expect::canonical_vector, root = "tests/vectors/canonical", pattern = r"^[^/]+\.json$" },
}
