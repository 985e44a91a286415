"""A capture server for recording what official SDKs send (scripts/record/record.sh).

Listens on 127.0.0.1, records every request (method, URL as the SDK addressed it, headers
without credentials, body) as one HAR 1.2 entry per request in memory, and answers with a
minimal valid response of the API the path names (JSON, or an SSE stream when the request
asks to stream). Only the request matters; the response only keeps the SDK from failing.

GET /__har?clear=1 returns the entries recorded since the last clear (and clears them).
Standard library only: the recordings never depend on a third-party server.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ENTRIES = []
LOCK = threading.Lock()
SECRET_HEADERS = {"authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie"}

ANTHROPIC_MESSAGE = {
    "id": "msg_capture", "type": "message", "role": "assistant", "model": "capture",
    "content": [{"type": "text", "text": "{}"}], "stop_reason": "end_turn", "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
CHAT_COMPLETION = {
    "id": "chatcmpl-capture", "object": "chat.completion", "created": 0, "model": "capture",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}", "refusal": None},
                 "finish_reason": "stop", "logprobs": None}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}
RESPONSE = {
    "id": "resp_capture", "object": "response", "created_at": 0, "status": "completed", "model": "capture",
    "output": [{"type": "message", "id": "msg_capture", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "{}", "annotations": []}]}],
    "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None, "incomplete_details": None,
    "instructions": None, "metadata": {}, "temperature": 1, "top_p": 1,
    "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
              "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
}
GEMINI = {
    "candidates": [{"content": {"role": "model", "parts": [{"text": "{}"}]}, "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    "modelVersion": "capture",
}


def sse(events):
    out = []
    for name, data in events:
        if name:
            out.append(f"event: {name}\n")
        out.append(f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n")
    return "".join(out).encode()


def stream_for(path):
    if path.endswith("/v1/messages"):
        start = dict(ANTHROPIC_MESSAGE, content=[], stop_reason=None)
        return sse([
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": "{}"}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": 1}}),
            ("message_stop", {"type": "message_stop"}),
        ])
    if path.endswith("/chat/completions"):
        chunk = {"id": "chatcmpl-capture", "object": "chat.completion.chunk", "created": 0, "model": "capture",
                 "choices": [{"index": 0, "delta": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}]}
        usage = dict(chunk, choices=[], usage=CHAT_COMPLETION["usage"])
        return sse([(None, chunk), (None, usage), (None, "[DONE]")])
    if path.endswith("/responses"):
        return sse([
            ("response.created", {"type": "response.created", "sequence_number": 0,
                                  "response": dict(RESPONSE, status="in_progress", output=[])}),
            ("response.completed", {"type": "response.completed", "sequence_number": 1, "response": RESPONSE}),
        ])
    return sse([(None, GEMINI)])


def answer_for(path):
    if path.endswith("/v1/messages"):
        return ANTHROPIC_MESSAGE
    if path.endswith("/chat/completions"):
        return CHAT_COMPLETION
    if path.endswith("/responses"):
        return RESPONSE
    return GEMINI


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.startswith("/__har"):
            with LOCK:
                data = json.dumps(ENTRIES).encode()
                if "clear=1" in self.path:
                    ENTRIES.clear()
            self.reply(200, "application/json", data)
        else:
            self.reply(404, "application/json", b"{}")

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length).decode("utf-8")
        host = self.headers.get("host", "127.0.0.1")
        entry = {
            "startedDateTime": "1970-01-01T00:00:00.000Z",
            "time": 0,
            "request": {
                "method": "POST",
                "url": f"http://{host}{self.path}",
                "httpVersion": "HTTP/1.1",
                "headers": [{"name": k.lower(), "value": v} for k, v in self.headers.items()
                            if k.lower() not in SECRET_HEADERS],
                "queryString": [],
                "cookies": [],
                "headersSize": -1,
                "bodySize": len(body.encode()),
                "postData": {"mimeType": self.headers.get("content-type", ""), "text": body},
            },
        }
        with LOCK:
            ENTRIES.append(entry)
        path = self.path.split("?")[0]
        streamed = path.endswith(":streamGenerateContent") or '"stream":true' in body.replace(" ", "")
        if streamed:
            self.reply(200, "text/event-stream", stream_for(path))
        else:
            self.reply(200, "application/json", json.dumps(answer_for(path)).encode())

    def reply(self, status, kind, data):
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.serve_forever()
