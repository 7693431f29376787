"""A local fake of the Gemini API over TLS, for running the real Gemini CLI against.

usage: fake_gemini.py CERT KEY LOG

A streamed request (`:streamGenerateContent?alt=sse`) is answered "Hello from the fake
Gemini"; any other `generateContent` (the CLI's model router, which wants JSON) with a routing
decision; `countTokens` with a count. Every request is logged to LOG as a JSON line (method,
path). See fake_server.py for the rest.
"""

import json
import sys

from fake_server import FakeHandler, serve

TEXT = "Hello from the fake Gemini"


def answer(text):
    return {
        "candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 8, "totalTokenCount": 20},
    }


class Handler(FakeHandler):
    def do_GET(self):
        self.log({"method": "GET", "path": self.path})
        self.send_json(404, {"error": {"code": 404, "message": "not here", "status": "NOT_FOUND"}})

    def do_POST(self):
        self.body()
        self.log({"method": "POST", "path": self.path})
        if ":countTokens" in self.path:
            return self.send_json(200, {"totalTokens": 12})
        if "alt=sse" not in self.path:
            routed = json.dumps({"reasoning": "a greeting", "model_choice": "flash"})
            return self.send_json(200, answer(routed))
        self.start_events()
        self.event(None, answer(TEXT))


serve(Handler, *sys.argv[1:4])
