//! Finding a run's processes by its marker when nothing else links them to it: what a guard does when
//! the engine dies. Processes that left the run's process group (`setsid`) and were re-parented away
//! are out of the guard's reach by group, but still carry [`RUN_MARKER_VAR`]`=<marker>` in their
//! environment; the guard scans `/proc` for it and SIGKILLs them.
//!
//! Runs inside a guard (shared memory or a forked copy of the engine): raw system calls on stack
//! buffers only, nothing allocates. On architectures without the raw shims the scan finds nothing.

use crate::decimal::Decimal;
use crate::rawsys::c;
use crate::tree::RUN_MARKER_VAR;

/// Scans of `/proc` at most; a process forked between a scan and its kill shows up in the next one.
/// The first scan is always followed by a second: a process inside `execve` shows an empty
/// environment for a moment.
const ROUNDS: usize = 4;

/// The environment entry that marks a run's processes, `SHELLGATE_RUN_ID=<marker>`, laid out before a
/// guard starts (the guard cannot allocate).
pub(crate) fn needle(marker: &str) -> Box<[u8]> {
    format!("{RUN_MARKER_VAR}={marker}")
        .into_bytes()
        .into_boxed_slice()
}

/// SIGKILL every process whose environment holds the entry `needle`, except `skip` (the caller).
/// Returns how many kill signals were sent.
pub(crate) fn kill_marked(needle: &[u8], skip: i32) -> usize {
    let mut total = 0;
    for round in 0..ROUNDS {
        let killed = scan_and_kill(needle, skip);
        total += killed;
        if killed == 0 && round > 0 {
            break;
        }
    }
    total
}

fn scan_and_kill(needle: &[u8], skip: i32) -> usize {
    let mut killed = 0;
    for_each_pid_in(b"/proc\0", &mut |pid| {
        if pid != skip && environ_holds(pid, needle) {
            c(libc::SYS_kill, &[pid as usize, libc::SIGKILL as usize]);
            killed += 1;
        }
    });
    killed
}

/// Call `f` with every numeric entry of the directory at `path` (NUL-terminated): the pids in
/// `/proc`, the thread ids in `/proc/<pid>/task`.
fn for_each_pid_in(path: &[u8], f: &mut dyn FnMut(i32)) {
    let dir = c(
        libc::SYS_openat,
        &[
            libc::AT_FDCWD as usize,
            path.as_ptr() as usize,
            (libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) as usize,
        ],
    );
    if dir < 0 {
        return;
    }
    let mut entries = [0u8; 2048];
    loop {
        let n = c(
            libc::SYS_getdents64,
            &[dir as usize, entries.as_mut_ptr() as usize, entries.len()],
        );
        let Ok(n) = usize::try_from(n) else { break };
        if n == 0 {
            break;
        }
        // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, then the NUL-terminated name.
        let mut at = 0;
        while at + 19 < n {
            let reclen = usize::from(u16::from_ne_bytes([entries[at + 16], entries[at + 17]]));
            if reclen == 0 {
                break;
            }
            if let Some(pid) = parse_pid(&entries[at + 19..(at + reclen).min(n)]) {
                f(pid);
            }
            at += reclen;
        }
    }
    c(libc::SYS_close, &[dir as usize]);
}

/// The pid a `/proc` entry name stands for (digits up to the NUL), if it is one.
fn parse_pid(name: &[u8]) -> Option<i32> {
    let mut pid: i32 = 0;
    let mut digits = 0;
    for &b in name {
        if b == 0 {
            break;
        }
        if !b.is_ascii_digit() {
            return None;
        }
        pid = pid.checked_mul(10)?.checked_add(i32::from(b - b'0'))?;
        digits += 1;
    }
    (digits > 0 && pid > 0).then_some(pid)
}

/// A NUL-terminated `/proc` path joined from `parts` (each a few bytes: names and decimal ids).
struct ProcPath {
    bytes: [u8; 64],
}

