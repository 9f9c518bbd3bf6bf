//! One live session shell: spawning it, running a command in it, stopping it.

use std::collections::{BTreeMap, HashSet};
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::sys::stat::Mode;
use nix::unistd::{Pid, mkfifo};
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::Child;
use tokio_util::sync::CancellationToken;

use super::feed::Feed;
use super::records::{Record, RecordReader};
use super::script::{self, ShellKind};
use super::stateless::{cannot_change_state, defined_names};
use crate::completion::{
    DrainEnd, close_for_sink, completion_notices, drain, read_open, read_what_is_left, sleep_until_opt,
};
use crate::tree::{self, ProcInfo, ProcessTree, RUN_MARKER_VAR};
use crate::{ExecOutcome, LaunchSpec, RunStatus, SendSink, guard, non_interactive, signal_name};

const READ_CHUNK: usize = 64 * 1024;
/// Read size on the control channel (records are a few dozen bytes).
const CTL_CHUNK: usize = 4096;

/// The path of a shell's last saved state, updated as the shell reports saves.
pub(crate) type SavedPath = std::sync::Arc<std::sync::Mutex<Option<PathBuf>>>;

/// How to start a session shell.
#[derive(Debug, Clone)]
pub(crate) struct SpawnPlan<'a> {
    pub program: &'a Path,
    pub kind: ShellKind,
    pub login: bool,
    pub env: &'a BTreeMap<String, String>,
    /// Inherited variables the shell must not see.
    pub env_remove: &'a [String],
    pub cwd: &'a Path,
    pub snapshot: Option<&'a Path>,
    pub state: Option<&'a [u8]>,
    pub parent_dir: &'a Path,
    pub ready_timeout: Duration,
    /// Wrappers of the shell's launch spec (sandbox helper, prefix, …).
    pub layers: &'a crate::LayerStack,
}

/// Limits for one command.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunLimits {
    pub start: Instant,
    pub timeout: Duration,
    pub kill_grace: Duration,
    pub drain_idle: Duration,
    pub drain_max: Duration,
    pub ack_timeout: Duration,
}

/// One command for the shell.
pub(crate) struct CommandPlan<'a> {
    pub text: &'a str,
    pub cd: Option<&'a Path>,
    pub env: &'a [(&'a str, &'a str)],
    /// Report the command's status and `pipefail` even when it has no pipe.
    pub report_status: bool,
}

/// How a command ended, seen from the session.
pub(crate) enum RunEnd {
    /// The command ran (or was stopped); the outcome is final.
    Finished { outcome: ExecOutcome, shell_alive: bool },
    /// The shell never picked the command up: it is wedged. Nothing ran; the caller restarts and retries.
    Unresponsive,
}

/// A running shell reading its script from a private request FIFO.
pub(crate) struct ShellProcess {
    kind: ShellKind,
    child: Child,
    tree: ProcessTree,
    dir: PathBuf,
    /// The request FIFO (see [`Feed`]), held read-write so the shell never sees it closed.
    req: pipe::Sender,
    feed: Feed,
    resp: pipe::Receiver,
    records: RecordReader,
    pid: u32,
    next_id: u64,
    saved: Option<u64>,
    /// Path of the last saved state, shared with readers that cannot wait for the shell.
    saved_path: SavedPath,
    /// A command whose state save has not been confirmed yet.
    save_pending: Option<u64>,
    /// Function and alias names of the last saved state (bash), for [`cannot_change_state`].
    names: Option<HashSet<String>>,
    exited: Option<ExitStatus>,
    /// The shell ended during a command that was neither timed out nor cancelled, so the state its exit
    /// trap wrote (if any) is the one to restore.
    ended_by_command: bool,
    /// The output read buffer, kept between commands.
    buf: Vec<u8>,
    /// The control channel's read buffer, kept between commands (on the stack it made every command's
    /// future 4 KiB larger, zeroed and copied on each run).
    ctl: Vec<u8>,
    /// The command files, kept open between commands.
    command_files: CommandFiles,
    /// Whether the output FIFO of the last command is still there to be used again: that command
    /// ended with every writer gone (making and removing the FIFO took an eighth of the engine's time
    /// per command). After any other end it is removed, so a process that kept it open cannot hold up
    /// a later command's end.
    output_fifo_kept: bool,
    /// The shell's own children, there before any command ran (a sandbox's creation agent): they
    /// live as long as the shell and are never a command's leftovers.
    own_children: Vec<u32>,
}

