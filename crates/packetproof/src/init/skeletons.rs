//! The exporter skeletons `init --agent` writes, one per language. `{agent}`,
//! `{provider}`, `{model}`, `{max_tokens}`, `{system}`, `{user}`, `{schema}` and
//! `{style}` are replaced by the agent's values (JSON literals, which both languages read).

pub(crate) const JAVASCRIPT: &str = r#"// packetproof's exporter for the agent (harness.toml [exporter]): one fixture's
// request.json in, one runtime packet out. A skeleton written by `packetproof init
// --agent`: make it build the packet as the app builds its call (require the app's own
// prompt code and call settings, and list those files in [exporter] files), so that
// the golden packets are what the app sends.
//
// The hash recipe (docs/packet-format.md): exactInputHash is the sha256 of the canonical
// JSON of what the model receives (attempt, provider, model, maxTokens, the system and
// user messages, and the output schema if there is one); checksum is the sha256 of the
// canonical JSON of the whole packet without its checksum.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

// The call. In the app these come from its own code: read them from there.
const CALL = {
  agentId: {agent},
  taskType: {agent},
  promptMode: 'default',
  provider: {provider},
  model: {model},
  maxTokens: {max_tokens},
  system: {system},
  user: {user},
};
const STYLE = {style};
const SCHEMA = {schema};
const PROMPTS = path.join(__dirname, 'prompts');

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

// Plain slots only, in harness.toml's template style; render with the app's own
// template engine for anything more (sections, filters, loops).
const SLOTS = {
  jinja: /\{\{\s*([A-Za-z_]\w*)\s*\}\}/g,
  mustache: /\{\{\{\s*([A-Za-z_]\w*)\s*\}\}\}/g,
  format: /\{([A-Za-z_]\w*)\}/g,
};

// Jinja (Jinja2's and minijinja's defaults) drops one final newline of a template.
function render(template, input) {
  if (STYLE === 'jinja') template = template.replace(/\r?\n$/, '');
  return template.replace(SLOTS[STYLE], (_, name) => {
    if (!(name in input)) throw new Error(`no value for ${name}`);
    return String(input[name]);
  });
}

function packet(request) {
  const input = request.input;
  const paths = [CALL.system, CALL.user];
  const bytes = paths.map((p) => fs.readFileSync(path.join(PROMPTS, p)));
  const [system, user] = bytes.map((b) => render(b.toString('utf8'), input));
  const out = {
    packetVersion: 1,
    agentId: CALL.agentId,
    taskType: CALL.taskType,
    promptMode: CALL.promptMode,
    attempt: 1,
    provider: CALL.provider,
    model: CALL.model,
    maxTokens: CALL.maxTokens,
    promptPaths: paths,
    promptVersions: Object.fromEntries(paths.map((p, i) => [p, sha256(bytes[i])])),
    systemPrompt: system,
    userMessage: user,
    effectiveUserMessage: user,
    renderInput: input,
    resolvedBranch: { agentId: CALL.agentId, ...(request.branch || {}) },
  };
  if (SCHEMA) out.outputSchema = JSON.parse(fs.readFileSync(path.join(__dirname, SCHEMA), 'utf8'));
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
"#;

pub(crate) const PYTHON: &str = r#""""packetproof's exporter for the agent (harness.toml [exporter]): one fixture's
request.json in, one runtime packet out. A skeleton written by `packetproof init
--agent`: make it build the packet as the app builds its call (import the app's own
prompt code and call settings, and list those files in [exporter] files), so that the
golden packets are what the app sends.

The hash recipe (docs/packet-format.md): exactInputHash is the sha256 of the canonical
JSON of what the model receives (attempt, provider, model, maxTokens, the system and
user messages, and the output schema if there is one); checksum is the sha256 of the
canonical JSON of the whole packet without its checksum.
"""

import hashlib
import json
import os
import re
import sys

# The call. In the app these come from its own code: import them from there.
CALL = {
    "agentId": {agent},
    "taskType": {agent},
    "promptMode": "default",
    "provider": {provider},
    "model": {model},
    "maxTokens": {max_tokens},
    "system": {system},
    "user": {user},
}
STYLE = {style}
SCHEMA = {schema}
HERE = os.path.dirname(os.path.abspath(__file__))
PROMPTS = os.path.join(HERE, "prompts")

# Plain slots only, in harness.toml's template style; render with the app's own
# template engine for anything more (jinja2's blocks and filters, sections).
SLOTS = {
    "jinja": re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}"),
    "mustache": re.compile(r"\{\{\{\s*([A-Za-z_]\w*)\s*\}\}\}"),
    "format": re.compile(r"\{([A-Za-z_]\w*)\}"),
}


def canonical(value):
    """RFC 8785 for this data (strings, integers, keys in the Basic Multilingual Plane)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def render(template, values):
    # Jinja (Jinja2's and minijinja's defaults) drops one final newline of a template.
    if STYLE == "jinja":
        template = re.sub(r"\r?\n\Z", "", template)

    def fill(match):
        if match.group(1) not in values:
            raise SystemExit("no value for " + match.group(1))
        return str(values[match.group(1)])

    return SLOTS[STYLE].sub(fill, template)


def read(path):
    with open(path, "rb") as file:
        return file.read()


def packet(request):
    values = request["input"]
    paths = [CALL["system"], CALL["user"]]
    raw = [read(os.path.join(PROMPTS, p)) for p in paths]
    system, user = (render(b.decode("utf-8"), values) for b in raw)
    out = {
        "packetVersion": 1,
        "agentId": CALL["agentId"],
        "taskType": CALL["taskType"],
        "promptMode": CALL["promptMode"],
        "attempt": 1,
        "provider": CALL["provider"],
        "model": CALL["model"],
        "maxTokens": CALL["maxTokens"],
        "promptPaths": paths,
        "promptVersions": {p: sha256(b) for p, b in zip(paths, raw)},
        "systemPrompt": system,
        "userMessage": user,
        "effectiveUserMessage": user,
        "renderInput": values,
        "resolvedBranch": {"agentId": CALL["agentId"], **request.get("branch", {})},
    }
    if SCHEMA:
        out["outputSchema"] = json.loads(read(os.path.join(HERE, SCHEMA)).decode("utf-8"))
    material = {
        "attempt": out["attempt"],
        "provider": out["provider"],
        "model": out["model"],
        "maxTokens": out["maxTokens"],
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    if SCHEMA:
        material["outputSchema"] = out["outputSchema"]
    out["exactInputHash"] = sha256(canonical(material))
    out["checksum"] = sha256(canonical(out))
    return out


if __name__ == "__main__":
    request = json.loads(read(sys.argv[1]).decode("utf-8"))
    sys.stdout.buffer.write((json.dumps(packet(request), ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
"#;
