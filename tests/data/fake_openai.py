"""A local fake of OpenAI's Responses API over TLS, for running the real Codex CLI against.

usage: fake_openai.py CERT KEY LOG

Every POST to /v1/responses is answered with a streamed (SSE) assistant message, "Hello from
the fake OpenAI", and logged to LOG as a JSON line (method, path); GET /v1/models lists one
model. See fake_server.py for the rest.
"""

import sys

from fake_server import FakeHandler, serve

TEXT = "Hello from the fake OpenAI"


class Handler(FakeHandler):
    def do_GET(self):
        self.log({"method": "GET", "path": self.path})
        self.send_json(200, {"object": "list", "data": [{"id": "gpt-fake", "object": "model"}]})

    def do_POST(self):
        self.body()
        self.log({"method": "POST", "path": self.path.split("?")[0]})
        self.start_events()

        def event(kind, data):
            self.event(kind, dict(data, type=kind))

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


serve(Handler, *sys.argv[1:4])
