#!/usr/bin/env bash
# Regenerate tests/recordings/traces/families/: what more GenAI instrumentation families
# export of the same call (scripts/record/trace_families.py): OpenLIT (streamed, plain and
# with max_content_length), Semantic Kernel, pydantic-ai, MLflow tracing (default format and GenAI
# conventions), OpenLLMetry's anthropic instrumentation in events mode, LangSmith's
# OpenTelemetry mode, Haystack with opentelemetry-haystack, the contrib openai-agents-v2
# instrumentation (Responses API) and Strands Agents (latest GenAI conventions and its
# legacy events); each an exact call, a drifted one (one word of the system prompt
# changed) and, where the library has a switch for it, the exact call with content
# capture off.
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
PY_LANGSMITH=("langsmith[otel]==0.15.1" openai==3.57.0 "${OTLP[@]}")
PY_HAYSTACK=(haystack-ai==3.4.1 opentelemetry-haystack==2.0.0 openai==3.63.0 "${OTLP[@]}")
# opentelemetry-util-genai 1.3b0 is what the instrumentation 0.1.0 runs with here.
PY_OPENAI_AGENTS=(opentelemetry-instrumentation-openai-agents-v2==0.1.0 opentelemetry-util-genai==1.3b0
  openai-agents==0.24.0 openai==3.63.0 "${OTLP[@]}")
# strands-agents 1.62.0 pins OpenTelemetry below 1.45.2.
PY_STRANDS=("strands-agents[openai,otel]==1.62.0" openai==2.54.0 opentelemetry-sdk==1.45.1
  opentelemetry-exporter-otlp-proto-common==1.45.1 protobuf==7.36.2)

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
venv "$env_dir/venv-langsmith" "${PY_LANGSMITH[@]}"
venv "$env_dir/venv-haystack" "${PY_HAYSTACK[@]}"
venv "$env_dir/venv-openai-agents" "${PY_OPENAI_AGENTS[@]}"
venv "$env_dir/venv-strands" "${PY_STRANDS[@]}"
py="$env_dir/venv-openlit/bin/python"

cargo build -q
bin="$root/target/debug/packetproof"
bodies="$env_dir/bodies"
mkdir -p "$bodies" "$out"
"$bin" wire --packet tests/recordings/sdk/packets/openai.json --api openai-chat --out "$bodies/openai-chat.json"
"$bin" wire --packet tests/recordings/sdk/packets/openai.json --api openai-responses --out "$bodies/openai-responses.json"
"$bin" wire --packet tests/recordings/sdk/packets/anthropic.json --api anthropic --out "$bodies/anthropic.json"

capture_server "$py"

(cd "$here" && PACKETPROOF_LIB_PYTHON_OPENLIT="$env_dir/venv-openlit/bin/python" \
  PACKETPROOF_LIB_PYTHON_SEMANTIC_KERNEL="$env_dir/venv-semantic-kernel/bin/python" \
  PACKETPROOF_LIB_PYTHON_PYDANTIC_AI="$env_dir/venv-pydantic-ai/bin/python" \
  PACKETPROOF_LIB_PYTHON_MLFLOW="$env_dir/venv-mlflow/bin/python" \
  PACKETPROOF_LIB_PYTHON_OPENLLMETRY_ANTHROPIC="$env_dir/venv-openllmetry-anthropic/bin/python" \
  PACKETPROOF_LIB_PYTHON_LANGSMITH="$env_dir/venv-langsmith/bin/python" \
  PACKETPROOF_LIB_PYTHON_HAYSTACK="$env_dir/venv-haystack/bin/python" \
  PACKETPROOF_LIB_PYTHON_OPENAI_AGENTS="$env_dir/venv-openai-agents/bin/python" \
  PACKETPROOF_LIB_PYTHON_STRANDS="$env_dir/venv-strands/bin/python" \
  "$py" trace_families.py "$port" "$bodies" "$out")

{
  echo "# Written by scripts/record/record-families.sh: the library versions these recordings came from."
  echo "recorded = \"$(date -u +%Y-%m-%d)\""
  echo "python = \"$("$py" --version 2>&1)\""
  for v in openlit semantic-kernel pydantic-ai mlflow openllmetry-anthropic langsmith haystack openai-agents strands; do
    echo "[python_packages.\"venv-$v\"]"
    "$env_dir/venv-$v/bin/pip" list --format=freeze 2>/dev/null |
      grep -iE '^(openai|anthropic|openlit|semantic-kernel|pydantic-ai-slim|mlflow-tracing|opentelemetry-instrumentation-anthropic|opentelemetry-sdk|langsmith|haystack-ai|opentelemetry-haystack|openai-agents|opentelemetry-instrumentation-openai-agents-v2|opentelemetry-util-genai|strands-agents)==' |
      sed 's/\(.*\)==\(.*\)/"\1" = "\2"/'
  done
} >"$out/VERSIONS.toml"
echo "recorded into $out"
