//! The seccomp filter of a lock: system calls a locked command never needs and that would get
//! around the rest of the lock (unix datagram sockets among them). Each fails with EPERM (clone3 with ENOSYS, so that the C
//! library falls back to clone, whose flags the filter can read), and so does every x32 call on
//! x86_64.

use std::collections::BTreeMap;

use seccompiler::{
    apply_filter, sock_filter, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp,
    SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// Denied whatever their arguments.
const DENIED: &[libc::c_long] = &[
    // io_uring can open sockets and files without the system calls filtered here.
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    // Other processes' memory.
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    // The kernel keyring holds the user's secrets.
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    // Mount and namespace changes (already refused without capabilities; twice is safer).
    libc::SYS_setns,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fsconfig,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
];

/// TIOCSTI types into the terminal as if the user had; TIOCLINUX can do the same on a console.
const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;
const IPPROTO_MPTCP: u64 = 262;
/// The socket type without SOCK_NONBLOCK and SOCK_CLOEXEC.
const SOCK_TYPE_MASK: u64 = 0xf;

/// `namespaces`: whether the lock has namespaces of its own (a loopback, a PID namespace);
/// without them (`fallback`) there is no IP socket with the network off, and no `setsid`: a
/// process that left the pane's session would outlive a kill of the session, and nothing else
/// (no PID namespace) would end it.
pub fn apply(network: bool, namespaces: bool) -> Result<(), String> {
    build(network, namespaces)
        .and_then(|(deny, no_clone3)| {
            if let Some(no_x32) = no_x32() {
                apply_filter(&no_x32)?;
            }
            apply_filter(&no_clone3)?;
            apply_filter(&deny)
        })
        .map_err(|e| format!("cannot apply the seccomp filter: {e}"))
}

/// Every x32 system call fails with EPERM. To seccomp an x32 call has the x86_64 architecture,
/// with bit 30 set in its number; the rules of `build` name x86_64 numbers, so an x32 `keyctl`
/// or `ptrace` would pass them where the kernel has x32 enabled. A locked command never needs
/// the x32 ABI. (seccompiler does not handle it, hence this small hand-written program.)
#[cfg(target_arch = "x86_64")]
fn no_x32() -> Option<BpfProgram> {
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    // Offsets in struct seccomp_data: the call's number, then its architecture.
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    let op = |code: u32, k: u32, jt: u8, jf: u8| sock_filter { code: code as u16, jt, jf, k };
    let load = |offset| op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset, 0, 0);
    let ret = |value| op(libc::BPF_RET | libc::BPF_K, value, 0, 0);
    Some(vec![
        load(ARCH),
        // Another architecture (i386 through int 0x80) is killed by the main filter.
        op(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, AUDIT_ARCH_X86_64, 0, 3),
        load(NR),
        op(libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K, X32_SYSCALL_BIT, 0, 1),
        ret(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        ret(libc::SECCOMP_RET_ALLOW),
    ])
}

#[cfg(not(target_arch = "x86_64"))]
fn no_x32() -> Option<BpfProgram> {
    None
}

fn build(network: bool, namespaces: bool) -> Result<(BpfProgram, BpfProgram), seccompiler::Error> {
    let arch: TargetArch = std::env::consts::ARCH.try_into()?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in DENIED {
        rules.insert(*call, vec![]);
    }
    if !namespaces {
        rules.insert(libc::SYS_setsid, vec![]);
    }
    let arg = |index, op, value| SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value);
    // Unix and IP sockets only (and netlink with the network): no packet or raw access to the
    // host's links, no vsock
    // (which reaches the hypervisor whatever the network namespace), no bluetooth, CAN, …
    // Without the network, IP reaches only the pane's own loopback (its network namespace);
    // without that namespace either (`fallback`), there is no IP socket at all.
    let mut families = vec![libc::AF_UNIX];
    if network || namespaces {
        families.extend([libc::AF_INET, libc::AF_INET6]);
    }
    if network {
        // Routing information, which name resolution asks for.
        families.push(libc::AF_NETLINK);
    }
    let others = families
        .into_iter()
        .map(|family| arg(0, SeccompCmpOp::Ne, family as u64))
        .collect::<Result<Vec<_>, _>>()?;
    // A unix datagram socket can send to any socket path with sendto/sendmsg, which the
    // socket gate (`sockets.rs`, on connect) does not see: none is made in a lock.
    let unix_datagram = || -> Result<SeccompRule, seccompiler::Error> {
        Ok(SeccompRule::new(vec![
            arg(0, SeccompCmpOp::Eq, libc::AF_UNIX as u64)?,
            arg(1, SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK), libc::SOCK_DGRAM as u64)?,
        ])?)
    };
    let socket = vec![
        SeccompRule::new(others)?,
        // Multipath TCP is TCP that older Landlock versions do not see.
        SeccompRule::new(vec![arg(2, SeccompCmpOp::Eq, IPPROTO_MPTCP)?])?,
        unix_datagram()?,
    ];
    rules.insert(libc::SYS_socket, socket);
    rules.insert(libc::SYS_socketpair, vec![unix_datagram()?]);
    rules.insert(
        libc::SYS_ioctl,
        vec![
            SeccompRule::new(vec![arg(1, SeccompCmpOp::Eq, TIOCSTI)?])?,
            SeccompRule::new(vec![arg(1, SeccompCmpOp::Eq, TIOCLINUX)?])?,
        ],
    );
    // No new user namespace, where capabilities would be whole again.
    let newuser = libc::CLONE_NEWUSER as u64;
    rules.insert(
        libc::SYS_unshare,
        vec![SeccompRule::new(vec![arg(0, SeccompCmpOp::MaskedEq(newuser), newuser)?])?],
    );
    rules.insert(
        libc::SYS_clone,
        vec![SeccompRule::new(vec![arg(0, SeccompCmpOp::MaskedEq(newuser), newuser)?])?],
    );
    let eperm = SeccompAction::Errno(libc::EPERM as u32);
    let deny = SeccompFilter::new(rules, SeccompAction::Allow, eperm, arch)?.try_into()?;
    let clone3 = BTreeMap::from([(libc::SYS_clone3, vec![])]);
    let enosys = SeccompAction::Errno(libc::ENOSYS as u32);
    let no_clone3 = SeccompFilter::new(clone3, SeccompAction::Allow, enosys, arch)?.try_into()?;
    Ok((deny, no_clone3))
}
