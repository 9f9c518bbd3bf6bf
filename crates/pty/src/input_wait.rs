//! Is the program waiting for terminal input? Decided from the kernel, not guessed from prompts:
//! the terminal's foreground process group is asleep in a read (or poll/select) of the terminal, or
//! in an `epoll` wait whose interest list holds the terminal (event loops such as Node's). The same
//! check serves any other input ([`waiting_to_read`]: a job's stdin pipe).

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

fn activity(pid: i32, tty: &Path) -> Activity {
    if stat_fields(pid).is_none() {
        return Activity::Other;
    }
    match waiting_to_read(pid, &|target| target == tty) {
        Some(true) => Activity::ReadingTerminal,
        Some(false) => Activity::Other,
        None => {
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
    }
}

/// Whether process `pid` — one of its threads — is asleep waiting to read a descriptor whose
/// `/proc/<pid>/fd` link `is_input` accepts: in `read`/`readv` of it, in `poll`/`select` with it
/// among the descriptors watched for input, or in an `epoll` wait whose interest list holds it.
/// `None` when the kernel does not say (no `/proc/<pid>/task/<tid>/syscall`).
///
/// A `poll` or `select` that watches nothing (`poll(NULL, 0, ms)`, `select(0, …)`: a sleep) is not
/// a read. When the watched set cannot be read from the process's memory, a poll or select counts
/// as a read when the process's standard input is such a descriptor (line editors poll stdin).
pub fn waiting_to_read(pid: i32, is_input: &dyn Fn(&Path) -> bool) -> Option<bool> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return thread_waiting_to_read(pid, pid, is_input);
    };
    let mut unknown = false;
    for tid in tasks.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()) {
        match thread_waiting_to_read(pid, tid, is_input) {
            Some(true) => return Some(true),
            Some(false) => {}
            None => unknown = true,
        }
    }
    if unknown { None } else { Some(false) }
}

