#!/usr/bin/env bash
# The release workflow (.github/workflows/release.yml) dry-run for this machine's platform,
# publishing nothing: build the binary, then what the release ships from it, into OUT/dist:
#   the npm packages `packetproof` and `@packetproof/<os>-<cpu>` (scripts/build-npm.sh, npm pack),
#   the wheel (maturin, pyproject.toml),
#   the release asset and its checksum file (scripts/release-asset.sh),
# and OUT/dist/SHA256SUMS over all of them. Then each is installed into a clean environment
# with no package index, and the command it installs must be the binary built, byte for byte,
# and run a suite:
#   npm: both tarballs into an empty project (npm install --offline, a fresh cache);
#   wheel: pip install --no-index into a fresh virtual environment;
#   asset: the launcher of a suite `init` writes (ci/packetproof.sh), from a file:// release,
#          into an empty HOME, with no packetproof and no cargo on PATH.
#
#   scripts/release-dry-run.sh [--profile release|dev] [--out DIR]
#
# --profile: the cargo profile to build (default release, as the release does; dev reuses a
# test build). --out: default target/release-dry-run. Needs cargo, bash, git, curl, tar,
# node and npm, python3 with venv, and maturin (pip install "maturin>=1.5,<2").
#
# Not part of .ci/run: a release build of this project takes minutes on CI's two cores on top
# of `cargo test`, and .ci/run installs nothing beyond the Rust toolchain, while this needs
# maturin, node and npm. `cargo test` covers each install with the test build where the tools
# are present (tests/cli/npm.rs, wheel.rs, workflow.rs); .github/workflows/release-dry-run.yml
# runs this script on GitHub for every pull request.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
profile=release out="$root/target/release-dry-run"
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "release-dry-run.sh: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
missing=()
for tool in cargo git curl tar node npm python3 maturin; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "release-dry-run.sh: not found: ${missing[*]} (see the header of $0)" >&2
  exit 2
fi
sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi; }
step() { echo "release-dry-run: $*" >&2; }

case "$profile" in release) folder=release ;; dev) folder=debug ;; *) folder=$profile ;; esac
step "cargo build --profile $profile"
(cd "$root" && cargo build --locked --profile "$profile")
binary="$root/target/$folder/packetproof"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)

rm -rf "$out"
dist="$out/dist"
mkdir -p "$dist"
step "npm packages"
packages=$(bash "$root/scripts/build-npm.sh" --binary "$binary" --out "$out/npm")
# shellcheck disable=SC2086 # the two package folders build-npm.sh printed, one a line
npm pack --silent --cache "$out/npm-cache" --pack-destination "$dist" $packages >/dev/null
step "wheel (maturin, the same build)"
(cd "$root" && maturin build --offline --locked --profile "$profile" --out "$dist" >&2)
step "release asset"
bash "$root/scripts/release-asset.sh" --binary "$binary" --out "$dist" >/dev/null
(cd "$dist" && sha256 -- * >SHA256SUMS && sha256 -c --quiet SHA256SUMS)
step "built: $(cd "$dist" && ls | tr '\n' ' ')"

# A PATH with no packetproof and no cargo on it: the clean environments' base.
clean_path=""
IFS=: read -ra folders <<<"$PATH"
for folder in "${folders[@]}"; do
  [ -e "$folder/packetproof" ] || [ -e "$folder/cargo" ] || clean_path="${clean_path:+$clean_path:}$folder"
done
same() {
  cmp -s "$1" "$binary" || { echo "release-dry-run.sh: $2 installed $1, which is not the binary built" >&2; exit 1; }
}
clean() { env -i HOME="$out/home" PATH="$clean_path" PIP_NO_INDEX=1 npm_config_offline=true \
  npm_config_cache="$out/npm-cache" npm_config_registry=http://127.0.0.1:9/ "$@"; }
mkdir -p "$out/home"

step "install the npm tarballs into an empty project"
project="$out/npm-project"
mkdir -p "$project"
echo '{"name": "dry-run", "private": true}' >"$project/package.json"
(cd "$project" && clean npm install --no-audit --no-fund "$dist"/packetproof-*.tgz >&2)
same "$(cd "$project" && clean node -e "console.log(require('packetproof').binaryPath())")" npm
(cd "$project" && clean npx --no -- packetproof init suite >/dev/null && cd suite && clean npx --no -- packetproof test >/dev/null)

step "install the wheel into a fresh virtual environment"
clean python3 -m venv "$out/venv"
clean "$out/venv/bin/python" -m pip install --quiet "$dist"/packetproof-*.whl
same "$out/venv/bin/packetproof" wheel
(mkdir -p "$out/wheel-project" && cd "$out/wheel-project" && clean "$out/venv/bin/packetproof" init suite >/dev/null \
  && cd suite && clean "$out/venv/bin/packetproof" test >/dev/null)

step "install the release asset with the launcher init writes"
repo="$out/asset-project"
mkdir -p "$repo"
git -C "$repo" init -q .
(cd "$repo" && "$binary" init llm/gate >/dev/null)
installed=$(cd "$repo" && clean PACKETPROOF_RELEASE_URL="file://$dist" bash llm/gate/ci/packetproof.sh --install)
same "$installed" "the release asset"
(cd "$repo" && clean bash llm/gate/ci/packetproof.sh --config llm/gate/harness.toml test >/dev/null)
step "ok: packetproof $version for this platform, each installed into a clean environment ($dist)"
