//! The configuration: every field, the example file, and a table of broken files with the
//! exact diagnostics a person would read.

use std::path::{Path, PathBuf};

use super::*;
use crate::input::{Action, Key, Modifiers};
use crate::vault::BrokerSpec;

/// A home folder with the folders the example names (`~/src/app`, `~/src/shared`).
struct Home(PathBuf);

impl Home {
    fn new(name: &str) -> Home {
        let dir =
            std::env::temp_dir().join(format!("paddock-config-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src/app")).expect("temp home");
        std::fs::create_dir_all(dir.join("src/shared")).expect("temp home");
        Home(dir)
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn rgb(hex: u32) -> Rgb {
    Rgb { r: (hex >> 16) as u8, g: (hex >> 8) as u8, b: hex as u8 }
}

fn chord(text: &str) -> Option<crate::input::Chord> {
    crate::input::keymap::parse_chord(text)
}

#[test]
fn an_empty_file_is_the_defaults() {
    assert_eq!(parse("()"), Ok(Config::default()));
    assert_eq!(parse("// nothing yet\n(\n)\n"), Ok(Config::default()));
}

#[test]
fn the_example_parses_into_exactly_the_documented_values() {
    let home = Home::new("example");
    let src = include_str!("../../config.example.ron");
    let config = parse_with_home(src, Some(home.0.clone())).unwrap_or_else(|d| {
        panic!("{}", d.iter().map(|d| d.to_string() + "\n").collect::<String>())
    });
    let mut keys = KeyBindings::default();
    keys.bind(Action::SplitRight, chord("Ctrl+Shift+D"));
    keys.bind(Action::ZoomPane, None);
    let palette = [
        0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5, 0x7f7f7f,
        0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
    ]
    .map(rgb);
    let app = home.path("src/app");
    // The remote thread's definition is what its host is handed: the thread as written, less
    // its host (and place), its paths left for the host to read.
    let remote_definition =
        config.threads.last().and_then(|t| t.remote.as_ref()).expect("remote").definition.clone();
    let raw: raw::RawThread = ron_options().from_str(&remote_definition).expect("reads back");
    assert_eq!(raw.command, Some(vec!["claude".to_owned()]));
    assert_eq!(raw.cwd.as_deref(), Some("~/src/app"));
    assert!(raw.host.is_none(), "{remote_definition}");
    let expected = Config {
        font: FontConfig { family: "JetBrains Mono".into(), size: 14.0 },
        theme: ThemeColors {
            foreground: rgb(0xd8d8d8),
            background: rgb(0x18181c),
            cursor: rgb(0xf0c040),
            selection: rgb(0x3a4e7a),
            palette,
        },
        scrollback_lines: 20_000,
        padding: 4,
        desktop_notifications: false,
        pulse_rate: 8,
        pulse_glow: true,
        keys,
        threads: vec![
            ThreadSpec {
                name: "claude".into(),
                command: vec!["claude".into(), "--verbose".into()],
                cwd: Some(app.clone()),
                env: vec![("RUST_BACKTRACE".into(), "1".into())],
                env_pass: vec!["SSH_AUTH_SOCK".into()],
                place: Placement::Tab,
                lock: Some(LockPolicy {
                    write: vec![app.clone()],
                    read: vec![home.path("src/shared"), PathBuf::from("/usr")],
                    protect: vec![app.join(".env")],
                    network: Network::Allow(
                        ["@anthropic", "*.github.com", "models.internal:8080"]
                            .iter()
                            .flat_map(|r| crate::egress::Rule::parse(r).expect(r))
                            .collect(),
                    ),
                    sockets: vec![home.path(".ssh/agent.sock")],
                    allow_broad_write: false,
                }),
                unlocked: false,
                secrets: vec![
                    SecretRef {
                        name: "anthropic-key".into(),
                        env: "ANTHROPIC_API_KEY".into(),
                        pin: Some("claude".into()),
                        broker: None,
                    },
                    SecretRef {
                        name: "gh-token".into(),
                        env: "GH_TOKEN".into(),
                        pin: None,
                        broker: Some(BrokerSpec {
                            hosts: vec![("api.github.com".into(), 443)],
                            headers: vec!["authorization".into()],
                        }),
                    },
                ],
                pulse: PulseSettings {
                    busy_cpu: 10.0,
                    quiet_after: 20,
                    needs_you: vec!["Apply these changes\\? \\(y/n\\)".into()],
                },
                limits: ThreadLimits { memory_bytes: Some(4 << 30), cpus: Some(2.0) },
                clipboard: Some(ClipboardRule::Ask),
                worktree: None,
                remote: None,
            },
            ThreadSpec {
                name: "tests".into(),
                command: ["cargo", "watch", "-x", "test"].map(String::from).to_vec(),
                cwd: Some(app.clone()),
                env: vec![],
                env_pass: vec![],
                place: Placement::RightOf("claude".into()),
                lock: None,
                unlocked: false,
                secrets: vec![],
                pulse: PulseSettings::default(),
                limits: Default::default(),
                clipboard: None,
                worktree: None,
                remote: None,
            },
            ThreadSpec {
                name: "shell".into(),
                command: vec![],
                cwd: None,
                env: vec![],
                env_pass: vec![],
                place: Placement::Below("tests".into()),
                lock: None,
                unlocked: true,
                secrets: vec![],
                pulse: PulseSettings::default(),
                limits: Default::default(),
                clipboard: None,
                worktree: None,
                remote: None,
            },
            ThreadSpec {
                name: "second".into(),
                command: vec!["codex".into()],
                cwd: None,
                env: vec![],
                env_pass: vec![],
                place: Placement::Tab,
                lock: Some(LockPolicy {
                    write: vec![],
                    read: vec![],
                    protect: vec![],
                    network: Network::Allow(crate::egress::Rule::parse("@openai").expect("preset")),
                    sockets: vec![],
                    allow_broad_write: false,
                }),
                unlocked: false,
                secrets: vec![],
                pulse: PulseSettings::default(),
                limits: Default::default(),
                clipboard: None,
                worktree: Some(Worktree { repo: app.clone(), branch: "agent-second".into() }),
                remote: None,
            },
            ThreadSpec {
                name: "remote".into(),
                command: vec!["claude".into()],
                remote: Some(RemoteThread {
                    host: HostSettings {
                        name: "build".into(),
                        destination: "me@build-box".into(),
                        paddock_path: "~/.cargo/bin/paddock".into(),
                        ssh_options: Vec::new(),
                    },
                    definition: remote_definition.clone(),
                }),
                ..ThreadSpec::default()
            },
        ],
        proxy_hosts: [("models.internal".to_owned(), "10.0.0.5".parse().unwrap())].into(),
        hosts: [(
            "build".to_owned(),
            HostSettings {
                name: "build".into(),
                destination: "me@build-box".into(),
                paddock_path: "~/.cargo/bin/paddock".into(),
                ssh_options: Vec::new(),
            },
        )]
        .into(),
    };
    assert_eq!(config, expected);
}

/// Every field set to something other than its default comes out in the `Config`, written
/// with and without `Some(…)` and named structs, as RON allows.
#[test]
fn every_field_in_a_file_reaches_the_config() {
    let home = Home::new("fields");
    let src = r##"Config(
        font: Some((family: "DejaVu Sans Mono", size: 9.5)),
        theme: (foreground: "#010203", background: "#040506", cursor: "#070809", selection: "#0a0b0c"),
        scrollback: 0,
        padding: 200,
        desktop_notifications: false,
        pulse_rate: 20,
        pulse_glow: false,
        keys: {"copy": "Alt+C", "new_tab": "none", "search": "F3"},
        threads: [
            (name: "a", command: ["true"], cwd: "~", env: {"A_1": "x y", "_B": ""}),
            (name: "b", place: Below("a"), lock: (read: ["~/src"]), secrets: [(name: "n", env: "E")]),
        ],
    )"##;
    let config = parse_with_home(src, Some(home.0.clone())).expect("valid");
    assert_eq!(config.font, FontConfig { family: "DejaVu Sans Mono".into(), size: 9.5 });
    let theme = &config.theme;
    let colors = [theme.foreground, theme.background, theme.cursor, theme.selection];
    assert_eq!(colors, [rgb(0x010203), rgb(0x040506), rgb(0x070809), rgb(0x0a0b0c)]);
    assert_eq!(theme.palette, ThemeColors::default().palette);
    assert_eq!((config.scrollback_lines, config.padding), (0, 200));
    let pulse = (config.desktop_notifications, config.pulse_rate, config.pulse_glow);
    assert_eq!(pulse, (false, 20, false));
    let alt = Modifiers { alt: true, ..Modifiers::NONE };
    assert_eq!(config.keys.action_for(Key::Char('c'), alt), Some(Action::Copy));
    assert_eq!(config.keys.action_for(Key::F(3), Modifiers::NONE), Some(Action::Search));
    assert_eq!(config.keys.chord_of(Action::NewTab), None);
    assert_eq!(config.keys.chord_of(Action::Paste), chord("Ctrl+Shift+V"), "others keep theirs");
    let [a, b] = &config.threads[..] else { panic!("two threads") };
    assert_eq!(a.cwd.as_deref(), Some(home.0.as_path()));
    assert_eq!(a.env, vec![("A_1".into(), "x y".into()), ("_B".into(), "".into())]);
    assert_eq!(b.place, Placement::Below("a".into()));
    let lock = b.lock.as_ref().expect("lock");
    assert_eq!((lock.read.clone(), lock.network.clone()), (vec![home.path("src")], Network::Off));
    assert_eq!(
        b.secrets,
        vec![SecretRef { name: "n".into(), env: "E".into(), pin: None, broker: None }]
    );
}

/// Broken files, each with the exact diagnostics (line:column, field path, message).
#[test]
fn broken_files_get_exact_diagnostics() {
    let home = Home::new("broken");
    let cases: &[(&str, &str, &[&str])] = &[
        ("syntax: unclosed", "(threads: [(name: \"a\")]", &[
            "1:24: the file ends before the configuration does: a `(`, `[`, `{` or `\"` is not closed",
        ]),
        ("syntax: two commas", "(scrollback: 10,,)", &["1:17: expected identifier, found `,`"]),
        ("syntax: trailing text", "()\nx", &[
            "2:1: expected nothing after the configuration's closing `)`, found `x`",
        ]),
        ("wrong type", "(\n  font: (size: \"big\"),\n)", &[
            "2:16: font.size: expected float, found `\"big\"`",
        ]),
        ("wrong type in a list", "(threads: [(name: \"a\", lock: (write: [12]))])", &[
            "1:39: threads[0].lock.write[0]: expected string, found `12`",
        ]),
        ("unknown field", "(threads: [\n  (nmae: \"a\"),\n])", &[
            "2:4: threads[0].nmae: unknown field `nmae`: did you mean `name`? (known: `name`, `command`, `cwd`, `env`, `env_pass`, `place`, `lock`, `unlocked`, `secrets`, `pulse`, `limits`, `clipboard`, `worktree`, `host`)",
        ]),
        ("unknown top-level field", "(fnt: ())", &[
            "1:2: fnt: unknown field `fnt`: did you mean `font`? (known: `font`, `theme`, `scrollback`, `padding`, `desktop_notifications`, `pulse_rate`, `pulse_glow`, `keys`, `threads`, `proxy_hosts`, `hosts`)",
        ]),
        ("unknown choice", "(threads: [(name: \"a\", lock: (network: Maybe))])", &[
            "1:40: threads[0].lock.network: unknown choice `Maybe` (known: `Off`, `On`, `Allow`)",
        ]),
        ("bad network rules", "(threads: [(name: \"a\", lock: (write: [\"/tmp\"], network: Allow([\"https://x.com\", \"@nope\", \"x.com:0\"])))])", &[
            "1:57: threads[0].lock.network: Allow: \"https://x.com\" is not a host name: use letters, digits, `-` and `.` (no scheme, path or user), `*.` only at the start",
            "1:57: threads[0].lock.network: Allow: \"@nope\" is not a known preset; the presets are @anthropic, @openai, @google, @github",
            "1:57: threads[0].lock.network: Allow: \"x.com:0\" has a bad port: use a number from 1 to 65535 after the colon",
        ]),
        ("an empty allow-list", "(threads: [(name: \"a\", lock: (write: [\"/tmp\"], network: Allow([])))])", &[
            "1:57: threads[0].lock.network: an empty allow-list lets nothing through: write Off for no network",
        ]),
        ("bad proxy hosts", "(proxy_hosts: {\"fake.test\": \"localhost\", \"a/b\": \"127.0.0.1\"})", &[
            "1:15: proxy_hosts: \"a/b\" is not a host name",
            "1:15: proxy_hosts: \"localhost\" (for fake.test) is not an IP address",
        ]),
        ("bad worktrees", "(threads: [(name: \"a\", worktree: (repo: \"/r\", branch: \"-x y\")), (name: \"b\", cwd: \"/tmp\", worktree: (branch: \"b\")), (name: \"c\", cwd: \"/tmp\", worktree: (repo: \"/r\", branch: \"c\"))])", &[
            "1:55: threads[0].worktree.branch: \"-x y\" is not a branch name git takes: it may not hold spaces, control characters or any of ~^:?*[\\",
            "1:100: threads[1].worktree: `repo` is required: the repository to make the worktree of",
            "1:133: threads[2].cwd: a thread with a `worktree` starts in it: remove `cwd`",
        ]),
        ("bad placement", "(threads: [(name: \"a\", place: Besides(\"b\"))])", &[
            "1:31: threads[0].place: unknown choice `Besides` (known: `Tab`, `RightOf`, `Below`)",
        ]),
        ("split of a missing thread", "(threads: [\n  (name: \"a\"),\n  (name: \"b\", place: RightOf(\"c\")),\n])", &[
            "3:22: threads[1].place: no thread named \"c\" is defined before this one (earlier threads: \"a\")",
        ]),
        ("split of itself", "(threads: [(name: \"a\", place: Below(\"a\"))])", &[
            "1:31: threads[0].place: a thread cannot split itself: \"a\" names this thread",
        ]),
        ("duplicate names", "(threads: [\n  (name: \"a\"),\n  (name: \"a\"),\n])", &[
            "3:10: threads[1].name: a thread named \"a\" is already defined (threads[0])",
        ]),
        ("missing name", "(threads: [(command: [\"ls\"])])", &[
            "1:12: threads[0]: `name` is required: every thread needs a unique name",
        ]),
        ("empty command", "(threads: [(name: \"a\", command: [])])", &[
            "1:33: threads[0].command: expected a program and its arguments such as [\"claude\"], found [] (leave `command` out for your shell)",
        ]),
        ("missing folder", "(threads: [(name: \"a\", cwd: \"~/nope\")])", &[
            "1:29: threads[0].cwd: the folder HOME/nope does not exist (No such file or directory (os error 2))",
        ]),
        ("relative path", "(threads: [(name: \"a\", lock: (write: [\"src\"]))])", &[
            "1:39: threads[0].lock.write[0]: expected an absolute path, found \"src\" (start it with `/` or `~/`)",
        ]),
        ("protected path outside the lock", "(threads: [(name: \"a\", lock: (write: [\"~/src\"], protect: [\"/etc/passwd\"]))])", &[
            "1:59: threads[0].lock.protect[0]: /etc/passwd is not inside a `write` or `read` folder, so the lock already keeps it out",
        ]),
        ("bad secret name", "(threads: [(name: \"a\", secrets: [(name: \"my key\", env: \"K\")])])", &[
            "1:41: threads[0].secrets[0].name: expected a secret's name in the vault (1 to 64 letters, digits, `-`, `_` or `.`, starting with a letter or digit), found \"my key\"",
        ]),
        ("bad screen rule", "(threads: [(name: \"a\", pulse: (needs_you: [\"Allow (y/n\"]))])", &[
            "1:44: threads[0].pulse.needs_you[0]: expected a regular expression (escape `? ( ) [ ] .` with `\\\\` to match them as they are), found \"Allow (y/n\": error: unclosed group",
        ]),
        ("bad limits", "(threads: [(name: \"a\", limits: (memory: \"4 gigs\", cpu: 0.0))])", &[
            "1:41: threads[0].limits.memory: expected a size of 1M or more, such as \"512M\" or \"4G\", found \"4 gigs\"",
            "1:56: threads[0].limits.cpu: expected cores' worth of CPU from 0.01 to 1024, such as 2.0, found 0",
        ]),
        ("locked and unlocked", "(threads: [(name: \"a\", lock: (), unlocked: true)])", &[
            "1:44: threads[0].unlocked: a thread is either locked or unlocked: remove `unlocked: true` or its `lock`",
        ]),
        ("bad key chord", "(keys: {\"search\": \"Ctrl+Hyper+F\"})", &[
            "1:19: keys.search: expected a key chord such as \"Ctrl+Shift+T\" (Ctrl, Alt, Shift, then one key: a character or a name like PageUp, F5, Enter) or \"none\", found \"Ctrl+Hyper+F\"",
        ]),
        ("unknown action", "(keys: {\"nwe_tab\": \"F1\"})", &[
            "1:9: keys.nwe_tab: unknown action `nwe_tab`: did you mean `new_tab`? (known: `new_tab`, `close_pane`, `split_right`, `split_down`, `focus_left`, `focus_right`, `focus_up`, `focus_down`, `zoom_pane`, `next_tab`, `previous_tab`, `font_bigger`, `font_smaller`, `font_reset`, `copy`, `paste`, `scroll_page_up`, `scroll_page_down`, `scroll_top`, `scroll_bottom`, `search`, `restart_thread`, `allow_clipboard`, `allow_host`, `approve_program`, `next_waiting`, `mute_pane`, `detach`, `new_window`)",
        ]),
        ("chord taken twice", "(keys: {\"copy\": \"Alt+X\", \"paste\": \"Alt+X\"})", &[
            "1:35: keys.paste: \"Alt+X\" is already bound to `copy` (unbind it with `\"copy\": \"none\"`)",
        ]),
        ("chord taken by a default", "(keys: {\"copy\": \"Ctrl+Shift+T\"})", &[
            "1:17: keys.copy: \"Ctrl+Shift+T\" is already bound to `new_tab` (unbind it with `\"new_tab\": \"none\"`)",
        ]),
        ("bad colors", "(theme: (cursor: \"red\", palette: [\"#000000\"]))", &[
            "1:18: theme.cursor: expected a color as \"#rrggbb\", found \"red\"",
            "1:34: theme.palette: expected 16 colors (the ANSI palette), found 1",
        ]),
        ("out of range", "(font: (size: 1.0), scrollback: 5000000)", &[
            "1:15: font.size: expected 4 to 200, found 1",
            "1:33: scrollback: expected at most 1000000 lines, found 5000000",
        ]),
        ("pulse rate", "(pulse_rate: 0)", &["1:14: pulse_rate: expected 1 to 20 samples a second, found 0"]),
        ("bad secret", "(threads: [(name: \"a\", secrets: [(name: \"k\", env: \"MY-KEY\"), (env: \"B\")])])", &[
            "1:51: threads[0].secrets[0].env: expected an environment variable name (letters, digits, _), found \"MY-KEY\"",
            "1:62: threads[0].secrets[1]: `name` is required: the secret's name in the vault",
        ]),
        ("bad env_pass", "(threads: [(name: \"a\", env_pass: [\"PATH\", \"GH TOKEN\", \"TMPDIR\"])])", &[
            "1:43: threads[0].env_pass[1]: expected an environment variable name (letters, digits, _), found \"GH TOKEN\"",
            "1:55: threads[0].env_pass[2]: TMPDIR cannot be passed into a lock: the lock hides your runtime folder and gives the program a temporary folder of its own",
        ]),
        ("broker without an allow-list", "(threads: [(name: \"a\", lock: (), secrets: [(name: \"k\", env: \"K\", broker: (hosts: [\"api.example.com\"], headers: [\"x-api-key\"]))])])", &[
            "1:74: threads[0].secrets[0].broker: a brokered secret needs its thread locked with `network: Allow([...])` listing its hosts: the broker is that lock's proxy, and with any other network a program could go around it",
        ]),
        ("bad broker", "(threads: [(name: \"a\", lock: (network: Allow([\"api.example.com\", \"*.example.com\"])), secrets: [(name: \"k\", env: \"K\", broker: (hosts: [\"other.test\", \"*.example.com\", \"@anthropic\"], headers: [\"Host\", \"x api\"]))])])", &[
            "1:135: threads[0].secrets[0].broker.hosts[0]: other.test:443 is not in the thread's network allow-list: add it to `network: Allow([...])`, or the broker could never reach it",
            "1:149: threads[0].secrets[0].broker.hosts[1]: expected one host name (api.example.com, or api.example.com:443), found \"*.example.com\": a secret is brokered to named hosts only, not to a preset, a `*.` pattern or an address",
            "1:166: threads[0].secrets[0].broker.hosts[2]: expected one host name (api.example.com, or api.example.com:443), found \"@anthropic\": a secret is brokered to named hosts only, not to a preset, a `*.` pattern or an address",
            "1:191: threads[0].secrets[0].broker.headers[0]: host cannot carry a secret: it belongs to the connection",
            "1:199: threads[0].secrets[0].broker.headers[1]: expected a request header name, found \"x api\"",
        ]),
        ("empty broker", "(threads: [(name: \"a\", lock: (network: Allow([\"api.example.com\"])), secrets: [(name: \"k\", env: \"K\", broker: ())])])", &[
            "1:109: threads[0].secrets[0].broker: `hosts` is required: the hosts the secret's value may go to",
            "1:109: threads[0].secrets[0].broker: `headers` is required: the request headers the secret's value may go in (x-api-key, authorization)",
        ]),
        ("bad clipboard", "(threads: [(name: \"a\", clipboard: Maybe)])", &[
            "1:35: threads[0].clipboard: unknown choice `Maybe` (known: `Deny`, `Ask`, `Allow`)",
        ]),
    ];
    let mut wrong = Vec::new();
    for (what, src, expected) in cases {
        let found = match parse_with_home(src, Some(home.0.clone())) {
            Ok(_) => vec!["(no diagnostics)".to_owned()],
            Err(diagnostics) => diagnostics
                .iter()
                .map(|d| d.to_string().replace(&home.0.display().to_string(), "HOME"))
                .collect(),
        };
        if found != *expected {
            wrong.push(format!("{what}: {src}\n  found:    {found:?}\n  expected: {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A locked thread's clipboard writes are refused unless its config says otherwise; any other
/// thread's are allowed; a split of a locked pane keeps the rule (app::split_lock).
#[test]
fn clipboard_writes_are_refused_for_locked_threads_by_default() {
    let home = Home::new("clipboard");
    let threads = |src: &str| parse_with_home(src, Some(home.0.clone())).expect("parses").threads;
    let lock = format!("lock: (write: [\"{}\"])", home.0.display());
    let src = format!(
        "(threads: [(name: \"locked\", {lock}), (name: \"asks\", {lock}, clipboard: Ask), \
         (name: \"free\"), (name: \"quiet\", clipboard: Deny)])"
    );
    let rules: Vec<ClipboardRule> = threads(&src).iter().map(ThreadSpec::clipboard_rule).collect();
    use ClipboardRule::*;
    assert_eq!(rules, [Deny, Ask, Allow, Deny]);
}

#[test]
fn a_missing_file_means_the_defaults_and_an_unreadable_one_says_why() {
    let home = Home::new("load");
    assert_eq!(load(&home.path("none.ron")), Ok(None));
    let dir_as_file = load(&home.path("src")).expect_err("a folder is not a file");
    assert_eq!(dir_as_file.items.len(), 1);
    assert!(dir_as_file
        .to_string()
        .starts_with(&format!("{}:1:1: cannot read", home.path("src").display())));
    let path = home.path("bad.ron");
    std::fs::write(&path, "(font: (size: \"x\"))").expect("write");
    let bad = load(&path).expect_err("bad");
    assert_eq!(
        bad.to_string(),
        format!("{}:1:15: font.size: expected float, found `\"x\"`", path.display())
    );
}

#[test]
fn default_location_is_the_platform_config_folder() {
    let path = default_path().expect("a config folder");
    assert!(path.ends_with(Path::new("paddock").join("config.ron")), "{}", path.display());
}

#[test]
fn a_thread_on_another_host_keeps_its_definition_for_that_host() {
    let text = r#"(
        hosts: {"build": (destination: "me@build-box", paddock_path: "/opt/p/paddock",
                          ssh_options: ["-p", "2222"])},
        threads: [
            (name: "here"),
            (name: "far", host: "build", place: RightOf("here"),
             command: ["claude"], cwd: "/only/on/the/host",
             lock: (write: ["/srv/work"], network: Allow(["api.anthropic.com"]))),
            (name: "plain", host: "other-box"),
        ],
    )"#;
    let config = parse(text).expect("parses: the host's paths are the host's to check");
    let far = &config.threads[1];
    assert_eq!(far.place, Placement::RightOf("here".into()));
    assert!(far.lock.is_none() && far.cwd.is_none(), "nothing of it runs here");
    // Its command is kept as written, for a pinned secret's check before it is sent.
    assert_eq!(far.command, ["claude"]);
    let remote = far.remote.as_ref().expect("remote");
    assert_eq!(remote.host.destination, "me@build-box");
    assert_eq!(remote.host.paddock_path, "/opt/p/paddock");
    assert_eq!(remote.host.ssh_options, ["-p", "2222"]);
    // What the host is handed reads back as the same thread, less its host and place.
    let raw: crate::config::raw::RawThread =
        ron_options().from_str(&remote.definition).expect("reads back");
    assert!(raw.host.is_none() && raw.place.is_none(), "{}", remote.definition);
    assert_eq!(raw.name.as_deref(), Some("far"));
    assert_eq!(raw.cwd.as_deref(), Some("/only/on/the/host"));
    assert_eq!(raw.lock.and_then(|l| l.write), Some(vec!["/srv/work".to_owned()]));
    // Its clipboard writes reach this machine: refused unless it says otherwise.
    assert_eq!(far.clipboard_rule(), ClipboardRule::Deny);
    let plain = config.threads[2].remote.as_ref().expect("remote");
    assert_eq!(
        (plain.host.destination.as_str(), plain.host.paddock_path.as_str()),
        ("other-box", "paddock")
    );
    // A host ssh would read as an option is refused, in the table and in a thread.
    let bad = parse(r#"(hosts: {"x": (destination: "-oProxyCommand=sh")}, threads: [(name: "a", host: "-p1")])"#)
        .expect_err("refused");
    let said: Vec<String> = bad.iter().map(ToString::to_string).collect();
    assert!(said.iter().any(|d| d.contains("hosts.x.destination")), "{said:?}");
    assert!(said.iter().any(|d| d.contains("threads[0].host") && d.contains("`-`")), "{said:?}");
}
