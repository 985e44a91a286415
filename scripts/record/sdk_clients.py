"""Send each packet's request through the official Python SDKs (scripts/record/record.sh).

argv: PORT BODIES_DIR OUT_DIR. BODIES_DIR holds `packetproof wire` bodies ({api}.json); the
SDK calls below pass their fields as an application would, so what is recorded is what the
SDK makes of them. Each call is made plain and streamed.
"""
import json
import sys
import urllib.request

import anthropic
import openai
from google import genai
from google.genai import types

PORT, BODIES, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
BASE = f"http://127.0.0.1:{PORT}"


def body(api):
    with open(f"{BODIES}/{api}.json", encoding="utf-8") as f:
        return json.load(f)


def drain():
    with urllib.request.urlopen(f"{BASE}/__har?clear=1") as r:
        return json.loads(r.read())


def save(name):
    entries = drain()
    assert len(entries) == 1, f"{name}: expected one request, captured {len(entries)}"
    write(name, entries[0])


def write(name, entry):
    with open(f"{OUT}/{name}.json", "w", encoding="utf-8") as f:
        f.write(entry["request"]["postData"]["text"])
    har = {"log": {"version": "1.2", "creator": {"name": "packetproof capture_server.py", "version": "1"},
                   "entries": [entry]}}
    with open(f"{OUT}/{name}.har", "w", encoding="utf-8") as f:
        json.dump(har, f, indent=1, ensure_ascii=False)
        f.write("\n")


def record_anthropic():
    b = body("anthropic")
    client = anthropic.Anthropic(base_url=BASE, api_key="dummy", max_retries=0)
    kwargs = {k: b[k] for k in ("model", "max_tokens", "system", "messages", "tools", "tool_choice")}
    # The SDK refuses a plain request whose max_tokens implies over ten minutes unless a timeout is set.
    client.messages.create(**kwargs, timeout=900)
    save("anthropic")
    with client.messages.stream(**kwargs) as stream:
        stream.until_done()
    save("anthropic.stream")


def record_openai_chat():
    b = body("openai-chat")
    client = openai.OpenAI(base_url=f"{BASE}/v1", api_key="dummy", max_retries=0)
    kwargs = {k: b[k] for k in ("model", "max_completion_tokens", "messages", "response_format")}
    client.chat.completions.create(**kwargs)
    save("openai-chat")
    for _ in client.chat.completions.create(**kwargs, stream=True):
        pass
    save("openai-chat.stream")


def record_openai_responses():
    b = body("openai-responses")
    client = openai.OpenAI(base_url=f"{BASE}/v1", api_key="dummy", max_retries=0)
    kwargs = {k: b[k] for k in ("model", "max_output_tokens", "instructions", "input", "text")}
    client.responses.create(**kwargs)
    save("openai-responses")
    for _ in client.responses.create(**kwargs, stream=True):
        pass
    save("openai-responses.stream")


def record_gemini():
    b = body("gemini")
    with open(f"{BODIES}/gemini.model", encoding="utf-8") as f:
        model = f.read().strip()
    client = genai.Client(api_key="dummy", http_options=types.HttpOptions(base_url=BASE))
    config = types.GenerateContentConfig(
        system_instruction=b["systemInstruction"]["parts"][0]["text"],
        max_output_tokens=b["generationConfig"]["maxOutputTokens"],
        response_mime_type=b["generationConfig"]["responseMimeType"],
    )
    contents = b["contents"][0]["parts"][0]["text"]
    client.models.generate_content(model=model, contents=contents, config=config)
    save("gemini")
    for _ in client.models.generate_content_stream(model=model, contents=contents, config=config):
        pass
    save("gemini.stream")


if __name__ == "__main__":
    drain()
    record_anthropic()
    record_openai_chat()
    record_openai_responses()
    record_gemini()