impl ProcPath {
    fn new(parts: &[&[u8]]) -> Self {
        let mut bytes = [0u8; 64];
        let mut at = 0;
        for part in parts {
            bytes[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        Self { bytes }
    }
}

/// Whether the environment of process `pid` holds the entry `needle` (a whole NUL-separated entry).
///
/// Once a process's main thread has exited while others run on, its own `environ` cannot be opened
/// (`ESRCH`; some kernels may read it as empty instead); the environment, shared by its threads, is
/// then read through theirs.
fn environ_holds(pid: i32, needle: &[u8]) -> bool {
    let digits = Decimal::new(pid.unsigned_abs());
    let own = ProcPath::new(&[b"/proc/", digits.as_bytes(), b"/environ"]);
    if let Some(found) = file_holds(&own, needle) {
        return found;
    }
    let tasks = ProcPath::new(&[b"/proc/", digits.as_bytes(), b"/task"]);
    let mut found = false;
    for_each_pid_in(&tasks.bytes, &mut |tid| {
        if !found && tid != pid {
            let tid = Decimal::new(tid.unsigned_abs());
            let path = ProcPath::new(&[
                b"/proc/",
                digits.as_bytes(),
                b"/task/",
                tid.as_bytes(),
                b"/environ",
            ]);
            found = file_holds(&path, needle) == Some(true);
        }
    });
    found
}

/// Whether the file at `path` holds the entry `needle`; `None` when the file tells nothing: it cannot
/// be opened for `ESRCH`, or it reads empty.
fn file_holds(path: &ProcPath, needle: &[u8]) -> Option<bool> {
    let fd = c(
        libc::SYS_openat,
        &[
            libc::AT_FDCWD as usize,
            path.bytes.as_ptr() as usize,
            (libc::O_RDONLY | libc::O_CLOEXEC) as usize,
        ],
    );
    if fd == -(libc::ESRCH as isize) {
        return None;
    }
    if fd < 0 {
        return Some(false);
    }
    let mut matcher = EntryMatcher::new(needle);
    let mut buf = [0u8; 4096];
    let mut found = false;
    let mut empty = true;
    loop {
        let n = c(
            libc::SYS_read,
            &[fd as usize, buf.as_mut_ptr() as usize, buf.len()],
        );
        let Ok(n) = usize::try_from(n) else { break };
        if n == 0 {
            found = matcher.finish();
            break;
        }
        empty = false;
        if matcher.feed(&buf[..n]) {
            found = true;
            break;
        }
    }
    c(libc::SYS_close, &[fd as usize]);
    (!empty).then_some(found)
}

/// Streams NUL-separated entries and tells whether one equals the needle, across read boundaries.
struct EntryMatcher<'a> {
    needle: &'a [u8],
    /// Bytes of the current entry matched so far.
    matched: usize,
    /// Whether the current entry still matches the needle's prefix.
    alive: bool,
}

impl<'a> EntryMatcher<'a> {
    fn new(needle: &'a [u8]) -> Self {
        Self {
            needle,
            matched: 0,
            alive: true,
        }
    }

    /// Feed more bytes; true once a complete entry equal to the needle has ended.
    fn feed(&mut self, bytes: &[u8]) -> bool {
        for &b in bytes {
            if b == 0 {
                if self.finish() {
                    return true;
                }
                self.matched = 0;
                self.alive = true;
            } else if self.alive {
                if self.needle.get(self.matched) == Some(&b) {
                    self.matched += 1;
                } else {
                    self.alive = false;
                }
            }
        }
        false
    }

    /// Whether the current (last, unterminated) entry equals the needle.
    fn finish(&self) -> bool {
        self.alive && self.matched == self.needle.len() && !self.needle.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_whole_entries_across_chunks() {
        let needle = b"SHELLGATE_RUN_ID=1-2";
        let env = b"A=1\0SHELLGATE_RUN_ID=1-23\0SHELLGATE_RUN_ID=1-2\0B=2\0";
        for split in 0..env.len() {
            let mut m = EntryMatcher::new(needle);
            let hit = m.feed(&env[..split]) || m.feed(&env[split..]) || m.finish();
            assert!(hit, "split at {split}");
        }
        let mut m = EntryMatcher::new(needle);
        assert!(!m.feed(b"SHELLGATE_RUN_ID=1-23\0XSHELLGATE_RUN_ID=1-2\0"));
        assert!(!m.finish());
        let mut m = EntryMatcher::new(needle);
        assert!(!m.feed(b"A=1\0SHELLGATE_RUN_ID=1-2"));
        assert!(m.finish(), "an unterminated last entry counts");
    }

    #[test]
    fn parses_proc_names() {
        assert_eq!(parse_pid(b"123\0\0\0"), Some(123));
        assert_eq!(parse_pid(b"self\0"), None);
        assert_eq!(parse_pid(b"\0"), None);
        assert_eq!(parse_pid(b"99999999999\0"), None);
    }

    #[test]
    fn finds_and_kills_a_marked_process_only() {
        let marker = format!("marked-test-{}", std::process::id());
        let mut marked = std::process::Command::new("sleep")
            .arg("30")
            .env(RUN_MARKER_VAR, &marker)
            .spawn()
            .unwrap();
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .env(RUN_MARKER_VAR, format!("{marker}0"))
            .spawn()
            .unwrap();
        // The environment is readable once the child has exec'd.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !environ_holds(marked.id() as i32, &needle(&marker)) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let killed = kill_marked(&needle(&marker), std::process::id() as i32);
        assert!(killed >= 1);
        let status = marked.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGKILL)
        );
        assert!(
            other.try_wait().unwrap().is_none(),
            "an unmarked process was killed"
        );
        other.kill().unwrap();
        other.wait().unwrap();
    }
}
