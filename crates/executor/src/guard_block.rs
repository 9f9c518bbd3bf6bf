//! The block of memory the engine and a `clone(CLONE_VM)` guard share (see [`crate::vmguard`]):
//! what the guard needs to start the command, and what it publishes about it. Read by the guard's
//! child handle ([`crate::direct`]) and written by the guard.

use std::ffi::CString;
use std::sync::Arc;

use crate::chunks::Chunk;
use crate::guard::ExecImage;

/// Values of `GuardBlock::start_state`.
pub(crate) const NOT_STARTED: i32 = 0;
pub(crate) const STARTING: i32 = 1;
pub(crate) const STARTED: i32 = 2;

/// Everything the guard and the command read or write. In an `Arc` (a stable address, created
/// before the guard starts) owned by the guard's `DirectChild` until the guard is reaped.
pub(crate) struct GuardBlock {
    pub(crate) path: *const libc::c_char,
    pub(crate) argv: *const *const libc::c_char,
    pub(crate) envp: *const *const libc::c_char,
    pub(crate) cwd: *const libc::c_char,
    pub(crate) fds: [i32; 4],
    pub(crate) engine: i32,
    pub(crate) guard: i32,
    /// The run's marker entry (see [`crate::marked`]), for escapees when the engine dies.
    pub(crate) needle: *const u8,
    pub(crate) needle_len: usize,
    pub(crate) exec_errno: i32,
    /// The command's pid, once started (written by the guard).
    pub(crate) command_pid: i32,
    /// The command's wait status, valid once `status_set` is 1 (written by the guard after reaping).
    pub(crate) command_status: i32,
    pub(crate) status_set: i32,
    /// Where the guard is in starting the command: [`NOT_STARTED`], [`STARTING`] (inside its
    /// `clone`, suspended until the command has exec'd or exited) or [`STARTED`].
    pub(crate) start_state: i32,
    pub(crate) guard_stack: Chunk,
    pub(crate) command_stack: Chunk,
    // Owners of the data the pointers above point into (heap data: moving these does not move it).
    pub(crate) image: ExecImage,
    pub(crate) _cwd: CString,
    pub(crate) _needle: Box<[u8]>,
}

// SAFETY: the raw pointers point into heap data owned by the same block; the block is only dropped
// after the guard (the only other user) was reaped.
unsafe impl Send for GuardBlock {}
// SAFETY: shared access from the engine only reads (volatile) the fields the guard writes.
unsafe impl Sync for GuardBlock {}

impl GuardBlock {
    /// The command's pid, once the guard has started it.
    ///
    /// The guard publishes it when it runs again after starting the command; a command that stops
    /// the guard first (`kill -STOP $PPID`) leaves it unpublished, so then the guard's one child is
    /// looked up in `/proc` (the guard is no subreaper: its only child is the command).
    pub(crate) fn command_pid(&self) -> Option<i32> {
        // SAFETY: volatile reads of i32 fields the guard writes with volatile stores.
        let (pid, guard) = unsafe {
            (
                std::ptr::read_volatile(&raw const self.command_pid),
                std::ptr::read_volatile(&raw const self.guard),
            )
        };
        if pid > 0 {
            return Some(pid);
        }
        if guard <= 0 {
            return None;
        }
        let children = std::fs::read_to_string(format!("/proc/{guard}/task/{guard}/children")).ok()?;
        let mut pids = children
            .split_ascii_whitespace()
            .filter_map(|p| p.parse::<i32>().ok());
        let only = pids.next()?;
        pids.next().is_none().then_some(only)
    }

    /// Let go of one holder of the block of a guard that has been reaped.
    ///
    /// A guard killed inside its `clone` (a kill in the first moments of a run) leaves a command that
    /// may still be between `clone` and `exec`, on the block's stack, reading the block, until it
    /// finds its parent gone and dies: that block is never freed, nor its stack handed to another run.
    pub(crate) fn release_reaped(block: Option<Arc<Self>>) {
        if let Some(block) = block {
            // SAFETY: volatile read of an i32 field the guard wrote with volatile stores.
            if unsafe { std::ptr::read_volatile(&raw const block.start_state) } == STARTING {
                std::mem::forget(block);
            }
        }
    }

    /// The command's wait status as the guard published it after reaping the command.
    pub(crate) fn reported_status(&self) -> Option<i32> {
        // SAFETY: volatile reads of i32 fields the guard writes with volatile stores.
        let (set, status) = unsafe {
            (
                std::ptr::read_volatile(&raw const self.status_set),
                std::ptr::read_volatile(&raw const self.command_status),
            )
        };
        (set == 1).then_some(status)
    }

    /// The wait status of the command `pid` (from [`Self::command_pid`]) if it has exited: as the guard
    /// reported it, or else from the command's zombie (`/proc/<pid>/stat` field 52), so the engine need
    /// not wait for the guard to be scheduled.
    pub(crate) fn command_exit(&self, pid: i32) -> CommandExit {
        if let Some(status) = self.reported_status() {
            return CommandExit::Exited(status);
        }
        // Unreaped (the guard has not published the status), so the pid cannot have been reused.
        let Ok(text) = std::fs::read(format!("/proc/{pid}/stat")) else {
            return CommandExit::Reaped;
        };
        let zombie_status = || {
            let close = text.iter().rposition(|&b| b == b')')?;
            let rest = std::str::from_utf8(text.get(close + 1..)?).ok()?;
            let mut fields = rest.split_ascii_whitespace();
            if fields.next()? != "Z" {
                return None;
            }
            // Field 3 is the state; field 52 the exit code.
            fields.nth(48)?.parse().ok()
        };
        zombie_status().map_or(CommandExit::Running, CommandExit::Exited)
    }
}

/// What [`GuardBlock::command_exit`] found.
pub(crate) enum CommandExit {
    /// The wait status.
    Exited(i32),
    /// Still running (or its `/proc` entry could not be parsed).
    Running,
    /// Gone from `/proc` before the guard published its status: the guard has reaped it and is
    /// about to publish.
    Reaped,
}
