#!/usr/bin/env bash
# Build the npm packages from a packetproof binary:
#   OUT/packetproof/      the `packetproof` package (bin shim, API, types, schemas)
#   OUT/<target>/         the `@packetproof/<target>` package holding the binary
# then `npm pack` each of them (or `npm publish`) from OUT.
#
#   scripts/build-npm.sh [--binary FILE] [--target TARGET] [--out DIR]
#
# --binary: the binary to ship (default: `cargo build --release --locked`, then
#   target/release/packetproof). --target: the npm platform, <os>-<cpu> as Node spells them
#   (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64; default: this machine's).
# --out: where to write (default target/npm). The release workflow
#   (.github/workflows/release.yml) runs this once per target on its own runner.
# Nothing here needs Node; the version of every package is Cargo.toml's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary="" target="" out="$root/target/npm"
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "build-npm.sh: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
if [ -z "$target" ]; then
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; MINGW* | MSYS* | CYGWIN*) os=win32 ;; *) os=unknown ;; esac
  case "$(uname -m)" in x86_64 | amd64) cpu=x64 ;; aarch64 | arm64) cpu=arm64 ;; *) cpu=unknown ;; esac
  target="$os-$cpu"
fi
os=${target%-*} cpu=${target#*-}
case "$target" in
  linux-x64 | linux-arm64 | darwin-x64 | darwin-arm64 | win32-x64) ;;
  *) echo "build-npm.sh: no npm platform package for $target (see npm/packetproof/platforms.js)" >&2; exit 2 ;;
esac
exe=packetproof
[ "$os" = win32 ] && exe=packetproof.exe

# The committed package names this version, for itself and every platform package.
main_json="$root/npm/packetproof/package.json"
if [ "$(grep -c "\"$version\"" "$main_json")" -ne 6 ]; then
  echo "build-npm.sh: $main_json must carry version $version (Cargo.toml's) for itself and its 5 optionalDependencies" >&2
  exit 1
fi
grep -q "\"@packetproof/$target\": \"$version\"" "$main_json" || {
  echo "build-npm.sh: $main_json does not list @packetproof/$target" >&2
  exit 1
}

if [ -z "$binary" ]; then
  (cd "$root" && cargo build --release --locked)
  binary="$root/target/release/$exe"
fi
[ -f "$binary" ] || { echo "build-npm.sh: no binary at $binary" >&2; exit 2; }

main="$out/packetproof" platform="$out/$target"
rm -rf "$main" "$platform"
mkdir -p "$main/bin" "$main/schemas" "$platform/bin"
cp "$root"/npm/packetproof/{package.json,index.js,index.d.ts,platforms.js} "$main/"
cp "$root/npm/packetproof/bin/packetproof.js" "$main/bin/"
cp "$root"/schemas/*.json "$main/schemas/"
cp "$root/README.md" "$main/README.md"
sed -e "s/@TARGET@/$target/g" -e "s/@VERSION@/$version/g" -e "s/@OS@/$os/g" -e "s/@CPU@/$cpu/g" -e "s/@EXE@/$exe/g" \
  "$root/npm/platform/package.json.in" > "$platform/package.json"
cp "$binary" "$platform/bin/$exe"
chmod 755 "$platform/bin/$exe" "$main/bin/packetproof.js"
echo "$main"
echo "$platform"
