//! The command line: what paddock accepts, and nothing else.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use paddock::term::TermSize;

#[derive(Debug, Parser)]
#[command(
    name = "paddock",
    version,
    about = "A terminal multiplexer for running coding agents side by side",
    after_help = "Examples:\n  paddock                        a window on your paddock server (started if none runs)\n  paddock server -e bash         the server alone; prints the control socket\n  paddock attach                 another window on the running server\n  paddock ls                     every pane of every running instance\n  paddock ctl send --pane 1 --keys \"echo hi Enter\""
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

/// How to run an instance (when no subcommand is given).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Run without a window, controlled through the control socket (printed on stdout); the
    /// same as `paddock server`.
    #[arg(long)]
    pub headless: bool,
    /// A window that owns its panes, with no server: closing it ends them.
    #[arg(long, conflicts_with = "headless")]
    pub single_process: bool,
    /// The record of a server that died (`paddock` passes it to the server it starts): its
    /// panes are named in a `lost` tab and the configured threads wait for the user.
    #[arg(long, value_name = "RECORD", hide = true)]
    pub lost: Vec<PathBuf>,
    /// (`paddock server`) Relay standard input and output to this user's server (the
    /// running one, else one started now that opens nothing unasked): how a paddock on
    /// another host reaches this one, through `ssh -T HOST paddock server --stdio`.
    #[arg(long, conflicts_with_all = ["single_process", "exec", "exit_with_child"])]
    pub stdio: bool,
    /// Open no tab and no configured thread at start: a server started for `--stdio` runs
    /// only what the paddock at the other end asks for.
    #[arg(long, hide = true)]
    pub open_nothing: bool,
    /// Exit when the first tab's program exits, with its exit code.
    #[arg(long)]
    pub exit_with_child: bool,
    /// A window is about to attach (`paddock` passes it to the server it starts): the first
    /// tabs open once it has and has said its size, and with `--exit-with-child` a program
    /// that ended before the window attached waits for it.
    #[arg(long, hide = true)]
    pub for_window: bool,
    /// Size of the (virtual) window panes are laid out in, as COLSxROWS (headless).
    #[arg(long, default_value = "80x24", value_parser = paddock::replay::parse_size)]
    pub size: TermSize,
    /// Scrollback lines kept for each pane (default: the configuration's, else 10000).
    #[arg(long)]
    pub scrollback: Option<usize>,
    /// Read the configuration from PATH instead of the default location (see `paddock config`).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Listen on this socket path instead of <runtime dir>/paddock/<pid>.sock.
    #[arg(long, value_name = "PATH")]
    pub listen: Option<PathBuf>,
    /// The first tab's command and its arguments (default: the configuration's threads, else
    /// $SHELL). Everything after it is passed to the command.
    #[arg(short = 'e', long = "exec", value_name = "CMD", num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub exec: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the server that owns the panes, without a window (as `--headless`): windows
    /// attach to it through the attach socket beside its control socket.
    Server(RunArgs),
    /// Open a window on a running paddock server (the newest, or the one at --socket).
    Attach(AttachArgs),
    /// End the paddock server and every pane in it (as `paddock ctl stop`).
    KillServer(KillServerArgs),
    /// Feed a recorded byte stream to the terminal model and print the final screen.
    Replay(ReplayArgs),
    /// List every pane of every running instance.
    Ls(LsArgs),
    /// Control a running instance.
    Ctl(CtlArgs),
    /// The configuration file: where it is, and whether it is right.
    Config(ConfigArgs),
    /// The folder and network lock: run one command locked, or see what this system enforces.
    Sandbox(SandboxArgs),
    /// Secrets in the OS keychain, used by name: set, list, remove, approve a pinned program,
    /// check the keychain, read the audit log. Values are never printed.
    Vault(VaultArgs),
    /// What locked threads' networks reached: the egress log of their proxies.
    Net(NetArgs),
    /// Agents' own hooks, pointed at paddock, so that an agent tells its pane when it waits.
    Hook(HookArgs),
}

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The server's control socket (`<pid>.sock`) or its attach socket (`<pid>.attach`).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Read the window's configuration (look, keys) from PATH.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct KillServerArgs {
    /// The server's control socket (default: the only one running).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub verb: HookVerb,
}

/// The agents paddock writes hooks for.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum HookAgent {
    Claude,
    Codex,
    Gemini,
}

