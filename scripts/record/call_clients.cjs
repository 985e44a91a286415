// Send one whole call through each client (scripts/record/record-calls.sh): the official
// openai and anthropic SDKs and the Vercel AI SDK 5, with a tool, a tool choice and
// temperature 0, and a JSON-schema answer. argv: PORT INPUTS_JSON OUT_DIR. Each body is
// written as OUT_DIR/<client>.<call>.json.
const fs = require("fs");
const Anthropic = require("@anthropic-ai/sdk");
const OpenAI = require("openai");
const { generateText, generateObject, tool, jsonSchema } = require("ai");
const { createOpenAI } = require("@ai-sdk/openai");
const { createAnthropic } = require("@ai-sdk/anthropic");

const [port, inputs, out] = process.argv.slice(2);
const base = `http://127.0.0.1:${port}`;
const i = JSON.parse(fs.readFileSync(inputs, "utf8"));

async function save(name) {
  const entries = await (await fetch(`${base}/__har?clear=1`)).json();
  if (entries.length !== 1) throw new Error(`${name}: expected one request, captured ${entries.length}`);
  fs.writeFileSync(`${out}/${name}.json`, entries[0].request.postData.text + "\n");
}

// A client that fails on the capture server's answer still sent its request: keep it.
async function sent(name, call) {
  try {
    await call();
  } catch (e) {
    console.error(`${name}: ${e.message.split("\n")[0]} (the request was sent)`);
  }
  await save(name);
}

const messages = [{ role: "system", content: i.system }, { role: "user", content: i.user }];
const fn = { name: i.tool.name, description: i.tool.description, parameters: i.tool.parameters };

(async () => {
  const openai = new (OpenAI.default || OpenAI)({ baseURL: `${base}/v1`, apiKey: "dummy", maxRetries: 0 });
  await sent("openai.chat-tools", () => openai.chat.completions.create({
    model: i.model, max_completion_tokens: i.maxTokens, temperature: i.temperature, messages,
    tools: [{ type: "function", function: fn }], tool_choice: "auto",
  }));
  await sent("openai.chat-schema", () => openai.chat.completions.create({
    model: i.model, max_completion_tokens: i.maxTokens, messages,
    response_format: { type: "json_schema", json_schema: { ...i.schema, strict: true } },
  }));
  await sent("openai.responses-tools", () => openai.responses.create({
    model: i.model, max_output_tokens: i.maxTokens, temperature: i.temperature, instructions: i.system,
    input: i.user, tools: [{ type: "function", ...fn, strict: true }], tool_choice: "auto",
  }));

  const anthropic = new (Anthropic.default || Anthropic)({ baseURL: base, apiKey: "dummy", maxRetries: 0 });
  await sent("anthropic.messages-tools", () => anthropic.messages.create({
    model: i.anthropicModel, max_tokens: i.maxTokens, temperature: i.temperature, system: i.system,
    messages: [{ role: "user", content: i.user }],
    tools: [{ name: fn.name, description: fn.description, input_schema: fn.parameters }],
    tool_choice: { type: "auto" },
  }));

  // The Vercel AI SDK 5: `openai(model)` is the Responses API.
  const vercelOpenAI = createOpenAI({ baseURL: `${base}/v1`, apiKey: "dummy" });
  const tools = { [fn.name]: tool({ description: fn.description, inputSchema: jsonSchema(fn.parameters) }) };
  await sent("vercel.openai-tools", () => generateText({
    model: vercelOpenAI(i.model), system: i.system, prompt: i.user, tools, toolChoice: "auto",
    temperature: i.temperature, maxOutputTokens: i.maxTokens, maxRetries: 0,
  }));
  await sent("vercel.openai-text", () => generateText({
    model: vercelOpenAI(i.model), system: i.system, prompt: i.user, maxRetries: 0,
  }));
  await sent("vercel.openai-schema", () => generateObject({
    model: vercelOpenAI(i.model), system: i.system, prompt: i.user, schema: jsonSchema(i.schema.schema),
    schemaName: i.schema.name, schemaDescription: i.schema.description, maxOutputTokens: i.maxTokens,
    maxRetries: 0,
  }));
  const vercelAnthropic = createAnthropic({ baseURL: `${base}/v1`, apiKey: "dummy" });
  await sent("vercel.anthropic-tools", () => generateText({
    model: vercelAnthropic(i.anthropicModel), system: i.system, prompt: i.user, tools, toolChoice: "auto",
    temperature: i.temperature, maxOutputTokens: i.maxTokens, maxRetries: 0,
  }));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
