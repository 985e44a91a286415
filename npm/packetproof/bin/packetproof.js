#!/usr/bin/env node
'use strict';
// The `packetproof` command of the npm package: runs this machine's prebuilt binary
// (from its platform package) with the same arguments, standard streams and exit status.
const { spawn } = require('node:child_process');
const os = require('node:os');
const { binaryPath } = require('../platforms.js');

let binary;
try {
  binary = binaryPath();
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
// A supervisor's stop (SIGTERM), Ctrl-C and a closed terminal reach the binary, which
// decides (`serve` finishes its requests and judges the calls it holds); the shim then
// exits with the binary's status, never before it. Listened for before the binary
// starts: a signal sent as soon as it runs is passed on too.
let child = null;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
// The binary stops when this process dies, even by SIGKILL (PACKETPROOF_PARENT_PID: Linux).
const env = { ...process.env, PACKETPROOF_PARENT_PID: String(process.pid) };
child = spawn(binary, process.argv.slice(2), { stdio: 'inherit', windowsHide: true, env });
child.on('error', (error) => {
  process.stderr.write(`packetproof: could not run ${binary}: ${error.message}\n`);
  process.exit(2);
});
child.on('exit', (status, signal) => {
  if (signal) {
    // A shell's status for a child killed by a signal, 128 + its number. Raising the
    // signal in Node instead does not end it: Node ignores SIGPIPE and opens its
    // inspector on SIGUSR1.
    const number = os.constants.signals[signal];
    process.exit(number ? 128 + number : 2);
  }
  process.exit(status === null ? 2 : status);
});
