"""A local fake of Anthropic's Messages API over TLS, for running the real Claude Code against.

usage: fake_anthropic.py CERT KEY LOG WRITE_PATH

It scripts one agent turn: asked in a conversation that offers the Write tool, it answers with
a Write of WRITE_PATH; given that tool's result, it answers with text and ends the turn. Other
requests (a title, a quota check) get a short text answer; count_tokens a count. Every request
is logged to LOG as a JSON line (method, path, kind). Streams (SSE) when asked to, as the API
does. Listens on a free port of 127.0.0.1 and prints "listening PORT" once it accepts
connections.
"""

import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CERT, KEY, LOG, WRITE_PATH = sys.argv[1:5]
CONTENT = "written by the agent, through the proxy\n"
FINAL = "Done: hello.txt is written."


def log(entry):
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


def has_tool_result(body):
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(part, dict) and part.get("type") == "tool_result" for part in content
        ):
            return True
    return False


def offers_write(body):
    return any(tool.get("name") == "Write" for tool in body.get("tools", []) or [])


def answer_for(body):
    """The content blocks and stop reason of the answer, and what kind of request it was."""
    if offers_write(body) and has_tool_result(body):
        return [{"type": "text", "text": FINAL}], "end_turn", "final"
    if offers_write(body):
        write = {"file_path": WRITE_PATH, "content": CONTENT}
        block = {"type": "tool_use", "id": "toolu_fake_1", "name": "Write", "input": write}
        return [block], "tool_use", "tool_use"
    return [{"type": "text", "text": "ok"}], "end_turn", "side"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        log({"method": "GET", "path": self.path, "kind": "unknown"})
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})

    def do_HEAD(self):
        log({"method": "HEAD", "path": self.path, "kind": "unknown"})
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            log({"method": "POST", "path": path, "kind": "count"})
            return self.send_json(200, {"input_tokens": 12})
        if not path.endswith("/v1/messages"):
            log({"method": "POST", "path": path, "kind": "unknown"})
            return self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})
        content, stop, kind = answer_for(body)
        log({"method": "POST", "path": path, "kind": kind, "model": body.get("model")})
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 8},
        }
        if not body.get("stream"):
            return self.send_json(200, message)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()

        def event(name, data):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        start = dict(message, content=[], stop_reason=None)
        event("message_start", {"type": "message_start", "message": start})
        for index, block in enumerate(content):
            if block["type"] == "text":
                event("content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": {"type": "text", "text": ""}})
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                empty = dict(block, input={})
                event("content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": empty})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            event("content_block_stop", {"type": "content_block_stop", "index": index})
        event("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": stop, "stop_sequence": None},
                                "usage": {"output_tokens": 8}})
        event("message_stop", {"type": "message_stop"})
        self.close_connection = True


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
print("listening", server.server_address[1], flush=True)
server.serve_forever()
