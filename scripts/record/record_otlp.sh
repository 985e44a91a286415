#!/usr/bin/env bash
# Regenerate tests/recordings/otlp/: the request bodies the official OpenTelemetry OTLP/HTTP
# exporters send for GenAI spans (and an event in a logs export), byte for byte, with the
# headers they were sent with (requests.json), as `packetproof serve` receives them.
#
#   scripts/record/record_otlp.sh            # from the repository root
#
# The exporters are installed, at the pinned versions below, into a temporary folder outside
# the repository (PACKETPROOF_RECORD_ENV=DIR reuses one). Every export goes to a local capture
# server on 127.0.0.1. Needs python3 (venv) and node/npm. `cargo test` replays the bodies
# without them. (The Node packages declare node >=22.15; they record the same on node 20, which
# npm warns about.)
set -euo pipefail

# The gRPC exporter is for the live test of serve over OTLP/gRPC (tests/cli/serve_grpc.rs).
PY_PACKAGES=(opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
  opentelemetry-exporter-otlp-proto-grpc==1.45.2)
NODE_PACKAGES=(@opentelemetry/api@1.10.0 @opentelemetry/sdk-trace@3.1.0
  @opentelemetry/exporter-trace-otlp-http@0.301.0 @opentelemetry/exporter-trace-otlp-proto@0.301.0)

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/record"
env_dir=${PACKETPROOF_RECORD_ENV:-$(mktemp -d)}
out="$root/tests/recordings/otlp"
packet="$root/tests/recordings/sdk/packets/openai.json"

if [ ! -x "$env_dir/venv/bin/python" ]; then
  python3 -m venv "$env_dir/venv"
fi
"$env_dir/venv/bin/pip" install -q "${PY_PACKAGES[@]}"
mkdir -p "$env_dir/node"
(cd "$env_dir/node" && { [ -f package.json ] || npm init -y >/dev/null; } &&
  npm install --no-audit --no-fund -q "${NODE_PACKAGES[@]}" >/dev/null)

rm -rf "$out" && mkdir -p "$out"
"$env_dir/venv/bin/python" "$here/otlp_capture.py" "$out" >"$env_dir/port" &
capture=$!
trap 'kill $capture' EXIT
while [ ! -s "$env_dir/port" ]; do sleep 0.1; done
port=$(cat "$env_dir/port")

"$env_dir/venv/bin/python" "$here/otlp_clients.py" "$port" "$packet"
NODE_PATH="$env_dir/node/node_modules" node "$here/otlp_clients.cjs" "$port" "$packet"

{
  echo "# Written by scripts/record/record_otlp.sh: the exporter versions these bodies came from."
  echo "recorded = \"$(date -u +%F)\""
  echo "python = \"$(python3 --version)\""
  echo "node = \"$(node --version)\""
  echo "[python_packages]"
  "$env_dir/venv/bin/pip" freeze | grep -i '^opentelemetry' | sed 's/^\(.*\)==\(.*\)$/"\1" = "\2"/'
  echo "[node_packages]"
  for p in "${NODE_PACKAGES[@]}"; do
    name=${p%@*}
    echo "\"$name\" = \"$(node -p "require('$env_dir/node/node_modules/$name/package.json').version")\""
  done
} >"$out/VERSIONS.toml"
echo "recorded into $out"
