//! Control groups for runs: a process in a run's cgroup cannot leave the run by changing its
//! session, process group or environment — the marker ([`crate::tree::RUN_MARKER_VAR`]) can be
//! shed with `env -i`, a cgroup only by writing another cgroup's `cgroup.procs`, which the
//! sandbox's read-only mounts and Landlock forbid.
//!
//! Where the engine may create cgroups (root, or a delegated subtree of the user's):
//! - **cgroup v2** (the unified hierarchy, wherever it is mounted): each run gets
//!   `<engine's cgroup>/shellgate-<pid>/run-<n>`; its members are its `cgroup.procs`, and
//!   `cgroup.kill` (Linux 5.14) stops all of them at once — also when the engine has died, from the
//!   run's guard.
//! - **cgroup v1** `pids` and `memory` hierarchies, when mounted (as on this kind of machine, beside
//!   a v2 hierarchy without controllers): the same directories there, carrying `pids.max` and
//!   `memory.limit_in_bytes`.
//!
//! Where no cgroup can be made, runs are tracked by their marker, session and process group, and
//! the result says so ([`Tracking`]). A command that runs unsandboxed as root can move itself into
//! any cgroup; in the sandbox it cannot.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// How a run's processes were tracked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tracking {
    /// A cgroup of the run's own.
    Cgroup,
    /// The run marker in each process's environment, with its session and process group.
    Marker,
}

/// Limits a run's cgroup carries where the hierarchy offers the controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CgroupLimits {
    /// Most processes (and threads) of the run at once (`pids.max`).
    pub pids_max: Option<u64>,
    /// Most memory of the run, page cache included (`memory.max` / `memory.limit_in_bytes`).
    pub memory_max: Option<u64>,
}

/// The engine's own directories in each hierarchy it may use.
#[derive(Debug)]
struct Bases {
    unified: Option<PathBuf>,
    pids: Option<PathBuf>,
    memory: Option<PathBuf>,
}

fn bases() -> &'static Bases {
    static BASES: OnceLock<Bases> = OnceLock::new();
    BASES.get_or_init(|| {
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let dir = |mount: Option<PathBuf>, own_path: Option<&str>| {
            let base = mount?.join(own_path?.trim_start_matches('/'));
            let engine = base.join(format!("shellgate-{}", std::process::id()));
            std::fs::create_dir(&engine).ok()?;
            Some(engine)
        };
        let v1 = |controller: &str| {
            let mount = mounts.lines().find_map(|line| {
                let (fields, rest) = line.split_once(" - ")?;
                let mut rest = rest.split_whitespace();
                let (fstype, options) = (rest.next()?, rest.nth(1)?);
                let point = fields.split_whitespace().nth(4)?;
                (fstype == "cgroup" && options.split(',').any(|o| o == controller))
                    .then(|| PathBuf::from(point))
            });
            let own_path = own.lines().find_map(|l| {
                let mut parts = l.splitn(3, ':');
                let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
                controllers.split(',').any(|c| c == controller).then_some(path)
            });
            dir(mount, own_path)
        };
        let unified_mount = mounts.lines().find_map(|line| {
            let (fields, rest) = line.split_once(" - ")?;
            let point = fields.split_whitespace().nth(4)?;
            (rest.split_whitespace().next()? == "cgroup2").then(|| PathBuf::from(point))
        });
        let unified_own = own.lines().find_map(|l| l.strip_prefix("0::"));
        Bases {
            unified: dir(unified_mount, unified_own),
            pids: v1("pids"),
            memory: v1("memory"),
        }
    })
}

/// Remove the engine's cgroup directories (their run directories are gone by then). Called at the
/// end of the engine; directories of engines that died are left empty, and removed by the next
/// engine that finds them (see [`sweep_stale`]).
pub fn remove_engine_cgroups() {
    for pool in [Pool::Unified, Pool::Pids, Pool::Memory] {
        pool.drain();
    }
    let b = bases();
    for dir in [&b.unified, &b.pids, &b.memory].into_iter().flatten() {
        let _ = std::fs::remove_dir(dir);
    }
}

