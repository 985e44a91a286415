#!/usr/bin/env bash
# Regenerate docs/report.png, the README's picture of `packetproof test --report`:
# a fresh `packetproof init` suite, its HTML report, and a headless Chromium
# (Debian's `chromium`) screenshot of the top of the page.
# Usage: scripts/report-screenshot.sh [--binary FILE] [--out FILE]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="$here/target/debug/packetproof"
out="$here/docs/report.png"
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 [--binary FILE] [--out FILE]" >&2; exit 2 ;;
  esac
done
[ -x "$binary" ] || (cd "$here" && cargo build --quiet)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$binary" init "$work/suite" > /dev/null
(cd "$work/suite" && "$binary" test --report "$work/report.html" > /dev/null 2>&1)
mkdir -p "$(dirname "$out")"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
  --user-data-dir="$work/profile" --window-size=1000,760 \
  --screenshot="$out" "file://$work/report.html" 2> /dev/null
echo "wrote $out"