impl From<HookAgent> for paddock::hook::Agent {
    fn from(agent: HookAgent) -> Self {
        match agent {
            HookAgent::Claude => paddock::hook::Agent::Claude,
            HookAgent::Codex => paddock::hook::Agent::Codex,
            HookAgent::Gemini => paddock::hook::Agent::Gemini,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum HookVerb {
    /// Write AGENT's own hook settings (Claude Code's Notification and Stop hooks, Gemini
    /// CLI's Notification and AfterAgent hooks, Codex's notify program) so that it tells
    /// paddock when it waits for you: its pane turns needs-you with the agent's own words.
    /// Shows the change first, and writes it when you say yes (or with --yes).
    Install {
        agent: HookAgent,
        /// Into this configured thread's home: its own home when it is locked (where its
        /// agent reads its settings), else yours.
        #[arg(long)]
        thread: Option<String>,
        /// Write without asking.
        #[arg(long)]
        yes: bool,
    },
    /// What an agent's hook runs: its event (JSON on stdin; Codex's as the last argument)
    /// becomes needs-you for this pane. Outside paddock, or on any failure, it does nothing
    /// and succeeds, so that it never stands in the agent's way.
    Event {
        agent: HookAgent,
        /// Codex's event.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        payload: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct NetArgs {
    #[command(subcommand)]
    pub verb: NetVerb,
}

#[derive(Debug, Subcommand)]
pub enum NetVerb {
    /// Every connection a locked thread's proxy let through or refused, oldest first.
    Log {
        /// The raw JSON lines.
        #[arg(long)]
        json: bool,
        /// Only this pane's connections.
        #[arg(long, value_name = "ID")]
        pane: Option<u32>,
    },
}

#[derive(Debug, Args)]
pub struct VaultArgs {
    #[command(subcommand)]
    pub verb: VaultVerb,
    /// The configuration whose threads `ls` reports on (default: see `paddock config path`).
    #[arg(long, value_name = "PATH", global = true)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum VaultVerb {
    /// Store NAME's value: typed at a prompt that does not echo, or read from stdin when it is
    /// piped (one trailing newline dropped). Never taken from the command line.
    Set { name: String },
    /// The secrets the configuration uses and any others set through paddock: whether the
    /// keychain has each, which threads use it, what it is pinned to. Never values.
    Ls {
        /// One JSON object instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Remove NAME from the keychain (and its approvals).
    Rm { name: String },
    /// Which keychain is in use and whether paddock can reach it.
    Check,
    /// Approve PROGRAM (a path, or a name looked up on PATH) for the secret NAME pinned to it:
    /// its path and SHA-256 are recorded; a changed file needs approving again.
    Approve {
        name: String,
        program: String,
        /// PROGRAM is on this host (a name from the configuration's `hosts`, or an ssh
        /// destination), for that host's threads: its paddock finds and hashes it there, over
        /// ssh; the approval is kept here, with the vault.
        #[arg(long, value_name = "HOST")]
        host: Option<String>,
    },
    /// The audit log: every release, withholding and masking count, and every use of a
    /// brokered secret, oldest first.
    Log {
        /// The raw JSON lines.
        #[arg(long)]
        json: bool,
        /// Only the uses of the brokered secret NAME: each request it went in (time, pane,
        /// host, method, path, status), each it was held from, each attempt to send it
        /// elsewhere.
        #[arg(long, value_name = "NAME")]
        uses: Option<String>,
    },
    /// Stop the broker putting NAME's value in requests, in every pane, from the next request
    /// on (no restart): they go on with the placeholder, and the API refuses them. Holds
    /// across restarts until a new value is set (`paddock vault set NAME`).
    Revoke { name: String },
    /// Stop the broker using NAME for a time (`--for 30m`: s, m, h or d), or until `paddock
    /// vault resume NAME`.
    Suspend {
        name: String,
        #[arg(long = "for", value_name = "DURATION")]
        time: Option<String>,
    },
    /// Let the broker use a suspended secret again.
    Resume { name: String },
}

#[derive(Debug, Args)]
pub struct SandboxArgs {
    #[command(subcommand)]
    pub verb: SandboxVerb,
}

#[derive(Debug, Subcommand)]
pub enum SandboxVerb {
    /// Run CMD under a lock in this terminal; exit with its exit code (125 when the lock
    /// cannot be applied: the command then does not run).
    Run {
        /// A folder it may read and write (repeatable).
        #[arg(long, value_name = "DIR")]
        write: Vec<PathBuf>,
        /// A folder (or file) it may only read (repeatable).
        #[arg(long, value_name = "DIR")]
        read: Vec<PathBuf>,
        /// A path inside those it may not change (repeatable).
        #[arg(long, value_name = "PATH")]
        protect: Vec<PathBuf>,
        /// A unix socket outside those folders it may connect to (repeatable).
        #[arg(long, value_name = "PATH")]
        socket: Vec<PathBuf>,
        /// The network: off (only unix sockets, and a private localhost) or on.
        #[arg(long, value_enum, default_value_t = Net::Off)]
        net: Net,
        /// An environment variable it gets besides TERM, COLORTERM, LANG, LC_*, PATH, HOME,
        /// USER, LOGNAME, SHELL, TZ and PADDOCK_* (repeatable); no other passes.
        #[arg(long = "env-pass", value_name = "NAME")]
        env_pass: Vec<String>,
        /// The command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Print what this system can enforce, and why not when it cannot; with --thread, the
    /// view that thread's lock gives its programs: what is writable, readable and protected.
    Probe {
        /// A thread of the configuration.
        #[arg(long, value_name = "NAME")]
        thread: Option<String>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Net {
    Off,
    On,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub verb: ConfigVerb,
}

#[derive(Debug, Subcommand)]
pub enum ConfigVerb {
    /// Check a configuration file: print every problem (file:line:column: field: what is
    /// wrong) and exit with 1 when there are any.
    Check {
        /// The file (default: the configuration paddock reads, see `paddock config path`).
        path: Option<PathBuf>,
    },
    /// Print where paddock reads its configuration from.
    Path,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The recorded bytes (for example from `script -q -O FILE` or a PTY capture).
    pub file: PathBuf,
    /// Screen size as COLSxROWS.
    #[arg(long, default_value = "80x24", value_parser = paddock::replay::parse_size)]
    pub size: TermSize,
    /// Scrollback lines kept above the screen.
    #[arg(long, default_value_t = 10_000)]
    pub scrollback: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One line per row, then `cursor ROW COL`.
    Text,
    /// The rows with attribute runs, as JSON.
    Json,
}

#[derive(Debug, Args)]
pub struct LsArgs {
    /// Print JSON: {"instances":[{"pid","socket","panes":[…]}]}.
    #[arg(long)]
    pub json: bool,
    /// The instance's control socket (default: $PADDOCK_SOCKET, else every running instance).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Refresh the table every second until interrupted (with --json: one line per refresh).
    #[arg(long)]
    pub watch: bool,
}

#[derive(Debug, Args)]
pub struct CtlArgs {
    /// The instance's control socket (default: $PADDOCK_SOCKET, else the only running instance).
    #[arg(long, value_name = "PATH", global = true)]
    pub socket: Option<PathBuf>,
    #[command(subcommand)]
    pub verb: CtlVerb,
}

/// A pane id; inside a pane, $PADDOCK_PANE names the pane itself.
#[derive(Debug, Args)]
pub struct PaneArg {
    #[arg(long, env = "PADDOCK_PANE", value_name = "ID")]
    pub pane: u32,
}

#[derive(Debug, Subcommand)]
pub enum CtlVerb {
    /// Open a tab running CMD (default: $SHELL), or a configured thread, and print its pane id.
    New {
        /// Open the configured thread of this name as at launch (its command, folder,
        /// environment, lock, secrets and place).
        #[arg(long, conflicts_with_all = ["cwd", "command"])]
        thread: Option<String>,
        /// Start the program in this directory.
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// The program and its arguments, after `--`.
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Focus the pane that has waited for its user longest, across tabs, and print its id.
    NextWaiting,
    /// Mute a pane: it never sends a desktop notification and never counts among the panes
    /// that wait for you (next-waiting, the order of `ls`, its tab's mark) until unmuted.
    Mute(PaneArg),
    /// Undo `mute`.
    Unmute(PaneArg),
    /// Drop the ssh connection to HOST and connect again now (paddock also does on its own,
    /// with backoff, whenever one drops): its threads keep running there and their panes are
    /// found again.
    Reconnect {
        /// The host, as the configuration's `hosts` (or a thread's `host`) names it.
        #[arg(long)]
        host: String,
    },
    /// Split a pane and print the new pane's id.
    Split {
        #[command(flatten)]
        pane: PaneArg,
        /// Put the new pane to the right.
        #[arg(long, conflicts_with = "down", required_unless_present = "down")]
        right: bool,
        /// Put the new pane below.
        #[arg(long)]
        down: bool,
        /// The program and its arguments, after `--` (default: $SHELL).
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Type into a pane.
    Send {
        #[command(flatten)]
        pane: PaneArg,
        /// Send this text as it is.
        #[arg(long, conflicts_with = "keys", required_unless_present = "keys")]
        text: Option<String>,
        /// Press keys: words are typed, key names pressed ("echo hi Enter", "C-c", "M-x Up").
        #[arg(long)]
        keys: Option<String>,
    },
    /// Print a pane's screen (the `paddock replay` text format).
    Capture {
        #[command(flatten)]
        pane: PaneArg,
        /// Print the scrollback above the screen.
        #[arg(long)]
        scrollback: bool,
    },
    /// Focus a pane (and its tab).
    Focus(PaneArg),
    /// Close a pane: hang up its programs, kill what is left after half a second.
    Close(PaneArg),
    /// Kill a pane's programs now; the pane keeps its last screen until closed.
    Kill(PaneArg),
    /// Start a configured thread's pane again, with its definition in the configuration now.
    Restart(PaneArg),
    /// Mark a pane as needing its user, TEXT saying why (for an agent's hook script; inside a
    /// pane, --pane defaults to that pane). It clears when someone types into the pane.
    Notify {
        #[command(flatten)]
        pane: PaneArg,
        text: String,
    },
    /// Resize a pane (headless instances).
    Resize {
        #[command(flatten)]
        pane: PaneArg,
        /// The new size as COLSxROWS.
        #[arg(long, value_parser = paddock::replay::parse_size)]
        size: TermSize,
    },
    /// Stop the instance, closing every pane.
    Stop,
}
