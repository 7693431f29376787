# The escape suite's probe: one attempt per run, its result printed as data ("ok …" or
# "err ENAME"), never an exception. Run as `python3 -c "$(cat escape_probe.py)" ACTION ARGS…`
# so that the locked command need not read this file.
import ctypes, errno, os, socket, sys, time

libc = ctypes.CDLL(None, use_errno=True)

def ok(detail=""):
    print(("ok " + str(detail)).strip())

def err(e):
    print("err " + errno.errorcode.get(e, str(e)))

def call(result):
    if result == -1:
        err(ctypes.get_errno())
    else:
        ok()

def run(action, args):
    if action == "read":
        with open(args[0], "rb") as f:
            ok(len(f.read()))
    elif action == "write":
        with open(args[0], "wb") as f:
            f.write(b"pwned")
        ok()
    elif action == "append":
        with open(args[0], "ab") as f:
            f.write(b"pwned")
        ok()
    elif action == "truncate":
        os.truncate(args[0], 0); ok()
    elif action == "delete":
        os.unlink(args[0]); ok()
    elif action == "rmtree":
        os.rmdir(args[0]); ok()
    elif action == "mkdir":
        os.makedirs(args[0]); ok()
    elif action == "rename":
        os.rename(args[0], args[1]); ok()
    elif action == "symlink":
        os.symlink(args[0], args[1]); ok()
    elif action == "hardlink":
        os.link(args[0], args[1]); ok()
    elif action == "chmod":
        os.chmod(args[0], 0o777); ok()
    elif action == "touch":
        os.utime(args[0], (0, 0)); ok()
    elif action == "setxattr":
        os.setxattr(args[0], "user.pwned", b"1"); ok()
    elif action == "mknod":
        os.mknod(args[0], 0o666 | 0o020000, os.makedev(1, 3)); ok()
    elif action == "listdir":
        ok(len(os.listdir(args[0])))
    elif action == "tcp":
        s = socket.create_connection((args[0], int(args[1])), timeout=3)
        s.sendall(b"pwned"); s.close(); ok()
    elif action == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b"pwned", (args[0], int(args[1]))); ok()
    elif action == "dns":
        ok(socket.gethostbyname(args[0]))
    elif action == "socket":
        families = {"raw": (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
                    "packet": (socket.AF_PACKET, socket.SOCK_RAW, 0),
                    "netlink": (socket.AF_NETLINK, socket.SOCK_RAW, 0),
                    "inet6": (socket.AF_INET6, socket.SOCK_STREAM, 0),
                    "mptcp": (socket.AF_INET, socket.SOCK_STREAM, 262)}
        socket.socket(*families[args[0]]); ok()
    elif action == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect(args[0] if not args[0].startswith("@") else "\0" + args[0][1:])
        s.sendall(b"pwned"); s.close(); ok()
    elif action == "unix_dgram":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.sendto(b"pwned", args[0]); ok()
    elif action == "socketpair":
        kinds = {"stream": socket.SOCK_STREAM, "dgram": socket.SOCK_DGRAM}
        a, b = socket.socketpair(socket.AF_UNIX, kinds[args[0]]); a.send(b"x"); ok(b.recv(1).decode())
    elif action == "unix_own":
        # A server of the lock's own on a socket path, reached from inside.
        server = socket.socket(socket.AF_UNIX); server.bind(args[0]); server.listen(1)
        client = socket.socket(socket.AF_UNIX); client.connect(args[0])
        conn, _ = server.accept(); client.sendall(b"hi"); ok(conn.recv(2).decode())
    elif action == "in_thread":
        # The same attempt from a second thread of the process.
        import threading
        thread = threading.Thread(target=attempt, args=(args[0], args[1:])); thread.start(); thread.join()
    elif action == "after":
        time.sleep(float(args[0])); run(args[1], args[2:])
    elif action == "loopback_server":
        # A server inside the pane, reached from inside: localhost works under a lock.
        server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(1)
        client = socket.create_connection(server.getsockname(), timeout=3)
        conn, _ = server.accept(); client.sendall(b"hi"); ok(conn.recv(2).decode())
    elif action == "listen":
        server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", int(args[0]))); server.listen(1); print("ok listening", flush=True)
        time.sleep(float(args[1]))
    elif action == "kill":
        os.kill(int(args[0]), 15); ok()
    elif action == "ptrace":
        call(libc.ptrace(16, int(args[0]), None, None))  # PTRACE_ATTACH
    elif action == "unshare":
        call(libc.unshare(0x10000000))  # CLONE_NEWUSER
    elif action == "tiocsti":
        c = ctypes.c_char(b"x")
        call(libc.ioctl(int(args[0]) if args else 0, 0x5412, ctypes.byref(c)))
    elif action == "keyctl":
        call(libc.syscall(250, 0, -3, 0, 0, 0))  # keyctl(KEYCTL_GET_KEYRING_ID, session)
    elif action == "x32_keyctl":
        # keyctl through the x32 ABI (bit 30 of the number): ENOSYS where the kernel has x32
        # off, the key ring where it has it on, unless the lock's filter refuses it first.
        call(libc.syscall(0x40000000 | 250, 0, -3, 0, 0, 0))
    elif action == "io_uring":
        params = ctypes.create_string_buffer(120)
        call(libc.syscall(425, 8, params))
    elif action == "fds":
        ok(" ".join(sorted(os.listdir("/proc/self/fd"), key=int)))
    elif action == "ids":
        ok("%d %d %s" % (os.getuid(), os.geteuid(), open("/proc/self/status").read().split("CapEff:")[1].split()[0]))
    elif action == "spawn":
        import subprocess
        ok(subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode)
    elif action == "status":
        line = [l for l in open("/proc/self/status") if l.startswith(args[0] + ":")][0]
        ok(line.split(":", 1)[1].strip())
    elif action == "pids":
        ok(" ".join(sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int)))
    elif action == "ttyname":
        ok(os.ttyname(int(args[0])))
    elif action == "env":
        ok(os.environ.get(args[0], ""))
    else:
        print("unknown action " + action)
        sys.exit(2)

def attempt(action, args):
    try:
        run(action, args)
    except OSError as e:
        err(e.errno or 0)

attempt(sys.argv[1], sys.argv[2:])
