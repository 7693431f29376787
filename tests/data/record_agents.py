#!/usr/bin/env python3
"""Re-record the real agent CLIs' screens under tests/data/recordings/agents, for the tests of
the pulse's needs-you rules (src/pulse/rules.rs and tests/it/agent_screens.rs).

Each session runs one agent (Claude Code, Codex, Gemini CLI, as `cargo xtask ci` installs them
into target/agents) in a fresh home and work folder, against its local fake API
(tests/data/fake_*.py, over TLS with a throwaway CA), in a 100x30 tmux pane whose every output
byte `tmux pipe-pane` saves. A session is a list of steps: wait until the screen shows a text,
mark the byte offset under a name, type keys. The bytes go to AGENT.bin; the marks to
manifest.txt, one line per session: `name COLSxROWS mark=offset ...`. A test replays a
recording up to a mark and checks what the pulse reads there.

    python3 tests/data/record_agents.py               # every session
    python3 tests/data/record_agents.py codex gemini  # some

Needs: tmux, openssl, python3, node, and the agents in target/agents (`cargo xtask ci`
installs them). Recordings are committed; CI never runs this script.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "recordings", "agents")
MODULES = os.path.join(REPO, "target", "agents", "node_modules")
COLS, ROWS = 100, 30
SOCKET = "paddock-agents"

# Where `cargo xtask ci` installs them, unless the tests' variables say otherwise.
CLAUDE = os.environ.get("PADDOCK_TEST_CLAUDE") or os.path.join(MODULES, "@anthropic-ai/claude-code/bin/claude.exe")
CODEX = os.environ.get("PADDOCK_TEST_CODEX") or os.path.join(MODULES, "@openai/codex/bin/codex.js")
GEMINI = os.environ.get("PADDOCK_TEST_GEMINI") or os.path.join(MODULES, "@google/gemini-cli/bundle/gemini.js")


def tmux(*args, check=True):
    out = subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True)
    if check and out.returncode != 0:
        raise SystemExit(f"tmux {args}: {out.stderr}")
    return out.stdout


def test_ca(dir):
    """A CA and a certificate for localhost it signed, in `dir`."""
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=dir, check=True, capture_output=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=record CA", "-addext", "basicConstraints=critical,CA:TRUE")
    openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    with open(os.path.join(dir, "ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                "extendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext")


class Fake:
    """tests/data/`script` serving over TLS; `port` is where."""

    def __init__(self, script, tls, log, *more):
        self.child = subprocess.Popen(
            ["python3", os.path.join(HERE, script), os.path.join(tls, "server.pem"),
             os.path.join(tls, "server.key"), log, *more],
            stdout=subprocess.PIPE, text=True)
        line = self.child.stdout.readline()
        self.port = int(line.split()[1])

    def stop(self):
        self.child.kill()
        self.child.wait()


def sessions(root):
    """name: (setup(root, tls) -> (argv, env, cwd), steps)."""

    def claude(root, tls):
        home, work = os.path.join(root, "home"), os.path.join(root, "work")
        os.makedirs(home)
        os.makedirs(work)
        fake = Fake("fake_anthropic.py", tls, os.path.join(root, "log"),
                    os.path.join(work, "hello.txt"))
        # The onboarding (theme, login) done, as after a person's first run; the folder not
        # trusted and the key not approved, so both questions come.
        with open(os.path.join(home, ".claude.json"), "w") as f:
            json.dump({"hasCompletedOnboarding": True, "theme": "dark"}, f)
        env = {"ANTHROPIC_BASE_URL": f"https://localhost:{fake.port}",
               "ANTHROPIC_API_KEY": "fake-key-for-the-local-fake-api",
               "NODE_EXTRA_CA_CERTS": os.path.join(tls, "ca.pem"),
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        # Asking before it edits (2.1.3xx starts in "auto mode", which edits without asking).
        return fake, [CLAUDE, "--permission-mode", "default"], env, home, work

    def codex(root, tls, login=False):
        home, work = os.path.join(root, "home"), os.path.join(root, "work")
        os.makedirs(os.path.join(home, ".codex"))
        os.makedirs(work)
        # A git repository, which Codex asks to trust.
        subprocess.run(["git", "init", "-q", work], check=True)
        fake = Fake("fake_openai.py", tls, os.path.join(root, "log"))
        if not login:
            with open(os.path.join(home, ".codex", "config.toml"), "w") as f:
                f.write(f'model = "gpt-fake"\nmodel_provider = "fake"\n[model_providers.fake]\n'
                        f'name = "fake"\nbase_url = "https://localhost:{fake.port}/v1"\n'
                        f'env_key = "FAKE_API_KEY"\nwire_api = "responses"\n')
        env = {"FAKE_API_KEY": "fake", "SSL_CERT_FILE": os.path.join(tls, "ca.pem")}
        return fake, ["node", CODEX], env, home, work

    def gemini(root, tls, login=False):
        home, work = os.path.join(root, "home"), os.path.join(root, "work")
        os.makedirs(os.path.join(home, ".gemini"))
        os.makedirs(work)
        fake = Fake("fake_gemini.py", tls, os.path.join(root, "log"), work)
        if not login:
            with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
                json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}}}, f)
        env = {"GEMINI_API_KEY": "fake", "GOOGLE_GEMINI_BASE_URL": f"https://localhost:{fake.port}",
               "NODE_EXTRA_CA_CERTS": os.path.join(tls, "ca.pem")}
        return fake, ["node", GEMINI], env, home, work

    # Steps: ("wait", text, seconds), ("mark", name), ("keys", text), ("key", tmux key name),
    # ("sleep", seconds).
    # Enter is sent apart from the text before it, as a person's key is: a TUI that reads a
    # paste (text and Enter in one read) may take the Enter as part of the text.
    def ask(text):
        return [("keys", text), ("sleep", 0.5), ("keys", "\r")]

    return {
        "claude": (claude, [
            # Its choices are not numbered, and "No" is chosen first: moved to, then Enter.
            ("wait", "Yes, I trust this folder", 30), ("sleep", 1), ("mark", "trust"),
            ("key", "Down"), ("sleep", 0.5), ("keys", "\r"),
            ("wait", "Do you want to use this API key?", 20), ("sleep", 1), ("mark", "login"),
            ("key", "Up"), ("sleep", 0.5), ("keys", "\r"),
            ("wait", "for shortcuts", 20), ("sleep", 5), ("mark", "idle"),
            # Claude Code shows an answer's text when it is whole; its spinner runs until then.
            *ask("Say hello slowly"),
            ("wait", "esc to interrupt", 20), ("sleep", 1), ("mark", "streaming"),
            ("wait", "fake Anthropic", 20), ("sleep", 5), ("mark", "answered_idle"),
            *ask("Create hello.txt here"),
            ("wait", "Do you want to create hello.txt?", 30), ("sleep", 1), ("mark", "approval"),
            ("sleep", 3), ("mark", "approval_still"),
            ("keys", "1"),
            ("wait", "Done: hello.txt is written.", 30), ("sleep", 1), ("mark", "approved"),
            ("sleep", 5), ("mark", "idle_end"),
        ]),
        "codex": (codex, [
            ("wait", "Trust this folder?", 30), ("sleep", 1), ("mark", "trust"),
            ("keys", "\r"),
            ("wait", "Ask Codex to do anything", 20), ("sleep", 5), ("mark", "idle"),
            *ask("Say hello slowly"),
            ("wait", "Hello from", 20), ("sleep", 0.5), ("mark", "streaming"),
            ("wait", "fake OpenAI", 20), ("sleep", 5), ("mark", "answered_idle"),
            *ask("Create hello.txt here"),
            ("wait", "Would you like to run the following command?", 30), ("sleep", 1),
            ("mark", "approval"),
            ("sleep", 3), ("mark", "approval_still"),
            ("keys", "y"),
            ("wait", "Done: hello.txt is written.", 30), ("sleep", 1), ("mark", "approved"),
            ("sleep", 5), ("mark", "idle_end"),
        ]),
        "codex_login": (lambda root, tls: codex(root, tls, login=True), [
            ("wait", "Sign in", 30), ("sleep", 2), ("mark", "login"),
        ]),
        "gemini": (gemini, [
            ("wait", "Do you trust the files in this folder?", 30), ("sleep", 1), ("mark", "trust"),
            ("keys", "\r"),
            ("wait", "Type your message", 30), ("sleep", 5), ("mark", "idle"),
            *ask("Say hello slowly"),
            ("wait", "Hello from", 20), ("sleep", 0.5), ("mark", "streaming"),
            ("wait", "fake Gemini", 20), ("sleep", 5), ("mark", "answered_idle"),
            *ask("Create hello.txt here"),
            ("wait", "Allow execution of", 30), ("sleep", 1), ("mark", "approval"),
            ("sleep", 3), ("mark", "approval_still"),
            ("keys", "\r"),
            ("wait", "Done: hello.txt is written.", 30), ("sleep", 1), ("mark", "approved"),
            ("sleep", 5), ("mark", "idle_end"),
        ]),
        "gemini_login": (lambda root, tls: gemini(root, tls, login=True), [
            ("wait", "Do you trust the files in this folder?", 30), ("keys", "\r"),
            ("wait", "authenticate", 30), ("sleep", 2), ("mark", "login"),
        ]),
    }


def record(name, setup, steps, root):
    tls = os.path.join(root, "tls")
    os.makedirs(tls)
    test_ca(tls)
    fake, argv, env, home, work = setup(root, tls)
    out = os.path.join(root, "out.bin")
    open(out, "wb").close()
    env = dict(env, HOME=home, TERM="xterm-256color", COLORTERM="truecolor", LANG="C.UTF-8")
    command = " ".join(f"{k}={shlex_quote(v)}" for k, v in env.items())
    command += " " + " ".join(shlex_quote(a) for a in argv)
    tmux("kill-server", check=False)
    # The pane waits a moment before the agent starts, so that pipe-pane sees every byte.
    tmux("new-session", "-d", "-s", name, "-x", str(COLS), "-y", str(ROWS), "-c", work,
         f"sleep 0.5; exec env -u TMUX -u TMUX_PANE {command}")
    tmux("pipe-pane", "-o", "-t", name, f"cat >> {shlex_quote(out)}")
    marks = []
    try:
        for step in steps:
            if step[0] == "wait":
                _, text, seconds = step
                end = time.time() + seconds
                while text not in tmux("capture-pane", "-p", "-t", name):
                    if time.time() > end:
                        screen = tmux("capture-pane", "-p", "-t", name)
                        raise SystemExit(f"{name}: no {text!r} after {seconds} s:\n{screen}")
                    time.sleep(0.2)
            elif step[0] == "mark":
                time.sleep(0.3)  # pipe-pane's copy catches up
                marks.append((step[1], os.path.getsize(out)))
            elif step[0] == "keys":
                tmux("send-keys", "-t", name, "-l", step[1])
            elif step[0] == "key":
                tmux("send-keys", "-t", name, step[1])
            elif step[0] == "sleep":
                time.sleep(step[1])
    finally:
        tmux("kill-server", check=False)
        fake.stop()
    shutil.copy(out, os.path.join(OUT, name + ".bin"))
    return marks


def shlex_quote(text):
    import shlex
    return shlex.quote(text)


def main():
    os.makedirs(OUT, exist_ok=True)
    chosen = sys.argv[1:]
    manifest_path = os.path.join(OUT, "manifest.txt")
    lines = {}
    if os.path.exists(manifest_path):
        for line in open(manifest_path):
            if line.strip() and not line.startswith("#"):
                lines[line.split()[0]] = line.rstrip("\n")
    for name, (setup, steps) in sessions(None).items():
        if chosen and name not in chosen:
            continue
        with tempfile.TemporaryDirectory(prefix=f"paddock-{name}-") as root:
            marks = record(name, setup, steps, root)
        lines[name] = f"{name} {COLS}x{ROWS} " + " ".join(f"{m}={o}" for m, o in marks)
        print(lines[name])
    with open(manifest_path, "w") as f:
        f.write("# name size mark=offset ... (written by tests/data/record_agents.py)\n")
        f.write("\n".join(lines[n] for n in sessions(None) if n in lines) + "\n")


if __name__ == "__main__":
    main()
