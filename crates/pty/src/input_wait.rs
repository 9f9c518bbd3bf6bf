//! Is the program waiting for terminal input? Decided from the kernel, not guessed from prompts:
//! the terminal's foreground process group is asleep in a read (or poll/select) of the terminal, or
//! in an `epoll` wait whose interest list holds the terminal (event loops such as Node's).

use std::fs;
use std::path::Path;

/// What one process is doing, as far as terminal input is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Activity {
    /// Asleep reading or polling the terminal.
    ReadingTerminal,
    /// Running, or asleep on something else.
    Other,
    /// The kernel would not tell.
    Unknown,
}

/// Whether the foreground process group `pgrp` of terminal `tty` (e.g. `/dev/pts/3`) is blocked
/// reading it. `None` when `/proc` cannot say (not Linux, no permission, group gone).
///
/// `candidates` are the processes the group's members are looked for among first (the program's
/// process tree: a few `/proc` reads); only when none of them is in the group is all of `/proc`
/// scanned, which costs milliseconds on a busy machine.
pub fn foreground_waiting_for_input(
    pgrp: i32,
    tty: &Path,
    candidates: impl IntoIterator<Item = i32>,
) -> Option<bool> {
    let wanted = pgrp.to_string();
    let known: Vec<i32> = candidates
        .into_iter()
        .filter(|&pid| stat_fields(pid).is_some_and(|f| f.get(2) == Some(&wanted)))
        .collect();
    let members = if known.is_empty() {
        group_members(pgrp)?
    } else {
        known
    };
    if members.is_empty() {
        return None;
    }
    let mut unknown = false;
    for pid in members {
        match activity(pid, tty) {
            Activity::ReadingTerminal => return Some(true),
            Activity::Other => {}
            Activity::Unknown => unknown = true,
        }
    }
    if unknown { None } else { Some(false) }
}

/// The fields of `/proc/<pid>/stat` after the command name: state, ppid, pgrp, session, …
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses; everything after the last ')' is fields.
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// Processes whose field at `index` (0 = state, 2 = pgrp, 3 = session) equals `value`.
pub(crate) fn processes_with(index: usize, value: i32) -> Option<Vec<i32>> {
    let dir = fs::read_dir("/proc").ok()?;
    let wanted = value.to_string();
    Some(
        dir.filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&pid| stat_fields(pid).is_some_and(|f| f.get(index) == Some(&wanted)))
            .collect(),
    )
}

fn group_members(pgrp: i32) -> Option<Vec<i32>> {
    processes_with(2, pgrp)
}

/// Whether `pid`'s file descriptor `fd` is the terminal `tty`.
fn fd_is(pid: i32, fd: u64, tty: &Path) -> bool {
    fs::read_link(format!("/proc/{pid}/fd/{fd}")).is_ok_and(|target| target == tty)
}

fn activity(pid: i32, tty: &Path) -> Activity {
    let Some(fields) = stat_fields(pid) else {
        return Activity::Other;
    };
    // Only an interruptible sleep can be a blocked read; running, stopped or zombie is not.
    if fields.first().map(String::as_str) != Some("S") {
        return Activity::Other;
    }
    if let Ok(syscall) = fs::read_to_string(format!("/proc/{pid}/syscall")) {
        let mut parts = syscall.split_whitespace();
        let number = parts.next().and_then(|n| n.parse::<i64>().ok());
        let first_arg = parts
            .next()
            .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok());
        if let Some(number) = number {
            return match classify_syscall(number) {
                SyscallKind::Read => match first_arg {
                    Some(fd) if fd_is(pid, fd, tty) => Activity::ReadingTerminal,
                    _ => Activity::Other,
                },
                // Line editors (readline, Python's REPL) poll stdin before reading it.
                SyscallKind::Poll if fd_is(pid, 0, tty) => Activity::ReadingTerminal,
                // An event loop waits on all its descriptors at once; the terminal must be one.
                SyscallKind::Epoll => match first_arg {
                    Some(epfd) if epoll_watches(pid, epfd, tty) => Activity::ReadingTerminal,
                    _ => Activity::Other,
                },
                _ => Activity::Other,
            };
        }
    }
    // Without the syscall file, the wait channel tells whether it sleeps in the tty read path.
    match fs::read_to_string(format!("/proc/{pid}/wchan")) {
        Ok(wchan) => match wchan.trim() {
            "n_tty_read" | "wait_woken" => Activity::ReadingTerminal,
            "" | "0" => Activity::Unknown,
            _ => Activity::Other,
        },
        Err(_) => Activity::Unknown,
    }
}

/// Whether the epoll instance `epfd` of `pid` watches a descriptor that is the terminal `tty`: its
/// `fdinfo` lists every watched descriptor as a `tfd:` line.
fn epoll_watches(pid: i32, epfd: u64, tty: &Path) -> bool {
    let Ok(info) = fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")) else {
        return false;
    };
    info.lines()
        .filter_map(|line| line.strip_prefix("tfd:"))
        .filter_map(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .any(|fd| fd_is(pid, fd, tty))
}

#[derive(Debug, PartialEq, Eq)]
enum SyscallKind {
    Read,
    Poll,
    Epoll,
    Other,
}

fn classify_syscall(number: i64) -> SyscallKind {
    if number == libc::SYS_read || number == libc::SYS_readv {
        return SyscallKind::Read;
    }
    if number == libc::SYS_pselect6 || number == libc::SYS_ppoll {
        return SyscallKind::Poll;
    }
    #[cfg(target_arch = "x86_64")]
    if number == libc::SYS_select || number == libc::SYS_poll {
        return SyscallKind::Poll;
    }
    if number == libc::SYS_epoll_pwait || number == libc::SYS_epoll_pwait2 {
        return SyscallKind::Epoll;
    }
    #[cfg(target_arch = "x86_64")]
    if number == libc::SYS_epoll_wait {
        return SyscallKind::Epoll;
    }
    SyscallKind::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_of_self_parses() {
        let me = std::process::id() as i32;
        let fields = stat_fields(me).expect("own stat");
        assert!(fields.len() > 10, "{fields:?}");
        let pgrp: i32 = fields[2].parse().unwrap();
        assert!(processes_with(2, pgrp).unwrap().contains(&me));
    }

    #[test]
    fn unknown_group_is_none() {
        assert_eq!(
            foreground_waiting_for_input(i32::MAX, Path::new("/dev/pts/0"), [std::process::id() as i32]),
            None
        );
    }

    #[test]
    fn syscall_classes() {
        assert_eq!(classify_syscall(libc::SYS_read), SyscallKind::Read);
        assert_eq!(classify_syscall(libc::SYS_ppoll), SyscallKind::Poll);
        assert_eq!(classify_syscall(libc::SYS_epoll_pwait), SyscallKind::Epoll);
        assert_eq!(classify_syscall(libc::SYS_clock_nanosleep), SyscallKind::Other);
    }
}
