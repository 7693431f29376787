#!/usr/bin/env python3
"""Re-record the byte streams under tests/data/recordings from real programs.

Each session runs one program in a fresh PTY of a fixed size with TERM=xterm-256color, types a
scripted sequence of keys with pauses, and saves every byte the program wrote. The differential
test replays them through paddock and alacritty_terminal and compares the screens.

    python3 tests/data/record.py            # all sessions
    python3 tests/data/record.py vim_edit   # one session

Needs: vim, less, git, ls, python3, tmux, vttest (Debian packages). Recordings are committed;
CI never runs this script.
"""

import os
import pty
import select
import signal
import struct
import sys
import tempfile
import termios
import time
import fcntl

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "recordings")
REPO = os.path.dirname(os.path.dirname(HERE))

ESC = "\x1b"


def sample_text():
    lines = []
    for i in range(1, 121):
        lines.append(f"{i:4d}  The quick brown fox jumps over the lazy dog; line {i} of the sample.")
    path = os.path.join(tempfile.gettempdir(), "paddock-sample.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def tmux_conf():
    path = os.path.join(tempfile.gettempdir(), "paddock-tmux.conf")
    with open(path, "w") as f:
        f.write("set -g status on\nset -g default-terminal screen-256color\n")
    return path


def sessions():
    sample = sample_text()
    edit = os.path.join(tempfile.gettempdir(), "paddock-edit.txt")
    if os.path.exists(edit):
        os.remove(edit)
    return {
        # name: (cols, rows, argv, [(seconds to wait, keys to type)], description)
        "vim_edit": (80, 24, ["vim", "-u", "NONE", "-i", "NONE", "-N", edit], [
            (1.0, "ihello from paddock\r"),
            (0.3, "second line with \u4f60\u597d wide text\r"),
            (0.3, ESC + ":set number\r"),
            (0.3, "ggOtop line" + ESC),
            (0.3, ":syntax on\r"),
            (0.5, ""),
        ], "vim editing a new file, still open (alternate screen)"),
        "vim_scroll": (80, 24, ["vim", "-u", "NONE", "-i", "NONE", "-N", "-R", sample], [
            (1.0, "\x06"), (0.3, "\x06"), (0.3, "\x02"), (0.3, "50G"), (0.3, "\x05\x05\x05"),
            (0.3, "/fox\r"), (0.3, "n"), (0.5, ""),
        ], "vim paging through a file with scroll regions"),
        "less_search": (80, 24, ["less", sample], [
            (0.8, " "), (0.3, " "), (0.3, "/line 7\r"), (0.3, "n"), (0.3, "b"), (0.5, ""),
        ], "less paging and searching"),
        "less_quit": (80, 24, ["sh", "-c", f"less -X {sample}; echo done"], [
            (0.8, " "), (0.3, "q"), (0.5, ""),
        ], "less -X leaving its text on the primary screen"),
        "git_log_color": (100, 30, ["git", "--no-pager", "-C", REPO, "log", "--color=always", "--graph",
                                    "--decorate", "--stat", "-n", "12"], [
            (1.0, ""),
        ], "git log with colors, graph and stats"),
        "ls_color": (100, 30, ["sh", "-c", "ls --color=always -la /etc"], [
            (1.0, ""),
        ], "ls --color scrolling past the screen"),
        "python_cjk": (60, 20, ["python3", "-q"], [
            (1.0, "print('\u4f60\u597d\uff0c\u4e16\u754c \U0001f389 caf\u0065\u0301 \u00e9')\r"),
            (0.4, "for i in range(3): print('\u65e5\u672c\u8a9e' * (i + 1), i)\r\r"),
            (0.4, "print('x' * 59 + '\u5bbd')\r"),
            (0.4, "print('\\x1b[1;31mred\\x1b[0m \\x1b[38;2;10;200;30mtrue\\x1b[0m')\r"),
            (0.5, ""),
        ], "python REPL printing CJK, emoji, combining marks and colors"),
        "tmux_split": (100, 30, ["tmux", "-f", tmux_conf(), "-L", "paddock-rec", "new-session"], [
            (1.5, "printf 'left pane %s\\n' 1 2 3\r"),
            (0.5, "\x02%"),
            (1.0, "seq 1 40\r"),
            (0.5, "\x02\""),
            (1.0, "printf '\\033[1;32mgreen\\033[0m bottom\\n'\r"),
            (1.0, ""),
        ], "tmux with three panes"),
        "vttest_menus": (80, 24, ["vttest"], [
            (2.0, "1"), (0.3, "\r"), (1.0, "\r"), (1.0, "\r"), (1.0, "\r"), (1.0, ""),
        ], "vttest: the cursor movement screens"),
        "vttest_screen": (80, 24, ["vttest"], [
            (2.0, "2"), (0.3, "\r")] + [(1.0, "\r")] * 14 + [(1.0, ""),
        ], "vttest: the screen features screens (wrap, tabs, regions, SGR)"),
    }


def record(name, cols, rows, argv, script):
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.environ["COLORTERM"] = "truecolor"
        os.environ["LANG"] = "C.UTF-8"
        os.environ["PS1"] = "$ "
        os.environ.pop("TMUX", None)
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    os.kill(pid, signal.SIGWINCH)
    captured = bytearray()

    def drain(seconds):
        end = time.time() + seconds
        while True:
            left = end - time.time()
            if left <= 0:
                return True
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    return False
                if not data:
                    return False
                captured.extend(data)
                # Programs like vttest wait for the answer to a device-attributes query.
                if b"\x1b[0c" in data or b"\x1b[c" in data:
                    os.write(fd, b"\x1b[?62;22c")

    alive = True
    for wait, keys in script:
        alive = drain(wait) and alive
        if keys and alive:
            os.write(fd, keys.encode())
    drain(0.5)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    if name == "tmux_split":
        os.system("tmux -L paddock-rec kill-server 2>/dev/null")
    with open(os.path.join(OUT, name + ".bin"), "wb") as f:
        f.write(captured)
    return len(captured)


def main():
    os.makedirs(OUT, exist_ok=True)
    chosen = sys.argv[1:]
    table = sessions()
    manifest = []
    for name, (cols, rows, argv, script, description) in table.items():
        if not chosen or name in chosen:
            size = record(name, cols, rows, argv, script)
            print(f"{name}: {size} bytes")
        manifest.append(f"{name} {cols}x{rows} {description}")
    with open(os.path.join(OUT, "manifest.txt"), "w") as f:
        f.write("# name size description (written by tests/data/record.py)\n")
        f.write("\n".join(manifest) + "\n")


if __name__ == "__main__":
    main()
