//! A locked thread's home, end to end: a home of its own, writable and kept between runs, in
//! paddock's data folder; the real home out of sight but for the default read list (git's
//! settings, the toolchains on PATH) with its credentials never shown; a commit with the
//! user's git identity; and `sandbox probe --thread` saying all of it.

use std::ffi::OsStr;
use std::process::Command;

use super::config::write_config;
use super::Runtime;

/// What the agent inside tries, each result on a line of its own.
const SCRIPT: &str = r#"
try() { name=$1; shift; if out=$("$@" 2>&1); then echo "$name = ok $out"; else echo "$name = failed"; fi; }
try tool hello-tool
try credentials cat "$HOME/.cargo/credentials.toml"
try npmrc cat "$HOME/.npmrc"
try kept cat "$HOME/.cache/kept"
try cache sh -c 'mkdir -p "$HOME/.npm/_cacache" && echo written > "$HOME/.cache/new" && echo yes'
try gitconfig sh -c 'echo x >> "$HOME/.gitconfig"'
try commit sh -c 'git commit -q --allow-empty -m inside && git log -1 --format=%an'
echo "home done"
"#;

#[test]
fn a_locked_thread_has_a_writable_home_of_its_own_and_reads_only_the_safe_part_of_yours() {
    let runtime = Runtime::new();
    let (home, work) = (runtime.dir.join("home"), runtime.dir.join("work"));
    for folder in [home.join(".cargo/bin"), work.clone()] {
        std::fs::create_dir_all(folder).expect("folders");
    }
    std::fs::write(home.join(".gitconfig"), "[user]\n\tname = Agent Tester\n\temail = a@t.test\n")
        .expect("gitconfig");
    std::fs::write(home.join(".cargo/credentials.toml"), "token = \"cargo-secret\"\n").expect("c");
    std::fs::write(home.join(".npmrc"), "//registry/:_authToken=npm-secret\n").expect("npmrc");
    let tool = home.join(".cargo/bin/hello-tool");
    std::fs::write(&tool, "#!/bin/sh\necho tool ran\n").expect("tool");
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(&tool).expect("meta").permissions(),
        0o755,
    );
    Command::new("chmod").arg("755").arg(&tool).status().expect("chmod");
    let git = Command::new("git").args(["init", "-q"]).current_dir(&work).status().expect("git");
    assert!(git.success());
    // What an earlier run left in the thread's home.
    let own = runtime.dir.join("data/paddock/homes/agent");
    std::fs::create_dir_all(own.join(".cache")).expect("own home");
    std::fs::write(own.join(".cache/kept"), "from the last run").expect("kept");
    std::fs::write(work.join("script.sh"), SCRIPT).expect("script");
    let script = format!("cd {work} && sh script.sh; exec sleep 600", work = work.display());
    write_config(
        &runtime,
        &format!(
            r#"(threads: [(name: "agent", command: ["sh", "-c", {script:?}],
                lock: (write: ["{work}"]))])"#,
            work = work.display()
        ),
    );
    let path = format!("{}:/usr/bin:/bin", home.join(".cargo/bin").display());
    let env: [(&str, &OsStr); 2] = [("HOME", home.as_os_str()), ("PATH", OsStr::new(&path))];
    let instance = runtime.start_with_env(&[], &env);
    let screen = instance.wait_for_text("1", "home done");
    let line = |name: &str| {
        screen.lines().find(|l| l.starts_with(&format!("{name} ="))).unwrap_or_default().to_owned()
    };
    assert_eq!(line("tool"), "tool = ok tool ran", "a PATH folder in the home: {screen}");
    assert_eq!(line("credentials"), "credentials = failed", "{screen}");
    assert_eq!(line("npmrc"), "npmrc = failed", "{screen}");
    assert_eq!(line("kept"), "kept = ok from the last run", "{screen}");
    assert_eq!(line("cache"), "cache = ok yes", "{screen}");
    assert_eq!(line("gitconfig"), "gitconfig = failed", "read, never written: {screen}");
    assert_eq!(line("commit"), "commit = ok Agent Tester", "{screen}");
    // Written into the thread's home, not the user's.
    assert_eq!(std::fs::read_to_string(own.join(".cache/new")).expect("new"), "written\n");
    assert!(!home.join(".cache").exists() && !home.join(".npm").exists());
    let gitconfig = std::fs::read_to_string(home.join(".gitconfig")).expect("gitconfig");
    assert!(!gitconfig.contains('x'), "{gitconfig}");

    let probe = runtime
        .paddock(&["sandbox", "probe", "--thread", "agent"])
        .envs(env)
        .output()
        .expect("probe");
    let text = String::from_utf8_lossy(&probe.stdout);
    assert!(probe.status.success(), "{text}{}", String::from_utf8_lossy(&probe.stderr));
    let own = own.canonicalize().expect("own home");
    let home = home.canonicalize().expect("home");
    for expected in [
        format!(
            "  home       {} (writable, kept between runs), shown as {}",
            own.display(),
            home.display()
        ),
        format!("  writable   {}", work.canonicalize().expect("work").display()),
        "  readable   ~/.cargo/bin  (default)".to_owned(),
        "  readable   ~/.gitconfig  (default)".to_owned(),
        "  network    off (its own loopback only)".to_owned(),
    ] {
        assert!(text.lines().any(|l| l == expected), "{expected:?} in\n{text}");
    }
    assert!(!text.contains("credentials.toml") && !text.contains(".npmrc"), "{text}");
    let unknown = runtime.paddock(&["sandbox", "probe", "--thread", "nobody"]).output().expect("p");
    assert!(!unknown.status.success());
    let said = String::from_utf8_lossy(&unknown.stderr);
    assert!(said.contains("no thread named \"nobody\"") && said.contains("agent"), "{said}");
}
