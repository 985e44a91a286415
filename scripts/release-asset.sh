#!/usr/bin/env bash
# Pack a packetproof binary as its GitHub release asset: OUT/packetproof-<version>-<target>.tar.gz
# (the binary alone, at the archive's root) and beside it its checksum file,
# <asset>.sha256 ("<sha256>  <asset>"). The launcher `packetproof init` writes
# (ci/packetproof.sh) downloads exactly these names from the release v<version>.
#
#   scripts/release-asset.sh --binary FILE [--target TRIPLE] [--out DIR]
#
# --target: the Rust target the binary is built for (default: this machine's, as the
# launcher names it). --out: where to write (default target/release-assets). The version is
# Cargo.toml's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary="" target="" out="$root/target/release-assets"
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "release-asset.sh: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ -f "$binary" ] || { echo "release-asset.sh: no binary at '$binary' (--binary FILE)" >&2; exit 2; }
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
if [ -z "$target" ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64 | Linux-amd64) target=x86_64-unknown-linux-gnu ;;
    Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-gnu ;;
    Darwin-x86_64) target=x86_64-apple-darwin ;;
    Darwin-arm64) target=aarch64-apple-darwin ;;
    MINGW*-x86_64 | MSYS*-x86_64 | CYGWIN*-x86_64) target=x86_64-pc-windows-msvc ;;
    *) echo "release-asset.sh: no release target for $(uname -s)-$(uname -m); give --target" >&2; exit 2 ;;
  esac
fi
exe=packetproof
case "$target" in *windows*) exe=packetproof.exe ;; esac
asset="packetproof-$version-$target.tar.gz"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$binary" "$work/$exe"
chmod 755 "$work/$exe"
tar -czf "$out/$asset" -C "$work" "$exe"
if command -v sha256sum >/dev/null 2>&1; then sum=$(sha256sum "$out/$asset" | cut -d' ' -f1); else sum=$(shasum -a 256 "$out/$asset" | cut -d' ' -f1); fi
echo "$sum  $asset" >"$out/$asset.sha256"
echo "$out/$asset"
