"""Send one whole call through the official Python SDKs (scripts/record/record-calls.sh):
openai (Chat Completions with a tool and with a JSON-schema answer, Responses with a tool)
and anthropic (Messages with a tool), temperature 0. argv: PORT INPUTS_JSON OUT_DIR; each
body is written as OUT_DIR/python-<client>.<call>.json.
"""
import json
import sys
import urllib.request

import anthropic
import openai

port, inputs, out = sys.argv[1], sys.argv[2], sys.argv[3]
base = f"http://127.0.0.1:{port}"
i = json.load(open(inputs, encoding="utf-8"))


def save(name):
    with urllib.request.urlopen(f"{base}/__har?clear=1") as answer:
        entries = json.load(answer)
    if len(entries) != 1:
        raise SystemExit(f"{name}: expected one request, captured {len(entries)}")
    with open(f"{out}/python-{name}.json", "w", encoding="utf-8") as f:
        f.write(entries[0]["request"]["postData"]["text"] + "\n")


def sent(name, call):
    # A client that fails on the capture server's answer still sent its request: keep it.
    try:
        call()
    except Exception as e:  # noqa: BLE001
        print(f"{name}: {str(e).splitlines()[0]} (the request was sent)", file=sys.stderr)
    save(name)


messages = [{"role": "system", "content": i["system"]}, {"role": "user", "content": i["user"]}]
fn = {"name": i["tool"]["name"], "description": i["tool"]["description"], "parameters": i["tool"]["parameters"]}
client = openai.OpenAI(base_url=f"{base}/v1", api_key="dummy", max_retries=0)
sent("openai.chat-tools", lambda: client.chat.completions.create(
    model=i["model"], max_completion_tokens=i["maxTokens"], temperature=i["temperature"], messages=messages,
    tools=[{"type": "function", "function": fn}], tool_choice="auto"))
sent("openai.chat-schema", lambda: client.chat.completions.create(
    model=i["model"], max_completion_tokens=i["maxTokens"], messages=messages,
    response_format={"type": "json_schema", "json_schema": dict(i["schema"], strict=True)}))
sent("openai.responses-tools", lambda: client.responses.create(
    model=i["model"], max_output_tokens=i["maxTokens"], temperature=i["temperature"], instructions=i["system"],
    input=i["user"], tools=[dict(fn, type="function", strict=True)], tool_choice="auto"))
claude = anthropic.Anthropic(base_url=base, api_key="dummy", max_retries=0)
# anthropic 2.15 takes no sampling settings in `messages.create` (no temperature, top_p, top_k).
sent("anthropic.messages-tools", lambda: claude.messages.create(
    model=i["anthropicModel"], max_tokens=i["maxTokens"], system=i["system"],
    messages=[{"role": "user", "content": i["user"]}],
    tools=[{"name": fn["name"], "description": fn["description"], "input_schema": fn["parameters"]}],
    tool_choice={"type": "auto"}))
