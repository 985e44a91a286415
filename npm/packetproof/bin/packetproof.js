#!/usr/bin/env node
'use strict';
// The `packetproof` command of the npm package: runs this machine's prebuilt binary
// (from its platform package) with the same arguments, standard streams and exit status.
const { spawnSync } = require('node:child_process');
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
  // Die of the same signal, as a shell would report it.
  process.kill(process.pid, result.signal);
}
process.exit(result.status === null ? 2 : result.status);
