#!/usr/bin/env bash
# Regenerate tests/recordings/traces/fresh/: what a fresh install of an instrumentation
# exported of one OpenAI (or Gemini) call on the day it was recorded, with the versions pip
# and npm picked then (pinned below, so the run repeats): the failures docs/production.md
# lists under "What a fresh install meets", and the two setups that work.
# (scripts/record/fresh_install.py for Python, fresh_install.cjs for Node.)
#
#   scripts/record/fresh-install.sh            # from the repository root
#
# Each case is installed into a venv (or one npm folder) in a temporary folder outside the
# repository (PACKETPROOF_RECORD_ENV=DIR reuses one). Every request goes to the capture server
# on 127.0.0.1 (dummy API keys). An empty {case}.jsonl is a run that exported no span; what
# the run printed is in {case}.txt (none: it printed nothing). Needs python3 (venv), node/npm and cargo.
set -euo pipefail

OTLP=(opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-common==1.45.2 protobuf==7.36.2)
# openai 3.63.0 depends on httpx2, not httpx: openai-v2 2.4b0 imports httpx (installed here so
# the next failure shows: opentelemetry-util-genai 1.3b0 has no util.genai.instruments).
PY_OPENAI_V2=(opentelemetry-instrumentation-openai-v2==2.4b0 opentelemetry-util-genai==1.3b0 openai==3.63.0 httpx
  "${OTLP[@]}")
PY_GOOGLE_GENAI=(opentelemetry-instrumentation-google-genai==1.3b0 google-genai==3.6.1 "${OTLP[@]}")
# ai 7 and openai 7 ask for Node 22 (npm warns on Node 20) and run on it.
NODE_PACKAGES=(openai@7.60.0 ai@7.0.185 @ai-sdk/openai@4.0.126 @ai-sdk/otel@1.0.185 @opentelemetry/api@1
  @opentelemetry/sdk-trace-node@2.12.1 @opentelemetry/otlp-transformer@0.223.1 @opentelemetry/instrumentation@0.223.0
  @opentelemetry/instrumentation-openai@0.21.0 @arizeai/openinference-instrumentation-openai@4.2.7)

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/record"
env_dir=${PACKETPROOF_RECORD_ENV:-$(mktemp -d)}
out="$root/tests/recordings/traces/fresh"
cd "$root"

# shellcheck source=scripts/record/common.sh
. "$here/common.sh"
venv "$env_dir/venv-fresh-openai-v2" "${PY_OPENAI_V2[@]}"
venv "$env_dir/venv-fresh-google-genai" "${PY_GOOGLE_GENAI[@]}"
if [ ! -d "$env_dir/node-fresh/node_modules/@ai-sdk/otel" ]; then
  mkdir -p "$env_dir/node-fresh"
  (cd "$env_dir/node-fresh" && npm init -y >/dev/null && npm install -q --no-audit --no-fund "${NODE_PACKAGES[@]}")
fi
py="$env_dir/venv-fresh-openai-v2/bin/python"

cargo build -q
bin="$root/target/debug/packetproof"
bodies="$env_dir/bodies"
mkdir -p "$bodies" "$out"
"$bin" wire --packet tests/recordings/sdk/packets/openai.json --api openai-chat --out "$bodies/openai-chat.json"
"$bin" wire --packet tests/recordings/sdk/packets/google.json --api gemini --out "$bodies/gemini.json"

capture_server "$py"

for case in openai-v2 google-genai; do
  (cd "$here" && "$env_dir/venv-fresh-$case/bin/python" fresh_install.py "$port" "$bodies" "$out" "$case") \
    >"$out/$case.txt" 2>&1 || true
done
for case in node-openai7 openinference-openai7 vercel-ai7 vercel-ai7-registered; do
  NODE_PATH="$env_dir/node-fresh/node_modules" node "$here/fresh_install.cjs" "$port" "$bodies" "$out" "$case" \
    >"$out/$case.txt" 2>&1 || true
done
for case in openai-v2 google-genai node-openai7 openinference-openai7 vercel-ai7 vercel-ai7-registered; do
  [ -s "$out/$case.txt" ] || rm -f "$out/$case.txt"
done
echo "recorded into $out"
