#!/usr/bin/env bash
# Regenerate tests/recordings/traces/families/: what six more GenAI instrumentation
# families export of the same call (scripts/record/trace_families.py): OpenLIT, Semantic
# Kernel, pydantic-ai, MLflow tracing (default format and GenAI conventions) and
# OpenLLMetry's anthropic instrumentation in events mode; each an exact call, a drifted
# one (one word of the system prompt changed) and, where the library has a switch for it,
# the exact call with content capture off.
#
#   scripts/record/record-families.sh            # from the repository root
#
# Each library is installed at the pinned version below into its own venv in a temporary
# folder outside the repository (PACKETPROOF_RECORD_ENV=DIR reuses one). Every request goes
# to the capture server on 127.0.0.1 (dummy API keys); nothing reaches a provider.
# Needs python3 (venv) and cargo. `cargo test` replays the recordings without them.
set -euo pipefail

OTLP=(opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-common==1.45.2 protobuf==7.36.2)
PY_OPENLIT=(openai==2.54.0 openlit==1.45.0 opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-common==1.45.1)
PY_SEMANTIC_KERNEL=(openai==3.57.0 semantic-kernel==1.45.0 "${OTLP[@]}")
PY_PYDANTIC_AI=("pydantic-ai-slim[openai]==2.68.0" openai==3.57.0 "${OTLP[@]}")
# mlflow-tracing 3.17.2 imports yaml and sqlparse without depending on them.
PY_MLFLOW=(openai==3.57.0 mlflow-tracing==3.17.2 pyyaml==6.0.4 sqlparse==0.6.1 opentelemetry-exporter-otlp-proto-http==1.45.2 "${OTLP[@]}")
PY_OPENLLMETRY_ANTHROPIC=(anthropic==2.16.0 opentelemetry-instrumentation-anthropic==0.62.4 "${OTLP[@]}")

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/record"
env_dir=${PACKETPROOF_RECORD_ENV:-$(mktemp -d)}
out="$root/tests/recordings/traces/families"
cd "$root"

# shellcheck source=scripts/record/common.sh
. "$here/common.sh"
venv "$env_dir/venv-openlit" "${PY_OPENLIT[@]}"
venv "$env_dir/venv-semantic-kernel" "${PY_SEMANTIC_KERNEL[@]}"
venv "$env_dir/venv-pydantic-ai" "${PY_PYDANTIC_AI[@]}"
venv "$env_dir/venv-mlflow" "${PY_MLFLOW[@]}"
venv "$env_dir/venv-openllmetry-anthropic" "${PY_OPENLLMETRY_ANTHROPIC[@]}"
py="$env_dir/venv-openlit/bin/python"

cargo build -q
bin="$root/target/debug/packetproof"
bodies="$env_dir/bodies"
mkdir -p "$bodies" "$out"
"$bin" wire --packet tests/recordings/sdk/packets/openai.json --api openai-chat --out "$bodies/openai-chat.json"
"$bin" wire --packet tests/recordings/sdk/packets/anthropic.json --api anthropic --out "$bodies/anthropic.json"

capture_server "$py"

(cd "$here" && PACKETPROOF_LIB_PYTHON_OPENLIT="$env_dir/venv-openlit/bin/python" \
  PACKETPROOF_LIB_PYTHON_SEMANTIC_KERNEL="$env_dir/venv-semantic-kernel/bin/python" \
  PACKETPROOF_LIB_PYTHON_PYDANTIC_AI="$env_dir/venv-pydantic-ai/bin/python" \
  PACKETPROOF_LIB_PYTHON_MLFLOW="$env_dir/venv-mlflow/bin/python" \
  PACKETPROOF_LIB_PYTHON_OPENLLMETRY_ANTHROPIC="$env_dir/venv-openllmetry-anthropic/bin/python" \
  "$py" trace_families.py "$port" "$bodies" "$out")

{
  echo "# Written by scripts/record/record-families.sh: the library versions these recordings came from."
  echo "recorded = \"$(date -u +%Y-%m-%d)\""
  echo "python = \"$("$py" --version 2>&1)\""
  for v in openlit semantic-kernel pydantic-ai mlflow openllmetry-anthropic; do
    echo "[python_packages.\"venv-$v\"]"
    "$env_dir/venv-$v/bin/pip" list --format=freeze 2>/dev/null |
      grep -iE '^(openai|anthropic|openlit|semantic-kernel|pydantic-ai-slim|mlflow-tracing|opentelemetry-instrumentation-anthropic|opentelemetry-sdk)==' |
      sed 's/\(.*\)==\(.*\)/"\1" = "\2"/'
  done
} >"$out/VERSIONS.toml"
echo "recorded into $out"
