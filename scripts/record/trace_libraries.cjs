// Record what the Node GenAI instrumentations export of the same OpenAI call
// (scripts/record/record-libraries.sh): OTLP/JSON as @opentelemetry/otlp-transformer's
// JSON serializer writes it (ids as hex), one export per line; spans in
// {scenario}.{exact|drift}.jsonl, log records in {scenario}.{exact|drift}.logs.jsonl.
// The exact call sends the reviewed packet's request; the drifted one changes one word of
// its system prompt. Content capture on; every request goes to the capture server on
// 127.0.0.1 with a dummy key.
//
// argv: PORT BODIES_DIR OUT_DIR [SCENARIO]; each scenario runs in its own process
// (instrumentations patch modules when they are first required).
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const [PORT, BODIES, OUT, SCENARIO] = process.argv.slice(2);
const BASE = `http://127.0.0.1:${PORT}`;

const SCENARIOS = {
  'node-openai.chat': { env: { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' } },
  'node-openai.responses': { env: { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' } },
  'openinference-js-openai': { env: {} },
  'openinference-js-anthropic': { env: {} },
  'vercel-ai': { env: {} },
};

function body(api) {
  return JSON.parse(fs.readFileSync(path.join(BODIES, `${api}.json`), 'utf8'));
}

function drifted(system) {
  for (const [from, to] of [[' the ', ' a '], [' a ', ' the '], [' and ', ' or ']]) {
    if (system.includes(from)) return system.replace(from, to);
  }
  return `${system} Be brief.`;
}

async function run(scenario) {
  const { trace, context } = require('@opentelemetry/api');
  const { logs } = require('@opentelemetry/api-logs');
  const { NodeTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-node');
  const { LoggerProvider, SimpleLogRecordProcessor } = require('@opentelemetry/sdk-logs');
  const { JsonTraceSerializer, JsonLogsSerializer } = require('@opentelemetry/otlp-transformer');

  const mode = { now: 'exact' };
  const file = (m, logsToo) => path.join(OUT, `${scenario}.${m}${logsToo ? '.logs' : ''}.jsonl`);
  for (const m of ['exact', 'drift']) for (const l of [false, true]) fs.rmSync(file(m, l), { force: true });
  const exporter = (serializer, logsToo) => ({
    export(items, done) {
      fs.appendFileSync(file(mode.now, logsToo), Buffer.from(serializer.serializeRequest(items)).toString('utf8') + '\n');
      done({ code: 0 });
    },
    shutdown: async () => {},
    forceFlush: async () => {},
  });
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter(JsonTraceSerializer, false))] });
  provider.register();
  const loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter: exporter(JsonLogsSerializer, true) })] });
  logs.setGlobalLoggerProvider(loggerProvider);

  const chat = body('openai-chat');
  const responses = body('openai-responses');
  const anthropic = body('anthropic');
  const system = chat.messages[0].content;
  const user = chat.messages[1].content;

  let call;
  if (scenario.startsWith('node-openai')) {
    const { registerInstrumentations } = require('@opentelemetry/instrumentation');
    const { OpenAIInstrumentation } = require('@opentelemetry/instrumentation-openai');
    registerInstrumentations({ instrumentations: [new OpenAIInstrumentation()] });
    const OpenAI = require('openai');
    const client = new OpenAI({ baseURL: `${BASE}/v1`, apiKey: 'dummy', maxRetries: 0 });
    call = scenario === 'node-openai.chat'
      ? (s) => client.chat.completions.create({ ...chat, messages: [{ role: 'system', content: s }, { role: 'user', content: user }] })
      : (s) => client.responses.create({ ...responses, instructions: s });
  } else if (scenario === 'openinference-js-openai') {
    const { OpenAIInstrumentation } = require('@arizeai/openinference-instrumentation-openai');
    const OpenAI = require('openai');
    const instrumentation = new OpenAIInstrumentation();
    instrumentation.setTracerProvider(provider);
    instrumentation.manuallyInstrument(OpenAI);
    const client = new OpenAI({ baseURL: `${BASE}/v1`, apiKey: 'dummy', maxRetries: 0 });
    call = (s) => client.chat.completions.create({ ...chat, messages: [{ role: 'system', content: s }, { role: 'user', content: user }] });
  } else if (scenario === 'openinference-js-anthropic') {
    const { AnthropicInstrumentation } = require('@arizeai/openinference-instrumentation-anthropic');
    const Anthropic = require('@anthropic-ai/sdk');
    const instrumentation = new AnthropicInstrumentation();
    instrumentation.setTracerProvider(provider);
    instrumentation.manuallyInstrument(Anthropic);
    const client = new Anthropic({ baseURL: BASE, apiKey: 'dummy', maxRetries: 0 });
    const { system: reviewed, ...rest } = anthropic;
    // An explicit timeout: the SDK refuses a large max_tokens without one (or a stream).
    call = (s) => client.messages.create({ ...rest, system: s === system ? reviewed : drifted(reviewed) }, { timeout: 60000 });
  } else if (scenario === 'vercel-ai') {
    const { generateText } = require('ai');
    const { createOpenAI } = require('@ai-sdk/openai');
    const openai = createOpenAI({ baseURL: `${BASE}/v1`, apiKey: 'dummy' });
    call = (s) => generateText({
      model: openai.chat(chat.model), system: s, prompt: user, maxOutputTokens: chat.max_completion_tokens,
      maxRetries: 0, experimental_telemetry: { isEnabled: true },
    });
  }
  for (const [m, s] of [['exact', system], ['drift', drifted(system)]]) {
    mode.now = m;
    await context.with(context.active(), () => call(s));
  }
  await provider.shutdown();
  await loggerProvider.shutdown();
}

if (SCENARIO) {
  run(SCENARIO).catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else {
  const only = (process.env.PACKETPROOF_LIB_SCENARIOS || '').split(' ').filter(Boolean);
  for (const [name, { env }] of Object.entries(SCENARIOS)) {
    if (only.length && !only.includes(name)) continue;
    const r = spawnSync(process.execPath, [__filename, PORT, BODIES, OUT, name], { env: { ...process.env, ...env }, stdio: 'inherit' });
    console.error(`${name}: exit ${r.status}`);
  }
}
