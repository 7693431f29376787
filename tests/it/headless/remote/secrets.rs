//! A remote thread's secrets come from the vault here: handed over ssh to that one spawn on
//! the host, in its environment and masked in its pane; a pinned one only to a program
//! approved on that host (`vault approve --host`); audited here with the host's name; and
//! never written anywhere on the host (its folders are searched for the value afterwards).

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use super::sshd::Sshd;
use super::{hosts_entry, remote_paddock, started_server, StopServer};
use crate::headless::agent::Stage;
use crate::headless::broker::{fake_requests, set_secret, test_key};
use crate::headless::config::write_config;
use crate::headless::{text, Runtime};
use crate::vault::{at_a_terminal, rerun_inside, KEYUTILS};

const OPEN_VALUE: &str = "rmt-open-7f3a9c2e51d4";
const PINNED_VALUE: &str = "rmt-pin-b81d5e07aa3c";

/// Every file under `folder` that holds `needle`.
fn files_holding(folder: &Path, needle: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(folder) else { return found };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => found.extend(files_holding(&path, needle)),
            Ok(kind) if kind.is_file() => {
                let bytes = std::fs::read(&path).unwrap_or_default();
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    found.push(path.display().to_string());
                }
            }
            _ => {}
        }
    }
    found
}

#[test]
fn a_remote_threads_secrets_come_from_here_masked_and_never_on_its_disk() {
    let test =
        "headless::remote::secrets::a_remote_threads_secrets_come_from_here_masked_and_never_on_its_disk";
    // The vault here is the kernel's keyutils, in a session keyring of this test's own.
    if rerun_inside(KEYUTILS, test) {
        return;
    }
    let (here, there) = (Runtime::new(), Runtime::new());
    let Some(sshd) = Sshd::start(test, &here.dir.join("sshd")) else { return };
    let paddock = remote_paddock(&there);
    let work = there.dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    // The agent on the host: shows what it got (masked), and proves it had it by printing
    // it backwards, which no masker looks for.
    let tool = work.join("agent-tool");
    std::fs::write(
        &tool,
        "#!/bin/sh\nprintf 'got open=%s pinned=%s other=%s\\n' \"$OPEN\" \"$PINNED\" \"$OTHER\"\n\
         printf '%s|%s' \"$OPEN\" \"$PINNED\" | rev; echo\necho agent-done\nexec cat\n",
    )
    .expect("tool");
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let tool = tool.display().to_string();
    let config = format!(
        r#"(
            {hosts}
            threads: [(name: "far", host: "box", command: [{tool:?}], lock: (write: [{work:?}]),
                secrets: [(name: "open", env: "OPEN"), (name: "pinned", env: "PINNED", pin: {tool:?}),
                          (name: "other", env: "OTHER", pin: "/bin/true")])],
        )"#,
        hosts = hosts_entry(&sshd, "box", &paddock),
        work = work.display().to_string(),
    );
    write_config(&here, &config);
    for (name, value) in [("open", OPEN_VALUE), ("pinned", PINNED_VALUE), ("other", "unused-v")] {
        let mut set =
            here.paddock(&["vault", "set", name]).stdin(Stdio::piped()).spawn().expect("set");
        set.stdin.take().expect("stdin").write_all(value.as_bytes()).expect("value");
        assert!(set.wait().expect("vault set").success());
    }
    // The pinned program is approved as it is on the host, found and hashed there.
    let approved = at_a_terminal(
        &here.paddock(&[]),
        &["vault", "approve", "pinned", &tool, "--host", "box"],
        "pinned\n",
    );
    assert!(approved.status.success(), "{}{}", text(&approved.stdout), text(&approved.stderr));
    assert!(text(&approved.stdout).contains(&format!("approved {tool} on box")), "{approved:?}");
    let _stop = StopServer(&there, started_server(&there));

    let instance = here.start(&[]);
    let screen = instance.wait_for_text("1", "agent-done");
    let got = screen.lines().find(|l| l.starts_with("got ")).unwrap_or_default().to_owned();
    // Masked on the host: the values reach the screen only as stars.
    assert!(got.starts_with("got open=*") && got.contains(" pinned=*"), "{screen}");
    assert!(got.ends_with("other="), "the unapproved pinned secret was withheld: {screen}");
    assert!(!screen.contains(OPEN_VALUE) && !screen.contains(PINNED_VALUE), "{screen}");
    let reversed = |v: &str| v.chars().rev().collect::<String>();
    let proof = format!("{}|{}", reversed(PINNED_VALUE), reversed(OPEN_VALUE));
    assert!(screen.contains(&proof), "the program had both values: {screen}");
    assert!(
        screen.contains("secret \"other\" withheld") && screen.contains("--host box"),
        "{screen}"
    );
    let pane = instance.pane(1);
    assert_eq!(pane["host"], "box", "{pane}");
    assert_eq!(pane["lock"]["level"], "locked", "{pane}");

    // Started again from here: the thread opens on the host again (its old pane there ends),
    // its secrets released again.
    instance.ctl(&["restart", "--pane", "1"]);
    let audit = || {
        let log = here.paddock(&["vault", "log", "--json"]).output().expect("log");
        let records: Vec<serde_json::Value> =
            text(&log.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        records
    };
    let events = |name: &str| {
        let records = audit();
        let of = records.iter().filter(|r| r["secret"] == name);
        of.map(|r| format!("{} {}", r["event"].as_str().unwrap_or(""), r["host"]))
            .collect::<Vec<_>>()
    };
    crate::headless::wait_for("the secrets released a second time", || events("open").len() == 3);
    let screen = instance.wait_for_text("1", "agent-done");
    assert!(!screen.contains(OPEN_VALUE), "{screen}");
    let pane = instance.pane(1);
    assert!(pane["host"] == "box" && pane["status"] == "running", "{pane}");
    // The audit log here names the host each time; the host's own log has nothing.
    let box_ = "\"box\"";
    let released_twice =
        [format!("released {box_}"), format!("closed {box_}"), format!("released {box_}")];
    assert_eq!(events("open"), released_twice, "{:?}", audit());
    assert_eq!(events("pinned"), released_twice);
    assert_eq!(events("other"), [format!("withheld {box_}"), format!("withheld {box_}")]);
    let there_log = there.paddock(&["vault", "log", "--json"]).output().expect("log there");
    assert_eq!(text(&there_log.stdout).trim(), "", "the host records nothing of them");

    // Nothing of the values on the host's disk: its folders (state, data, configuration,
    // the lock's folder, its server's log) and the ssh server's.
    drop(instance);
    for value in [OPEN_VALUE, PINNED_VALUE] {
        let on_disk = files_holding(&there.dir, value.as_bytes());
        assert!(on_disk.is_empty(), "{value} written on the host: {on_disk:?}");
        let on_disk = files_holding(&here.dir.join("sshd"), value.as_bytes());
        assert!(on_disk.is_empty(), "{value} written by ssh: {on_disk:?}");
    }
}

