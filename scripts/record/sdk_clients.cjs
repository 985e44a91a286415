// Send each packet's request through the official Node SDKs (scripts/record/record.sh).
// argv: PORT BODIES_DIR OUT_DIR, as sdk_clients.py. CommonJS so that NODE_PATH finds the
// SDKs installed in a temporary folder outside the repository.
const fs = require("fs");
const Anthropic = require("@anthropic-ai/sdk");
const OpenAI = require("openai");
const { GoogleGenAI } = require("@google/genai");

const [port, bodies, out] = process.argv.slice(2);
const base = `http://127.0.0.1:${port}`;
const body = (api) => JSON.parse(fs.readFileSync(`${bodies}/${api}.json`, "utf8"));
const pick = (b, keys) => Object.fromEntries(keys.map((k) => [k, b[k]]));

async function drain() {
  return (await fetch(`${base}/__har?clear=1`)).json();
}

async function save(name) {
  const entries = await drain();
  if (entries.length !== 1) throw new Error(`${name}: expected one request, captured ${entries.length}`);
  const entry = entries[0];
  fs.writeFileSync(`${out}/${name}.json`, entry.request.postData.text);
  const har = { log: { version: "1.2", creator: { name: "packetproof capture_server.py", version: "1" }, entries: [entry] } };
  fs.writeFileSync(`${out}/${name}.har`, JSON.stringify(har, null, 1) + "\n");
}

async function anthropic() {
  const b = body("anthropic");
  const client = new (Anthropic.default || Anthropic)({ baseURL: base, apiKey: "dummy", maxRetries: 0 });
  const params = pick(b, ["model", "max_tokens", "system", "messages", "tools", "tool_choice"]);
  // A plain request whose max_tokens implies over ten minutes needs an explicit timeout.
  await client.messages.create(params, { timeout: 900000 });
  await save("anthropic");
  await client.messages.stream(params).finalMessage();
  await save("anthropic.stream");
}

async function openaiChat() {
  const b = body("openai-chat");
  const client = new (OpenAI.default || OpenAI)({ baseURL: `${base}/v1`, apiKey: "dummy", maxRetries: 0 });
  const params = pick(b, ["model", "max_completion_tokens", "messages", "response_format"]);
  await client.chat.completions.create(params);
  await save("openai-chat");
  for await (const _ of await client.chat.completions.create({ ...params, stream: true })) {
  }
  await save("openai-chat.stream");
}

async function openaiResponses() {
  const b = body("openai-responses");
  const client = new (OpenAI.default || OpenAI)({ baseURL: `${base}/v1`, apiKey: "dummy", maxRetries: 0 });
  const params = pick(b, ["model", "max_output_tokens", "instructions", "input", "text"]);
  await client.responses.create(params);
  await save("openai-responses");
  for await (const _ of await client.responses.create({ ...params, stream: true })) {
  }
  await save("openai-responses.stream");
}

async function gemini() {
  const b = body("gemini");
  const model = fs.readFileSync(`${bodies}/gemini.model`, "utf8").trim();
  const client = new GoogleGenAI({ apiKey: "dummy", httpOptions: { baseUrl: base } });
  const request = {
    model,
    contents: b.contents[0].parts[0].text,
    config: {
      systemInstruction: b.systemInstruction.parts[0].text,
      maxOutputTokens: b.generationConfig.maxOutputTokens,
      responseMimeType: b.generationConfig.responseMimeType,
    },
  };
  await client.models.generateContent(request);
  await save("gemini");
  for await (const _ of await client.models.generateContentStream(request)) {
  }
  await save("gemini.stream");
}

(async () => {
  await drain();
  await anthropic();
  await openaiChat();
  await openaiResponses();
  await gemini();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
