#!/usr/bin/env bash
# Regenerate tests/recordings/: what the official SDKs send for the golden packets
# (tests/recordings/sdk/) and the traces the official OpenTelemetry GenAI
# instrumentations record of those calls (tests/recordings/traces/).
#
#   scripts/record/record.sh            # from the repository root
#
# The SDKs are installed, at the pinned versions below, into a temporary folder outside
# the repository (PACKETPROOF_RECORD_ENV=DIR reuses one). Every request goes to a local
# capture server on 127.0.0.1 (dummy API keys); nothing reaches a provider. Needs
# python3 (venv), node/npm and cargo. `cargo test` replays the recordings without them.
set -euo pipefail

OTLP_JSON=(opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-common==1.45.2 protobuf==7.36.2)
# The SDKs, and opentelemetry-instrumentation-anthropic (the anthropic SDK's own spans too).
PY_PACKAGES=(anthropic==2.15.0 openai==3.57.0 google-genai==3.6.1 "${OTLP_JSON[@]}"
  opentelemetry-instrumentation-anthropic==0.62.4)
# The GenAI instrumentations pin what the others cannot share: openai-v2 an older
# opentelemetry-util-genai (and httpx), google-genai's a google-genai below 3. Each its own venv.
PY_OTEL_OPENAI=(openai==3.57.0 httpx==0.28.1 opentelemetry-instrumentation-openai-v2==2.4b0
  opentelemetry-util-genai==1.1b0 "${OTLP_JSON[@]}")
PY_OTEL_GOOGLE=(google-genai==2.34.0 opentelemetry-instrumentation-google-genai==1.3b0
  opentelemetry-util-genai==1.3b0 "${OTLP_JSON[@]}")
NODE_PACKAGES=(@anthropic-ai/sdk@1.15.0 openai@6.49.0 @google/genai@2.32.0)
# The golden cases recorded: one per provider.
ANTHROPIC=anthropic-staged-both-selected-interop-shape
OPENAI=openai-staged-alone-selected
GOOGLE=google-staged-both-selected

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/record"
env_dir=${PACKETPROOF_RECORD_ENV:-$(mktemp -d)}
out="$root/tests/recordings"
cd "$root"

# shellcheck source=scripts/record/common.sh
. "$here/common.sh"
venv "$env_dir/venv" "${PY_PACKAGES[@]}"
venv "$env_dir/venv-otel-openai" "${PY_OTEL_OPENAI[@]}"
venv "$env_dir/venv-otel-google" "${PY_OTEL_GOOGLE[@]}"
if [ ! -d "$env_dir/node/node_modules/@google/genai" ]; then
  mkdir -p "$env_dir/node"
  (cd "$env_dir/node" && npm init -y >/dev/null && npm install -q --no-audit --no-fund "${NODE_PACKAGES[@]}")
fi
py="$env_dir/venv/bin/python"

cargo build -q
bin="$root/target/debug/packetproof"
bodies="$env_dir/bodies"
mkdir -p "$bodies" "$out/sdk/packets" "$out/sdk/python" "$out/sdk/node" "$out/traces"
cp "golden/$ANTHROPIC/runtime-packet.json" "$out/sdk/packets/anthropic.json"
cp "golden/$OPENAI/runtime-packet.json" "$out/sdk/packets/openai.json"
cp "golden/$GOOGLE/runtime-packet.json" "$out/sdk/packets/google.json"
# The templates those packets were compiled from: `trace`'s tests judge the recordings
# under them, so a later prompt edit fails the conformance gate alone.
rm -rf "$out/sdk/prompts"
cp -R references/prompts "$out/sdk/prompts"
"$bin" wire --packet "$out/sdk/packets/anthropic.json" --api anthropic --out "$bodies/anthropic.json"
"$bin" wire --packet "$out/sdk/packets/openai.json" --api openai-chat --out "$bodies/openai-chat.json"
"$bin" wire --packet "$out/sdk/packets/openai.json" --api openai-responses --out "$bodies/openai-responses.json"
"$bin" wire --packet "$out/sdk/packets/google.json" --api gemini --out "$bodies/gemini.json"
"$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"])' "$out/sdk/packets/google.json" >"$bodies/gemini.model"

capture_server "$py"

"$py" "$here/sdk_clients.py" "$port" "$bodies" "$out/sdk/python"
NODE_PATH="$env_dir/node/node_modules" node "$here/sdk_clients.cjs" "$port" "$bodies" "$out/sdk/node"
PACKETPROOF_OTEL_PYTHON_OPENAI="$env_dir/venv-otel-openai/bin/python" \
  PACKETPROOF_OTEL_PYTHON_GOOGLE="$env_dir/venv-otel-google/bin/python" \
  "$py" "$here/trace_clients.py" "$port" "$bodies" "$out/traces"

{
  echo "# Written by scripts/record/record.sh: the SDK versions these recordings came from."
  echo "recorded = \"$(date -u +%Y-%m-%d)\""
  echo "# The capture server's address: \`wire --check --base-url\` for the HAR files."
  echo "base_url = \"http://127.0.0.1:$port\""
  echo "python = \"$("$py" --version 2>&1)\""
  echo "node = \"$(node --version)\""
  for v in venv venv-otel-openai venv-otel-google; do
    echo "[python_packages.\"$v\"]"
    "$env_dir/$v/bin/pip" list --format=freeze 2>/dev/null |
      grep -E '^(anthropic|openai|google-genai|httpx|opentelemetry-[a-z-]+|protobuf)==' | sed 's/\(.*\)==\(.*\)/"\1" = "\2"/'
  done
  echo "[node_packages]"
  for p in @anthropic-ai/sdk openai @google/genai; do
    echo "\"$p\" = \"$(node -p "require('$env_dir/node/node_modules/$p/package.json').version")\""
  done
} >"$out/VERSIONS.toml"
echo "recorded into $out"
