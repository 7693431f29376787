//! `paddock ls` for people: one block per instance, one line per pane.

use super::protocol::{InstanceInfo, PaneInfo, PaneState, PulseInfo};

/// The windows attached to an instance, after its socket: nothing when there are none.
fn windows_words(windows: &[super::protocol::WindowInfo]) -> String {
    let pids: Vec<String> = windows.iter().filter_map(|w| w.pid).map(|p| p.to_string()).collect();
    match (windows.len(), pids.is_empty()) {
        (0, _) => String::new(),
        (n, true) => format!("  {n} window{} attached", if n == 1 { "" } else { "s" }),
        (n, false) => {
            let s = if n == 1 { "" } else { "s" };
            format!("  {n} window{s} attached (pid{s} {})", pids.join(", "))
        }
    }
}

/// The table `paddock ls` prints: panes that wait for their user first, the longest waiting
/// first, then the rest in order. The focused pane is marked with `*`.
pub fn format_listing(instances: &[InstanceInfo]) -> String {
    if instances.is_empty() {
        return "no paddock instance is running\n".into();
    }
    let mut out = String::new();
    for instance in instances {
        out.push_str(&format!("instance {}  {}", instance.pid, instance.socket.display()));
        out.push_str(&windows_words(&instance.windows));
        out.push('\n');
        let mut rows = vec![[
            "PANE".to_owned(),
            "TAB".into(),
            "THREAD".into(),
            "PID".into(),
            "SIZE".into(),
            "STATUS".into(),
            "PULSE".into(),
            "CPU".into(),
            "MEM".into(),
            "OUT".into(),
            "LOCK".into(),
            "SECRETS".into(),
            "COMMAND".into(),
        ]];
        // A HOST column once any pane's thread runs on another host.
        let mut hosts = vec!["HOST".to_owned()];
        for pane in waiting_first(&instance.panes) {
            hosts.push(pane.host.clone().unwrap_or_else(|| "local".into()));
            let status = match (pane.status, pane.exit_code) {
                (PaneState::Running, _) => "running".to_owned(),
                (PaneState::Exited, Some(code)) => format!("exited {code}"),
                (PaneState::Exited, None) => "killed".to_owned(),
                (PaneState::NoProgram, _) => "not started".to_owned(),
                (PaneState::Disconnected, _) => "disconnected".to_owned(),
            };
            let status = match (pane.config_changed, pane.lock_widening.is_empty()) {
                (true, false) => format!("{status}, config changed: lock wider"),
                (true, true) => format!("{status}, config changed"),
                (false, _) => status,
            };
            rows.push([
                format!("{}{}", pane.id, if pane.focused { "*" } else { "" }),
                pane.tab.clone(),
                pane.thread.clone().unwrap_or_else(|| "-".into()),
                pane.pid.map_or_else(|| "-".into(), |p| p.to_string()),
                format!("{}x{}", pane.cols, pane.rows),
                status,
                pulse_words(pane.pulse.as_ref()),
                pane.pulse
                    .as_ref()
                    .map_or_else(|| "-".into(), |p| format!("{:.0}%", p.cpu_percent)),
                pane.pulse
                    .as_ref()
                    .map_or_else(|| "-".into(), |p| crate::cgroup::size_words(p.memory_bytes)),
                pane.pulse.as_ref().map_or_else(|| "-".into(), |p| rate(p.out_bytes_per_s)),
                pane.lock.as_ref().map_or_else(
                    || "-".into(),
                    |lock| match lock.git_planted.len() {
                        0 => lock.level.clone(),
                        n => format!("{}, GIT PLANTED {n}", lock.level),
                    },
                ),
                secrets_words(pane),
                shell_words(&pane.command),
            ]);
        }
        if let Some(problems) = &instance.config_problems {
            let count = problems.lines().count();
            let plural = if count == 1 { "" } else { "s" };
            out.push_str(&format!(
                "  the configuration has {count} problem{plural} (paddock config check); \
                 the last good one is in force\n"
            ));
        }
        if instance.panes.is_empty() {
            out.push_str("  (no panes)\n");
            continue;
        }
        // A program writes its notification text and title: never raw to the user's terminal.
        let mut rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|row| row.iter().map(|cell| crate::sandbox::visible(cell)).collect())
            .collect();
        if instance.panes.iter().any(|p| p.host.is_some()) {
            for (row, host) in rows.iter_mut().zip(hosts) {
                row.insert(3, crate::sandbox::visible(&host));
            }
        }
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|col| rows.iter().map(|r| r[col].chars().count()).max().unwrap_or(0))
            .collect();
        for row in rows {
            let mut line = String::from(" ");
            for (col, cell) in row.iter().enumerate() {
                line.push(' ');
                line.push_str(cell);
                if col + 1 < row.len() {
                    let pad = widths[col] - cell.chars().count();
                    line.push_str(&" ".repeat(pad + 1));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

/// `panes` with those that need their user first, the longest waiting first; the others in
/// their order.
fn waiting_first(panes: &[PaneInfo]) -> Vec<&PaneInfo> {
    // A muted pane does not count among the waiting.
    let waited = |pane: &PaneInfo| {
        pane.pulse.as_ref().filter(|p| p.state == "needs_you" && !p.muted).map(|p| p.since_s)
    };
    let mut waiting: Vec<&PaneInfo> = panes.iter().filter(|p| waited(p).is_some()).collect();
    waiting.sort_by(|a, b| waited(b).unwrap_or(0.0).total_cmp(&waited(a).unwrap_or(0.0)));
    waiting.extend(panes.iter().filter(|p| waited(p).is_none()));
    waiting
}

/// "working 12s", "needs you 3s: bell".
fn pulse_words(pulse: Option<&PulseInfo>) -> String {
    let Some(pulse) = pulse else {
        return "-".into();
    };
    let state = match pulse.state.as_str() {
        // A muted pane's need is said, not shouted.
        "needs_you" if pulse.muted => "needs you",
        "needs_you" => "NEEDS YOU",
        other => other,
    };
    let since = pulse.since_s as u64;
    let since = match since {
        0..=59 => format!("{since}s"),
        60..=3599 => format!("{}m", since / 60),
        _ => format!("{}h", since / 3600),
    };
    let words = match &pulse.reason {
        Some(reason) => format!("{state} {since}: {reason}"),
        None => format!("{state} {since}"),
    };
    match pulse.muted {
        true => format!("muted, {words}"),
        false => words,
    }
}

/// Bytes per second, for people: "0", "812 B/s", "3.2 KB/s", "1.1 MB/s".
fn rate(bytes_per_s: f32) -> String {
    match bytes_per_s {
        b if b < 1.0 => "0".into(),
        b if b < 1000.0 => format!("{b:.0} B/s"),
        b if b < 1e6 => format!("{:.1} KB/s", b / 1e3),
        b => format!("{:.1} MB/s", b / 1e6),
    }
}

/// A command as a shell would need it typed: words with spaces or quotes are quoted.
fn shell_words(command: &[String]) -> String {
    let quote = |word: &String| {
        let plain = !word.is_empty()
            && word.chars().all(|c| c.is_alphanumeric() || "-_./=:,+@%".contains(c));
        if plain {
            word.clone()
        } else {
            format!("'{}'", word.replace('\'', r"'\''"))
        }
    };
    command.iter().map(quote).collect::<Vec<_>>().join(" ")
}

/// A pane's secrets: each brokered one with its state (`openai:brokered`, `openai:REVOKED`).
fn secrets_words(pane: &PaneInfo) -> String {
    if pane.secrets.is_empty() {
        return "-".into();
    }
    let word = |name: &String| match pane.brokered.iter().find(|b| &b.name == name) {
        Some(b) if b.state == "active" => format!("{name}:brokered"),
        Some(b) => format!("{name}:{}", b.state.to_ascii_uppercase()),
        None => name.clone(),
    };
    pane.secrets.iter().map(word).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctl::protocol::{LockInfo, PaneInfo};

    fn pane(id: u32, status: PaneState, exit_code: Option<i32>, focused: bool) -> PaneInfo {
        PaneInfo {
            id,
            tab: "bash".into(),
            thread: (id == 2).then(|| "reviewer".into()),
            command: vec!["bash".into(), "-c".into(), "echo 'hi there'".into()],
            pid: Some(100 + id),
            cols: 80,
            rows: 24,
            status,
            exit_code,
            focused,
            title: None,
            config_changed: id == 13 || id == 2,
            lock_widening: if id == 2 { vec!["network on".into()] } else { vec![] },
            lock: (id == 2).then(|| LockInfo {
                level: "locked".into(),
                detail: "files + network".into(),
                env_passed: Some(vec!["HOME".into(), "PATH".into()]),
                git_planted: vec![],
            }),
            secrets: if id == 2 { vec!["gh-token".into(), "openai".into()] } else { vec![] },
            brokered: vec![],
            pulse: match id {
                1 => Some(PulseInfo {
                    state: "working".into(),
                    cpu_percent: 37.4,
                    out_bytes_per_s: 3240.0,
                    since_s: 75.0,
                    reason: None,
                    muted: false,
                    memory_bytes: 412 << 20,
                }),
                2 => Some(PulseInfo {
                    state: "needs_you".into(),
                    cpu_percent: 0.0,
                    out_bytes_per_s: 0.0,
                    since_s: 4.2,
                    reason: Some("bell".into()),
                    muted: false,
                    memory_bytes: 3 << 29,
                }),
                _ => None,
            },
            net: None,
            host: None,
        }
    }

    #[test]
    fn the_table_shows_each_pane_with_its_state() {
        let instance = InstanceInfo {
            pid: 42,
            socket: "/run/user/1000/paddock/42.sock".into(),
            panes: vec![
                pane(1, PaneState::Running, None, true),
                pane(2, PaneState::Exited, Some(3), false),
                pane(13, PaneState::Exited, None, false),
            ],
            config_problems: Some("config.ron:1:2: fnt: unknown field".into()),
            cgroups: String::new(),
            windows: Vec::new(),
        };
        let expected = "\
instance 42  /run/user/1000/paddock/42.sock
  the configuration has 1 problem (paddock config check); the last good one is in force
  PANE  TAB   THREAD    PID  SIZE   STATUS                                PULSE               CPU  MEM   OUT       LOCK    SECRETS          COMMAND
  2     bash  reviewer  102  80x24  exited 3, config changed: lock wider  NEEDS YOU 4s: bell  0%   1.5G  0         locked  gh-token,openai  bash -c 'echo '\\''hi there'\\'''
  1*    bash  -         101  80x24  running                               working 1m          37%  412M  3.2 KB/s  -       -                bash -c 'echo '\\''hi there'\\'''
  13    bash  -         113  80x24  killed, config changed                -                   -    -     -         -       -                bash -c 'echo '\\''hi there'\\'''
";
        assert_eq!(format_listing(&[instance]), expected);
    }

    #[test]
    fn waiting_panes_come_first_the_longest_waiting_first_and_muted_ones_do_not_count() {
        let waiting = |id, since_s, muted| {
            let mut pane = pane(id, PaneState::Running, None, false);
            pane.pulse = Some(PulseInfo {
                state: "needs_you".into(),
                cpu_percent: 0.0,
                out_bytes_per_s: 0.0,
                since_s,
                reason: Some("bell".into()),
                muted,
                memory_bytes: 0,
            });
            pane
        };
        let panes = vec![
            pane(1, PaneState::Running, None, true),
            waiting(4, 3.0, false),
            pane(5, PaneState::Running, None, false),
            waiting(7, 90.0, false),
            waiting(8, 300.0, true),
        ];
        let order: Vec<u32> = waiting_first(&panes).iter().map(|p| p.id).collect();
        assert_eq!(order, [7, 4, 1, 5, 8]);
        assert_eq!(pulse_words(panes[4].pulse.as_ref()), "muted, needs you 5m: bell");
        assert_eq!(pulse_words(panes[3].pulse.as_ref()), "NEEDS YOU 1m: bell");
    }

    /// A locked agent's notification cannot set a title or clear the user's screen through
    /// `paddock ls`.
    #[test]
    fn control_characters_a_program_wrote_are_shown_not_sent() {
        let mut asking = pane(2, PaneState::Running, None, false);
        if let Some(pulse) = asking.pulse.as_mut() {
            pulse.reason = Some("notification: \u{1b}]0;evil\u{7}\u{1b}[2J".into());
        }
        let instance = InstanceInfo {
            pid: 42,
            socket: "/run/user/1000/paddock/42.sock".into(),
            panes: vec![asking],
            config_problems: None,
            cgroups: String::new(),
            windows: Vec::new(),
        };
        let listing = format_listing(&[instance]);
        assert!(!listing.contains('\u{1b}') && !listing.contains('\u{7}'), "{listing:?}");
        assert!(listing.contains("\\u{1b}]0;evil\\u{7}"), "{listing}");
    }

    #[test]
    fn no_instances_says_so() {
        assert_eq!(format_listing(&[]), "no paddock instance is running\n");
    }
}
