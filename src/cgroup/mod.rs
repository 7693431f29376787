//! Every process a pane starts is the pane's: on Linux, each pane runs in a cgroup (v2) of its
//! own, so its CPU and memory are counted over everything it started (a daemon that left its
//! process tree too) and closing it ends them all.
//!
//! The instance's tree is `D/paddock-PID`, where `D` is the cgroup paddock runs in, when paddock
//! may write there (a subtree delegated to the user, or root); otherwise paddock asks systemd's
//! user manager for a scope of its own with `Delegate=yes` (a process started from an ssh login
//! sits in a session scope that is not delegated) and uses that. paddock moves itself into the
//! leaf `D/paddock-PID/instance` first (a cgroup with processes cannot pass controllers down),
//! then enables what controllers it may (`cpu`, `memory`, `pids`) for its panes, each of which
//! is `D/paddock-PID/pane-N`. A pane's program joins its cgroup before it runs anything
//! (`paddock __cgroup-exec DIR -- PROGRAM…`, the first thing it execs).
//!
//! Without the `memory` controller (a host that keeps it in cgroup v1), a pane's memory is the
//! resident memory of the processes in its cgroup; without `cpu` and `memory`, limits are not
//! in effect. Where none of this is possible, the pulse counts each pane's process tree, as it
//! says (`Tree::set_up`'s error; `paddock sandbox probe`).

#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(target_os = "linux"))]
pub use elsewhere::{probe, PaneCgroup, Tree};
#[cfg(target_os = "linux")]
pub use linux::{join_and_exec, probe, PaneCgroup, Tree};

/// What a pane's limits did so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LimitEvents {
    /// Processes the kernel killed for the memory limit.
    pub oom_kills: u64,
    /// Periods in which the CPU limit held it back.
    pub throttled: u64,
}

/// Elsewhere there are no cgroups: the pulse counts process trees.
#[cfg(not(target_os = "linux"))]
mod elsewhere {
    use std::path::Path;

    use super::{LimitEvents, Limits, Usage};

    pub fn probe() -> String {
        "none (cgroups are Linux's); the pulse counts each pane's process tree".into()
    }

    #[derive(Debug)]
    pub struct Tree;

    impl Tree {
        pub fn set_up() -> Result<Tree, String> {
            Err("cgroups are Linux's".into())
        }

        pub fn describe(&self) -> String {
            String::new()
        }

        pub fn pane(&self, _: u32, _: Limits) -> Result<PaneCgroup, String> {
            Err("cgroups are Linux's".into())
        }
    }

    #[derive(Debug)]
    pub struct PaneCgroup;

    impl PaneCgroup {
        pub fn dir(&self) -> &Path {
            Path::new("")
        }

        pub fn limits(&self) -> Limits {
            Limits::default()
        }

        pub fn usage(&self) -> Option<Usage> {
            None
        }

        pub fn limit_events(&self) -> LimitEvents {
            LimitEvents::default()
        }

        pub fn kill(&self) {}
    }
}

/// The hidden verb a pane's program is started through to join its cgroup.
pub const JOIN_VERB: &str = "__cgroup-exec";

/// What a pane's cgroup has used, as the pulse reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// CPU time so far, in microseconds.
    pub cpu_usec: u64,
    /// Memory in use now: the `memory` controller's count, else the resident memory of its
    /// processes.
    pub memory_bytes: u64,
}

/// Limits for a pane's cgroup (a thread's `limits`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    pub memory_bytes: Option<u64>,
    /// Cores' worth of CPU time per second.
    pub cpus: Option<f32>,
}

/// Bytes for people, as `ls` and the title strip show memory: "812K", "312M", "1.5G".
pub fn size_words(bytes: u64) -> String {
    const K: f64 = 1024.0;
    let b = bytes as f64;
    if b < K * K {
        format!("{:.0}K", b / K)
    } else if b < K * K * K {
        format!("{:.0}M", b / (K * K))
    } else {
        format!("{:.1}G", b / (K * K * K))
    }
}

/// `memory.max` of a limit: its bytes, or `max`.
pub fn memory_max(limit: Option<u64>) -> String {
    limit.map_or_else(|| "max".to_owned(), |bytes| bytes.to_string())
}

/// `cpu.max` of a limit: the quota per 100 ms period, or `max`.
pub fn cpu_max(cpus: Option<f32>) -> String {
    const PERIOD_USEC: u64 = 100_000;
    match cpus {
        Some(cpus) if cpus > 0.0 => {
            let quota = (f64::from(cpus) * PERIOD_USEC as f64).round().max(1000.0) as u64;
            format!("{quota} {PERIOD_USEC}")
        }
        _ => format!("max {PERIOD_USEC}"),
    }
}

/// `usage_usec` of a `cpu.stat` text.
pub fn usage_usec(cpu_stat: &str) -> Option<u64> {
    cpu_stat.lines().find_map(|line| line.strip_prefix("usage_usec ")?.trim().parse().ok())
}

/// The count of `key` in a flat-keyed cgroup file (`memory.events`, `cpu.stat`).
pub fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok()).flatten()
    })
}

/// The cgroup v2 path of a `/proc/PID/cgroup` text (its `0::` line).
pub fn unified_path(proc_cgroup: &str) -> Option<&str> {
    proc_cgroup.lines().find_map(|line| line.strip_prefix("0::"))
}

/// Where cgroup v2 is mounted, from a `/proc/self/mountinfo` text: the mount point of the
/// first `cgroup2` file system (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on a hybrid host).
pub fn unified_mount(mountinfo: &str) -> Option<&str> {
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let fstype = after.split(' ').next()?;
        (fstype == "cgroup2").then(|| before.split(' ').nth(4)).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unified_hierarchy_is_found_on_pure_and_hybrid_hosts() {
        let hybrid = "35 25 0:30 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro\n\
                      36 35 0:31 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw\n\
                      37 35 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        assert_eq!(unified_mount(hybrid), Some("/sys/fs/cgroup/unified"));
        let pure =
            "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(unified_mount(pure), Some("/sys/fs/cgroup"));
        assert_eq!(unified_mount("1 0 0:1 / / rw - ext4 /dev/sda rw\n"), None);
        let cgroup = "4:memory:/user.slice\n0::/user.slice/user-1000.slice/session-2.scope\n";
        assert_eq!(unified_path(cgroup), Some("/user.slice/user-1000.slice/session-2.scope"));
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size_words(812 * 1024), "812K");
        assert_eq!(size_words(312 << 20), "312M");
        assert_eq!(size_words(3 << 29), "1.5G");
    }

    #[test]
    fn limits_are_written_as_the_kernel_reads_them() {
        assert_eq!(memory_max(Some(4 << 30)), "4294967296");
        assert_eq!(memory_max(None), "max");
        assert_eq!(cpu_max(Some(2.0)), "200000 100000");
        assert_eq!(cpu_max(Some(0.001)), "1000 100000", "the kernel's least quota");
        assert_eq!(cpu_max(None), "max 100000");
    }

    #[test]
    fn counts_are_read_from_flat_keyed_files() {
        let stat = "usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\nnr_throttled 3\n";
        assert_eq!(usage_usec(stat), Some(1_234_567));
        assert_eq!(keyed(stat, "nr_throttled"), Some(3));
        assert_eq!(keyed("low 0\nhigh 0\nmax 2\noom 1\noom_kill 1\n", "oom_kill"), Some(1));
        assert_eq!(keyed("", "oom_kill"), None);
    }
}
