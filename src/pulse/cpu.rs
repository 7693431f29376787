//! CPU time of a pane's whole process tree, as a running total: the sampler turns two totals
//! into a percentage. Only the panes' processes and their descendants are read, never every
//! process of the system each tick.
//!
//! Linux: /proc directly: the tree through each task's `children`, and per process its own
//! time plus that of its children already waited for (`cutime`, `cstime` in `/proc/PID/stat`),
//! so an agent that runs many short tools does not read as idle. Elsewhere: sysinfo, with the
//! descendants found by a full process scan every few seconds and only the known ones
//! refreshed in between.

use std::time::Duration;

/// What a process tree has used: CPU so far, and memory now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeUsage {
    pub cpu: Duration,
    /// The resident memory of its processes alive now.
    pub memory_bytes: u64,
}

/// Running CPU totals of process trees.
#[derive(Default)]
pub struct TreeCpu {
    #[cfg(not(target_os = "linux"))]
    inner: fallback::Fallback,
}

impl TreeCpu {
    /// CPU time used so far by `root` and its descendants (those alive, and those whose time
    /// their parents collected when they ended); `None` when `root` is gone.
    /// CPU time so far and memory now of `root` and its descendants; `None` when `root` is gone.
    pub fn usage(&mut self, root: u32) -> Option<TreeUsage> {
        #[cfg(target_os = "linux")]
        {
            linux::usage(root)
        }
        #[cfg(not(target_os = "linux"))]
        {
            self.inner.usage(root)
        }
    }

    /// Called once per tick before the totals of that tick.
    pub fn begin_tick(&mut self, roots: &[u32]) {
        #[cfg(not(target_os = "linux"))]
        self.inner.begin_tick(roots);
        #[cfg(target_os = "linux")]
        let _ = roots;
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::time::Duration;

    use super::TreeUsage;

    /// Deepest tree walked (a fork bomb is not followed all the way).
    const MAX_PROCESSES: usize = 4096;

    pub fn usage(root: u32) -> Option<TreeUsage> {
        // SAFETY: sysconf(3) has no preconditions.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        // SAFETY: as above.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
        let (mut total, mut pages) = process_ticks(root)?;
        let mut stack = children(root);
        let mut seen = 1;
        while let Some(pid) = stack.pop() {
            seen += 1;
            if seen > MAX_PROCESSES {
                break;
            }
            if let Some((t, p)) = process_ticks(pid) {
                total += t;
                pages += p;
                stack.extend(children(pid));
            }
        }
        let cpu = Duration::from_secs_f64(total as f64 / ticks);
        Some(TreeUsage { cpu, memory_bytes: pages * page })
    }

    /// utime + stime + cutime + cstime of one process, in clock ticks, and its resident pages.
    fn process_ticks(pid: u32) -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name is in parentheses and may hold spaces: fields follow the last ')'.
        let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split(' ').collect();
        // Fields 14-17 and 24 of stat(5), counted from the state (field 3) at index 0.
        let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<i64>().ok());
        let sum = field(14)? + field(15)? + field(16)? + field(17)?;
        Some((sum.max(0) as u64, field(24).unwrap_or(0).max(0) as u64))
    }

    /// The children of every thread of `pid`.
    fn children(pid: u32) -> Vec<u32> {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for task in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                out.extend(text.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
            }
        }
        out
    }
}

#[cfg(not(target_os = "linux"))]
mod fallback {
    use std::collections::{HashMap, HashSet};
    use std::time::Duration;

    use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

    use super::TreeUsage;

    /// Ticks between full scans (which find new descendants).
    const SCAN_EVERY: u32 = 8;

    pub struct Fallback {
        /// `None` where sysinfo cannot read processes: every total is then unknown.
        system: Option<System>,
        ticks: u32,
        /// Each root's descendants as of the last full scan.
        trees: HashMap<u32, Vec<Pid>>,
    }

    impl Default for Fallback {
        fn default() -> Fallback {
            Fallback { system: System::new().ok(), ticks: 0, trees: HashMap::new() }
        }
    }

    impl Fallback {
        pub fn begin_tick(&mut self, roots: &[u32]) {
            let kind = ProcessRefreshKind::nothing().with_cpu().with_memory();
            let Some(system) = self.system.as_mut() else {
                return;
            };
            if self.ticks % SCAN_EVERY == 0 {
                system.refresh_processes_specifics(ProcessesToUpdate::All, true, kind);
                self.trees = roots.iter().map(|&r| (r, descendants(system, r))).collect();
            } else {
                let known: Vec<Pid> = roots
                    .iter()
                    .map(|&r| Pid::from_u32(r))
                    .chain(self.trees.values().flatten().copied())
                    .collect();
                system.refresh_processes_specifics(ProcessesToUpdate::Some(&known), true, kind);
            }
            self.ticks = self.ticks.wrapping_add(1);
        }

        pub fn usage(&mut self, root: u32) -> Option<TreeUsage> {
            let system = self.system.as_ref()?;
            let root_process = system.process(Pid::from_u32(root))?;
            let mut millis = root_process.accumulated_cpu_time();
            let mut memory_bytes = root_process.memory();
            for process in
                self.trees.get(&root).into_iter().flatten().filter_map(|p| system.process(*p))
            {
                millis += process.accumulated_cpu_time();
                memory_bytes += process.memory();
            }
            Some(TreeUsage { cpu: Duration::from_millis(millis), memory_bytes })
        }
    }

    fn descendants(system: &System, root: u32) -> Vec<Pid> {
        let mut tree: HashSet<Pid> = HashSet::from([Pid::from_u32(root)]);
        loop {
            let before = tree.len();
            for (pid, process) in system.processes() {
                if process.parent().is_some_and(|p| tree.contains(&p)) {
                    tree.insert(*pid);
                }
            }
            if tree.len() == before {
                break;
            }
        }
        tree.remove(&Pid::from_u32(root));
        tree.into_iter().collect()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_tree_counts_its_children_and_their_finished_children() {
        // A shell that burns CPU in short-lived children, then sleeps.
        let mut child = std::process::Command::new("/bin/sh")
            .args(["-c", "for i in 1 2 3 4 5 6; do i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done & wait; done; sleep 5"])
            .spawn()
            .expect("sh");
        let pid = child.id();
        let mut cpu = TreeCpu::default();
        let start = cpu.usage(pid).expect("alive").cpu;
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let mut grown = Duration::ZERO;
        while std::time::Instant::now() < deadline && grown < Duration::from_millis(100) {
            std::thread::sleep(Duration::from_millis(50));
            grown = cpu.usage(pid).map_or(grown, |u| u.cpu.saturating_sub(start));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            grown >= Duration::from_millis(100),
            "the children's CPU was not counted: {grown:?}"
        );
        assert_eq!(cpu.usage(pid), None, "a reaped process has no total");
    }
}
