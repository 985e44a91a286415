'use strict';
// The JavaScript API: each function runs the packetproof binary with `--format json`
// and resolves with the parsed document (its JSON Schema is in ./schemas). A check that
// fails (exit 1; `test`: 101) still resolves, with `ok: false`; bad usage or an
// unreadable input (exit 2) rejects with a PacketproofError carrying stderr.
// A caller's value is only ever a value: options are passed as `--name=value`, and
// positional values after `--`, so a path named `--run-exporter` is a path.
const { execFile } = require('node:child_process');
const { binaryPath, PLATFORMS } = require('./platforms.js');

const MAX_OUTPUT = 256 * 1024 * 1024;

// The binaries running for this process, and the stop signals forwarded to them: a
// SIGINT, SIGTERM or SIGHUP this process gets reaches each binary it started, so none
// is left running when the caller is stopped.
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const running = new Set();
// A signal this process would have died of (no other listener): raised again once the
// binaries it forwarded it to have exited.
let fatal = null;

function forward(signal) {
  if (process.listenerCount(signal) === 1) fatal = fatal || signal;
  for (const child of running) child.kill(signal);
}

/** Listen for the stop signals: before a binary starts, so none sent as it starts is missed. */
function listen() {
  if (running.size === 0) for (const signal of FORWARDED) process.on(signal, forward);
}

function track(child) {
  running.add(child);
  child.on('exit', () => {
    running.delete(child);
    if (running.size > 0) return;
    for (const signal of FORWARDED) process.removeListener(signal, forward);
    if (fatal) {
      const signal = fatal;
      fatal = null;
      process.kill(process.pid, signal);
    }
  });
}

class PacketproofError extends Error {
  constructor(message, { exitCode, stderr, args }) {
    super(message);
    this.name = 'PacketproofError';
    this.exitCode = exitCode;
    this.stderr = stderr;
    this.args = args;
  }
}

/** Run the binary; resolve { exitCode, stdout, stderr } when it exits with one of `accepted`. */
function run(args, options = {}, accepted = [0, 1]) {
  return new Promise((resolve, reject) => {
    let binary;
    try {
      binary = binaryPath();
    } catch (error) {
      reject(error);
      return;
    }
    const settings = { cwd: options.cwd, env: options.env, maxBuffer: MAX_OUTPUT, windowsHide: true };
    listen();
    const child = execFile(binary, args, settings, (error, stdout, stderr) => {
      const exitCode = error ? error.code : 0;
      if (typeof exitCode !== 'number' || !accepted.includes(exitCode)) {
        const why = stderr.trim() || (error && error.message) || `exit status ${exitCode}`;
        reject(new PacketproofError(`packetproof ${args.join(' ')}: ${why}`, { exitCode, stderr, args }));
        return;
      }
      resolve({ exitCode, stdout, stderr });
    });
    track(child);
  });
}

function common(options = {}) {
  const args = [];
  if (options.config) args.push(`--config=${options.config}`);
  if (options.googleSuffixFile) args.push(`--google-suffix-file=${options.googleSuffixFile}`);
  if (options.assetExamplePrompts) args.push(`--asset-example-prompts=${options.assetExamplePrompts}`);
  return args;
}

async function json(args, options) {
  const { stdout } = await run(args, options);
  return JSON.parse(stdout);
}

/** `packetproof validate --packet FILE --format json`. */
function validate(packet, options = {}) {
  return json(['validate', `--packet=${packet}`, '--format', 'json', ...common(options)], options);
}

/** `packetproof verify PATH… --format json`. */
function verify(paths, options = {}) {
  const list = Array.isArray(paths) ? paths : [paths];
  const keys = (options.trustedKeys || []).map((key) => `--trusted-key=${key}`);
  return json(['verify', '--format', 'json', ...keys, ...common(options), '--', ...list], options);
}

/** `packetproof wire --packet FILE --api API --check CAPTURED --format json`. */
function wireCheck(packet, api, captured, options = {}) {
  const args = ['wire', `--packet=${packet}`, `--api=${api}`, `--check=${captured}`, '--format', 'json'];
  return json([...args, ...common(options)], options);
}

/** `packetproof checks --format json`: the rule book. */
function checks(options = {}) {
  return json(['checks', '--format', 'json'], options);
}

/** `packetproof test --format json`: libtest's events, and the verdict (exit 0 passed, 101 failed). */
async function test(options = {}) {
  const args = ['test', '--format', 'json', ...common(options)];
  if (options.exact) args.push('--exact');
  if (options.partition) args.push(`--partition=${options.partition}`);
  if (options.junit) args.push(`--junit=${options.junit}`);
  if (options.filter) args.push('--', options.filter);
  const { exitCode, stdout, stderr } = await run(args, options, [0, 101]);
  const events = stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  return { ok: exitCode === 0, exitCode, events, stderr };
}

module.exports = { validate, verify, wireCheck, checks, test, binaryPath, PacketproofError, PLATFORMS };
