//! The real agents in locked threads, end to end: each thread's network is an allow-list of
//! one fake API of ours (tests/data/fake_*.py, over TLS with a test CA, named through the
//! proxy's hosts table so that the proxy's CONNECT path carries it), and its home is the
//! thread's own. Claude Code, interactively: it asks to write a file, the pane's pulse says it
//! needs you, the user says yes, the file lands in the lock folder and the turn ends. Codex and
//! Gemini CLI, in their one-shot modes: the answer comes back through the proxy. Everything
//! else any of them reaches for is refused and logged.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::config::write_config;
use super::{wait_for, Runtime};

/// Where `cargo xtask ci` installed an agent (`variable`, PADDOCK_TEST_CLAUDE and the like),
/// else where it installs them (target/agents, then `program` there).
fn installed(variable: &str, program: &str) -> Option<PathBuf> {
    let installed = std::env::var_os(variable).map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("../agents/node_modules").join(program)
    });
    installed.canonicalize().ok()
}

/// The agent `variable` names, or None when it is not installed: a loud skip here, a failure
/// in CI (which installs them).
pub(super) fn agent(test: &str, variable: &str, program: &str) -> Option<PathBuf> {
    let found = installed(variable, program);
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{test}: {program} is not installed; `cargo xtask ci` installs it"
        );
        crate::skip(test, &format!("{program} is not installed (`cargo xtask ci` installs it)"));
    }
    found
}

/// The folder of npm packages an agent was installed into (its `node_modules`' parent), which
/// a lock must show for the agent to run.
pub(super) fn packages(program: &Path) -> PathBuf {
    let mut folder = program.to_owned();
    while folder.file_name().is_some_and(|n| n != "node_modules") && folder.pop() {}
    folder.pop();
    folder
}

/// A test CA and a certificate for `api.fake.test` it signed, made with openssl in `dir`.
fn test_ca(dir: &Path) {
    std::fs::create_dir_all(dir).expect("tls folder");
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl").args(args).current_dir(dir).output().expect("openssl");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let mut ca = vec!["req", "-x509", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2"];
    ca.extend(ec);
    ca.extend(["-subj", "/CN=paddock test CA", "-addext", "basicConstraints=critical,CA:TRUE"]);
    openssl(&ca);
    let mut request = vec!["req", "-keyout", "server.key", "-out", "server.csr"];
    request.extend(ec);
    request.extend(["-subj", "/CN=api.fake.test"]);
    openssl(&request);
    std::fs::write(
        dir.join("ext"),
        "subjectAltName=DNS:api.fake.test\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .expect("ext");
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "ext",
    ]);
}

/// The fake API, serving over TLS on a free port of the host's loopback.
pub(super) struct FakeApi {
    child: Child,
    pub port: u16,
}

