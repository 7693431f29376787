"""A local fake API over TLS for the broker's tests: it answers what it was sent.

usage: fake_echo.py CERT KEY LOG

GET or POST /echo answers JSON: the request's method, path, and whether the key it carried is
FAKE_EXPECT_KEY (never the key: a broker's pane must never see it). GET
/reflect sends the key back, in a header and the body (as a careless or hostile host
might). /upper, /hname, /trailer and /tegzip send it back in upper case, in a header's name, in a
trailer and in a gzip transfer coding. GET /stream answers five server-sent events a quarter of a second apart, each with the time it was
sent, so a client can tell they came one by one. A request with a key other than
FAKE_EXPECT_KEY (when set) gets a 401. Every request is logged (fake_server.py).
"""

import gzip
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
        if path in ("/upper", "/hname", "/trailer", "/tegzip"):
            self.hostile(path)
            return
        self.log({"method": self.command, "path": path, "kind": "echo"})
        key_ok = EXPECTED_KEYS is not None and self.key_seen() in EXPECTED_KEYS
        self.send_json(200, {"method": self.command, "path": path, "key_ok": key_ok})

    def hostile(self, path):
        """The key sent back in ways a careless or hostile host might: in upper case, in a
        header's name, in a trailer, in a gzip transfer coding."""
        self.log({"method": self.command, "path": path, "kind": "hostile"})
        key = str(self.key_seen())
        if path == "/upper":
            data = ("you sent " + key.upper() + "\n").encode()
            self.send_response(200)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif path == "/hname":
            self.send_response(200)
            self.send_header("x-" + key, "1")
            self.send_header("content-length", "3")
            self.end_headers()
            self.wfile.write(b"ok\n")
        elif path == "/trailer":
            self.send_response(200)
            self.send_header("transfer-encoding", "chunked")
            self.send_header("trailer", "x-t")
            self.end_headers()
            self.wfile.write(b"3\r\nok\n\r\n0\r\nx-t: " + key.encode() + b"\r\n\r\n")
        else:
            data = gzip.compress(("k=" + key + "\n").encode())
            self.send_response(200)
            self.send_header("transfer-encoding", "gzip, chunked")
            self.end_headers()
            self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n0\r\n\r\n")

    def do_GET(self):
        self.answer()

    def do_POST(self):
        self.body()
        self.answer()


serve(Handler, CERT, KEY, LOG)
