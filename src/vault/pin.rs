//! Pinned secrets: a secret with `pin: "program"` goes only to a pane whose command is that
//! program, started directly, and only while the program file is the one the user approved
//! (its canonical path and SHA-256, recorded in paddock's state folder by `paddock vault
//! approve`). A changed binary needs approving again.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{write_private, VaultError};

const APPROVALS_FILE: &str = "approvals.json";

/// Variables that make a program load or run code it was not started with: a dynamic loader's
/// preloads and search paths, a shell's startup files, an interpreter's options and module
/// paths. A pinned release removes every one of them from the pane's environment.
const LOADER_PREFIXES: &[&str] =
    &["LD_", "DYLD_", "PYTHON", "GIT_CONFIG", "GIT_TRACE", "BASH_FUNC_", "OPENSSL_"];
const LOADER_NAMES: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PROMPT_COMMAND",
    "ZDOTDIR",
    "NODE_OPTIONS",
    "NODE_PATH",
    "NODE_EXTRA_CA_CERTS_PRELOAD",
    "BUN_OPTIONS",
    "DENO_OPTIONS",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "LOCPATH",
    "NLSPATH",
    "HOSTALIASES",
    "GIT_EXEC_PATH",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_EXTERNAL_DIFF",
    "GIT_TEMPLATE_DIR",
    "SSLKEYLOGFILE",
    "GIT_PROXY_COMMAND",
    "GIT_SSL_NO_VERIFY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "SSH_ASKPASS",
    "LESSOPEN",
    "LESSCLOSE",
    "PS0",
    "BASH_LOADABLES_PATH",
    "PERL5DB",
    "TCLLIBPATH",
    "NODE_V8_COVERAGE",
    "NODE_TLS_REJECT_UNAUTHORIZED",
    "npm_config_script_shell",
    "NPM_CONFIG_SCRIPT_SHELL",
    "VIMINIT",
    "EXINIT",
    "RUSTC_WRAPPER",
    "NODE_REPL_EXTERNAL_MODULE",
    "CDPATH",
    "GLOBIGNORE",
    "PS4",
    "BASH_XTRACEFD",
    "GIO_EXTRA_MODULES",
    "GTK_MODULES",
    "MALLOC_CONF",
];

/// Whether `name` is a variable a pinned program's environment must not carry.
pub fn is_loader_variable(name: &str) -> bool {
    LOADER_NAMES.contains(&name) || LOADER_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The first entry of `path_var` that is not absolute (an empty one is the cwd), if any: which
/// file such a PATH finds depends on the folder a program starts in.
pub fn relative_entry(path_var: &OsStr) -> Option<String> {
    std::env::split_paths(path_var)
        .find(|dir| !dir.is_absolute())
        .map(|dir| dir.display().to_string())
}

/// A program file as it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    /// Canonical: links resolved.
    pub path: PathBuf,
    /// SHA-256 of its bytes, in lowercase hex.
    pub sha256: String,
}

/// The user's approval of one program for one secret.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    pub secret: String,
    pub program: PathBuf,
    pub sha256: String,
    pub approved_at: String,
    /// The host the program is on, by its name in the configuration's `hosts` (`vault approve
    /// --host`); none for this machine. An approval holds only where its program is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approvals {
    pub approvals: Vec<Approval>,
}

/// Whether a program may have a pinned secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Approved,
    /// Never approved for this secret.
    NotApproved,
    /// Approved once, and the file has changed since.
    Changed {
        approved_at: String,
        /// The SHA-256 that was approved.
        approved_sha256: String,
    },
}

