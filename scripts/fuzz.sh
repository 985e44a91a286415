#!/usr/bin/env bash
# Run every cargo-fuzz target for a bounded time (nightly and `cargo install cargo-fuzz`),
# growing fuzz/corpus/<target>/ with the inputs that found new coverage, then minimize it and
# keep its 150 smallest inputs, so what is committed stays small. `cargo test --test fuzz_corpus` replays the corpus on stable.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${1:-60}"
for target in canonical_json otlp_json otlp_protobuf har serve_request; do
  mkdir -p "corpus/$target" "artifacts/$target"
  cargo +nightly fuzz run "$target" "corpus/$target" -- -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048
  cargo +nightly fuzz cmin "$target" "corpus/$target" -- -max_len=65536
  # What is committed stays small: the 150 smallest inputs of the minimized corpus.
  (cd "corpus/$target" && ls -Sr | tail -n +151 | xargs -r rm --)
done
