"""A capture server for recording what OpenTelemetry exporters send (scripts/record/record_otlp.sh).

Listens on 127.0.0.1 and answers every OTLP/HTTP export with an empty success response in
the request's encoding. A client names the next recording with `POST /__name` (the body is
the name); the next export's body is written, byte for byte, to OUT/NAME, and its path,
Content-Type and Content-Encoding to OUT/requests.json. Standard library only.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OUT = sys.argv[1]
LOCK = threading.Lock()
STATE = {"next": None, "requests": {}}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length", "0")))
        # Node's exporters stream the body in chunks.
        chunks = []
        while True:
            size = int(self.rfile.readline().split(b";")[0], 16)
            chunk = self.rfile.read(size)
            self.rfile.readline()
            if size == 0:
                return b"".join(chunks)
            chunks.append(chunk)

    def do_POST(self):
        body = self.body()
        if self.path == "/__name":
            with LOCK:
                STATE["next"] = body.decode()
            return self.answer(200, "text/plain", b"")
        with LOCK:
            name, STATE["next"] = STATE["next"], None
            if name is None:
                return self.answer(500, "text/plain", b"no recording named")
            with open(f"{OUT}/{name}", "wb") as f:
                f.write(body)
            STATE["requests"][name] = {
                "path": self.path,
                "contentType": self.headers.get("Content-Type"),
                "contentEncoding": self.headers.get("Content-Encoding"),
                "userAgent": self.headers.get("User-Agent"),
            }
            with open(f"{OUT}/requests.json", "w") as f:
                json.dump(STATE["requests"], f, indent=2, sort_keys=True)
                f.write("\n")
        ctype = self.headers.get("Content-Type", "")
        self.answer(200, ctype, b"{}" if ctype.startswith("application/json") else b"")

    def answer(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
