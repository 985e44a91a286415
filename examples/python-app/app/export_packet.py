"""packetproof's exporter for the app: one request file in, one runtime packet out.

Run as `python3 app/export_packet.py REQUEST.json` (harness.toml [exporter]); prints
the packet on stdout. The hash recipe (docs/packet-format.md) in a few lines:
exactInputHash is the sha256 of the canonical JSON of what the model receives
(attempt, provider, model, maxTokens, the system and user messages, and the output
schema if there is one); checksum is the sha256 of the canonical JSON of the whole
packet without its checksum. Python's json.dumps with sorted keys and no spaces is
RFC 8785 for this data (strings and integers; keys in the Basic Multilingual Plane).
"""

import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import prompts  # noqa: E402  (the app's own module)


def canonical(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sha256(value) -> str:
    return "sha256:" + hashlib.sha256(canonical(value)).hexdigest()


def packet(request: dict) -> dict:
    paths, system, user = prompts.render(request)
    render_input = {key: request[key] for key in ("customerName", "question", "previousAnswer", "tone") if key in request}
    out = {
        "packetVersion": 1,
        "agentId": "support-reply",
        "taskType": "support-reply",
        "promptMode": "chat",
        "attempt": 1,
        "provider": request["provider"],
        "model": request["model"],
        "maxTokens": request["maxTokens"],
        "promptPaths": paths,
        "promptVersions": {path: "sha256:" + hashlib.sha256((prompts.PROMPTS / path).read_bytes()).hexdigest() for path in paths},
        "systemPrompt": system,
        "userMessage": user,
        "effectiveUserMessage": user,
        "renderInput": render_input,
        "resolvedBranch": {"agentId": "support-reply", "tone": request["tone"], "followUp": "previousAnswer" in request},
    }
    out["exactInputHash"] = sha256({
        "attempt": out["attempt"],
        "provider": out["provider"],
        "model": out["model"],
        "maxTokens": out["maxTokens"],
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    })
    out["checksum"] = sha256(out)
    return out


if __name__ == "__main__":
    request = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    json.dump(packet(request), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
