'use strict';
// The platform packages, one per release target (see .github/workflows/release.yml):
// `${process.platform}-${process.arch}` -> the package holding that target's binary.
// npm installs only the one whose os/cpu fields match this machine.
const PLATFORMS = {
  'darwin-arm64': '@packetproof/darwin-arm64',
  'darwin-x64': '@packetproof/darwin-x64',
  'linux-arm64': '@packetproof/linux-arm64',
  'linux-x64': '@packetproof/linux-x64',
  'win32-x64': '@packetproof/win32-x64',
};

/** The absolute path of the packetproof binary for this machine, or an Error saying why not. */
function binaryPath() {
  if (process.env.PACKETPROOF_BINARY) {
    return process.env.PACKETPROOF_BINARY;
  }
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    throw new Error(
      `packetproof: no prebuilt binary for ${key} (built for ${Object.keys(PLATFORMS).join(', ')}); ` +
        'install it with `cargo install --locked --git <packetproof repository>` and set PACKETPROOF_BINARY to its path',
    );
  }
  const exe = process.platform === 'win32' ? 'packetproof.exe' : 'packetproof';
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch (error) {
    throw new Error(
      `packetproof: the package ${pkg} (this machine's binary) is not installed. It is an optional ` +
        'dependency of packetproof: reinstall without --no-optional / --omit=optional, and keep the lockfile ' +
        `entries of every platform (${error.code || error.message})`,
    );
  }
}

module.exports = { PLATFORMS, binaryPath };
