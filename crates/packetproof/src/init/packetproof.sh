#!/usr/bin/env bash
# The packetproof that this suite's CI workflow and pre-commit hooks run (written by
# `packetproof init`). It is looked for in this order, the first found wins:
#   1. $PACKETPROOF, the path of a packetproof binary;
#   2. the project's own: the npm package's binary in {package}/node_modules/.bin, or a
#      `packetproof` on PATH (the wheel in the active Python environment, a cargo install);
#   3. ~/.packetproof/bin/packetproof (a release asset this script installed, or a build
#      of packetproof's GitHub Action on this machine);
#   4. the release asset of packetproof {version} for this machine, downloaded from
#      $PACKETPROOF_RELEASE_URL (default: the GitHub release v{version}) and installed into
#      ~/.packetproof/bin once its sha256 matches the checksum file beside it.
# When none is found, CI builds it with packetproof's GitHub Action pinned to {commit}
# (the workflow's next step: cargo, once, cached by its source's digest), and on a
# workstation this script prints the command that builds the same one.
#
#   packetproof.sh --install   find or install it and print its path (in GitHub Actions, also
#                              put its folder on PATH and set the step output found=true|false)
#   packetproof.sh ARGS...     run it with ARGS
set -euo pipefail
version="{version}"
release="${PACKETPROOF_RELEASE_URL:-https://github.com/{repository}/releases/download/v$version}"
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/{up}" && pwd)
home_bin="$HOME/.packetproof/bin"
exe=packetproof
case "$(uname -s)" in MINGW* | MSYS* | CYGWIN*) exe=packetproof.exe ;; esac

# This machine's release asset: the Rust target the release workflow builds it for.
target_triple() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64 | Linux-amd64) echo x86_64-unknown-linux-gnu ;;
    Linux-aarch64 | Linux-arm64) echo aarch64-unknown-linux-gnu ;;
    Darwin-x86_64) echo x86_64-apple-darwin ;;
    Darwin-arm64) echo aarch64-apple-darwin ;;
    MINGW*-x86_64 | MSYS*-x86_64 | CYGWIN*-x86_64) echo x86_64-pc-windows-msvc ;;
    *) return 1 ;;
  esac
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

# Download and check the release asset; quiet and unsuccessful when there is none (before
# the first release, or offline), so the next source is tried.
install_release() {
  local target asset work
  target=$(target_triple) || return 1
  command -v curl >/dev/null 2>&1 || return 1
  asset="packetproof-$version-$target.tar.gz"
  work=$(mktemp -d)
  if curl -fsSL --retry 2 -o "$work/$asset" "$release/$asset" \
    && curl -fsSL --retry 2 -o "$work/$asset.sha256" "$release/$asset.sha256"; then
    if [ "$(sha256_of "$work/$asset")" != "$(cut -d' ' -f1 <"$work/$asset.sha256")" ]; then
      echo "packetproof.sh: $release/$asset does not match its checksum; not installed" >&2
      rm -rf "$work"
      return 1
    fi
    tar -xzf "$work/$asset" -C "$work"
    mkdir -p "$home_bin"
    mv "$work/$exe" "$home_bin/$exe"
    chmod 755 "$home_bin/$exe"
    rm -rf "$work"
    echo "packetproof.sh: installed the release asset $asset into $home_bin" >&2
    return 0
  fi
  rm -rf "$work"
  return 1
}

find_packetproof() {
  if [ -n "${PACKETPROOF:-}" ]; then
    echo "$PACKETPROOF"
  elif [ -x "$top/{package}/node_modules/.bin/packetproof" ]; then
    echo "$top/{package}/node_modules/.bin/packetproof"
  elif command -v packetproof >/dev/null 2>&1; then
    command -v packetproof
  elif [ -x "$home_bin/$exe" ] || install_release; then
    echo "$home_bin/$exe"
  else
    return 1
  fi
}

if [ "${1:-}" = --install ]; then
  if found=$(find_packetproof); then
    echo "$found"
    if [ -n "${GITHUB_PATH:-}" ]; then dirname "$found" >>"$GITHUB_PATH"; fi
    if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "found=true" >>"$GITHUB_OUTPUT"; fi
  else
    echo "packetproof.sh: no packetproof installed and no release asset of $version; the next step builds it" >&2
    if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "found=false" >>"$GITHUB_OUTPUT"; fi
  fi
  exit 0
fi
if ! found=$(find_packetproof); then
  echo "packetproof.sh: no packetproof found (see the order at the top of $0); build the one CI builds with" >&2
  echo "  cargo install --locked --git https://github.com/{repository} --rev {commit} --root ~/.packetproof" >&2
  exit 127
fi
exec "$found" "$@"