impl FakeApi {
    /// tests/data/`script`, with the test CA's certificate, its key, the log and `more`; it
    /// takes only `key` as its API key when one is given.
    fn start(script: &str, tls: &Path, log: &Path, more: &[&Path], key: Option<&str>) -> FakeApi {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(script);
        let mut command = Command::new("python3");
        if let Some(key) = key {
            command.env("FAKE_EXPECT_KEY", key);
        }
        let mut child = command
            .arg(script)
            .args([tls.join("server.pem"), tls.join("server.key"), log.to_owned()])
            .args(more)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the fake API");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        BufReader::new(stdout).read_line(&mut line).expect("the fake says its port");
        let port = line.trim().strip_prefix("listening ").and_then(|p| p.parse().ok());
        FakeApi { child, port: port.unwrap_or_else(|| panic!("the fake said {line:?}")) }
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What every agent test starts from: a runtime, its lock folder (canonical), the test CA, and
/// the fake API serving.
pub(super) struct Stage {
    pub runtime: Runtime,
    pub work: PathBuf,
    pub tls: PathBuf,
    pub log: PathBuf,
    pub fake: FakeApi,
}

impl Stage {
    /// tests/data/`script` as the fake, given what `args` makes of the lock folder.
    pub fn new(script: &str, args: impl Fn(&Path) -> Vec<PathBuf>) -> Stage {
        Stage::with_key(script, None, args)
    }

    /// `new`, the fake taking only `key` as its API key.
    pub fn with_key(
        script: &str,
        key: Option<&str>,
        args: impl Fn(&Path) -> Vec<PathBuf>,
    ) -> Stage {
        let runtime = Runtime::new();
        let (tls, work) = (runtime.dir.join("tls"), runtime.dir.join("work"));
        std::fs::create_dir_all(&work).expect("work");
        let work = work.canonicalize().expect("work");
        test_ca(&tls);
        let log = runtime.dir.join("fake.log");
        let more = args(&work);
        let more: Vec<&Path> = more.iter().map(PathBuf::as_path).collect();
        let fake = FakeApi::start(script, &tls, &log, &more, key);
        Stage { runtime, work, tls, log, fake }
    }

    /// Codex's settings in `thread`'s own home (a model provider that is the fake), and the
    /// environment Codex runs with.
    pub fn codex_set_up(&self, thread: &str) -> Vec<(&'static str, String)> {
        let settings = format!(
            "model = \"gpt-fake\"\nmodel_provider = \"fake\"\n[model_providers.fake]\nname = \"fake\"\n\
             base_url = \"https://api.fake.test:{}/v1\"\nenv_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n",
            self.fake.port
        );
        std::fs::write(self.in_home(thread, ".codex/config.toml"), settings).expect("config.toml");
        let ca = self.tls.join("ca.pem").display().to_string();
        vec![("FAKE_API_KEY", "fake".to_owned()), ("SSL_CERT_FILE", ca)]
    }

    /// Gemini CLI's settings in `thread`'s own home (an API key, not a Google login), and the
    /// environment it runs with.
    pub fn gemini_set_up(&self, thread: &str) -> Vec<(&'static str, String)> {
        let settings = r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#;
        std::fs::write(self.in_home(thread, ".gemini/settings.json"), settings).expect("settings");
        vec![
            ("GEMINI_API_KEY", "fake".to_owned()),
            ("GOOGLE_GEMINI_BASE_URL", format!("https://api.fake.test:{}", self.fake.port)),
            ("NODE_EXTRA_CA_CERTS", self.tls.join("ca.pem").display().to_string()),
        ]
    }

    /// The environment Claude Code runs with: the fake as its API, `key` its key.
    pub fn claude_env(&self, key: &str) -> Vec<(&'static str, String)> {
        vec![
            ("ANTHROPIC_BASE_URL", format!("https://api.fake.test:{}", self.fake.port)),
            ("ANTHROPIC_API_KEY", key.to_owned()),
            ("NODE_EXTRA_CA_CERTS", self.tls.join("ca.pem").display().to_string()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ]
    }

    /// Where `file` lies in `thread`'s own home, its folder made (what a person's first run
    /// inside the lock would have left there).
    pub fn in_home(&self, thread: &str, file: &str) -> PathBuf {
        let path = self.runtime.dir.join("data/paddock/homes").join(thread).join(file);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("the thread's home");
        path
    }

    /// The locked thread `agent` running `command` (after the refused request) with `env`, its
    /// network the fake only, reading `program`'s packages and the test CA, started; the
    /// screen once the command ended, which must have said `answer` and ended well; the fake
    /// must have had `request`.
    fn one_shot(
        &self,
        program: &Path,
        command: &str,
        env: &[(&str, String)],
        answer: &str,
        request: &str,
    ) {
        let env: Vec<String> = env.iter().map(|(k, v)| format!("{k:?}: {v:?}")).collect();
        let read =
            [packages(program), self.tls.clone()].map(|p| format!("{:?}", p.display().to_string()));
        let command = format!("{ELSEWHERE}; {command}; echo AGENT EXIT $?; exec sleep 600");
        write_config(
            &self.runtime,
            &format!(
                r#"(proxy_hosts: {{"api.fake.test": "127.0.0.1"}},
                    threads: [(name: "agent", command: ["sh", "-c", {command:?}], env: {{{env}}},
                        lock: (write: [{work:?}], read: [{read}],
                               network: Allow(["api.fake.test:{port}"])))])"#,
                env = env.join(", "),
                read = read.join(", "),
                work = self.work.display().to_string(),
                port = self.fake.port,
            ),
        );
        let instance = self.runtime.start(&[]);
        let screen = instance.wait_for_text("1", "AGENT EXIT");
        assert!(screen.contains(answer) && screen.contains("AGENT EXIT 0"), "{screen}");
        let requests = std::fs::read_to_string(&self.log).expect("the fake's log");
        assert!(requests.contains(request), "{requests}");
        egress_checked(&self.runtime, self.fake.port, 1);
    }
}

/// What Claude Code keeps in ~/.claude.json once a person has been through its first run: the
/// onboarding done, this API key approved, the lock folder trusted. In the thread's own home,
/// as a person's first run inside the lock would leave it.
pub(super) fn first_run_done(file: &Path, key: &str, work: &Path) {
    let state = serde_json::json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [&key[key.len() - 20..]], "rejected": []},
        "projects": {work.display().to_string(): {"hasTrustDialogAccepted": true, "allowedTools": []}},
    });
    std::fs::write(file, state.to_string()).expect(".claude.json");
}

