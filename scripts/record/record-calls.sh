#!/usr/bin/env bash
# Regenerate tests/recordings/calls/: the bodies the official SDKs (Node and Python) and the
# Vercel AI SDK send for a whole call (a tool, a tool choice, temperature, a JSON-schema
# answer), from the inputs in tests/recordings/calls/inputs.json. tests/wire_check.rs holds
# each body to the packet of the same call.
#
#   scripts/record/record-calls.sh      # from the repository root
#
# The SDKs are installed at the pinned versions below into a temporary folder outside the
# repository (PACKETPROOF_RECORD_ENV=DIR reuses one). Every request goes to the local
# capture server on 127.0.0.1 (dummy keys); nothing reaches a provider. Needs python3 (venv)
# and node/npm; `cargo test` replays the recordings without them.
set -euo pipefail

NODE_PACKAGES=(@anthropic-ai/sdk@1.15.0 openai@6.49.0 ai@5.0.108 @ai-sdk/openai@2.0.76 @ai-sdk/anthropic@2.0.53 zod@3.25.76)
PY_PACKAGES=(anthropic==2.15.0 openai==3.57.0)

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/record"
env_dir=${PACKETPROOF_RECORD_ENV:-$(mktemp -d)}
out="$root/tests/recordings/calls"
cd "$root"

# shellcheck source=scripts/record/common.sh
. "$here/common.sh"
if [ ! -d "$env_dir/calls/node_modules/ai" ]; then
  mkdir -p "$env_dir/calls"
  (cd "$env_dir/calls" && npm init -y >/dev/null && npm install -q --no-audit --no-fund "${NODE_PACKAGES[@]}")
fi
venv "$env_dir/calls-venv" "${PY_PACKAGES[@]}"
py="$env_dir/calls-venv/bin/python"
capture_server "$py"
NODE_PATH="$env_dir/calls/node_modules" node "$here/call_clients.cjs" "$port" "$out/inputs.json" "$out"
"$py" "$here/call_clients.py" "$port" "$out/inputs.json" "$out"
{
  echo "# Written by scripts/record/record-calls.sh: the SDK versions these recordings came from."
  echo "recorded = \"$(date -u +%F)\""
  echo "node = \"$(node --version)\""
  echo "[node_packages]"
  for package in "${NODE_PACKAGES[@]}"; do
    name=${package%@*}
    echo "\"$name\" = \"$(node -p "require('$env_dir/calls/node_modules/$name/package.json').version")\""
  done
  echo "python = \"$("$py" --version | cut -d' ' -f2)\""
  echo "[python_packages]"
  "$py" -m pip freeze | grep -E '^(anthropic|openai)==' | sed -E 's/^([^=]+)==(.*)$/"\1" = "\2"/'
} > "$out/VERSIONS.toml"
