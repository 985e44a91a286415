#!/usr/bin/env bash
# Regenerate tests/recordings/traces/libraries/: what GenAI instrumentation libraries
# other than the official OpenTelemetry ones export of the same OpenAI Chat (or
# Responses) call, exact and with one word of its system prompt changed, content
# capture on (scripts/record/trace_libraries.py for Python, trace_libraries.cjs for Node).
#
#   scripts/record/record-libraries.sh            # from the repository root
#
# Each library is installed at the pinned version below into its own venv (or one npm
# folder) in a temporary folder outside the repository (PACKETPROOF_RECORD_ENV=DIR reuses
# one). Every request goes to the capture server on 127.0.0.1 (dummy API keys); nothing
# reaches a provider. LiteLLM reads its bundled model list (LITELLM_LOCAL_MODEL_COST_MAP).
# Needs python3 (venv), node/npm and cargo. `cargo test` replays the recordings without them.
set -euo pipefail

OTLP=(opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-common==1.45.2 protobuf==7.36.2)
PY_OPENINFERENCE=(openai==3.57.0 openinference-instrumentation-openai==0.1.66 "${OTLP[@]}")
PY_LOGFIRE=(openai==3.57.0 logfire==5.4.0 "${OTLP[@]}")
PY_LANGFUSE=(openai==3.57.0 langfuse==5.2.0 "${OTLP[@]}")
PY_LITELLM=(litellm==1.110.2 "${OTLP[@]}")
PY_OPENLLMETRY=(openai==3.57.0 opentelemetry-instrumentation-openai==0.62.4 "${OTLP[@]}")
NODE_PACKAGES=(openai@6.49.0 @opentelemetry/api@1 @opentelemetry/api-logs@0.223.1 @opentelemetry/sdk-trace-node@2.12.1
  @opentelemetry/sdk-logs@0.223.1 @opentelemetry/otlp-transformer@0.223.1 @opentelemetry/instrumentation@0.223.0
  @opentelemetry/instrumentation-openai@0.21.0 @arizeai/openinference-instrumentation-openai@4.2.7 ai@6.0.326
  @ai-sdk/openai@3.0.141 @anthropic-ai/sdk@1.17.0 @arizeai/openinference-instrumentation-anthropic@0.2.8)

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/record"
env_dir=${PACKETPROOF_RECORD_ENV:-$(mktemp -d)}
out="$root/tests/recordings/traces/libraries"
cd "$root"

# shellcheck source=scripts/record/common.sh
. "$here/common.sh"
venv "$env_dir/venv-openinference" "${PY_OPENINFERENCE[@]}"
venv "$env_dir/venv-logfire" "${PY_LOGFIRE[@]}"
venv "$env_dir/venv-langfuse" "${PY_LANGFUSE[@]}"
venv "$env_dir/venv-litellm" "${PY_LITELLM[@]}"
venv "$env_dir/venv-openllmetry" "${PY_OPENLLMETRY[@]}"
if [ ! -d "$env_dir/node/node_modules/@arizeai/openinference-instrumentation-anthropic" ]; then
  mkdir -p "$env_dir/node"
  (cd "$env_dir/node" && npm init -y >/dev/null && npm install -q --no-audit --no-fund "${NODE_PACKAGES[@]}")
fi
py="$env_dir/venv-logfire/bin/python"

cargo build -q
bin="$root/target/debug/packetproof"
bodies="$env_dir/bodies"
mkdir -p "$bodies" "$out"
"$bin" wire --packet tests/recordings/sdk/packets/openai.json --api openai-chat --out "$bodies/openai-chat.json"
"$bin" wire --packet tests/recordings/sdk/packets/openai.json --api openai-responses --out "$bodies/openai-responses.json"
"$bin" wire --packet tests/recordings/sdk/packets/anthropic.json --api anthropic --out "$bodies/anthropic.json"

capture_server "$py"

PACKETPROOF_LIB_PYTHON_OPENINFERENCE="$env_dir/venv-openinference/bin/python" \
  PACKETPROOF_LIB_PYTHON_LOGFIRE="$env_dir/venv-logfire/bin/python" \
  PACKETPROOF_LIB_PYTHON_LANGFUSE="$env_dir/venv-langfuse/bin/python" \
  PACKETPROOF_LIB_PYTHON_LITELLM="$env_dir/venv-litellm/bin/python" \
  PACKETPROOF_LIB_PYTHON_OPENLLMETRY="$env_dir/venv-openllmetry/bin/python" \
  "$py" "$here/trace_libraries.py" "$port" "$bodies" "$out"
NODE_PATH="$env_dir/node/node_modules" node "$here/trace_libraries.cjs" "$port" "$bodies" "$out"

{
  echo "# Written by scripts/record/record-libraries.sh: the library versions these recordings came from."
  echo "recorded = \"$(date -u +%Y-%m-%d)\""
  echo "python = \"$("$py" --version 2>&1)\""
  echo "node = \"$(node --version)\""
  for v in openinference logfire langfuse litellm openllmetry; do
    echo "[python_packages.\"venv-$v\"]"
    "$env_dir/venv-$v/bin/pip" list --format=freeze 2>/dev/null |
      grep -iE '^(openai|logfire|langfuse|litellm|openinference-instrumentation-openai|opentelemetry-instrumentation-openai|opentelemetry-sdk)==' |
      sed 's/\(.*\)==\(.*\)/"\1" = "\2"/'
  done
  echo "[node_packages]"
  for p in openai @opentelemetry/instrumentation-openai @arizeai/openinference-instrumentation-openai ai @ai-sdk/openai \
    @anthropic-ai/sdk @arizeai/openinference-instrumentation-anthropic; do
    # Read as a file: @anthropic-ai/sdk's exports do not include its package.json.
    echo "\"$p\" = \"$(node -p "JSON.parse(require('fs').readFileSync('$env_dir/node/node_modules/$p/package.json', 'utf8')).version")\""
  done
} >"$out/VERSIONS.toml"
echo "recorded into $out"