/// A brokered secret of a remote thread goes to the host's own broker, in its memory: the
/// program there holds a placeholder, and the fake API (reached from the host through the
/// pane's proxy) gets the real key.
#[test]
fn a_remote_threads_brokered_key_goes_to_the_hosts_broker() {
    let test = "headless::remote::secrets::a_remote_threads_brokered_key_goes_to_the_hosts_broker";
    if rerun_inside(KEYUTILS, test) {
        return;
    }
    let key = test_key();
    // The host: the fake API's folder, its configuration naming the fake (as a host's own
    // proxy_hosts would), and its paddock trusting the test CA.
    let stage = Stage::with_key("fake_echo.py", Some(&key), |_| vec![]);
    let there = &stage.runtime;
    write_config(there, r#"(proxy_hosts: {"api.fake.test": "127.0.0.1"})"#);
    let here = Runtime::new();
    let Some(sshd) = Sshd::start(test, &here.dir.join("sshd")) else { return };
    let paddock = remote_paddock(there);
    let wrapper = std::fs::read_to_string(&paddock).expect("wrapper");
    let ca = stage.tls.join("ca.pem").display().to_string();
    let wrapper = wrapper.replacen("exec ", &format!("export SSL_CERT_FILE='{ca}'\nexec "), 1);
    std::fs::write(&paddock, wrapper).expect("wrapper");
    let port = stage.fake.port;
    let script = r#"echo "HELD=$ECHO_KEY"
curl -sS -H "x-api-key: $ECHO_KEY" "$U/echo" | grep -q '"key_ok": true' && echo CURL-OK
echo ALL-DONE; exec sleep 600"#;
    write_config(
        &here,
        &format!(
            r#"(
            {hosts}
            threads: [(name: "agent", host: "box", command: ["sh", "-c", {script:?}],
                env: {{"U": "https://api.fake.test:{port}"}},
                lock: (write: [{work:?}], network: Allow(["api.fake.test:{port}"])),
                secrets: [(name: "echo-key", env: "ECHO_KEY",
                           broker: (hosts: ["api.fake.test:{port}"], headers: ["x-api-key"]))])],
        )"#,
            hosts = hosts_entry(&sshd, "box", &paddock),
            work = stage.work.display().to_string(),
        ),
    );
    set_secret(&here, "echo-key", &key);
    let instance = here.start(&[]);
    let _stop = StopServer(there, started_server(there));
    let screen = instance.wait_for_text("1", "ALL-DONE");
    assert!(screen.contains("CURL-OK"), "{screen}");
    let held = screen.lines().find_map(|l| l.strip_prefix("HELD=")).expect("HELD").trim();
    assert!(held.starts_with("sk-ant-api03-") && held.len() == key.len() && held != key, "{held}");
    let requests = fake_requests(&stage);
    assert!(!requests.is_empty(), "the fake was reached");
    assert!(requests.iter().all(|(_, k)| k.as_deref() == Some(key.as_str())), "{requests:?}");
    drop(instance);
    let on_disk = files_holding(&there.dir, key.as_bytes());
    let on_disk: Vec<&String> = on_disk.iter().filter(|f| !f.ends_with("fake.log")).collect();
    assert!(on_disk.is_empty(), "the key written on the host: {on_disk:?}");
}

