//! A lock cannot pose as the paddock server: it never reaches the control folder to make a
//! socket there (the folder is made before any lock, so a lock's view always covers it, and a
//! lock may not be given it), and a client refuses a socket served from inside a lock
//! wherever it lies, before anything typed is sent.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use super::{text, Runtime};

#[test]
fn a_lock_cannot_pose_as_the_server_to_windows_and_ctl() {
    let runtime = Runtime::new();
    let control = runtime.run.join("paddock");
    assert!(!control.exists(), "no instance has made the control folder yet");
    // paddock's own files are there to be guarded (a lock refuses a folder where they could
    // be made).
    std::fs::create_dir_all(runtime.dir.join("config/paddock")).expect("config");
    std::fs::write(runtime.dir.join("config/paddock/config.ron"), "()").expect("config");
    for own in ["state/paddock", "data/paddock"] {
        std::fs::create_dir_all(runtime.dir.join(own)).expect("folder");
    }
    // A lock given the folder holding the runtime folder before any instance ran: what it
    // makes where the control folder would be stays in its own view.
    let plant = "import os, socket, sys, time\n\
        d = sys.argv[1]\n\
        try:\n\
        \x20   os.makedirs(d, exist_ok=True)\n\
        \x20   for name in ('55555.sock', '55555.attach'):\n\
        \x20       s = socket.socket(socket.AF_UNIX)\n\
        \x20       s.bind(os.path.join(d, name))\n\
        \x20       s.listen()\n\
        \x20   print('planted', flush=True)\n\
        except OSError as e:\n\
        \x20   print('refused', e, flush=True)\n\
        time.sleep(3)\n";
    // And one given the temp folder: where a launcher without XDG_RUNTIME_DIR looks
    // (`<temp>/paddock-<uid>`) is covered the same.
    let temp = runtime.dir.join("tmp");
    std::fs::create_dir_all(&temp).expect("temp");
    // SAFETY: getuid(2).
    let other = temp.join(format!("paddock-{}", unsafe { libc::getuid() }));
    for (given, folder) in [(runtime.dir.clone(), control.clone()), (temp.clone(), other.clone())] {
        let (given, target) = (given.display().to_string(), folder.display().to_string());
        let mut lock = runtime
            .paddock(&["sandbox", "run", "--write", &given, "--", "python3", "-c", plant, &target])
            .env("TMPDIR", &temp)
            .stdout(Stdio::piped())
            .spawn()
            .expect("sandbox run");
        let mut said = String::new();
        BufReader::new(lock.stdout.take().expect("stdout")).read_line(&mut said).expect("read");
        assert!(said.starts_with("planted") || said.starts_with("refused"), "{said}");
        assert!(folder.is_dir(), "{folder:?} was made before the lock");
        assert!(!folder.join("55555.sock").exists(), "the lock's socket reached {folder:?}");
        assert!(!folder.join("55555.attach").exists());
        // `paddock ls` as launched with and without a runtime folder.
        for without_runtime in [false, true] {
            let mut ls = runtime.paddock(&["ls"]);
            ls.env("TMPDIR", &temp);
            if without_runtime {
                ls.env_remove("XDG_RUNTIME_DIR");
            }
            let ls = ls.output().expect("ls");
            assert!(!text(&ls.stdout).contains("55555"), "{}", text(&ls.stdout));
        }
        let _ = lock.wait();
    }

    // Neither control folder is ever a lock folder, nor is the runtime folder holding one.
    let mut run =
        runtime.paddock(&["sandbox", "run", "--write", &runtime.run.display().to_string()]);
    let out = run.args(["--", "true"]).output().expect("sandbox run");
    assert_eq!(out.status.code(), Some(125), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("the session's folder of sockets"), "{}", text(&out.stderr));
    for folder in [&control, &other] {
        let folder = folder.display().to_string();
        let mut run = runtime.paddock(&["sandbox", "run", "--write", &folder, "--", "true"]);
        let out = run.env("TMPDIR", &temp).output().expect("sandbox run");
        assert_eq!(out.status.code(), Some(125), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("control folder"), "{}", text(&out.stderr));
    }

    // Wherever a socket lies, one served from inside a lock (here: other user and PID
    // namespaces) is refused by `paddock ctl` and by a window, before a word is sent.
    let fake = runtime.dir.join("fake.sock");
    let serve = "import socket, sys, time\n\
        s = socket.socket(socket.AF_UNIX)\n\
        s.bind(sys.argv[1])\n\
        s.listen(8)\n\
        print('up', flush=True)\n\
        time.sleep(10)\n";
    let mut server = Command::new("unshare")
        .args(["--user", "--pid", "--fork", "python3", "-c", serve])
        .arg(&fake)
        .stdout(Stdio::piped())
        .spawn()
        .expect("unshare");
    let mut up = String::new();
    BufReader::new(server.stdout.take().expect("stdout")).read_line(&mut up).expect("read");
    assert_eq!(up.trim(), "up");
    let out = runtime.paddock(&["ls", "--socket", &fake.display().to_string()]).output();
    let out = out.expect("ls");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("runs inside a lock"), "{}", text(&out.stderr));
    let attached = paddock::ctl::attach::connect(&fake);
    let why = attached.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(why.contains("runs inside a lock"), "{why}");
    let _ = server.kill();
    let _ = server.wait();

    // A socket kept by another process after the one that made it ended (a lock's way to
    // have its listener's pid reused by a process of yours) is no server either.
    let kept = runtime.dir.join("kept.sock");
    let keep = "import os, socket, sys, time\n\
        s = socket.socket(socket.AF_UNIX)\n\
        s.bind(sys.argv[1])\n\
        pid = os.fork()\n\
        if pid == 0:\n\
        \x20   s.listen(8)\n\
        \x20   os._exit(0)\n\
        os.waitpid(pid, 0)\n\
        print('kept', flush=True)\n\
        time.sleep(10)\n";
    let mut keeper = Command::new("python3")
        .args(["-c", keep])
        .arg(&kept)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    BufReader::new(keeper.stdout.take().expect("stdout")).read_line(&mut line).expect("read");
    assert_eq!(line.trim(), "kept");
    let why = paddock::ctl::attach::connect(&kept).err().map(|e| e.to_string()).unwrap_or_default();
    // "has ended" where the kernel names the listener by a pidfd (Linux 6.5); before, its pid
    // is gone from /proc (until reused, which the pidfd rules out).
    assert!(why.contains("has ended") || why.contains("cannot tell where"), "{why}");
    let _ = keeper.kill();
    let _ = keeper.wait();
}
