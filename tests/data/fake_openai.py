"""A local fake of OpenAI's Responses API over TLS, for running the real Codex CLI against.

usage: fake_openai.py CERT KEY LOG

Every POST to /v1/responses is answered with a stream (SSE), and logged to LOG as a JSON line
(method, path, kind). What the answer is depends on the conversation's last user message:
- one that asks to create a file: a call of Codex's `exec_command` tool that writes hello.txt
  and asks to run outside Codex's own sandbox (so Codex asks the user first); once the call's
  output is in the conversation, "Done: hello.txt is written.";
- one that asks for something slowly: "Hello from the fake OpenAI" a word every half second
  for about six seconds;
- anything else: "Hello from the fake OpenAI" at once.
GET /v1/models lists one model. See fake_server.py for the rest.
"""

import json
import sys
import time

from fake_server import FakeHandler, serve

TEXT = "Hello from the fake OpenAI"
FINAL = "Done: hello.txt is written."
WRITE = {"cmd": "echo 'written by the agent' > hello.txt",
         "sandbox_permissions": "require_escalated",
         "justification": "The user asked for hello.txt."}


def last_user_text(body):
    text = ""
    for item in body.get("input", []) or []:
        if item.get("role") == "user" and isinstance(item.get("content"), list):
            text = " ".join(part.get("text", "") for part in item["content"]
                            if isinstance(part, dict))
    return text


def has_call_output(body):
    return any(item.get("type") == "function_call_output" for item in body.get("input", []) or [])


class Handler(FakeHandler):
    def do_GET(self):
        self.log({"method": "GET", "path": self.path})
        self.send_json(200, {"object": "list", "data": [{"id": "gpt-fake", "object": "model"}]})

    def do_POST(self):
        body = self.body()
        if self.refused_key():
            return
        asked = last_user_text(body).lower()
        if "create" in asked and has_call_output(body):
            kind = "final"
        elif "create" in asked:
            kind = "tool_use"
        elif "slowly" in asked:
            kind = "slow"
        else:
            kind = "text"
        self.log({"method": "POST", "path": self.path.split("?")[0], "kind": kind})
        self.start_events()

        def event(name, data):
            self.event(name, dict(data, type=name))

        event("response.created", {"response": {"id": "resp_fake"}})
        if kind == "tool_use":
            call = {"type": "function_call", "id": "fc_fake", "call_id": "call_fake",
                    "name": "exec_command", "arguments": json.dumps(WRITE), "status": "completed"}
            event("response.output_item.added",
                  {"output_index": 0, "item": dict(call, arguments="", status="in_progress")})
            event("response.function_call_arguments.delta",
                  {"output_index": 0, "item_id": "fc_fake", "delta": call["arguments"]})
            event("response.output_item.done", {"output_index": 0, "item": call})
        else:
            text = FINAL if kind == "final" else TEXT
            words = text.split(" ")
            pieces = [w + " " for w in words[:-1]] + [words[-1]] if kind == "slow" else [text]
            item = {"type": "message", "role": "assistant", "id": "msg_fake",
                    "content": [{"type": "output_text", "text": text}]}
            event("response.output_item.added", {"output_index": 0, "item": dict(item, content=[])})
            for piece in pieces:
                if kind == "slow":
                    time.sleep(6.0 / len(pieces))
                event("response.output_text.delta", {"output_index": 0, "item_id": "msg_fake",
                                                     "content_index": 0, "delta": piece})
            event("response.output_item.done", {"output_index": 0, "item": item})
        usage = {"input_tokens": 12, "input_tokens_details": None, "output_tokens": 8,
                 "output_tokens_details": None, "total_tokens": 20}
        event("response.completed", {"response": {"id": "resp_fake", "usage": usage}})


serve(Handler, *sys.argv[1:4])
