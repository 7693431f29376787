//! Capabilities in the lock. PID 1 keeps two, in the lock's user namespace only: CAP_SYS_PTRACE,
//! to read a caller's address and take a copy of its socket for the socket gate even when the
//! caller made itself undumpable (ssh does), and CAP_SETPCAP, so that the program's process can
//! empty its bounding set. PID 1 itself is undumpable, so nothing in the lock can read or write
//! its memory or take its descriptors. The program keeps nothing: its bounding set is emptied,
//! root's exec gains nothing (secure bits, locked) and its sets are cleared.

const CAP_SETPCAP: u32 = 8;
const CAP_SYS_PTRACE: u32 = 19;
/// What PID 1 keeps.
const GATES: [u32; 2] = [CAP_SETPCAP, CAP_SYS_PTRACE];

/// In PID 1, after the view is built: every capability goes but the gate's; no new privileges
/// ever; undumpable.
pub fn drop_all_but_the_gates() -> Result<(), String> {
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63);
    const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
    const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
    const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
    const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
    const SECBIT_KEEP_CAPS_LOCKED: libc::c_ulong = 1 << 5;
    const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
    const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;
    for cap in (0..=last).filter(|cap| !GATES.contains(cap)) {
        drop_bound(cap)?;
    }
    let bits = SECBIT_NOROOT
        | SECBIT_NOROOT_LOCKED
        | SECBIT_NO_SETUID_FIXUP
        | SECBIT_NO_SETUID_FIXUP_LOCKED
        | SECBIT_KEEP_CAPS_LOCKED
        | SECBIT_NO_CAP_AMBIENT_RAISE
        | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    // SAFETY: prctl(2) with valid arguments, on this single thread.
    unsafe {
        if libc::prctl(libc::PR_SET_SECUREBITS, bits, 0, 0, 0) != 0 {
            return Err(format!("cannot lock the secure bits: {}", errno()));
        }
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    }
    let kept = GATES.iter().fold(0u32, |mask, cap| mask | 1 << cap);
    set(kept)?;
    // SAFETY: prctl(2) with valid arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(format!("cannot set no_new_privs: {}", errno()));
        }
        if libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 {
            return Err(format!("cannot make the lock's init undumpable: {}", errno()));
        }
    }
    Ok(())
}

/// In the program's process, before its exec: the two PID 1 kept go too. (A user's process
/// outside a user namespace holds none and may not change its bounding set: with
/// no_new_privs, no exec can give it one.)
pub fn drop_kept() -> Result<(), String> {
    if holds(CAP_SETPCAP) {
        for cap in GATES {
            drop_bound(cap)?;
        }
    }
    set(0)
}

/// In the supervisor of a lock without namespaces (`fallback`): as `drop_all_but_the_gates`
/// where it holds capabilities (root in a user namespace); else no_new_privs and undumpable,
/// which is all a user's process can do and needs.
pub fn drop_without_namespaces() -> Result<(), String> {
    if holds(CAP_SETPCAP) {
        return drop_all_but_the_gates();
    }
    // SAFETY: prctl(2) with valid arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(format!("cannot set no_new_privs: {}", errno()));
        }
        if libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 {
            return Err(format!("cannot make the lock's supervisor undumpable: {}", errno()));
        }
    }
    Ok(())
}

/// Whether `cap` is in this process's effective set.
fn holds(cap: u32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let effective = status
        .lines()
        .find_map(|line| line.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .unwrap_or(0);
    effective & (1 << cap) != 0
}

fn drop_bound(cap: u32) -> Result<(), String> {
    // SAFETY: prctl(2) with valid arguments.
    let dropped = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) };
    if dropped != 0 && errno().raw_os_error() != Some(libc::EINVAL) {
        return Err(format!("cannot drop capability {cap}: {}", errno()));
    }
    Ok(())
}

/// Effective and permitted: `mask` (capabilities 0 to 31); inheritable: none.
fn set(mask: u32) -> Result<(), String> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let header = Header { version: 0x2008_0522, pid: 0 };
    let none = Data { effective: 0, permitted: 0, inheritable: 0 };
    let data = [Data { effective: mask, permitted: mask, inheritable: 0 }, none];
    // SAFETY: capset(2) with a version 3 header and two data words.
    if unsafe { libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) } != 0 {
        return Err(format!("cannot set capabilities: {}", errno()));
    }
    Ok(())
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}