/// A request to a host off the list, which the proxy refuses (before the agent starts).
const ELSEWHERE: &str = "python3 -c \"import urllib.request as u; u.urlopen('https://example.com/', timeout=10)\" 2>/dev/null";

/// The egress log's lines, after checking that every connection to the fake at `port` was
/// allowed (at least `least` of them) and that example.com was refused.
fn egress_checked(runtime: &Runtime, port: u16, least: usize) -> Vec<serde_json::Value> {
    let egress =
        std::fs::read_to_string(runtime.dir.join("state/paddock/egress.log")).expect("egress log");
    let lines: Vec<serde_json::Value> =
        egress.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    let to_fake = |l: &&serde_json::Value| l["host"] == "api.fake.test" && l["port"] == port;
    assert!(lines.iter().filter(to_fake).all(|l| l["allowed"] == true), "{egress}");
    assert!(lines.iter().filter(to_fake).count() >= least, "{egress}");
    let refused: Vec<&serde_json::Value> = lines.iter().filter(|l| l["allowed"] == false).collect();
    assert!(refused.iter().any(|l| l["host"] == "example.com"), "{egress}");
    lines
}

#[test]
fn claude_code_completes_a_turn_in_a_lock_through_the_allow_list_and_nothing_else() {
    let test = "headless::agent::claude_code_completes_a_turn";
    let program = "@anthropic-ai/claude-code/bin/claude.exe";
    let Some(claude) = agent(test, "PADDOCK_TEST_CLAUDE", program) else { return };
    let stage = Stage::new("fake_anthropic.py", |work| vec![work.join("hello.txt")]);
    let Stage { runtime, work, tls, log, fake } = &stage;
    let key = "fake-key-for-the-local-fake-api";
    first_run_done(&stage.in_home("claude", ".claude.json"), key, work);
    // Before the agent: a request to a host off the list, which the proxy refuses.
    let elsewhere = ELSEWHERE;
    // Asking before it edits: Claude Code 2.1.3xx starts in "auto mode", which does not.
    let command = format!(
        "{elsewhere}; exec {} --permission-mode default 'Create hello.txt here'",
        claude.display()
    );
    write_config(
        runtime,
        &format!(
            r#"(proxy_hosts: {{"api.fake.test": "127.0.0.1"}},
                threads: [(name: "claude", command: ["sh", "-c", {command:?}],
                    env: {{"ANTHROPIC_BASE_URL": "https://api.fake.test:{port}",
                           "ANTHROPIC_API_KEY": "{key}",
                           "NODE_EXTRA_CA_CERTS": "{ca}",
                           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}},
                    lock: (write: ["{work}"], read: ["{package}", "{tls}"],
                           network: Allow(["api.fake.test:{port}"])))])"#,
            port = fake.port,
            ca = tls.join("ca.pem").display(),
            work = work.display(),
            package = packages(&claude).display(),
            tls = tls.display(),
        ),
    );
    let instance = runtime.start(&[]);
    // The agent asks before it writes: the pane says so, and the pulse calls it waiting for you.
    let asking = instance.wait_for_text("1", "Do you want to create hello.txt?");
    wait_for("the pulse to say the agent needs you", || {
        instance.pane(1)["pulse"]["state"] == "needs_you"
    });
    assert!(asking.contains("written by the agent, through the proxy"), "{asking}");
    // A person reads the question first (Claude Code ignores keys in its first moments).
    std::thread::sleep(std::time::Duration::from_secs(1));
    instance.send_keys("1", "1");
    let done = instance.wait_for_text("1", "Done: hello.txt is written.");
    let written = std::fs::read_to_string(work.join("hello.txt")).expect("the agent's file");
    assert_eq!(written, "written by the agent, through the proxy\n", "{done}");
    // The fake saw the whole turn: the tool use asked for, and the answer after its result.
    let requests = std::fs::read_to_string(log).expect("the fake's log");
    assert!(requests.contains("\"kind\": \"tool_use\""), "{requests}");
    assert!(requests.contains("\"kind\": \"final\""), "{requests}");
    // Every connection is in the egress log: the fake's allowed, through CONNECT to the name
    // the hosts table maps; example.com (and whatever else the agent reached for) refused.
    let egress =
        std::fs::read_to_string(runtime.dir.join("state/paddock/egress.log")).expect("egress log");
    let lines: Vec<serde_json::Value> =
        egress.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    let to_fake = |l: &&serde_json::Value| l["host"] == "api.fake.test" && l["port"] == fake.port;
    assert!(lines.iter().filter(to_fake).all(|l| l["allowed"] == true), "{egress}");
    assert!(lines.iter().filter(to_fake).count() >= 2, "{egress}");
    let refused: Vec<&serde_json::Value> = lines.iter().filter(|l| l["allowed"] == false).collect();
    assert!(refused.iter().any(|l| l["host"] == "example.com"), "{egress}");
    assert!(refused.iter().all(|l| !to_fake(l)), "{egress}");
    let net = instance.pane(1)["net"].clone();
    assert_eq!(net["mode"], "allow");
    assert!(net["allowed"].as_u64() >= Some(2) && net["denied"].as_u64() >= Some(1), "{net}");
    assert_eq!(instance.pane(1)["lock"]["detail"], "files; allow-listed network");
    // Its state went to the thread's own home, not yours.
    assert!(runtime.dir.join("data/paddock/homes/claude/.claude").is_dir());
}