/// A host that greets and then never answers: a thread's pane says so after 30 s, and every
/// value handed to it is on record here as not started, as is one whose pane was closed
/// while waiting; the server stays responsive throughout.
#[test]
fn a_host_that_never_answers_leaves_every_handed_value_on_record() {
    let test =
        "headless::remote::secrets::a_host_that_never_answers_leaves_every_handed_value_on_record";
    if rerun_inside(KEYUTILS, test) {
        return;
    }
    let here = Runtime::new();
    let Some(sshd) = Sshd::start(test, &here.dir.join("sshd")) else { return };
    // The relay's preamble and a hello of this version, then nothing, ever.
    let mute = here.dir.join("mute-paddock");
    let version = paddock::ctl::wire::VERSION;
    std::fs::write(
        &mute,
        format!(
            "#!/bin/sh\nprintf '\\npaddock-stdio\\n\\007\\000\\000\\000\\001\\{:03o}\\000\\001\\000\\000\\000'\nexec cat > /dev/null\n",
            version
        ),
    )
    .expect("mute host");
    std::fs::set_permissions(&mute, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    write_config(
        &here,
        &format!(
            r#"(
            {hosts}
            threads: [
                (name: "waits", host: "mute", command: ["cat"], secrets: [(name: "k", env: "K")]),
                (name: "closed", host: "mute", command: ["cat"], secrets: [(name: "k", env: "K")]),
            ],
        )"#,
            hosts = hosts_entry(&sshd, "mute", &mute),
        ),
    );
    set_secret(&here, "k", "mute-value-31c9");
    let instance = here.start(&[]);
    let audit = || {
        let log = here.paddock(&["vault", "log", "--json"]).output().expect("log");
        text(&log.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .map(|r| {
                let reason = r["reason"].as_str().unwrap_or_default().to_owned();
                (r["thread"].as_str().unwrap_or_default().to_owned(), r["event"].clone(), reason)
            })
            .collect::<Vec<_>>()
    };
    // Closed while its host has not answered: on record as not started.
    instance.ctl(&["close", "--pane", "2"]);
    crate::headless::wait_for("the closed pane's record", || {
        audit().iter().any(|(thread, event, _)| thread == "closed" && event == "failed")
    });
    let screen = instance.wait_for_text("1", "did not answer within 30 s");
    assert!(screen.contains("mute"), "{screen}");
    let records = audit();
    let waits: Vec<_> = records.iter().filter(|(t, _, _)| t == "waits").collect();
    assert_eq!(waits.len(), 1, "{records:?}");
    assert_eq!(waits[0].1, "failed", "{records:?}");
    assert!(waits[0].2.contains("did not answer within 30 s"), "{records:?}");
    let closed: Vec<_> =
        records.iter().filter(|(t, e, _)| t == "closed" && e == "failed").collect();
    assert_eq!(closed.len(), 1, "one record, not one per drop: {records:?}");
    assert!(closed[0].2.contains("its pane closed before"), "{records:?}");
    assert_eq!(instance.pane(1)["host"], "mute");
}
