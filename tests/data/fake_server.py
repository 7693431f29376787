"""What the fake APIs (fake_anthropic.py, fake_openai.py, fake_gemini.py) share: a request log
of JSON lines, JSON and server-sent-event answers, and a TLS server on a free port of
127.0.0.1 that prints "listening PORT" once it accepts connections."""

import json
import os
import ssl
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The API keys a fake accepts (FAKE_EXPECT_KEY, comma-separated); without it, any key. A request
# with another key gets the API's kind of 401.
EXPECTED_KEYS = os.environ.get("FAKE_EXPECT_KEY", "").split(",") if "FAKE_EXPECT_KEY" in os.environ else None


class FakeHandler(BaseHTTPRequestHandler):
    """A request handler whose requests are logged to `log_path` (set by `serve`)."""

    protocol_version = "HTTP/1.1"
    log_path = None

    def log_message(self, *args):
        pass

    def log(self, entry):
        entry = dict(
            entry,
            key=self.key_seen(),
            host=self.headers.get("host"),
            encoding=self.headers.get("accept-encoding"),
        )
        with open(self.log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def key_seen(self):
        """The API key the request carries, in whichever header its API takes it."""
        bearer = self.headers.get("authorization", "")
        bearer = bearer[len("Bearer "):] if bearer.startswith("Bearer ") else None
        return self.headers.get("x-api-key") or self.headers.get("x-goog-api-key") or bearer

    def refused_key(self):
        """Answer 401 when a key is expected and this is not it; whether it did."""
        if EXPECTED_KEYS is None or self.key_seen() in EXPECTED_KEYS:
            return False
        self.log({"method": self.command, "path": self.path.split("?")[0], "kind": "refused"})
        error = {"type": "authentication_error", "message": "invalid x-api-key"}
        self.send_json(401, {"type": "error", "error": error})
        return True

    def body(self):
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {}

    def send_json(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_events(self):
        """Begin a server-sent-event stream; the connection closes after it."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def event(self, name, data):
        """One event: named (`event: NAME`) unless `name` is None."""
        head = f"event: {name}\n" if name else ""
        self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()


def serve(handler, cert, key, log_path):
    """Serve `handler` (a FakeHandler) over TLS with `cert` and `key`, logging to `log_path`."""
    handler.log_path = log_path
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("listening", server.server_address[1], flush=True)
    server.serve_forever()
