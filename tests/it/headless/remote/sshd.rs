//! A real OpenSSH server for the remote-thread tests: Debian's sshd, started by the test on a
//! loopback port with its own host key, its own client key in `authorized_keys`, and nothing
//! of the machine's own ssh set-up (no system config, no known_hosts but the test's own).
//!
//! It runs as the user the tests run as: the "remote" is this machine, reached through ssh as
//! a person's paddock would reach another host, and a wrapper script given as the host's
//! paddock (`paddock_path`) gives the remote paddock folders of its own.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";

pub struct Sshd {
    dir: PathBuf,
    child: Child,
    pub port: u16,
}

impl Sshd {
    /// Start sshd in `dir` (which it fills with its keys and config). `None` (skipped loudly,
    /// a failure in CI) where OpenSSH is not installed.
    pub fn start(test: &str, dir: &Path) -> Option<Sshd> {
        if !Path::new(SSHD).exists() || which("ssh").is_none() {
            assert!(std::env::var_os("CI").is_none(), "{test}: CI installs openssh-server");
            crate::skip(test, "OpenSSH (openssh-server, openssh-client) is not installed");
            return None;
        }
        std::fs::create_dir_all(dir).expect("sshd folder");
        for key in ["host_key", "client_key"] {
            let made = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(dir.join(key))
                .status()
                .expect("ssh-keygen");
            assert!(made.success(), "ssh-keygen made {key}");
        }
        std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).expect("keys");
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            // Where sshd run by root drops its privileges; Debian's service makes it at boot.
            std::fs::create_dir_all("/run/sshd").expect("/run/sshd");
        }
        let port = free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\n\
             AuthorizedKeysFile {dir}/authorized_keys\nPidFile none\nStrictModes no\n\
             UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PermitRootLogin prohibit-password\nLogLevel ERROR\n",
            dir = dir.display()
        );
        std::fs::write(dir.join("sshd_config"), config).expect("sshd_config");
        let child = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(dir.join("sshd_config"))
            .stdin(Stdio::null())
            // Its log (a probe connecting before the test's own is logged too) stays beside it.
            .stderr(std::fs::File::create(dir.join("sshd.log")).expect("sshd.log"))
            .spawn()
            .expect("start sshd");
        let sshd = Sshd { dir: dir.to_owned(), child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "sshd did not listen on port {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(sshd)
    }

    /// The options an `ssh` client needs to reach this server: its port, the test's key, its
    /// host key trusted through a known_hosts file of the test's own, never asking anything.
    pub fn client_options(&self) -> Vec<String> {
        let dir = self.dir.display();
        vec![
            "-p".into(),
            self.port.to_string(),
            "-i".into(),
            format!("{dir}/client_key"),
            "-F".into(),
            "none".into(),
            "-o".into(),
            "BatchMode=yes".into(),
            "-o".into(),
            "StrictHostKeyChecking=accept-new".into(),
            "-o".into(),
            format!("UserKnownHostsFile={dir}/known_hosts"),
            "-o".into(),
            "IdentitiesOnly=yes".into(),
        ]
    }

    /// `user@127.0.0.1`, the test's own user.
    pub fn destination(&self) -> String {
        // SAFETY: getpwuid(3) on our own uid; the name is copied out at once.
        let name = unsafe {
            let entry = libc::getpwuid(libc::geteuid());
            assert!(!entry.is_null(), "this user has a passwd entry");
            std::ffi::CStr::from_ptr((*entry).pw_name).to_string_lossy().into_owned()
        };
        format!("{name}@127.0.0.1")
    }

    /// `ssh -T … user@127.0.0.1 REMOTE…`.
    pub fn ssh(&self, remote: &[&str]) -> Command {
        let mut command = Command::new("ssh");
        command.arg("-T").args(self.client_options()).arg(self.destination()).args(remote);
        command
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a free port");
    listener.local_addr().expect("its address").port()
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file())
}
