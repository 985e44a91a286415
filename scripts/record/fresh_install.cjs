// What a fresh install of a Node GenAI instrumentation exports of one OpenAI call
// (scripts/record/fresh-install.sh): the versions npm picks today (openai 7, ai 7), content
// capture on, spans written as OTLP/JSON to OUT/{case}.jsonl. A case whose instrumentation
// patches nothing exports no GenAI span.
//
// argv: PORT BODIES_DIR OUT_DIR CASE; every request goes to the capture server on 127.0.0.1.
'use strict';
const fs = require('fs');
const path = require('path');

const [PORT, BODIES, OUT, CASE] = process.argv.slice(2);
const BASE = `http://127.0.0.1:${PORT}`;

async function main() {
  process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT = 'true';
  const { NodeTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-node');
  const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer');
  const file = path.join(OUT, `${CASE}.jsonl`);
  fs.writeFileSync(file, '');
  const exporter = {
    export(items, done) {
      fs.appendFileSync(file, Buffer.from(JsonTraceSerializer.serializeRequest(items)).toString('utf8') + '\n');
      done({ code: 0 });
    },
    shutdown: async () => {},
    forceFlush: async () => {},
  };
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  const chat = JSON.parse(fs.readFileSync(path.join(BODIES, 'openai-chat.json'), 'utf8'));
  const messages = chat.messages.map(({ role, content }) => ({ role, content }));
  try {
    if (CASE === 'node-openai7' || CASE === 'openinference-openai7') {
      if (CASE === 'node-openai7') {
        const { registerInstrumentations } = require('@opentelemetry/instrumentation');
        const { OpenAIInstrumentation } = require('@opentelemetry/instrumentation-openai');
        registerInstrumentations({ instrumentations: [new OpenAIInstrumentation()] });
      }
      const OpenAI = require('openai');
      if (CASE === 'openinference-openai7') {
        const { OpenAIInstrumentation } = require('@arizeai/openinference-instrumentation-openai');
        const instrumentation = new OpenAIInstrumentation();
        instrumentation.setTracerProvider(provider);
        instrumentation.manuallyInstrument(OpenAI);
      }
      const client = new OpenAI({ baseURL: `${BASE}/v1`, apiKey: 'dummy', maxRetries: 0 });
      await client.chat.completions.create({ model: chat.model, max_completion_tokens: chat.max_completion_tokens, messages });
    } else if (CASE === 'vercel-ai7' || CASE === 'vercel-ai7-registered') {
      const ai = require('ai');
      if (CASE === 'vercel-ai7-registered') {
        const { OpenTelemetry } = require('@ai-sdk/otel');
        ai.registerTelemetry(new OpenTelemetry());
      }
      const { createOpenAI } = require('@ai-sdk/openai');
      const openai = createOpenAI({ baseURL: `${BASE}/v1`, apiKey: 'dummy' });
      await ai.generateText({
        model: openai.chat(chat.model), system: messages[0].content, prompt: messages[1].content,
        maxOutputTokens: chat.max_completion_tokens, maxRetries: 0,
        experimental_telemetry: { isEnabled: true, recordInputs: true },
      });
    }
  } catch (e) {
    console.error(String(e).split('\n')[0]);
  }
  await provider.shutdown();
}

main();