impl Approvals {
    /// The approvals on record (none if the file is missing or unreadable: nothing is then
    /// released, which is the safe way to be wrong).
    pub fn load(state: &Path) -> Approvals {
        std::fs::read(state.join(APPROVALS_FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    pub fn save(&self, state: &Path) -> Result<(), VaultError> {
        let json = serde_json::to_vec_pretty(self).unwrap_or_default();
        write_private(&state.join(APPROVALS_FILE), &json)
    }

    pub fn approve(self, secret: &str, program: &Fingerprint, at: String) -> Approvals {
        self.approve_on(None, secret, program, at)
    }

    /// Approve `program` for `secret` on `host` (this machine when none).
    pub fn approve_on(
        mut self,
        host: Option<&str>,
        secret: &str,
        program: &Fingerprint,
        at: String,
    ) -> Approvals {
        self.approvals.retain(|a| {
            !(a.secret == secret && a.program == program.path && a.host.as_deref() == host)
        });
        self.approvals.push(Approval {
            secret: secret.to_owned(),
            program: program.path.clone(),
            sha256: program.sha256.clone(),
            approved_at: at,
            host: host.map(str::to_owned),
        });
        self
    }

    /// The approvals of programs on `host` (this machine when none): the ones that hold there.
    pub fn on_host(&self, host: Option<&str>) -> Approvals {
        let approvals = self.approvals.iter().filter(|a| a.host.as_deref() == host);
        Approvals { approvals: approvals.cloned().collect() }
    }

    pub fn forget(mut self, secret: &str) -> Approvals {
        self.approvals.retain(|a| a.secret != secret);
        self
    }

    pub fn verdict(&self, secret: &str, program: &Fingerprint) -> Verdict {
        let on_record = self
            .approvals
            .iter()
            .find(|a| a.secret == secret && a.program == program.path && a.host.is_none());
        match on_record {
            Some(a) if a.sha256 == program.sha256 => Verdict::Approved,
            Some(a) => Verdict::Changed {
                approved_at: a.approved_at.clone(),
                approved_sha256: a.sha256.clone(),
            },
            None => Verdict::NotApproved,
        }
    }
}

/// The canonical path and hash of the program file at `path`.
pub fn fingerprint(path: &Path) -> std::io::Result<Fingerprint> {
    let path = std::fs::canonicalize(path)?;
    let sha256 = sha256_of(&mut std::fs::File::open(&path)?)?;
    Ok(Fingerprint { path, sha256 })
}

/// SHA-256 of everything `reader` gives, in lowercase hex.
pub fn sha256_of(reader: &mut impl Read) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Where `program` is: a path (relative to `cwd`) when it has a `/`, else the first executable
/// file of that name on `path_var`, as execvp finds it.
pub fn find_program(
    program: &str,
    cwd: Option<&Path>,
    path_var: Option<&OsStr>,
) -> Option<PathBuf> {
    if program.contains('/') {
        let path = Path::new(program);
        let path = match cwd {
            Some(cwd) if path.is_relative() => cwd.join(path),
            _ => path.to_owned(),
        };
        return path.is_file().then_some(path);
    }
    let path_var = path_var?;
    std::env::split_paths(path_var).map(|dir| dir.join(program)).find(|p| is_executable(p))
}

pub(super) fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Whether a pane started as `argv0` (found at `found`) runs the program a pin names: the same
/// file when the pin is a path, else a program of that name (the name typed, or the file's own
/// name once links are resolved).
pub fn pin_names(pin: &str, argv0: &str, found: &Path) -> bool {
    if pin.contains('/') {
        let pinned = std::fs::canonicalize(pin);
        let running = std::fs::canonicalize(found);
        return matches!((pinned, running), (Ok(a), Ok(b)) if a == b);
    }
    let typed = Path::new(argv0).file_name().and_then(OsStr::to_str);
    let real = std::fs::canonicalize(found).ok();
    let real = real.as_deref().and_then(Path::file_name).and_then(OsStr::to_str);
    typed == Some(pin) || real == Some(pin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_variables_are_named() {
        for name in ["LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "BASH_ENV", "ENV"] {
            assert!(is_loader_variable(name), "{name}");
        }
        for name in ["NODE_OPTIONS", "PYTHONSTARTUP", "PYTHONPATH", "PERL5OPT", "RUBYOPT"] {
            assert!(is_loader_variable(name), "{name}");
        }
        for name in ["PATH", "HOME", "ANTHROPIC_API_KEY", "ENVIRONMENT", "TERM"] {
            assert!(!is_loader_variable(name), "{name}");
        }
    }

    #[test]
    fn relative_path_entries_are_named() {
        assert_eq!(relative_entry(OsStr::new("/bin:/usr/bin")), None);
        assert_eq!(relative_entry(OsStr::new("/bin:bin")).as_deref(), Some("bin"));
        assert_eq!(relative_entry(OsStr::new("/bin::/usr/bin")).as_deref(), Some(""));
    }

    #[test]
    fn an_approval_holds_until_the_program_changes() {
        let dir = std::env::temp_dir().join(format!("paddock-pin-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let tool = dir.join("tool");
        std::fs::write(&tool, b"#!/bin/sh\necho one\n").expect("tool");
        let before = fingerprint(&tool).expect("fingerprint");
        assert_eq!(before.sha256.len(), 64);
        let approvals = Approvals::default();
        assert_eq!(approvals.verdict("k", &before), Verdict::NotApproved);
        let approvals = approvals.approve("k", &before, "t0".into());
        approvals.save(&dir).expect("save");
        let approvals = Approvals::load(&dir);
        assert_eq!(approvals.verdict("k", &before), Verdict::Approved);
        assert_eq!(approvals.verdict("other", &before), Verdict::NotApproved);
        std::fs::write(&tool, b"#!/bin/sh\necho two\n").expect("tool changes");
        let after = fingerprint(&tool).expect("fingerprint");
        assert_eq!(
            approvals.verdict("k", &after),
            Verdict::Changed { approved_at: "t0".into(), approved_sha256: before.sha256.clone() }
        );
        assert_eq!(approvals.forget("k").verdict("k", &before), Verdict::NotApproved);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn programs_are_found_as_execvp_finds_them_and_pins_name_them() {
        let sh = find_program("sh", None, Some(OsStr::new("/nonexistent:/bin:/usr/bin")));
        let sh = sh.expect("sh on PATH");
        assert!(pin_names("sh", "sh", &sh));
        assert!(
            !pin_names("bash", "sh", &sh)
                || std::fs::canonicalize(&sh).is_ok_and(|p| p.ends_with("bash"))
        );
        assert!(pin_names(&sh.display().to_string(), "sh", &sh));
        assert_eq!(find_program("no-such-program-here", None, Some(OsStr::new("/bin"))), None);
        assert_eq!(find_program("./x", Some(Path::new("/nonexistent")), None), None);
    }
}
