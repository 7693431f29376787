//! A locked program's environment is built, not inherited: paddock's own environment may hold
//! tokens (GITHUB_TOKEN, AWS_*), agent sockets (SSH_AUTH_SOCK) and session addresses that a
//! lock must not hand on. Only the names below pass, then the thread's `env_pass` names; the
//! thread's `env` and its released secrets are added after this by the pane. Pure.

use std::ffi::OsString;

/// Variables every locked program gets from paddock's environment: the terminal, the language,
/// where programs are, who and where the user is, the time zone.
pub const ALWAYS_PASSED: &[&str] =
    &["TERM", "COLORTERM", "LANG", "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TZ"];

/// Prefixes of names that pass too: the locale's categories and paddock's own.
const PASSED_PREFIXES: &[&str] = &["LC_", "PADDOCK_"];

/// The session's runtime folder. It and `TMPDIR` reach the Linux launcher, which finds
/// paddock's control sockets through them to hide them (`ctl::socket_dir`); before the command
/// starts it removes this one and points `TMPDIR` at the pane's own temporary folder.
pub const RUNTIME_DIR: &str = "XDG_RUNTIME_DIR";

/// Variables only the Linux launcher gets (see `RUNTIME_DIR`).
const FOR_THE_LAUNCHER: &[&str] = &[RUNTIME_DIR, "TMPDIR"];

/// What a locked program inherits from paddock's environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuiltEnv {
    /// The variables, to set on a cleared environment.
    pub vars: Vec<(OsString, OsString)>,
    /// The names the program gets (for `paddock ls`; never the values).
    pub names: Vec<String>,
}

/// Whether `name` passes into a lock, given the thread's `env_pass`. The launcher's own never
/// do: the lock hides the runtime folder and gives the program a temporary folder of its own.
pub fn passes(name: &str, env_pass: &[String]) -> bool {
    if FOR_THE_LAUNCHER.contains(&name) {
        return false;
    }
    ALWAYS_PASSED.contains(&name)
        || PASSED_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
        || env_pass.iter().any(|extra| extra == name)
}

/// Keep from `outer` (paddock's environment) what passes into a lock.
pub fn build(
    outer: impl IntoIterator<Item = (OsString, OsString)>,
    env_pass: &[String],
) -> BuiltEnv {
    let mut built = BuiltEnv::default();
    for (key, value) in outer {
        let Some(name) = key.to_str() else { continue };
        if passes(name, env_pass) {
            built.names.push(name.to_owned());
            built.vars.push((key, value));
        } else if cfg!(target_os = "linux") && FOR_THE_LAUNCHER.contains(&name) {
            built.vars.push((key, value));
        }
    }
    built.names.sort();
    built
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outer(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }

    #[test]
    fn tokens_and_agent_sockets_stay_out_unless_named() {
        let env = outer(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C.UTF-8"),
            ("PADDOCK_SOCKET", "/run/p.sock"),
            ("GITHUB_TOKEN", "ghp_x"),
            ("AWS_SECRET_ACCESS_KEY", "k"),
            ("SSH_AUTH_SOCK", "/tmp/agent"),
            ("DISPLAY", ":0"),
            ("NPM_CONFIG_REGISTRY", "https://r"),
        ]);
        let built = build(env.clone(), &[]);
        assert_eq!(built.names, ["HOME", "LC_ALL", "PADDOCK_SOCKET", "PATH"]);
        let built = build(env, &["NPM_CONFIG_REGISTRY".to_owned()]);
        assert!(built.names.contains(&"NPM_CONFIG_REGISTRY".to_owned()), "{:?}", built.names);
        assert!(!built.names.iter().any(|n| n.contains("TOKEN") || n.starts_with("AWS")));
    }

    #[test]
    fn the_runtime_and_temporary_folders_reach_only_the_linux_launcher() {
        let built = build(outer(&[("XDG_RUNTIME_DIR", "/run/user/1000"), ("TMPDIR", "/t")]), &[]);
        assert!(built.names.is_empty(), "not shown as passed: the launcher replaces them");
        assert_eq!(built.vars.len(), 2 * usize::from(cfg!(target_os = "linux")));
    }

    #[test]
    fn a_name_must_match_whole() {
        assert!(passes("LANG", &[]));
        assert!(!passes("LANGUAGE_TOKEN", &[]));
        assert!(!passes("PATHEXT_SECRET", &[]));
        assert!(passes("LC_CTYPE", &[]));
        assert!(!passes("TMPDIR", &["TMPDIR".to_owned()]), "the lock gives its own");
    }
}
