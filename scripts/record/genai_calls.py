"""The GenAI calls the OTLP client scripts send, as opentelemetry-instrumentation-openai-v2
records them: for a packet, its call as is (matched), its user text edited (unreviewed) and
without captured content (not judgeable). Shared by otlp_clients.py and otlp_grpc_client.py.
"""
import json


def call_attributes(packet, user, with_content=True):
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": packet["model"],
        "gen_ai.request.max_tokens": packet["maxTokens"],
    }
    if with_content:
        attributes["gen_ai.input.messages"] = json.dumps([
            {"role": "system", "parts": [{"type": "text", "content": packet["systemPrompt"]}]},
            {"role": "user", "parts": [{"type": "text", "content": user}]},
        ])
    return attributes


def calls(packet):
    user = packet["effectiveUserMessage"]
    return [
        call_attributes(packet, user),
        call_attributes(packet, user + " Also add a footer."),
        call_attributes(packet, user, with_content=False),
    ]
