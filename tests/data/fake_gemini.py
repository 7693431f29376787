"""A local fake of the Gemini API over TLS, for running the real Gemini CLI against.

usage: fake_gemini.py CERT KEY LOG WORK

A streamed request (`:streamGenerateContent?alt=sse`) is answered by what the conversation's
last user text asks for:
- to create a file: a call of Gemini CLI's `run_shell_command` tool that writes WORK/hello.txt
  (which the CLI asks the user to allow); once the call's result is in the conversation,
  "Done: hello.txt is written.";
- something slowly: "Hello from the fake Gemini" a word every half second for about six
  seconds;
- anything else: "Hello from the fake Gemini".
Any other `generateContent` (the CLI's model router, which wants JSON) gets a routing decision;
`countTokens` a count. Every request is logged to LOG as a JSON line (method, path, kind). See
fake_server.py for the rest.
"""

import json
import sys
import time

from fake_server import FakeHandler, serve

TEXT = "Hello from the fake Gemini"
FINAL = "Done: hello.txt is written."
WORK = sys.argv[4] if len(sys.argv) > 4 else "."


def answer(parts, last=True):
    """One answer (or, not `last`, one chunk of a streamed answer before its end)."""
    candidate = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if last:
        candidate["finishReason"] = "STOP"
    return {
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 8, "totalTokenCount": 20},
    }


def last_user_text(body):
    """The text of the last user turn that has text (tool results come as user turns too)."""
    text = ""
    for content in body.get("contents", []) or []:
        parts = [p.get("text", "") for p in content.get("parts", []) or [] if "text" in p]
        if content.get("role") == "user" and parts:
            text = " ".join(parts)
    return text


def has_call_result(body):
    return any("functionResponse" in part
               for content in body.get("contents", []) or []
               for part in content.get("parts", []) or [])


class Handler(FakeHandler):
    def do_GET(self):
        self.log({"method": "GET", "path": self.path})
        self.send_json(404, {"error": {"code": 404, "message": "not here", "status": "NOT_FOUND"}})

    def do_POST(self):
        body = self.body()
        if self.refused_key():
            return
        if ":countTokens" in self.path:
            self.log({"method": "POST", "path": self.path, "kind": "count"})
            return self.send_json(200, {"totalTokens": 12})
        if "alt=sse" not in self.path:
            self.log({"method": "POST", "path": self.path, "kind": "route"})
            routed = json.dumps({"reasoning": "a greeting", "model_choice": "flash"})
            return self.send_json(200, answer([{"text": routed}]))
        asked = last_user_text(body).lower()
        if "create" in asked and has_call_result(body):
            kind, parts = "final", [FINAL]
        elif "create" in asked:
            kind, parts = "tool_use", None
        elif "slowly" in asked:
            kind = "slow"
            words = TEXT.split(" ")
            parts = [w + " " for w in words[:-1]] + [words[-1]]
        else:
            kind, parts = "text", [TEXT]
        entry = {"method": "POST", "path": self.path, "kind": kind}
        if kind == "final":
            entry["result"] = [part["functionResponse"] for content in body.get("contents", [])
                               for part in content.get("parts", []) if "functionResponse" in part]
        self.log(entry)
        self.start_events()
        if parts is None:
            command = f"echo 'written by the agent' > {WORK}/hello.txt"
            call = {"name": "run_shell_command",
                    "args": {"command": command, "description": "Write hello.txt."}}
            return self.event(None, answer([{"functionCall": call}]))
        for i, part in enumerate(parts):
            if kind == "slow":
                time.sleep(6.0 / len(parts))
            self.event(None, answer([{"text": part}], last=i == len(parts) - 1))


serve(Handler, *sys.argv[1:4])
