"""A local fake of the Gemini API over TLS, for running the real Gemini CLI against.

usage: fake_gemini.py CERT KEY LOG

A streamed request (`:streamGenerateContent?alt=sse`) is answered "Hello from the fake
Gemini"; any other `generateContent` (the CLI's model router, which wants JSON) with a routing
decision; `countTokens` with a count. Every request is logged to LOG as a JSON line (method,
path). Listens on a free port of 127.0.0.1 and prints "listening PORT".
"""

import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CERT, KEY, LOG = sys.argv[1:4]
TEXT = "Hello from the fake Gemini"


def log(entry):
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


def answer(text):
    return {
        "candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 8, "totalTokenCount": 20},
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, status, value):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        log({"method": "GET", "path": self.path})
        self.send_json(404, {"error": {"code": 404, "message": "not here", "status": "NOT_FOUND"}})

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        log({"method": "POST", "path": self.path})
        if ":countTokens" in self.path:
            return self.send_json(200, {"totalTokens": 12})
        if "alt=sse" not in self.path:
            routed = json.dumps({"reasoning": "a greeting", "model_choice": "flash"})
            return self.send_json(200, answer(routed))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(f"data: {json.dumps(answer(TEXT))}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
print("listening", server.server_address[1], flush=True)
server.serve_forever()
