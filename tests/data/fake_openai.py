"""A local fake of OpenAI's Responses API over TLS, for running the real Codex CLI against.

usage: fake_openai.py CERT KEY LOG

Every POST to /v1/responses is answered with a streamed (SSE) assistant message, "Hello from
the fake OpenAI", and logged to LOG as a JSON line (method, path); GET /v1/models lists one
model. Listens on a free port of 127.0.0.1 and prints "listening PORT".
"""

import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CERT, KEY, LOG = sys.argv[1:4]
TEXT = "Hello from the fake OpenAI"


def log(entry):
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        log({"method": "GET", "path": self.path})
        body = json.dumps({"object": "list", "data": [{"id": "gpt-fake", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        log({"method": "POST", "path": self.path.split("?")[0]})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()

        def event(kind, data):
            data["type"] = kind
            self.wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        item = {"type": "message", "role": "assistant", "id": "msg_fake",
                "content": [{"type": "output_text", "text": TEXT}]}
        event("response.created", {"response": {"id": "resp_fake"}})
        event("response.output_item.added", {"output_index": 0, "item": dict(item, content=[])})
        event("response.output_text.delta", {"output_index": 0, "item_id": "msg_fake",
                                             "content_index": 0, "delta": TEXT})
        event("response.output_item.done", {"output_index": 0, "item": item})
        usage = {"input_tokens": 12, "input_tokens_details": None, "output_tokens": 8,
                 "output_tokens_details": None, "total_tokens": 20}
        event("response.completed", {"response": {"id": "resp_fake", "usage": usage}})
        self.close_connection = True


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
print("listening", server.server_address[1], flush=True)
server.serve_forever()
