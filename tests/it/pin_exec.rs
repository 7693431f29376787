//! A pinned secret's exec step (`paddock __pin-exec SHA256 -- PROGRAM…`), run as the pane runs
//! it: the file it checks is the file that runs, even while a link to it is swapped in a loop;
//! a PATH with a relative entry, or a changed file, is refused; and code-loading variables
//! never reach the program.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use sha2::{Digest, Sha256};

const PADDOCK: &str = env!("CARGO_BIN_EXE_paddock");
const VERB: &str = "__pin-exec";

fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("paddock-pin-exec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("test folder");
    dir
}

fn program(path: &Path, body: &str) -> String {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("program");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let bytes = std::fs::read(path).expect("read back");
    Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Run `program` through the exec step 300 times while something races it: how often it ran
/// the approved bytes and how often it refused; anything else fails the test.
fn run_racing(sha: &str, program: &Path) -> (u32, u32) {
    let (mut ran, mut refused) = (0, 0);
    for _ in 0..300 {
        let out = Command::new(PADDOCK)
            .args([VERB, sha, "--", program.to_str().expect("path")])
            .output()
            .expect("pin-exec");
        match (out.status.code(), text(&out.stdout).as_str()) {
            (Some(0), "good\n") => ran += 1,
            (Some(126), "") => refused += 1,
            other => panic!("other bytes ran, or something else happened: {other:?} {out:?}"),
        }
    }
    (ran, refused)
}

#[test]
fn the_approved_file_runs_without_code_loading_variables() {
    let dir = folder("env");
    let good = dir.join("agent");
    let sha = program(
        &good,
        "echo \"ran preload=${LD_PRELOAD-none} node=${NODE_OPTIONS-none} key=$KEY\"",
    );
    let out = Command::new(PADDOCK)
        .args([VERB, &sha, "--", "agent"])
        .env("PATH", format!("{}:/bin:/usr/bin", dir.display()))
        .env("LD_PRELOAD", "/nonexistent/evil.so")
        .env("NODE_OPTIONS", "--require /tmp/evil.js")
        .env("KEY", "kept")
        .output()
        .expect("pin-exec");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "ran preload=none node=none key=kept\n");

    // A binary of this user's own runs under a read lease.
    let binary = dir.join("true");
    std::fs::copy("/bin/true", &binary).expect("copy /bin/true");
    let bytes = std::fs::read(&binary).expect("read");
    let binary_sha: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    let out = Command::new(PADDOCK)
        .args([VERB, &binary_sha, "--", binary.to_str().expect("path")])
        .output()
        .expect("pin-exec");
    assert!(out.status.success(), "{out:?}");

    // A changed file is not the approved one.
    program(&good, "echo changed");
    let out = Command::new(PADDOCK)
        .args([VERB, &sha, "--", good.to_str().expect("path")])
        .output()
        .expect("pin-exec");
    assert_eq!(out.status.code(), Some(126));
    assert!(out.stdout.is_empty());
    assert!(text(&out.stderr).contains("is not the program that was approved"), "{out:?}");

    // A relative PATH entry finds whatever the folder it starts in holds.
    let out = Command::new(PADDOCK)
        .args([VERB, &sha, "--", "agent"])
        .env("PATH", "bin:/bin:/usr/bin")
        .output()
        .expect("pin-exec");
    assert_eq!(out.status.code(), Some(126));
    assert!(text(&out.stderr).contains("relative entry \"bin\""), "{out:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A link to the program flips between the approved file and another one as fast as it can,
/// while the exec step runs it again and again: the other one never runs.
#[test]
fn a_swap_after_the_check_never_runs_another_file() {
    let dir = folder("race");
    let (good, evil, link) = (dir.join("good"), dir.join("evil"), dir.join("agent"));
    let sha = program(&good, "echo good");
    // Same length, so that a read of one and the hash of the other cannot be told by size.
    program(&evil, "echo evil");
    std::os::unix::fs::symlink(&good, &link).expect("link");
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (stop, dir, good, evil, link) =
            (stop.clone(), dir.clone(), good.clone(), evil.clone(), link.clone());
        std::thread::spawn(move || {
            let tmp = dir.join("agent.next");
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let target = if flips % 2 == 0 { &evil } else { &good };
                let _ = std::fs::remove_file(&tmp);
                std::os::unix::fs::symlink(target, &tmp).expect("next link");
                std::fs::rename(&tmp, &link).expect("swap");
                flips += 1;
            }
            flips
        })
    };
    let (ran, refused) = run_racing(&sha, &link);
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().expect("flipper");
    assert!(flips > 300, "the link flipped only {flips} times");
    // Both outcomes happen: the check saw either file, and only the approved one ran.
    assert!(ran > 0 && refused > 0, "ran {ran}, refused {refused}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Inside a lock (as a locked pane runs it): the program is found and checked in the lock's
/// view, and runs.
#[test]
fn inside_a_lock_the_approved_file_runs() {
    let dir = folder("locked");
    let good = dir.join("agent");
    let sha = program(&good, "echo \"locked ran preload=${LD_PRELOAD-none}\"");
    let out = Command::new(PADDOCK)
        .args(["sandbox", "run", "--write", dir.to_str().expect("dir"), "--"])
        .args([PADDOCK, VERB, &sha, "--", "agent"])
        .env("PATH", format!("{}:/bin:/usr/bin", dir.display()))
        .env("LD_PRELOAD", "")
        .current_dir(&dir)
        .output()
        .expect("sandbox run");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "locked ran preload=none\n");
    let _ = std::fs::remove_dir_all(dir);
}

/// The approved file itself is rewritten in place (open, write, close) as fast as it can be,
/// between the other program and the approved one, while the exec step runs it again and
/// again: a script's interpreter reads it after the exec, so the check must hold what runs.
#[test]
fn a_file_rewritten_in_place_never_runs_the_other_bytes() {
    use std::os::unix::fs::FileExt;
    let dir = folder("rewrite");
    let agent = dir.join("agent");
    let evil_text = "#!/bin/sh\necho evil\n";
    let sha = program(&agent, "echo good");
    let good_text = std::fs::read_to_string(&agent).expect("good");
    assert_eq!(good_text.len(), evil_text.len());
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (stop, agent) = (stop.clone(), agent.clone());
        std::thread::spawn(move || {
            let mut writes = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let text = if writes % 2 == 0 { evil_text } else { good_text.as_str() };
                // ETXTBSY while a copy runs is fine: the next round tries again.
                if let Ok(file) = std::fs::OpenOptions::new().write(true).open(&agent) {
                    let _ = file.write_at(text.as_bytes(), 0);
                }
                writes += 1;
            }
            writes
        })
    };
    let (ran, refused) = run_racing(&sha, &agent);
    stop.store(true, Ordering::Relaxed);
    let writes = writer.join().expect("writer");
    assert!(writes > 300, "the file was rewritten only {writes} times");
    assert!(ran > 0 && refused > 0, "ran {ran}, refused {refused}");
    let _ = std::fs::remove_dir_all(dir);
}
