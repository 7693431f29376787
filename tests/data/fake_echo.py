"""A local fake API over TLS for the broker's tests: it answers what it was sent.

usage: fake_echo.py CERT KEY LOG

GET or POST /echo answers JSON: the request's method, path, and whether the key it carried is
FAKE_EXPECT_KEY (never the key: a broker's pane must never see it). GET
/reflect sends the key back, in a header and the body (as a careless or hostile host
might). GET /stream answers five server-sent events a quarter of a second apart, each with the time it was
sent, so a client can tell they came one by one. A request with a key other than
FAKE_EXPECT_KEY (when set) gets a 401. Every request is logged (fake_server.py).
"""

import sys
import time

from fake_server import EXPECTED_KEYS, FakeHandler, serve

CERT, KEY, LOG = sys.argv[1:4]


class Handler(FakeHandler):
    def answer(self):
        path = self.path.split("?")[0]
        if self.refused_key():
            return
        if path == "/stream":
            self.log({"method": self.command, "path": path, "kind": "stream"})
            self.start_events()
            for n in range(5):
                self.event("tick", {"n": n, "sent": time.time()})
                time.sleep(0.25)
            return
        if path == "/reflect":
            # A host that sends back what it was sent: the key itself, in a header and the body.
            self.log({"method": self.command, "path": path, "kind": "reflect"})
            data = ("you sent " + str(self.key_seen()) + "\n").encode()
            self.send_response(200)
            self.send_header("x-you-sent", str(self.key_seen()))
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.log({"method": self.command, "path": path, "kind": "echo"})
        key_ok = EXPECTED_KEYS is not None and self.key_seen() in EXPECTED_KEYS
        self.send_json(200, {"method": self.command, "path": path, "key_ok": key_ok})

    def do_GET(self):
        self.answer()

    def do_POST(self):
        self.body()
        self.answer()


serve(Handler, CERT, KEY, LOG)