/// [`waiting_to_read`] for thread `tid` of process `pid`.
fn thread_waiting_to_read(pid: i32, tid: i32, is_input: &dyn Fn(&Path) -> bool) -> Option<bool> {
    let stat = fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    let state = stat[stat.rfind(')')? + 1..].split_whitespace().next();
    // Only an interruptible sleep can be a blocked read; running, stopped or zombie is not.
    if state != Some("S") {
        return Some(false);
    }
    let syscall = fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall")).ok()?;
    let mut parts = syscall.split_whitespace();
    let number = parts.next()?.parse::<i64>().ok()?;
    let args: Vec<u64> = parts
        .take(3)
        .filter_map(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .collect();
    let arg = |i: usize| args.get(i).copied().unwrap_or(0);
    let fd_ok = |fd: u64| fs::read_link(format!("/proc/{pid}/fd/{fd}")).is_ok_and(|target| is_input(&target));
    let fallback = || fd_ok(0);
    Some(match classify_syscall(number) {
        SyscallKind::Read => fd_ok(arg(0)),
        SyscallKind::Poll => {
            let (fds, count) = (arg(0), arg(1));
            count > 0
                && fds != 0
                && poll_fds(pid, fds, count).map_or_else(fallback, |fds| fds.into_iter().any(fd_ok))
        }
        SyscallKind::Select => {
            let (count, read_set) = (arg(0), arg(1));
            count > 0
                && read_set != 0
                && select_fds(pid, read_set, count).map_or_else(fallback, |fds| fds.into_iter().any(fd_ok))
        }
        // An event loop waits on all its descriptors at once; the input must be one.
        SyscallKind::Epoll => epoll_watched(pid, arg(0)).into_iter().any(fd_ok),
        SyscallKind::Other => false,
    })
}

/// Bytes of `pid`'s memory at `address`, when the engine may read them (its own children).
fn memory(pid: i32, address: u64, len: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let file = fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut buf = vec![0; len];
    file.read_exact_at(&mut buf, address).ok()?;
    Some(buf)
}

/// The descriptors a `poll` of `count` entries at `address` watches for input.
fn poll_fds(pid: i32, address: u64, count: u64) -> Option<Vec<u64>> {
    // struct pollfd { int fd; short events; short revents; }
    const POLL_INPUT: i16 = 0x1 | 0x2 | 0x40; // POLLIN | POLLPRI | POLLRDNORM
    let count = usize::try_from(count).ok()?.min(4096);
    let bytes = memory(pid, address, count * 8)?;
    Some(
        bytes
            .chunks_exact(8)
            .filter_map(|entry| {
                let fd = i32::from_ne_bytes(entry[0..4].try_into().ok()?);
                let events = i16::from_ne_bytes(entry[4..6].try_into().ok()?);
                (fd >= 0 && events & POLL_INPUT != 0).then_some(fd as u64)
            })
            .collect(),
    )
}

/// The descriptors in a `select` read set of `count` bits at `address`.
fn select_fds(pid: i32, address: u64, count: u64) -> Option<Vec<u64>> {
    let count = count.min(65536);
    // An fd_set is an array of longs; on little-endian machines bit n is bit n % 8 of byte n / 8.
    if cfg!(target_endian = "big") {
        return None;
    }
    let bytes = memory(pid, address, count.div_ceil(8) as usize)?;
    Some(
        (0..count)
            .filter(|&fd| bytes[(fd / 8) as usize] & (1 << (fd % 8)) != 0)
            .collect(),
    )
}

/// The descriptors epoll instance `epfd` of `pid` watches: its `fdinfo` lists each as a `tfd:` line.
fn epoll_watched(pid: i32, epfd: u64) -> Vec<u64> {
    let Ok(info) = fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")) else {
        return Vec::new();
    };
    info.lines()
        .filter_map(|line| line.strip_prefix("tfd:"))
        .filter_map(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .collect()
}

#[derive(Debug, PartialEq, Eq)]
enum SyscallKind {
    Read,
    Poll,
    Select,
    Epoll,
    Other,
}

fn classify_syscall(number: i64) -> SyscallKind {
    if number == libc::SYS_read || number == libc::SYS_readv || number == libc::SYS_pread64 {
        return SyscallKind::Read;
    }
    if number == libc::SYS_ppoll {
        return SyscallKind::Poll;
    }
    if number == libc::SYS_pselect6 {
        return SyscallKind::Select;
    }
    #[cfg(target_arch = "x86_64")]
    if number == libc::SYS_poll {
        return SyscallKind::Poll;
    }
    #[cfg(target_arch = "x86_64")]
    if number == libc::SYS_select {
        return SyscallKind::Select;
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

    /// Start `python3 -c program` with a pipe of ours as its stdin; once it printed its first line
    /// (just before it waits), what `waiting_to_read` says of it in 25 polls 20 ms apart.
    fn views(program: &str) -> Option<Vec<Option<bool>>> {
        use std::io::BufRead as _;
        use std::process::{Command, Stdio};
        let Ok(mut child) = Command::new("python3")
            .args(["-c", &format!("print('ready', flush=True); {program}")])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
        else {
            assert!(
                std::env::var_os("SHELLGATE_REQUIRE_ALL").is_none(),
                "python3 is needed for this test"
            );
            eprintln!("skipped: python3 is not installed");
            return None;
        };
        let pipe_fd = std::os::fd::AsRawFd::as_raw_fd(child.stdin.as_ref().unwrap());
        let pipe = fs::read_link(format!("/proc/self/fd/{pipe_fd}")).unwrap();
        let is_pipe = |target: &Path| target == pipe;
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let seen = (0..25)
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                waiting_to_read(child.id() as i32, &is_pipe)
            })
            .collect();
        let _ = child.kill();
        let _ = child.wait();
        Some(seen)
    }

    #[test]
    fn readers_of_a_pipe_are_seen_by_read_poll_epoll_and_any_thread() {
        for program in [
            "import sys; sys.stdin.read()",
            "import select, sys; select.select([sys.stdin], [], [], 30)",
            "import select, sys; p = select.poll(); p.register(0, select.POLLIN); p.poll(30000)",
            "import select; e = select.epoll(); e.register(0, select.EPOLLIN); e.poll(30)",
            "import sys, threading, time; threading.Thread(target=sys.stdin.read, daemon=True).start(); time.sleep(30)",
        ] {
            let Some(seen) = views(program) else { return };
            // Seen waiting once it got there, and from then on.
            let from = seen.iter().position(|v| *v == Some(true));
            assert!(
                from.is_some_and(|i| seen[i..].iter().all(|v| *v == Some(true))),
                "{program}: {seen:?}"
            );
        }
    }

    #[test]
    fn sleeps_in_poll_or_select_that_watch_nothing_are_not_reads() {
        for program in [
            "import time; time.sleep(30)",
            "import select; select.select([], [], [], 30)",
            "import select; select.poll().poll(30000)",
            "import select, os; r, w = os.pipe(); select.select([r], [], [], 30)",
        ] {
            let Some(seen) = views(program) else { return };
            assert!(seen.iter().all(|v| *v == Some(false)), "{program}: {seen:?}");
        }
    }

    #[test]
    fn syscall_classes() {
        assert_eq!(classify_syscall(libc::SYS_read), SyscallKind::Read);
        assert_eq!(classify_syscall(libc::SYS_ppoll), SyscallKind::Poll);
        assert_eq!(classify_syscall(libc::SYS_epoll_pwait), SyscallKind::Epoll);
        assert_eq!(classify_syscall(libc::SYS_clock_nanosleep), SyscallKind::Other);
    }
}
