"""A local fake of Anthropic's Messages API over TLS, for running the real Claude Code against.

usage: fake_anthropic.py CERT KEY LOG WRITE_PATH

It scripts one agent turn: asked in a conversation that offers the Write tool, it answers with
a Write of WRITE_PATH; given that tool's result, it answers with text and ends the turn. Asked
for something slowly, it streams "Hello from the fake Anthropic" a word every second. Other
requests (a title, a quota check) get a short text answer; count_tokens a count. Every request
is logged to LOG as a JSON line (method, path, kind). Streams (SSE) when asked to, as the API
does. See fake_server.py for the rest.
"""

import json
import sys
import time

from fake_server import FakeHandler, serve

CERT, KEY, LOG, WRITE_PATH = sys.argv[1:5]
CONTENT = "written by the agent, through the proxy\n"
FINAL = "Done: hello.txt is written."
SLOW = "Hello from the fake Anthropic"


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


def last_user_text(body):
    text = ""
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") != "user":
            continue
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            parts = [p.get("text", "") for p in content if isinstance(p, dict) and "text" in p]
            text = " ".join(parts) or text
    return text


def answer_for(body):
    """The content blocks and stop reason of the answer, and what kind of request it was."""
    if offers_write(body) and "slowly" in last_user_text(body).lower():
        return [{"type": "text", "text": SLOW}], "end_turn", "slow"
    if offers_write(body) and has_tool_result(body):
        return [{"type": "text", "text": FINAL}], "end_turn", "final"
    if offers_write(body):
        write = {"file_path": WRITE_PATH, "content": CONTENT}
        block = {"type": "tool_use", "id": "toolu_fake_1", "name": "Write", "input": write}
        return [block], "tool_use", "tool_use"
    return [{"type": "text", "text": "ok"}], "end_turn", "side"


class Handler(FakeHandler):
    def not_found(self):
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})

    def do_GET(self):
        self.log({"method": "GET", "path": self.path, "kind": "unknown"})
        self.not_found()

    def do_HEAD(self):
        self.log({"method": "HEAD", "path": self.path, "kind": "unknown"})
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.body()
        if self.refused_key():
            return
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            self.log({"method": "POST", "path": path, "kind": "count"})
            return self.send_json(200, {"input_tokens": 12})
        if not path.endswith("/v1/messages"):
            self.log({"method": "POST", "path": path, "kind": "unknown"})
            return self.not_found()
        content, stop, kind = answer_for(body)
        self.log({"method": "POST", "path": path, "kind": kind, "model": body.get("model")})
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
        self.start_events()
        start = dict(message, content=[], stop_reason=None)
        self.event("message_start", {"type": "message_start", "message": start})
        for index, block in enumerate(content):
            if block["type"] == "text":
                opened = {"type": "text", "text": ""}
                words = block["text"].split(" ") if kind == "slow" else [block["text"]]
                pieces = [w + " " for w in words[:-1]] + words[-1:]
                deltas = [{"type": "text_delta", "text": piece} for piece in pieces]
            else:
                opened = dict(block, input={})
                deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
            self.event("content_block_start",
                       {"type": "content_block_start", "index": index, "content_block": opened})
            for delta in deltas:
                if kind == "slow":
                    time.sleep(1.0)
                self.event("content_block_delta",
                           {"type": "content_block_delta", "index": index, "delta": delta})
            self.event("content_block_stop", {"type": "content_block_stop", "index": index})
        self.event("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 8}})
        self.event("message_stop", {"type": "message_stop"})


serve(Handler, CERT, KEY, LOG)