impl ShellProcess {
    /// Start a shell and wait until it has restored its state and reports ready.
    pub(crate) async fn spawn(plan: &SpawnPlan<'_>) -> io::Result<Self> {
        let _ = tree::init_subreaper();
        let dir = private_dir(plan.parent_dir)?;
        match Self::spawn_in(plan, dir.clone()).await {
            Ok(shell) => Ok(shell),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }

    #[allow(unsafe_code)] // `pre_exec`: the guard hook between fork and exec
    async fn spawn_in(plan: &SpawnPlan<'_>, dir: PathBuf) -> io::Result<Self> {
        let req_path = dir.join(script::REQUEST_FIFO);
        let resp_path = dir.join(script::RESPONSE_FIFO);
        for p in [&req_path, &resp_path] {
            mkfifo(p, Mode::S_IRUSR | Mode::S_IWUSR).map_err(io::Error::from)?;
        }
        // Both ends are opened read-write by the engine, so the shell's opens never block and neither
        // side sees a spurious EOF; the shell's death is observed through its exit status instead.
        let mut req = pipe::OpenOptions::new().read_write(true).open_sender(&req_path)?;
        let resp = pipe::OpenOptions::new()
            .read_write(true)
            .open_receiver(&resp_path)?;
        let init = match plan.state {
            Some(state) => {
                let path = dir.join("init");
                std::fs::write(&path, script::restorable_state(plan.kind, state))?;
                Some(path)
            }
            None => None,
        };
        let marker = tree::new_run_marker();
        let bootstrap = script::bootstrap(
            plan.kind,
            &dir,
            plan.cwd,
            if init.is_some() { None } else { plan.snapshot },
            init.as_deref(),
            &marker,
        );
        let script_path = Feed::script_path(plan.kind, &dir);
        let feed = Feed::new(plan.kind, &script_path, &bootstrap)?;
        let mut spec = LaunchSpec::new(
            plan.program.to_string_lossy().into_owned(),
            plan.kind.session_args(plan.login, &script_path),
            plan.cwd,
        );
        spec.env = plan.env.clone();
        spec.env_remove = plan.env_remove.to_vec();
        // The shell is launched like any other process: whatever wraps launch specs wraps it too.
        let spec = plan.layers.apply(non_interactive(spec));
        let mut cmd = tokio::process::Command::from(spec.command());
        cmd.env(RUN_MARKER_VAR, &marker);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd.kill_on_drop(true);
        let engine = std::process::id() as libc::pid_t;
        let needle = crate::marked::needle(&marker);
        let cgroup = crate::cgroup::RunCgroup::create(spec.cgroup_limits).map(std::sync::Arc::new);
        let handles = cgroup
            .as_deref()
            .map(crate::cgroup_entry::CgroupHandles::of)
            .unwrap_or_default();
        // SAFETY: the hook (the pipe executor's guard: new session, parent-death signal, guard process)
        // only makes async-signal-safe system calls and does not allocate; it captures one integer
        // and the marker entry, laid out before the fork.
        unsafe {
            cmd.pre_exec(move || guard::in_child(engine, None, &needle, &handles));
        }
        let child = cmd.spawn()?;
        let tree = ProcessTree::new(child.id().unwrap_or(0), Some(marker.clone())).with_cgroup(cgroup);
        let mut shell = Self {
            kind: plan.kind,
            child,
            tree,
            dir: dir.clone(),
            req: {
                feed.start(&mut req, &bootstrap).await?;
                req
            },
            feed,
            resp,
            records: RecordReader::default(),
            pid: 0,
            next_id: 1,
            saved: None,
            saved_path: SavedPath::default(),
            save_pending: None,
            names: None,
            exited: None,
            ended_by_command: false,
            buf: Vec::new(),
            ctl: Vec::new(),
            command_files: CommandFiles::default(),
            output_fifo_kept: false,
            own_children: Vec::new(),
        };
        shell.wait_ready(plan.ready_timeout).await?;
        shell.own_children = tree::main_thread_children(shell.pid)
            .unwrap_or_else(|| tree::children_of(shell.pid))
            .into_iter()
            .filter(|&p| tree::read_proc(p).is_some_and(|i| !i.is_zombie()))
            .collect();
        Ok(shell)
    }

    async fn wait_ready(&mut self, limit: Duration) -> io::Result<()> {
        let deadline = tokio::time::Instant::now() + limit;
        let mut buf = [0u8; 256];
        loop {
            while let Some(record) = self.records.next_record() {
                if let Record::Ready { pid } = record {
                    self.pid = pid;
                    return Ok(());
                }
            }
            tokio::select! {
                read = self.resp.read(&mut buf) => match read {
                    Ok(0) => return Err(io::Error::other("control channel closed")),
                    Ok(n) => self.records.push(&buf[..n]),
                    Err(e) => return Err(e),
                },
                waited = self.child.wait() => {
                    let status = waited?;
                    self.exited = Some(status);
                    return Err(io::Error::other(format!("the shell exited during startup ({status})")));
                }
                () = tokio::time::sleep_until(deadline) => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "the shell did not start in time"));
                }
            }
        }
    }

    fn on_saved(&mut self, id: u64) {
        self.saved = Some(id);
        *self
            .saved_path
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(self.dir.join(format!("s{}", id % 2)));
        if self.save_pending.is_some_and(|p| p <= id) {
            self.save_pending = None;
        }
        if self.kind == ShellKind::Bash {
            self.names = std::fs::read(self.dir.join(format!("s{}", id % 2)))
                .ok()
                .map(|b| defined_names(&String::from_utf8_lossy(&b)));
        }
    }

    /// Wait (bounded) until the state save of the previous command is confirmed. The shell would finish
    /// it before reading the next command anyway, so this costs no time, and afterwards the saved state
    /// and the known function/alias names are current.
    async fn await_save(&mut self, limit: Duration) -> io::Result<()> {
        let deadline = tokio::time::Instant::now() + limit;
        let mut buf = [0u8; 512];
        while self.save_pending.is_some() && self.exited.is_none() {
            while let Some(record) = self.records.next_record() {
                self.on_other_record(&record);
            }
            if self.save_pending.is_none() {
                break;
            }
            tokio::select! {
                read = self.resp.read(&mut buf) => match read {
                    Ok(0) => return Err(io::Error::other("control channel closed")),
                    Ok(n) => self.records.push(&buf[..n]),
                    Err(e) => return Err(e),
                },
                waited = self.child.wait() => self.exited = Some(waited?),
                () = tokio::time::sleep_until(deadline) => break,
            }
        }
        Ok(())
    }

    fn on_other_record(&mut self, record: &Record) {
        match *record {
            Record::Saved { id } => self.on_saved(id),
            Record::Ready { pid } => self.pid = pid,
            _ => {}
        }
    }

    /// The shell's own pid.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// The process tree (guard, shell and everything they started).
    pub(crate) fn tree(&self) -> &ProcessTree {
        &self.tree
    }

    /// Whether the shell has been seen to exit.
    pub(crate) fn has_exited(&mut self) -> bool {
        if self.exited.is_none()
            && let Ok(Some(status)) = self.child.try_wait()
        {
            self.exited = Some(status);
        }
        self.exited.is_some()
    }

    /// The last state the shell saved (raw), if it saved one since it started.
    /// The state the shell wrote when its command ended it (`exit`, `set -e`) wins over the last save.
    pub(crate) fn saved_state(&self) -> Option<Vec<u8>> {
        if self.ended_by_command
            && let Ok(state) = std::fs::read(self.dir.join(script::EXIT_STATE))
        {
            return Some(state);
        }
        let id = self.saved?;
        std::fs::read(self.dir.join(format!("s{}", id % 2))).ok()
    }

    /// Where the path of the last saved state file is kept up to date (also while a command runs).
    pub(crate) fn saved_path(&self) -> SavedPath {
        self.saved_path.clone()
    }

    /// Run one command to its end, streaming its output into `sink`.
    pub(crate) async fn run(
        &mut self,
        command: &CommandPlan<'_>,
        limits: RunLimits,
        sink: &mut SendSink<'_>,
        cancel: &CancellationToken,
    ) -> io::Result<RunEnd> {
        self.await_save(limits.ack_timeout).await?;
        let id = self.next_id;
        self.next_id += 1;
        let save_state = !(command.cd.is_none()
            && command.env.is_empty()
            && self
                .names
                .as_ref()
                .is_some_and(|names| cannot_change_state(command.text, names)));
        if save_state {
            self.save_pending = Some(id);
        }
        let out_path = self.dir.join(script::OUTPUT_FIFO);
        self.command_files
            .write(&self.dir, script::COMMAND_FILE, command.text.as_bytes())?;
        // A copy that also reports the last pipeline's stages (`script::command_line` picks the file).
        let status_line = script::status_line(self.kind, command.text, command.report_status);
        if let Some(line) = status_line {
            let copy = [command.text, line].concat();
            self.command_files
                .write(&self.dir, script::STATUS_COPY_FILE, copy.as_bytes())?;
        }
        // Removed unless this command ends with every writer gone (see `output_fifo_kept`).
        let mut cleanup = RemoveOnDrop(Some(out_path.clone()));
        // Dropped (closing our end) once the sink has seen enough; `eof` is then set too.
        let mut output = Some(open_output_fifo(
            &out_path,
            std::mem::take(&mut self.output_fifo_kept),
        )?);
        let mut stopped = false;
        let mut sigpipe_at: Option<tokio::time::Instant> = None;
        // Our own write end keeps the FIFO from reading as EOF before the shell opens it; it is dropped
        // when the shell reports the command done, so EOF then means every writer is gone.
        let mut holder = Some(
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&out_path)?,
        );
        let line = script::command_line(
            self.kind,
            &self.dir,
            id,
            command.cd,
            command.env,
            save_state,
            status_line.is_some(),
        );
        // If this future is dropped before the command ends, nothing of it may keep running: the whole
        // tree (shell included) is stopped, and the session notices the dead shell next time.
        let mut abandon = KillOnDrop {
            tree: self.tree.clone(),
            armed: true,
        };
        self.feed.send(&mut self.req, line.as_bytes()).await?;

        let start = limits.start;
        let deadline = tokio::time::Instant::from_std(start + limits.timeout);
        let ack_deadline = tokio::time::Instant::now() + limits.ack_timeout;
        let mut acked = false;
        let mut done: Option<(i32, PathBuf, Vec<i32>, bool)> = None;
        let mut status = RunStatus::Completed;
        let mut kill_at: Option<tokio::time::Instant> = None;
        let mut eof = false;
        // Reused between commands (zeroing 64 KiB per command showed in profiles); put back at the end.
        let mut buf = std::mem::take(&mut self.buf);
        if buf.len() != READ_CHUNK {
            buf = vec![0u8; READ_CHUNK];
        }
        let mut ctl = std::mem::take(&mut self.ctl);
        if ctl.len() != CTL_CHUNK {
            ctl = vec![0u8; CTL_CHUNK];
        }
        // One timer for the pick-up check and the timeout, armed once for the whole run and moved on
        // when it fires (each timer registered costs the runtime a wake-up; one made anew in every turn
        // of the loop would be registered anew each time).
        let timer = tokio::time::sleep_until(ack_deadline.min(deadline));
        tokio::pin!(timer);

        // Phase 1: until the shell reports the command done, or dies.
        loop {
            while let Some(record) = self.records.next_record() {
                match record {
                    Record::Ack { id: got } if got == id => acked = true,
                    Record::Done {
                        id: got,
                        status,
                        cwd,
                        stages,
                        pipefail,
                    } if got == id => done = Some((status, cwd, stages, pipefail)),
                    other => self.on_other_record(&other),
                }
            }
            if done.is_some() {
                break;
            }
            tokio::select! {
                read = read_open(output.as_mut(), &mut buf), if !eof => match read {
                    Ok(0) | Err(_) => eof = true,
                    Ok(n) => if sink.write(&buf[..n]).is_stop() {
                        eof = true;
                        stopped = output.take().is_some_and(|o| !close_for_sink(o, &mut buf, sink));
                        sigpipe_at = Some(tokio::time::Instant::now() + crate::pipe::SIGPIPE_AFTER);
                    },
                },
                () = sleep_until_opt(sigpipe_at), if sigpipe_at.is_some() => {
                    // The session's shell stays: only the stages it runs meet the closed pipe.
                    self.tree.sigpipe_output_holders(&out_path.to_string_lossy(), Some(self.pid));
                    sigpipe_at = Some(tokio::time::Instant::now() + crate::pipe::SIGPIPE_AFTER);
                }
                read = self.resp.read(&mut ctl) => match read {
                    Ok(0) | Err(_) => {}
                    Ok(n) => self.records.push(&ctl[..n]),
                },
                waited = self.child.wait() => {
                    self.exited = Some(waited?);
                    break;
                }
                () = &mut timer, if !acked || status == RunStatus::Completed => {
                    let now = tokio::time::Instant::now();
                    if !acked && now >= ack_deadline {
                        // bash does not acknowledge (a record would wake the engine for nothing on
                        // every command): it has picked the command up once it has taken the byte
                        // that releases its line.
                        if self.kind == ShellKind::Zsh || line_unread(&self.req) {
                            return Ok(RunEnd::Unresponsive);
                        }
                        acked = true;
                    }
                    if status == RunStatus::Completed && now >= deadline {
                        status = RunStatus::TimedOut;
                        self.tree.terminate();
                        kill_at = Some(now + limits.kill_grace);
                    }
                    // On to the next check that is still due.
                    let next = match (acked, status == RunStatus::Completed) {
                        (false, true) => ack_deadline.min(deadline),
                        (false, false) => ack_deadline,
                        (true, _) => deadline,
                    };
                    timer.as_mut().reset(next);
                }
                () = cancel.cancelled(), if status == RunStatus::Completed => {
                    status = RunStatus::Cancelled;
                    self.tree.terminate();
                    kill_at = Some(tokio::time::Instant::now() + limits.kill_grace);
                }
                () = sleep_until_opt(kill_at), if kill_at.is_some() => {
                    self.tree.kill_all();
                    kill_at = None;
                }
            }
        }
        holder.take();
        if self.exited.is_some() {
            // Remember escaped orphans while they are still attributable.
            let _ = self.tree.members();
        }

        // Phase 2: bounded drain of what the command's processes still write.
        let mut held_open = false;
        let mut writers_gone = false;
        if !eof && let Some(mut open) = output.take() {
            match drain(
                &mut open,
                &mut buf,
                sink,
                kill_at,
                limits.drain_idle,
                limits.drain_max,
            )
            .await
            {
                DrainEnd::Eof => {
                    eof = true;
                    writers_gone = true;
                }
                DrainEnd::Failed => eof = true,
                DrainEnd::HeldOpen => {
                    held_open = true;
                    output = Some(open);
                }
                DrainEnd::SinkStopped => {
                    eof = true;
                    stopped = !close_for_sink(open, &mut buf, sink);
                }
            }
        }

        // Phase 3: nothing the command started outlives it (the shell itself stays, unless it died).
        let shell_alive = self.exited.is_none();
        let killed = if shell_alive {
            self.kill_leftovers(!eof)
        } else {
            self.tree.kill_all()
        };
        let notices = if status == RunStatus::Completed {
            completion_notices(held_open, &killed)
        } else {
            Vec::new()
        };
        if let Some(open) = output.as_mut().filter(|_| held_open) {
            read_what_is_left(open, &mut buf, sink).await;
        }
        abandon.armed = false;
        if writers_gone && shell_alive {
            // Nothing holds the FIFO and nothing is left in it: the next command can use it as it is.
            cleanup.0 = None;
            self.output_fifo_kept = true;
        }
        // A command that may have changed the state returns once the state is saved, so a shell lost
        // right after it (or a concurrent fresh shell) still starts from it.
        if shell_alive {
            self.await_save(limits.ack_timeout).await?;
        }

        let mut outcome = ExecOutcome::new(status, start.elapsed());
        outcome.pid = Some(self.pid);
        outcome.tracking = Some(self.tree.tracking());
        outcome.notices = notices;
        outcome.output_stopped = stopped;
        match (&done, self.exited) {
            (Some((code, cwd, stages, pipefail)), _) => {
                outcome.exit_code = Some(*code);
                outcome.cwd_after = Some(cwd.clone());
                outcome.pipeline_status.clone_from(stages);
                outcome.pipefail = *pipefail;
            }
            (None, Some(st)) => {
                outcome.exit_code = st.code();
                outcome.signal = st.signal().map(signal_name);
                if status == RunStatus::Completed {
                    // The command ended the shell: its exit trap left the state and directory.
                    self.ended_by_command = true;
                    outcome.cwd_after = std::fs::read(self.dir.join(script::EXIT_CWD))
                        .ok()
                        .filter(|cwd| !cwd.is_empty())
                        .map(|cwd| PathBuf::from(std::ffi::OsString::from_vec(cwd)));
                }
            }
            (None, None) => {}
        }
        if status != RunStatus::Completed {
            outcome.exit_code = None;
            outcome.pipeline_status.clear();
        }
        self.buf = buf;
        self.ctl = ctl;
        Ok(RunEnd::Finished { outcome, shell_alive })
    }

    /// Kill what the finished command left running: descendants of the shell, and (when the output was
    /// held open or the engine adopted orphans) everything else attributed to the shell's tree.
    fn kill_leftovers(&self, output_held: bool) -> Vec<ProcInfo> {
        let shell = self.pid;
        let guard = self.tree.leader();
        // A shell has one thread, so one file lists its children (the full scan only as a fallback).
        let own = &self.own_children;
        let any_direct = tree::main_thread_children(shell)
            .unwrap_or_else(|| tree::children_of(shell))
            .into_iter()
            .any(|p| !own.contains(&p) && tree::read_proc(p).is_some_and(|i| !i.is_zombie()));
        if !any_direct && !output_held && !self.has_adopted_orphans() {
            return Vec::new();
        }
        let mut killed = Vec::new();
        for _ in 0..50 {
            let alive: Vec<ProcInfo> = self
                .tree
                .members()
                .into_iter()
                .filter(|p| p.pid != shell && p.pid != guard && !own.contains(&p.pid) && !p.is_zombie())
                .collect();
            if alive.is_empty() {
                break;
            }
            for p in alive {
                let _ = kill(Pid::from_raw(p.pid as i32), Signal::SIGKILL);
                if !killed.iter().any(|k: &ProcInfo| k.pid == p.pid) {
                    killed.push(p);
                }
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        self.tree.reap_adopted();
        killed
    }

    /// Whether the engine has adopted children other than its direct spawns: one `/proc` file for
    /// the list, then a look at each live child in it but this shell's guard. The engine's own spawns
    /// are in that list only when it starts runs on its main thread (`shellgate rpc` and `mcp` do not).
    fn has_adopted_orphans(&self) -> bool {
        let Some(marker) = self.tree.marker() else {
            return false;
        };
        let engine = std::process::id();
        let guard = self.tree.leader();
        // Orphans re-parented to the engine are children of its main thread (see
        // `tree::main_thread_children`); the engine's other threads only have its own spawns. An
        // orphan may lead its own session (`setsid`), so only the marker tells: the engine's own
        // spawns (guards, sharing its memory) show the engine's environment, which lacks this one.
        let children = tree::main_thread_children(engine).unwrap_or_else(|| tree::children_of(engine));
        children
            .into_iter()
            .filter(|&p| p != guard)
            .any(|p| tree::read_proc(p).is_some_and(|i| !i.is_zombie() && tree::has_run_marker(&i, marker)))
    }

    /// Stop the shell and everything it started.
    pub(crate) fn stop(&mut self) {
        self.tree.kill_all();
        let _ = self.child.start_kill();
        self.exited.get_or_insert(ExitStatus::from_raw(libc::SIGKILL));
    }
}

impl Drop for ShellProcess {
    fn drop(&mut self) {
        self.tree.kill_all();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The output FIFO at `path`, opened for reading: the kept one when `kept` and it is still a FIFO,
/// else one made anew (in place of whatever is there).
fn open_output_fifo(path: &Path, kept: bool) -> io::Result<pipe::Receiver> {
    if kept && let Ok(fifo) = pipe::OpenOptions::new().open_receiver(path) {
        return Ok(fifo);
    }
    // Usually nothing is there (a shell's first command, or the last command's FIFO was removed).
    if let Err(e) = std::fs::remove_file(path)
        && e.kind() == io::ErrorKind::IsADirectory
    {
        let _ = std::fs::remove_dir_all(path);
    }
    mkfifo(path, Mode::S_IRUSR | Mode::S_IWUSR).map_err(io::Error::from)?;
    pipe::OpenOptions::new().open_receiver(path)
}

/// Whether the request FIFO still holds bytes the shell has not read (the engine holds it read-write,
/// so it can ask the FIFO itself).
fn line_unread(req: &pipe::Sender) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let mut fds = [PollFd::new(req.as_fd(), PollFlags::POLLIN)];
    // When the FIFO cannot be asked, the shell is treated as not responding (the old rule).
    poll(&mut fds, PollTimeout::ZERO).map_or(true, |_| {
        fds[0].revents().is_some_and(|r| r.contains(PollFlags::POLLIN))
    })
}

/// Stops a process tree when dropped while armed.
struct KillOnDrop {
    tree: ProcessTree,
    armed: bool,
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.tree.kill_all();
        }
    }
}

/// The files a shell sources commands from, each opened once and rewritten in place for every command
/// (creating and removing them per command cost a third of the engine's file-system time). The shell
/// opens a file anew for each command and reads it whole before the command starts, and it reads it
/// only after the engine has written it and then the command's line.
#[derive(Default)]
struct CommandFiles {
    open: Vec<(&'static str, std::fs::File)>,
}

impl CommandFiles {
    fn write(&mut self, dir: &Path, name: &'static str, text: &[u8]) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        let i = if let Some(i) = self.open.iter().position(|(n, _)| *n == name) {
            i
        } else {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(dir.join(name))?;
            self.open.push((name, file));
            self.open.len() - 1
        };
        let file = &self.open[i].1;
        file.write_all_at(text, 0)?;
        file.set_len(text.len() as u64)
    }
}

/// Removes a file when dropped (a command's output FIFO), unless disarmed by taking its path.
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A new directory only the engine's user can enter, under `parent`.
pub(crate) fn private_dir(parent: &Path) -> io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = parent.join(format!("shellgate-{}-{n}-{nanos:x}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
}
