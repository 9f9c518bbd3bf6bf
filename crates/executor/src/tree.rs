//! Process trees: find every process a run started, signal them, kill them, reap them.
//!
//! A run's tree is its leader (the process the executor spawned, which leads a new session and process
//! group) plus every process that descends from it — including those that escaped the group with
//! `setsid`, a double fork or `nohup`. Escapees are found because the engine is a *child subreaper*
//! ([`init_subreaper`]): when their parent dies they are re-parented to the engine instead of `init`, and
//! are then attributed to a run by their session id, process group id, or the run marker variable
//! ([`RUN_MARKER_VAR`]) in their environment (`/proc/<pid>/environ`, or a thread's, see
//! [`has_run_marker`]).
//!
//! Reaping rule: tokio reaps the processes it spawned (by pid or pidfd). Adopted orphans are reaped here
//! with `waitpid` on their specific pids, only when they are attributed to a tree and are not its leader;
//! `waitpid(-1)` is never used, so no other component's children are stolen.
//!
//! ```
//! use shellgate_executor::tree::{self, ProcessTree};
//!
//! tree::init_subreaper().unwrap();
//! let child = std::process::Command::new("true").spawn().unwrap();
//! let tree = ProcessTree::new(child.id(), None);
//! let killed = tree.kill_all(); // SIGKILL to everything still running, then reap adopted zombies
//! assert!(killed.iter().all(|p| p.pid != std::process::id()));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

/// Environment variable carrying a run's marker into every process it starts.
///
/// Descendants that leave the session and process group (`setsid`) still inherit it, so adopted orphans
/// can be attributed to their run. A process that clears its environment (`env -i`) loses it.
pub const RUN_MARKER_VAR: &str = "SHELLGATE_RUN_ID";

/// Longest time [`ProcessTree::kill_all`] keeps re-scanning for processes that are still alive.
const KILL_BUDGET: Duration = Duration::from_millis(500);

static SUBREAPER: OnceLock<Result<(), Errno>> = OnceLock::new();
static CHILDREN_FILE_MISSING: AtomicBool = AtomicBool::new(false);
static MARKER_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Make the engine process a child subreaper (`PR_SET_CHILD_SUBREAPER`). Idempotent; call once at
/// startup (the pipe executor also calls it before its first spawn).
///
/// Afterwards, orphaned descendants of anything the engine starts are re-parented to the engine rather
/// than to `init`, so [`ProcessTree`] can still find and kill them. The engine then becomes responsible
/// for reaping them; [`ProcessTree::kill_all`] and [`ProcessTree::reap_adopted`] do so.
#[allow(unsafe_code)] // prctl
pub fn init_subreaper() -> io::Result<()> {
    let result = SUBREAPER.get_or_init(|| {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes one integer argument and touches no memory.
        let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };
        if rc == 0 { Ok(()) } else { Err(Errno::last()) }
    });
    result.map_err(io::Error::from)
}

/// Leaves `SIGCHLD` to the process's other threads by blocking it in the calling one; threads the
/// caller starts afterwards inherit the block, so call it after starting the ones that must take the
/// signal. `SIGCHLD` goes to the process: when the thread that started the child cannot take it at
/// that moment, the kernel hands it to another, and a main thread that only waits (for the thread
/// that serves) was woken that way at the end of most runs, just to pass the signal on.
pub fn leave_child_signals_to_other_threads() -> io::Result<()> {
    use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
    let mut set = SigSet::empty();
    set.add(Signal::SIGCHLD);
    pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None).map_err(io::Error::from)
}

