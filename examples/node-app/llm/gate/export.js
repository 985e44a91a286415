// packetproof's exporter for the app: one fixture's request.json in, one runtime
// packet out (harness.toml [exporter]). It renders the app's own templates with the
// app's own call settings (../../src/calls.js), as the app does in production.
//
// The hash recipe (docs/packet-format.md): exactInputHash is the sha256 of the
// canonical JSON of what the model receives (attempt, provider, model, maxTokens,
// the system and user messages, and the output schema if there is one); checksum
// is the sha256 of the canonical JSON of the whole packet without its checksum.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { CALLS } = require('../../src/calls.js');

const PROMPTS = path.join(__dirname, '..', '..', 'src', 'prompts');
const SCHEMAS = { 'release-notes': path.join(__dirname, 'schemas', 'release-notes.json') };

// RFC 8785 for this data (strings, integers, keys in the Basic Multilingual Plane):
// JSON.stringify with keys sorted by UTF-16 code units.
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const sha256 = (bytes) => `sha256:${crypto.createHash('sha256').update(bytes).digest('hex')}`;

// The templates use triple mustaches only ({{{name}}}: the value's text, unescaped),
// which is what mustache.render gives for them.
function render(template, input) {
  return template.replace(/\{\{\{\s*([A-Za-z_][\w]*)\s*\}\}\}/g, (_, name) => {
    if (!(name in input)) throw new Error(`no value for {{{${name}}}}`);
    return String(input[name]);
  });
}

function packet(request) {
  const call = CALLS[request.call];
  if (!call) throw new Error(`unknown call ${JSON.stringify(request.call)}`);
  const input = request.input;
  const branch = { agentId: call.agentId, ...request.branch };
  const paths = [call.system, call.user(branch)];
  const texts = paths.map((p) => fs.readFileSync(path.join(PROMPTS, p), 'utf8'));
  const [system, user] = texts.map((t) => render(t, input));
  const out = {
    packetVersion: 1,
    agentId: call.agentId,
    taskType: call.taskType,
    promptMode: call.promptMode,
    attempt: 1,
    provider: call.provider,
    model: call.model,
    maxTokens: call.maxTokens,
    promptPaths: paths,
    promptVersions: Object.fromEntries(paths.map((p, i) => [p, sha256(Buffer.from(texts[i], 'utf8'))])),
    systemPrompt: system,
    userMessage: user,
    effectiveUserMessage: user,
    renderInput: input,
    resolvedBranch: branch,
  };
  if (SCHEMAS[call.agentId]) out.outputSchema = JSON.parse(fs.readFileSync(SCHEMAS[call.agentId], 'utf8'));
  const material = {
    attempt: out.attempt,
    provider: out.provider,
    model: out.model,
    maxTokens: out.maxTokens,
    messages: [{ role: 'system', content: system }, { role: 'user', content: user }],
  };
  if (out.outputSchema) material.outputSchema = out.outputSchema;
  out.exactInputHash = sha256(canonical(material));
  out.checksum = sha256(canonical(out));
  return out;
}

const request = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
process.stdout.write(`${JSON.stringify(packet(request), null, 2)}\n`);
