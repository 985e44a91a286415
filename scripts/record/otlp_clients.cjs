// What the Node SDK's OTLP/HTTP trace exporters send for GenAI calls
// (scripts/record/record_otlp.sh): @opentelemetry/exporter-trace-otlp-http (JSON) and
// @opentelemetry/exporter-trace-otlp-proto (protobuf), each with the OpenAI golden packet's
// call as is (matched), with its user text edited (unreviewed), and without captured
// content (not judgeable), the attributes as opentelemetry-instrumentation-openai-v2 sets them.
//
//   node otlp_clients.cjs PORT PACKET
const fs = require("node:fs");
const { TracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace");
const { OTLPTraceExporter: JsonExporter } = require("@opentelemetry/exporter-trace-otlp-http");
const { OTLPTraceExporter: ProtoExporter } = require("@opentelemetry/exporter-trace-otlp-proto");

const [port, packetFile] = process.argv.slice(2);
const base = `http://127.0.0.1:${port}`;
const packet = JSON.parse(fs.readFileSync(packetFile, "utf8"));

function call(user, withContent = true) {
  const attributes = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": packet.model,
    "gen_ai.request.max_tokens": packet.maxTokens,
  };
  if (withContent) {
    attributes["gen_ai.input.messages"] = JSON.stringify([
      { role: "system", parts: [{ type: "text", content: packet.systemPrompt }] },
      { role: "user", parts: [{ type: "text", content: user }] },
    ]);
  }
  return attributes;
}

const CALLS = [
  call(packet.effectiveUserMessage),
  call(packet.effectiveUserMessage + " Also add a footer."),
  call(packet.effectiveUserMessage, false),
];

async function record(name, Exporter) {
  await fetch(`${base}/__name`, { method: "POST", body: name });
  const provider = new TracerProvider({
    spanProcessors: [new BatchSpanProcessor({ exporter: new Exporter({ url: `${base}/v1/traces` }) })],
  });
  const tracer = provider.getTracer("packetproof.recording");
  for (const attributes of CALLS) {
    tracer.startSpan(`chat ${packet.model}`, { attributes }).end();
  }
  await provider.forceFlush();
  await provider.shutdown();
}

(async () => {
  await record("node.traces.json", JsonExporter);
  await record("node.traces.pb", ProtoExporter);
})();