/// Whether the engine is currently a child subreaper (asks the kernel).
#[allow(unsafe_code)] // prctl
pub fn is_subreaper() -> bool {
    let mut flag: libc::c_int = 0;
    // SAFETY: PR_GET_CHILD_SUBREAPER writes one c_int through the pointer, which points to `flag`.
    let rc = unsafe {
        libc::prctl(
            libc::PR_GET_CHILD_SUBREAPER,
            &raw mut flag as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    rc == 0 && flag != 0
}

/// A marker unique to this engine process and run, for [`RUN_MARKER_VAR`].
pub fn new_run_marker() -> String {
    let n = MARKER_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

/// What `/proc/<pid>/stat` says about one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcInfo {
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// Process group id.
    pub pgid: u32,
    /// Session id.
    pub sid: u32,
    /// State letter (`R`, `S`, `Z` for a zombie, …): the main thread's, or, once the main thread alone
    /// has exited, that of a thread still running (see [`read_proc`]).
    pub state: char,
    /// Command name (at most 15 bytes, from the kernel).
    pub comm: String,
    /// How many threads the process has (a main thread that has exited still counts while others run
    /// on).
    pub threads: u32,
}

impl ProcInfo {
    /// Whether the process has exited and waits to be reaped.
    pub fn is_zombie(&self) -> bool {
        self.state == 'Z' || self.state == 'X'
    }

    /// Whether the process is stopped (by a signal or a tracer).
    pub fn is_stopped(&self) -> bool {
        self.state == 'T' || self.state == 't'
    }
}

/// Read `/proc/<pid>/stat`; `None` when the process is gone or the file is malformed.
///
/// A process whose main thread has exited while other threads run on is alive: its main thread's
/// `Z` is replaced by the state of its first live thread, so it is never taken for a zombie (passed
/// over when a tree is killed, or treated as already gone).
pub fn read_proc(pid: u32) -> Option<ProcInfo> {
    let text = read_proc_file(format!("/proc/{pid}/stat")).ok()?;
    let mut info = parse_stat(&text)?;
    if info.is_zombie()
        && info.threads > 1
        && let Some(state) = other_threads(pid).find_map(|tid| {
            let text = read_proc_file(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
            parse_stat(&text)
                .map(|t| t.state)
                .filter(|&s| s != 'Z' && s != 'X')
        })
    {
        info.state = state;
    }
    Some(info)
}

/// The whole of a small `/proc` file. `std::fs::read` asks for the size first (which `/proc` files
/// report as 0) and then reads in growing steps: four more system calls per file, on every run's
/// process-tree checks.
fn read_proc_file(path: impl AsRef<std::path::Path>) -> io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut file = std::fs::File::open(path)?;
    let mut out = vec![0u8; 1024];
    let mut len = 0;
    loop {
        if len == out.len() {
            out.resize(len * 2, 0);
        }
        match file.read(&mut out[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    out.truncate(len);
    Ok(out)
}

/// The pids listed in a `children` file.
fn parse_pids(text: &[u8]) -> impl Iterator<Item = u32> + '_ {
    text.split(u8::is_ascii_whitespace)
        .filter_map(|s| std::str::from_utf8(s).ok()?.parse::<u32>().ok())
}

fn parse_stat(text: &[u8]) -> Option<ProcInfo> {
    // `pid (comm) state ppid pgrp session …`; comm may contain spaces and parentheses, so split at the
    // last `)`.
    let open = text.iter().position(|&b| b == b'(')?;
    let close = text.iter().rposition(|&b| b == b')')?;
    let pid = std::str::from_utf8(&text[..open]).ok()?.trim().parse().ok()?;
    let comm = String::from_utf8_lossy(text.get(open + 1..close)?).into_owned();
    let rest = std::str::from_utf8(text.get(close + 1..)?).ok()?;
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    let sid = fields.next()?.parse().ok()?;
    // `num_threads` is the 20th field; `sid` was the 6th. A line cut short counts as one thread.
    let threads = fields.nth(13).and_then(|f| f.parse().ok()).unwrap_or(1);
    Some(ProcInfo {
        pid,
        ppid,
        pgid,
        sid,
        state,
        comm,
        threads,
    })
}

/// Whether process `pid` has a descriptor whose `/proc` link text is `link`.
///
/// The descriptors of a process whose main thread has exited are listed under its other threads only
/// (its own `fd` directory reads empty), so an empty listing is looked at through them.
pub fn holds_open(pid: u32, link: &str) -> bool {
    fd_listing_holds(&format!("/proc/{pid}/fd"), link)
        .or_else(|| {
            other_threads(pid).find_map(|tid| fd_listing_holds(&format!("/proc/{pid}/task/{tid}/fd"), link))
        })
        .unwrap_or(false)
}

/// Whether the descriptor directory `dir` lists one whose link text is `link`; `None` when it cannot
/// be read or lists nothing.
fn fd_listing_holds(dir: &str, link: &str) -> Option<bool> {
    let mut entries = std::fs::read_dir(dir).ok()?.flatten().peekable();
    entries.peek()?;
    Some(
        entries
            .any(|e| std::fs::read_link(e.path()).is_ok_and(|t| t.as_os_str() == std::ffi::OsStr::new(link))),
    )
}

/// The `/proc` link text of one of the engine's own descriptors (`pipe:[12345]`, or a FIFO's path).
pub fn own_fd_link(fd: std::os::fd::RawFd) -> Option<String> {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// Direct children of `pid`, from `/proc/<pid>/task/*/children` (every thread can be a parent); falls
/// back to a scan of all of `/proc` when the kernel lacks that file.
pub fn children_of(pid: u32) -> Vec<u32> {
    if !CHILDREN_FILE_MISSING.load(Ordering::Relaxed)
        && let Some(children) = children_from_task_files(pid)
    {
        return children;
    }
    all_processes()
        .into_iter()
        .filter(|p| p.ppid == pid)
        .map(|p| p.pid)
        .collect()
}

/// Children of the main thread of `pid` alone, from `/proc/<pid>/task/<pid>/children` (one read);
/// `None` when that file cannot be read (the process is gone, or the kernel lacks the file).
///
/// That is every child of a single-threaded process (a shell). In a multi-threaded one it is still
/// where orphans re-parented to it as a subreaper land: the kernel hands them to the first live
/// thread of the reaper, the main thread while the process runs.
pub(crate) fn main_thread_children(pid: u32) -> Option<Vec<u32>> {
    if CHILDREN_FILE_MISSING.load(Ordering::Relaxed) {
        return None;
    }
    let text = read_proc_file(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    Some(parse_pids(&text).collect())
}

fn children_from_task_files(pid: u32) -> Option<Vec<u32>> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Some(Vec::new()); // the process is gone
    };
    let mut out = Vec::new();
    let mut any_file = false;
    let mut any_task = false;
    for task in tasks.flatten() {
        any_task = true;
        let Ok(text) = read_proc_file(task.path().join("children")) else {
            continue;
        };
        any_file = true;
        out.extend(parse_pids(&text));
    }
    if any_task && !any_file && pid == std::process::id() {
        // Our own task directories exist but have no `children` file: CONFIG_PROC_CHILDREN is off.
        CHILDREN_FILE_MISSING.store(true, Ordering::Relaxed);
        return None;
    }
    Some(out)
}

/// Every process visible in `/proc`.
pub fn all_processes() -> Vec<ProcInfo> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(read_proc)
        .collect()
}

/// Whether the environment of process `proc` holds `RUN_MARKER_VAR=<marker>`. Zombies and kernel
/// threads have no environment.
///
/// When a process's main thread has exited while its other threads run on, its own
/// `/proc/<pid>/environ` fails (`ESRCH`; some kernels may read it as empty instead); the environment
/// is still there, shared by those threads, so it is read through theirs
/// (`/proc/<pid>/task/<tid>/environ`). Without that, such a process, once out of the run's group
/// (`setsid`), would keep itself and its children out of the run's tree. Only a process with more
/// than one thread is looked at so: a kernel thread fails the same way.
pub fn has_run_marker(proc: &ProcInfo, marker: &str) -> bool {
    let pid = proc.pid;
    let needle = format!("{RUN_MARKER_VAR}={marker}");
    let holds = |environ: Vec<u8>| environ.split(|&b| b == 0).any(|entry| entry == needle.as_bytes());
    match std::fs::read(format!("/proc/{pid}/environ")) {
        Ok(environ) if !environ.is_empty() => holds(environ),
        Err(e) if e.raw_os_error() != Some(libc::ESRCH) => false,
        _ if proc.threads > 1 => other_threads(pid)
            .any(|tid| std::fs::read(format!("/proc/{pid}/task/{tid}/environ")).is_ok_and(holds)),
        _ => false,
    }
}

/// The threads of process `pid` other than its main thread (none for a single-threaded process, or
/// when the process is gone).
fn other_threads(pid: u32) -> impl Iterator<Item = u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(move |&tid| tid != pid)
}

/// The processes of one run, found afresh from `/proc` each time they are asked for.
///
/// Cheap to clone (clones share the set of adopted pids seen so far).
#[derive(Debug, Clone)]
pub struct ProcessTree {
    leader: u32,
    marker: Option<String>,
    /// Orphans once attributed to this tree (kept so they are still recognised as zombies, when their
    /// environment can no longer be read).
    adopted: Arc<Mutex<BTreeSet<u32>>>,
    /// The run's cgroup, when it has one: every process in it is the run's, whatever it did to its
    /// session, group or environment.
    cgroup: Option<Arc<crate::cgroup::RunCgroup>>,
}

impl ProcessTree {
    /// The tree led by `leader`, a process that leads its own process group (`setpgid(0, 0)`, as the
    /// pipe executor does) or session (`setsid`, as PTY and session shells do). `marker` is the value of [`RUN_MARKER_VAR`] given to the run, if any.
    pub fn new(leader: u32, marker: Option<String>) -> Self {
        Self {
            leader,
            marker,
            adopted: Arc::default(),
            cgroup: None,
        }
    }

    /// The same tree, also made of every process in `cgroup`.
    #[must_use]
    pub fn with_cgroup(mut self, cgroup: Option<Arc<crate::cgroup::RunCgroup>>) -> Self {
        self.cgroup = cgroup;
        self
    }

    /// How the run's processes are tracked: by a cgroup, or by marker, session and group.
    pub fn tracking(&self) -> crate::cgroup::Tracking {
        self.cgroup
            .as_ref()
            .map_or(crate::cgroup::Tracking::Marker, |c| c.tracking())
    }

    /// The leader's pid (also the run's session and process group id).
    pub fn leader(&self) -> u32 {
        self.leader
    }

    /// The run marker, if any.
    pub fn marker(&self) -> Option<&str> {
        self.marker.as_deref()
    }

    /// Every process of the tree that still exists (zombies included), leader included while it exists.
    pub fn members(&self) -> Vec<ProcInfo> {
        let engine = std::process::id();
        let mut found: BTreeMap<u32, ProcInfo> = BTreeMap::new();
        let mut queue: Vec<u32> = Vec::new();
        if let Some(leader) = read_proc(self.leader)
            && (leader.sid == self.leader || leader.pgid == self.leader)
            && leader.pid != engine
        {
            queue.push(leader.pid);
            found.insert(leader.pid, leader);
        }
        let subreaper = is_subreaper_cached();
        // Orphans re-parented to the engine are children of its main thread (see
        // `main_thread_children`); its other threads' children are runs it started itself, each the
        // leader of its own tree (this one's leader was read above).
        let candidates: Vec<ProcInfo> = if subreaper {
            main_thread_children(engine)
                .unwrap_or_else(|| children_of(engine))
                .into_iter()
                .filter_map(read_proc)
                .collect()
        } else {
            all_processes()
        };
        let mut adopted = self
            .adopted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for proc in candidates {
            if proc.pid == engine || found.contains_key(&proc.pid) {
                continue;
            }
            if self.attributes(&proc, &adopted) {
                if subreaper && proc.pid != self.leader {
                    adopted.insert(proc.pid);
                }
                queue.push(proc.pid);
                found.insert(proc.pid, proc);
            }
        }
        drop(adopted);
        for pid in self.cgroup.iter().flat_map(|c| c.members()) {
            if pid != engine
                && !found.contains_key(&pid)
                && let Some(info) = read_proc(pid)
            {
                queue.push(pid);
                found.insert(pid, info);
            }
        }
        while let Some(pid) = queue.pop() {
            // A zombie has no children: they were re-parented before it turned one. (A process
            // whose main thread alone has exited does not read as a zombie; see `read_proc`.)
            if found.get(&pid).is_some_and(ProcInfo::is_zombie) {
                continue;
            }
            for child in children_of(pid) {
                if child == engine || found.contains_key(&child) {
                    continue;
                }
                if let Some(info) = read_proc(child) {
                    queue.push(child);
                    found.insert(child, info);
                }
            }
        }
        found.into_values().collect()
    }

    fn attributes(&self, proc: &ProcInfo, adopted: &BTreeSet<u32>) -> bool {
        proc.sid == self.leader
            || proc.pgid == self.leader
            || adopted.contains(&proc.pid)
            || self
                .marker
                .as_deref()
                .is_some_and(|m| !proc.is_zombie() && has_run_marker(proc, m))
    }

    /// Deliver SIGPIPE to the processes of the tree that hold a closed output open and are not the
    /// parent of another such holder (the stages that would write to it, not the shell waiting for
    /// them), `except` one process (a session's own shell). `link` is the `/proc/<pid>/fd` link text of
    /// the output (`pipe:[N]` or a FIFO's path). Returns how many were signalled.
    ///
    /// This is what a producer meets under a real `head` on its next write; a stage that no longer
    /// writes (`od` reading `/dev/zero` and printing only `*`) would otherwise hold the run open forever.
    pub fn sigpipe_output_holders(&self, link: &str, except: Option<u32>) -> usize {
        let holders: Vec<ProcInfo> = self
            .members()
            .into_iter()
            .filter(|p| !p.is_zombie() && Some(p.pid) != except && holds_open(p.pid, link))
            .collect();
        let mut signalled = 0;
        for p in &holders {
            if holders.iter().any(|other| other.ppid == p.pid) {
                continue;
            }
            if kill(Pid::from_raw(p.pid as i32), Signal::SIGPIPE).is_ok() {
                signalled += 1;
            }
        }
        signalled
    }

    /// Send `signal` to the process group and to every live member; returns the members signalled.
    pub fn signal(&self, signal: Signal) -> Vec<ProcInfo> {
        // List first: once signalled, members may exit before a later scan would see them alive.
        let members: Vec<ProcInfo> = self.members().into_iter().filter(|p| !p.is_zombie()).collect();
        let _ = killpg(Pid::from_raw(self.leader as i32), signal);
        for p in &members {
            let _ = kill(Pid::from_raw(p.pid as i32), signal);
        }
        members
    }

    /// Graceful stop: SIGTERM to every member, then SIGCONT so stopped processes can act on it.
    pub fn terminate(&self) -> Vec<ProcInfo> {
        let members = self.signal(Signal::SIGTERM);
        let _ = killpg(Pid::from_raw(self.leader as i32), Signal::SIGCONT);
        for p in &members {
            let _ = kill(Pid::from_raw(p.pid as i32), Signal::SIGCONT);
        }
        members
    }

    /// SIGKILL every member, re-scanning until none is left alive (processes forked meanwhile are caught
    /// by the next scan; bounded to half a second), then reap adopted zombies.
    ///
    /// Returns each process that was killed (the leader excluded), for reporting.
    pub fn kill_all(&self) -> Vec<ProcInfo> {
        self.kill_tree(true)
    }

    /// [`Self::kill_all`], except that a leader found alive (and not stopped) on its own is left to
    /// finish: a guard whose command has exited is about to exit with its status (killing it then would
    /// orphan the command's zombie and cost a wait).
    pub(crate) fn kill_all_but_exiting_leader(&self) -> Vec<ProcInfo> {
        self.kill_tree(false)
    }

    fn kill_tree(&self, kill_lone_leader: bool) -> Vec<ProcInfo> {
        let start = Instant::now();
        let leader = Pid::from_raw(self.leader as i32);
        let mut killed: BTreeMap<u32, ProcInfo> = BTreeMap::new();
        loop {
            let members = self.members();
            let alive: Vec<&ProcInfo> = members.iter().filter(|p| !p.is_zombie()).collect();
            // A stopped leader (`kill -STOP $PPID` hits the guard) would never finish: it is killed.
            let leader_finishing = |p: &&ProcInfo| p.pid == self.leader && !p.is_stopped();
            let done = alive.is_empty() || (!kill_lone_leader && alive.iter().all(leader_finishing));
            if done || start.elapsed() > KILL_BUDGET {
                // Everything is dead: the zombies among `members` are all that is left to reap.
                self.reap_zombies(&members);
                break;
            }
            // Already dying on its own (a parent-death signal, say): not a leftover of ours.
            let dying: BTreeSet<u32> = alive
                .iter()
                .filter(|p| !killed.contains_key(&p.pid) && kill_pending(p.pid))
                .map(|p| p.pid)
                .collect();
            let _ = killpg(leader, Signal::SIGKILL);
            if let Some(cgroup) = &self.cgroup {
                let _ = cgroup.kill();
            }
            for p in alive {
                let _ = kill(Pid::from_raw(p.pid as i32), Signal::SIGKILL);
                if p.pid != self.leader && !dying.contains(&p.pid) {
                    killed.entry(p.pid).or_insert_with(|| p.clone());
                }
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        killed.into_values().collect()
    }

    /// Reap zombies of this tree that were re-parented to the engine (never the leader, which belongs
    /// to whoever spawned it). Returns how many were reaped.
    pub fn reap_adopted(&self) -> usize {
        self.reap_zombies(&self.members())
    }

    fn reap_zombies(&self, members: &[ProcInfo]) -> usize {
        let engine = std::process::id();
        let mut reaped = 0;
        for p in members {
            if p.is_zombie() && p.ppid == engine && p.pid != self.leader {
                match waitpid(Pid::from_raw(p.pid as i32), Some(WaitPidFlag::WNOHANG)) {
                    Ok(nix::sys::wait::WaitStatus::StillAlive) | Err(_) => {}
                    Ok(_) => reaped += 1,
                }
            }
        }
        if reaped > 0 {
            let mut adopted = self
                .adopted
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            adopted.retain(|&pid| read_proc(pid).is_some_and(|p| p.ppid == engine));
        }
        reaped
    }
}

/// Whether `pid` is exiting already: it has a SIGKILL pending (shared or its own), or has taken
/// it and is on its way out (`PF_EXITING` in its flags).
fn kill_pending(pid: u32) -> bool {
    const PF_EXITING: u64 = 0x4;
    let exiting = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .is_some_and(|stat| {
            // Field 9, counted from the first after the command name (field 3).
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(6))
                .and_then(|flags| flags.parse::<u64>().ok())
                .is_some_and(|flags| flags & PF_EXITING != 0)
        });
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return exiting;
    };
    // A leader whose own thread exited while others run on shows the flag too: not dying.
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse::<u32>().ok())
        .unwrap_or(1);
    if exiting && threads <= 1 {
        return true;
    }
    let sigkill = 1u64 << (libc::SIGKILL - 1);
    status.lines().any(|line| {
        ["ShdPnd:", "SigPnd:"].iter().any(|key| {
            line.strip_prefix(key)
                .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
                .is_some_and(|mask| mask & sigkill != 0)
        })
    })
}

/// `is_subreaper` asks the kernel; remember a positive answer (it cannot be undone by us).
fn is_subreaper_cached() -> bool {
    if matches!(SUBREAPER.get(), Some(Ok(()))) {
        return true;
    }
    is_subreaper()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_comm() {
        let info = parse_stat(b"42 (a) b (c)) S 1 42 40 0 -1").unwrap();
        assert_eq!(info.pid, 42);
        assert_eq!(info.comm, "a) b (c)");
        assert_eq!((info.state, info.ppid, info.pgid, info.sid), ('S', 1, 42, 40));
        assert!(parse_stat(b"garbage").is_none());
        assert!(parse_stat(b"1 (x) Z").is_none());
        assert_eq!(info.threads, 1, "a line cut short");
        let full = b"7 (w) Z 1 7 7 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 3 0 100 0 0";
        assert_eq!(parse_stat(full).unwrap().threads, 3);
    }

    #[test]
    fn reads_own_stat() {
        let me = read_proc(std::process::id()).unwrap();
        assert_eq!(me.pid, std::process::id());
        assert!(!me.is_zombie());
    }

    #[test]
    fn markers_are_unique() {
        assert_ne!(new_run_marker(), new_run_marker());
    }

    #[test]
    fn subreaper_is_idempotent() {
        init_subreaper().unwrap();
        init_subreaper().unwrap();
        assert!(is_subreaper());
    }
}