#[test]
fn codex_completes_a_turn_in_a_lock_through_the_allow_list() {
    let test = "headless::agent::codex_completes_a_turn";
    let Some(codex) = agent(test, "PADDOCK_TEST_CODEX", "@openai/codex/bin/codex.js") else {
        return;
    };
    let stage = Stage::new("fake_openai.py", |_| Vec::new());
    let env = stage.codex_set_up("agent");
    let command = format!("{} exec --skip-git-repo-check 'say hello'", codex.display());
    stage.one_shot(
        &codex,
        &command,
        &env,
        "Hello from the fake OpenAI",
        "\"path\": \"/v1/responses\"",
    );
}

#[test]
fn gemini_cli_completes_a_turn_in_a_lock_through_the_allow_list() {
    let test = "headless::agent::gemini_cli_completes_a_turn";
    let Some(gemini) = agent(test, "PADDOCK_TEST_GEMINI", "@google/gemini-cli/bundle/gemini.js")
    else {
        return;
    };
    let stage = Stage::new("fake_gemini.py", |_| Vec::new());
    let env = stage.gemini_set_up("agent");
    let command = format!("{} --skip-trust -p 'say hello'", gemini.display());
    stage.one_shot(
        &gemini,
        &command,
        &env,
        "Hello from the fake Gemini",
        ":streamGenerateContent?alt=sse",
    );
}
