#!/usr/bin/env node
'use strict';
// The `packetproof` command of the npm package: runs this machine's prebuilt binary
// (from its platform package) with the same arguments, standard streams and exit status.
const { spawnSync } = require('node:child_process');
const os = require('node:os');
const { binaryPath } = require('../platforms.js');

let binary;
try {
  binary = binaryPath();
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
const result = spawnSync(binary, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });
if (result.error) {
  process.stderr.write(`packetproof: could not run ${binary}: ${result.error.message}\n`);
  process.exit(2);
}
if (result.signal) {
  // A shell's status for a child killed by a signal, 128 + its number. Raising the
  // signal in Node instead does not end it: Node ignores SIGPIPE and opens its
  // inspector on SIGUSR1.
  const number = os.constants.signals[result.signal];
  process.exit(number ? 128 + number : 2);
}
process.exit(result.status === null ? 2 : result.status);