/// Remove empty `shellgate-<pid>` directories whose engine is gone, beside this engine's own.
pub fn sweep_stale() {
    let b = bases();
    for dir in [&b.unified, &b.pids, &b.memory].into_iter().flatten() {
        let Some(parent) = dir.parent() else { continue };
        let Ok(entries) = std::fs::read_dir(parent) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix("shellgate-"))
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if !Path::new(&format!("/proc/{pid}")).exists() {
                if let Ok(runs) = std::fs::read_dir(entry.path()) {
                    for run in runs.flatten().filter(|r| r.path().is_dir()) {
                        let _ = std::fs::remove_dir(run.path());
                    }
                }
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
}

/// The cgroups of one run. Removed when dropped (once empty).
#[derive(Debug)]
pub struct RunCgroup {
    /// The run's v2 directory, when there is one.
    pub(crate) unified: Option<PathBuf>,
    /// Its v1 `pids` directory: for a process limit, or to list its processes without a v2 one.
    pids: Option<PathBuf>,
    /// Its v1 `memory` directory, for a memory limit.
    memory: Option<PathBuf>,
    /// Set once `cgroup.kill` was written: such a directory is never reused. The kernel keeps a
    /// count of kills per cgroup, and a child created by `CLONE_INTO_CGROUP` into a directory that
    /// was once killed is killed at birth (seen on 6.18: every later run in it ended by SIGKILL).
    killed: std::sync::atomic::AtomicBool,
}

impl RunCgroup {
    /// New cgroups for a run, with `limits` where a hierarchy offers them; `None` where the
    /// engine may not create any.
    pub fn create(limits: CgroupLimits) -> Option<Self> {
        let b = bases();
        let unified = b.unified.as_ref().and_then(|base| Pool::Unified.take(base));
        // A v1 directory costs the command a move between cgroups (see `cgroup_entry`): made only
        // for a limit, or to list the run's processes where there is no v2 one.
        let pids_max = limits.pids_max.filter(|&m| m > 0);
        let pids = (pids_max.is_some() || unified.is_none())
            .then(|| b.pids.as_ref().and_then(|base| Pool::Pids.take(base)))
            .flatten();
        if let Some(dir) = &pids {
            let max = pids_max.map_or_else(|| "max".to_owned(), |m| m.to_string());
            let _ = std::fs::write(dir.join("pids.max"), max);
        }
        let memory_max = limits.memory_max.filter(|&m| m > 0);
        let memory = memory_max.and_then(|_| b.memory.as_ref().and_then(|base| Pool::Memory.take(base)));
        if let (Some(dir), Some(max)) = (&memory, memory_max) {
            let _ = std::fs::write(dir.join("memory.limit_in_bytes"), max.to_string());
        }
        if let Some(dir) = &unified {
            // Only where the controller is enabled for the engine's subtree (else no file).
            let max = pids_max.map_or_else(|| "max".to_owned(), |m| m.to_string());
            let _ = std::fs::write(dir.join("pids.max"), max);
        }
        let any = unified.is_some() || pids.is_some() || memory.is_some();
        any.then_some(Self {
            unified,
            pids,
            memory,
            killed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Its v1 directories, which a new process joins by moving.
    pub(crate) fn v1(&self) -> impl Iterator<Item = &PathBuf> {
        self.pids.iter().chain(&self.memory)
    }

    /// How the run is tracked: by its cgroup when it has a v2 one (which can be listed and killed
    /// as a whole).
    pub fn tracking(&self) -> Tracking {
        if self.unified.is_some() {
            Tracking::Cgroup
        } else {
            Tracking::Marker
        }
    }

    /// Every process in the run's cgroup.
    pub fn members(&self) -> Vec<u32> {
        let procs = self
            .unified
            .as_ref()
            .or(self.pids.as_ref())
            .map(|dir| std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default())
            .unwrap_or_default();
        procs.lines().filter_map(|l| l.trim().parse().ok()).collect()
    }

    /// SIGKILL every process in the run's cgroup at once (`cgroup.kill`), or one by one where the
    /// kernel has no `cgroup.kill`.
    pub fn kill(&self) -> io::Result<()> {
        self.killed.store(true, Ordering::SeqCst);
        if let Some(dir) = &self.unified
            && std::fs::write(dir.join("cgroup.kill"), "1").is_ok()
        {
            return Ok(());
        }
        for pid in self.members() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap_or(0)),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        Ok(())
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        if self.killed.load(Ordering::SeqCst)
            && let Some(dir) = self.unified.take()
        {
            let _ = std::fs::remove_dir(dir);
        }
        for (pool, dir) in [
            (Pool::Unified, self.unified.take()),
            (Pool::Pids, self.pids.take()),
            (Pool::Memory, self.memory.take()),
        ] {
            if let Some(dir) = dir {
                pool.give_back(dir);
            }
        }
    }
}

/// Empty run directories kept for the next runs, per hierarchy: making and removing a cgroup costs
/// a run about a tenth of a millisecond (the kernel frees it in the background, on the same CPUs),
/// reusing an empty one almost nothing.
#[derive(Clone, Copy)]
enum Pool {
    Unified,
    Pids,
    Memory,
}

/// How many empty directories each pool keeps.
const POOL_SIZE: usize = 8;

static POOLS: [std::sync::Mutex<Vec<PathBuf>>; 3] = [const { std::sync::Mutex::new(Vec::new()) }; 3];

impl Pool {
    fn free(self) -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
        POOLS[self as usize]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// An empty run directory beneath `base`: a kept one, or a new one.
    fn take(self, base: &Path) -> Option<PathBuf> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        if let Some(dir) = self.free().pop() {
            return Some(dir);
        }
        let dir = base.join(format!("run-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&dir).ok().map(|()| dir)
    }

    /// Keep `dir` for a later run if nothing is left in it and the pool has room; else remove it
    /// (which fails while processes remain — their run ended badly: the next engine's sweep or
    /// this engine's end removes what it can).
    fn give_back(self, dir: PathBuf) {
        let empty = std::fs::read_to_string(dir.join("cgroup.procs")).is_ok_and(|p| p.trim().is_empty());
        if empty {
            let mut free = self.free();
            if free.len() < POOL_SIZE {
                free.push(dir);
                return;
            }
        }
        let _ = std::fs::remove_dir(&dir);
    }

    /// Remove every kept directory.
    fn drain(self) {
        for dir in std::mem::take(&mut *self.free()) {
            let _ = std::fs::remove_dir(dir);
        }
    }
}
