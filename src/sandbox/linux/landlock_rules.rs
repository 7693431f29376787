//! The Landlock ruleset of a lock: what may be read, written and executed, by path; no abstract
//! unix sockets or signals beyond the lock's own processes.
//! Landlock ABI 2 at least (renames and links across folders are then controlled), up to the
//! newest the crate knows where the kernel has it.

use std::path::Path;

use landlock::{
    Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

use crate::sandbox::resolve::Resolved;

/// Folders every program needs to read and run from.
const SYSTEM: &[&str] =
    &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store"];
/// Read only: process and system information (other processes' secrets in /proc are guarded by
/// Landlock's own ptrace rule: a locked process cannot inspect one outside its lock).
const INFO: &[&str] = &["/proc", "/sys"];
/// Devices a program may open besides its terminal.
const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];

/// The newest ABI paddock asks for (the newest it is tested on); older kernels get what they
/// have, newer ones no rights paddock has not tested.
const ABI_WANTED: ABI = ABI::V7;

/// `exe`: paddock itself, which every lock may read and run (never write). `home`: where the
/// home folder is, writable where the thread has a home of its own there.
pub fn apply(resolved: &Resolved, tmpdir: &Path, places: Places<'_>) -> Result<(), String> {
    build(resolved, tmpdir, places).map_err(|e| format!("cannot apply the Landlock rules: {e}"))
}

/// Where the pane's terminal, paddock itself and the home folder are (each may be unknown),
/// and whether the lock has a view of its own (without one, `fallback`, the rules are all
/// there is between the program and the host's files).
#[derive(Clone, Copy)]
pub struct Places<'a> {
    pub tty: Option<&'a Path>,
    pub exe: Option<&'a Path>,
    pub home: Option<&'a Path>,
    pub own_view: bool,
}

fn build(
    resolved: &Resolved,
    tmpdir: &Path,
    Places { tty, exe, home, own_view }: Places<'_>,
) -> Result<(), Box<dyn std::error::Error>> {
    let abi = ABI_WANTED;
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V2))?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))?;
    // Without the network the pane has a network namespace of its own, whose loopback is all
    // there is: servers inside it still work on localhost, so TCP is left to that. With the
    // network on, TCP is the user's to use.
    let mut created = ruleset.scope(Scope::AbstractUnixSocket | Scope::Signal)?.create()?;
    let read = AccessFs::from_read(abi);
    let file = AccessFs::from_file(abi);
    // The view holds nothing but what the lock shows (see `mounts`): listing its folders is
    // harmless and many programs expect to. Without a view of its own, listing is granted
    // where reading is, no further (a rule on `/` would list the whole disk).
    let mut rules: Vec<(&Path, BitFlags<AccessFs>)> = Vec::new();
    if own_view {
        rules.push((Path::new("/"), AccessFs::ReadDir.into()));
    }
    rules.extend(SYSTEM.iter().map(|p| (Path::new(*p), read)));
    rules.extend(INFO.iter().map(|p| (Path::new(*p), AccessFs::ReadFile | AccessFs::ReadDir)));
    rules.extend(DEVICES.iter().map(|p| (Path::new(*p), file)).chain(tty.map(|t| (t, file))));
    // The lock's own pseudo-terminals, in a view of its own that mounted them (never the
    // host's /dev/pts, where every terminal of the user's is).
    let own_ptys = Path::new(super::mounts::OWN_PTYS);
    if own_view && super::mounts::is_devpts(own_ptys) {
        rules.push((own_ptys, file));
    }
    rules.extend(resolved.read.iter().map(|p| (p.as_path(), read)));
    rules.extend(exe.map(|p| (p, read)));
    let dns = super::mounts::dns_folder(resolved.network);
    rules.extend(dns.as_deref().map(|p| (p, read)));
    rules.extend(resolved.unix_sockets.iter().map(|p| (p.as_path(), file)));
    let write = AccessFs::from_all(abi);
    // The pane's /dev/shm is its own only in a view of its own.
    let shm = own_view.then_some((Path::new("/dev/shm"), write));
    let own = [(tmpdir, write)].into_iter().chain(shm);
    rules.extend(resolved.write.iter().map(|p| (p.as_path(), write)).chain(own));
    // The thread's own home, shown where the home folder is (read entries inside it are
    // read-only mounts over it).
    rules.extend(home.filter(|_| resolved.home.is_some()).map(|p| (p, write)));
    for (path, access) in rules {
        // A system folder this host does not have is no rule.
        let Ok(fd) = PathFd::new(path) else {
            continue;
        };
        // Folder rights mean nothing on a file (and would mark the ruleset partial).
        let access = if path.is_dir() { access } else { access & file };
        created = created.add_rule(PathBeneath::new(fd, access))?;
    }
    let status = created.restrict_self()?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("the kernel enforces none of it".into());
    }
    Ok(())
}
