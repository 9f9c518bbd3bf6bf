//! [`SessionManager`]: sessions by key, concurrency, respawn, idle reaping, listing and closing.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use super::process::{CommandPlan, RunEnd, RunLimits, SavedPath, ShellProcess, SpawnPlan, private_dir};
use super::script::{ShellKind, is_valid_name};
use super::snapshot::{self, Snapshot};
use crate::cwd::{fallback_cwd, resolve_cwd};
use crate::tree::ProcessTree;
use crate::{ExecOutcome, RunStatus, SendSink, ShellConfig, find_on_path};

/// What identifies a session (SPEC E-10): its name, shell configuration, snapshot use and base environment.
///
/// Two calls with equal keys share one live shell; any difference gives an independent session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionKey {
    /// The session's name (what [`SessionManager::close`] and [`SessionInfo::name`] use).
    pub name: String,
    /// Shell program, login flag and command prefix.
    pub shell: ShellConfig,
    /// Source the user's rc snapshot at session start.
    pub snapshot: bool,
    /// Variables set in the shell's environment when it starts (on top of the engine's own and the
    /// non-interactive set).
    pub env: BTreeMap<String, String>,
    /// Wrappers of this session's shell alone (a sandbox chosen for it), applied inside
    /// [`SessionOptions::layers`] at its start and every respawn; keys compare them by id. The rc
    /// snapshot is captured with [`SessionOptions::layers`] only.
    pub layers: crate::NamedLayers,
}

impl std::hash::Hash for SessionKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // `ShellConfig` has no `Hash`; hashing a subset of the fields `Eq` compares stays consistent.
        self.name.hash(state);
        self.shell.shell.hash(state);
        self.shell.login.hash(state);
        self.shell.prefix.hash(state);
        self.snapshot.hash(state);
        self.env.hash(state);
        self.layers.hash(state);
    }
}

impl SessionKey {
    /// A key for session `name` with the default shell, the snapshot on and no extra environment.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            shell: ShellConfig::default(),
            snapshot: true,
            env: BTreeMap::new(),
            layers: crate::NamedLayers::default(),
        }
    }

    /// Use `shell` as the session's shell program.
    #[must_use]
    pub fn with_shell(mut self, shell: impl Into<PathBuf>) -> Self {
        self.shell.shell = Some(shell.into());
        self
    }

    /// Set one variable of the base environment.
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }
}

/// One command for [`SessionManager::run_command`].
#[derive(Debug, Clone, Copy)]
pub struct SessionCommand<'a> {
    /// The command text.
    pub text: &'a str,
    /// Change the session's directory to this first (relative paths resolve against the session's).
    pub cwd: Option<&'a Path>,
    /// Variables exported for this command only (see [`SessionManager::run`]).
    pub env: &'a BTreeMap<String, String>,
    /// Limit, used as given.
    pub timeout: Duration,
    /// Report the command's status and `pipefail` even without a pipe in it (see
    /// [`crate::shell_spec_reporting_status`]).
    pub report_status: bool,
}

/// Settings of a [`SessionManager`].
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Sessions unused for this long are closed (default 30 min).
    pub idle_timeout: Duration,
    /// Time between SIGTERM and SIGKILL when a command is stopped (default 2 s).
    pub kill_grace: Duration,
    /// After a command ends, stop reading once no output arrived for this long (default 250 ms).
    pub drain_idle: Duration,
    /// After a command ends, stop reading after this long in any case (default 2 s).
    pub drain_max: Duration,
    /// A shell that does not start, or does not pick up a command, within this time is restarted
    /// (default 5 s).
    pub respond_timeout: Duration,
    /// Limit for running the user's rc file when capturing the snapshot (default 5 s).
    pub snapshot_timeout: Duration,
    /// Directory for the sessions' private FIFOs and state files; default `$XDG_RUNTIME_DIR`, else
    /// `/dev/shm` (memory-backed, which keeps the per-command state save cheap), else the temp dir.
    pub runtime_dir: Option<PathBuf>,
    /// Wrappers applied to every session shell's launch spec, at its start and at every respawn. The
    /// shell reads its protocol from FIFOs in `runtime_dir`, so a wrapper must keep that directory
    /// reachable (a sandbox helper does; a remote host does not).
    pub layers: crate::LayerStack,
    /// Inherited variables removed from every session shell's environment (the engine's secrets),
    /// as [`crate::LaunchSpec::env_remove`] does for one-shot runs; a session's own `env` still sets
    /// them.
    pub env_remove: Vec<String>,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            idle_timeout: Duration::from_secs(30 * 60),
            kill_grace: Duration::from_secs(2),
            drain_idle: Duration::from_millis(250),
            drain_max: Duration::from_secs(2),
            respond_timeout: Duration::from_secs(5),
            snapshot_timeout: Duration::from_secs(5),
            runtime_dir: None,
            layers: crate::LayerStack::default(),
            env_remove: Vec::new(),
        }
    }
}

/// What [`SessionManager::list`] reports about one session.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SessionInfo {
    /// The session's name.
    pub name: String,
    /// Its shell program.
    pub shell: PathBuf,
    /// Pid of the live shell, if one is running.
    pub pid: Option<u32>,
    /// Working directory after the last command.
    pub cwd: PathBuf,
    /// Whether a command is running in it now.
    pub busy: bool,
    /// Time since it was last used.
    pub idle_for: Duration,
    /// Commands run in it so far.
    pub commands: u64,
    /// How often its shell was restarted from saved state.
    pub restarts: u64,
}

/// Persistent shell sessions (SPEC E-10, E-11). Cheap to clone; clones share the sessions.
///
/// Dropping the last clone (or calling [`SessionManager::shutdown`]) stops every session shell.
#[derive(Clone)]
pub struct SessionManager {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SessionManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionManager")
            .field("sessions", &self.list().len())
            .finish()
    }
}

/// Snapshots are captured once per shell program and base environment.
type SnapshotKey = (PathBuf, BTreeMap<String, String>);

struct Inner {
    options: SessionOptions,
    dir: PathBuf,
    sessions: Mutex<HashMap<SessionKey, Arc<Slot>>>,
    snapshots: Mutex<HashMap<SnapshotKey, Arc<OnceCell<Snapshot>>>>,
}

/// One session: the live shell (behind an async lock: one command at a time) and what others may read
/// while it is busy.
struct Slot {
    name: String,
    program: PathBuf,
    kind: ShellKind,
    core: tokio::sync::Mutex<Core>,
    shared: Mutex<Shared>,
}

#[derive(Default)]
struct Core {
    shell: Option<ShellProcess>,
    /// The state the next shell starts from when the current one is gone.
    state: Option<Arc<Vec<u8>>>,
    /// Notice for the next command (the shell was lost and will be restarted).
    restart_notice: Option<String>,
    started_once: bool,
}

struct Shared {
    cwd: PathBuf,
    pid: Option<u32>,
    tree: Option<ProcessTree>,
    busy: bool,
    last_used: Instant,
    commands: u64,
    restarts: u64,
    state_file: Option<SavedPath>,
    state: Option<Arc<Vec<u8>>>,
    closed: bool,
}

impl Shared {
    /// The session's last confirmed save: the file its live shell last reported (the shell writes the
    /// next one to the other file), else the state kept from an earlier shell.
    fn last_saved_state(&self) -> Option<Arc<Vec<u8>>> {
        self.state_file
            .as_ref()
            .and_then(|p| lock(p).clone())
            .and_then(|p| std::fs::read(p).ok())
            .map(Arc::new)
            .or_else(|| self.state.clone())
    }
}

impl Default for SessionManager {
    fn default() -> Self {
        Self::new(SessionOptions::default())
    }
}

impl SessionManager {
    /// A manager with `options`. Inside a tokio runtime it also starts a task that closes idle sessions;
    /// elsewhere idle sessions are closed on the next call.
    pub fn new(options: SessionOptions) -> Self {
        let base = options.runtime_dir.clone().unwrap_or_else(default_runtime_dir);
        let dir = private_dir(&base).unwrap_or_else(|_| base.clone());
        let inner = Arc::new(Inner {
            options,
            dir,
            sessions: Mutex::default(),
            snapshots: Mutex::default(),
        });
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let weak = Arc::downgrade(&inner);
            let period =
                (inner.options.idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(60));
            handle.spawn(reap_idle_loop(weak, period));
        }
        Self { inner }
    }

    /// The private directory holding the sessions' FIFOs and state files (under
    /// [`SessionOptions::runtime_dir`]): a sandbox around a session shell must keep it writable.
    pub fn runtime_dir(&self) -> &Path {
        &self.inner.dir
    }

    /// Run `command` in the session `key`, streaming its merged output into `sink`.
    ///
    /// `cwd` (relative paths resolve against the session's directory) changes the session's directory
    /// before the command; `None` keeps it. `env` is exported for this command only: afterwards each of
    /// its variables is as it was before (unset, or its old value and export attribute) — unless the
    /// command changed it (assigned a different value, unset or un-exported it), which then stays. The
    /// outcome's `cwd_after` is the session's directory afterwards. A busy session does not wait: the
    /// command runs at once in a fresh shell started from the session's current state.
    #[allow(clippy::too_many_arguments)]
    pub async fn run(
        &self,
        key: &SessionKey,
        command: &str,
        cwd: Option<&Path>,
        env: &BTreeMap<String, String>,
        timeout: Duration,
        sink: &mut SendSink<'_>,
        cancel: CancellationToken,
    ) -> ExecOutcome {
        let command = SessionCommand {
            text: command,
            cwd,
            env,
            timeout,
            report_status: false,
        };
        self.run_command(key, &command, sink, cancel).await
    }

    /// [`SessionManager::run`] with the command described by one value.
    pub async fn run_command(
        &self,
        key: &SessionKey,
        command: &SessionCommand<'_>,
        sink: &mut SendSink<'_>,
        cancel: CancellationToken,
    ) -> ExecOutcome {
        let SessionCommand {
            text: command,
            cwd,
            env,
            timeout,
            report_status,
        } = *command;
        let start = Instant::now();
        self.reap_idle();
        let fail = |msg: String| {
            let mut o = ExecOutcome::failed_to_start(msg, start.elapsed());
            o.cwd_after = None;
            o
        };
        if cancel.is_cancelled() {
            let mut o = ExecOutcome::new(RunStatus::Cancelled, start.elapsed());
            o.notices
                .push("The command was cancelled before it started.".into());
            return o;
        }
        if command.contains('\0') {
            return fail("The command contains a NUL byte, which a shell cannot run.".into());
        }
        let slot = match self.slot(key) {
            Ok(slot) => slot,
            Err(msg) => return fail(msg),
        };
        let mut notices = Vec::new();
        let mut exports: Vec<(&str, &str)> = Vec::new();
        for (k, v) in env {
            if is_valid_name(k) && !v.contains('\0') {
                exports.push((k, v));
            } else {
                notices.push(format!("Variable {k:?} was not set: invalid name or value."));
            }
        }
        let session_cwd = lock(&slot.shared).cwd.clone();
        let (base_cwd, fallback_notice) = fallback_cwd(&session_cwd);
        let cd = match cwd {
            // Changing to the directory the shell is already in is skipped: it would only cost a save.
            Some(p) => match resolve_cwd(&base_cwd, Some(p)) {
                Ok(dir) if dir == session_cwd => None,
                Ok(dir) => Some(dir),
                Err(e) => return fail(e.to_string()),
            },
            None => fallback_notice.is_some().then(|| base_cwd.clone()),
        };
        notices.extend(fallback_notice);
        let text = match &key.shell.prefix {
            Some(prefix) if !prefix.trim().is_empty() => format!("{prefix} {command}"),
            _ => command.to_owned(),
        };
        let plan = CommandPlan {
            text: &text,
            cd: cd.as_deref(),
            env: &exports,
            report_status,
        };
        let limits = RunLimits {
            start,
            timeout,
            kill_grace: self.inner.options.kill_grace,
            drain_idle: self.inner.options.drain_idle,
            drain_max: self.inner.options.drain_max,
            ack_timeout: self.inner.options.respond_timeout,
        };
        let spawn_cwd = cd.clone().unwrap_or(base_cwd);

        let mut outcome = match slot.core.try_lock() {
            Ok(mut core) => {
                lock(&slot.shared).busy = true;
                let busy = BusyFlag(&slot.shared);
                let outcome = self
                    .run_owned(&slot, &mut core, key, &plan, &spawn_cwd, limits, sink, &cancel)
                    .await;
                drop(busy);
                let shared = lock(&slot.shared);
                if shared.closed
                    && let Some(mut shell) = core.shell.take()
                {
                    shell.stop();
                }
                outcome
            }
            Err(_) => {
                self.run_one_shot(&slot, key, &plan, &spawn_cwd, limits, sink, &cancel)
                    .await
            }
        };
        {
            let mut shared = lock(&slot.shared);
            shared.last_used = Instant::now();
            shared.commands += 1;
        }
        notices.append(&mut outcome.notices);
        outcome.notices = notices;
        outcome.duration = start.elapsed();
        outcome
    }

    /// Run in the session's own shell (the caller holds its lock).
    #[allow(clippy::too_many_arguments)]
    async fn run_owned(
        &self,
        slot: &Slot,
        core: &mut Core,
        key: &SessionKey,
        plan: &CommandPlan<'_>,
        spawn_cwd: &Path,
        limits: RunLimits,
        sink: &mut SendSink<'_>,
        cancel: &CancellationToken,
    ) -> ExecOutcome {
        let mut notices = Vec::new();
        if core.shell.as_mut().is_some_and(ShellProcess::has_exited) {
            let mut shell = core.shell.take().expect("checked above");
            core.state = shell.saved_state().map(Arc::new).or(core.state.take());
            shell.stop();
            core.restart_notice
                .get_or_insert_with(|| restart_notice(&slot.name, "its shell had exited"));
        }
        let mut attempts = 0;
        loop {
            attempts += 1;
            if core.shell.is_none() {
                match self
                    .spawn_for(
                        slot,
                        key,
                        core.state.as_deref().map(Vec::as_slice),
                        spawn_cwd,
                        !core.started_once,
                    )
                    .await
                {
                    Ok((shell, snap_notice)) => {
                        notices.extend(snap_notice);
                        if core.started_once {
                            lock(&slot.shared).restarts += 1;
                        }
                        notices.extend(core.restart_notice.take());
                        core.started_once = true;
                        let mut shared = lock(&slot.shared);
                        shared.pid = Some(shell.pid());
                        shared.state_file = Some(shell.saved_path());
                        shared.tree = Some(shell.tree().clone());
                        drop(shared);
                        core.shell = Some(shell);
                    }
                    Err(e) => {
                        let mut o = ExecOutcome::failed_to_start(
                            format!("cannot start the session shell {}: {e}", slot.program.display()),
                            limits.start.elapsed(),
                        );
                        o.notices = notices;
                        return o;
                    }
                }
            }
            let shell = core.shell.as_mut().expect("spawned above");
            let end = shell.run(plan, limits, sink, cancel).await;
            match end {
                Ok(RunEnd::Finished {
                    mut outcome,
                    shell_alive,
                }) => {
                    let mut shared = lock(&slot.shared);
                    if let Some(cwd) = &outcome.cwd_after {
                        shared.cwd.clone_from(cwd);
                    } else {
                        outcome.cwd_after = Some(shared.cwd.clone());
                    }
                    if shell_alive {
                        shared.state.clone_from(&core.state);
                    } else {
                        let mut dead = core.shell.take().expect("present");
                        core.state = dead.saved_state().map(Arc::new).or(core.state.take());
                        dead.stop();
                        shared.state_file = None;
                        shared.state.clone_from(&core.state);
                        shared.pid = None;
                        shared.tree = None;
                        let why = match outcome.status {
                            RunStatus::TimedOut => "its command timed out",
                            RunStatus::Cancelled => "its command was cancelled",
                            _ => "its shell exited",
                        };
                        let note = restart_notice(&slot.name, why);
                        outcome.notices.push(format!(
                            "The shell of session '{}' ended ({why}); the next command starts a new shell from the last saved state.",
                            slot.name
                        ));
                        core.restart_notice = Some(note);
                    }
                    notices.append(&mut outcome.notices);
                    outcome.notices = notices;
                    return outcome;
                }
                Ok(RunEnd::Unresponsive) | Err(_) if attempts < 2 => {
                    let mut dead = core.shell.take().expect("present");
                    core.state = dead.saved_state().map(Arc::new).or(core.state.take());
                    dead.stop();
                    notices.push(restart_notice(&slot.name, "its shell stopped responding"));
                }
                Ok(RunEnd::Unresponsive) | Err(_) => {
                    if let Some(mut dead) = core.shell.take() {
                        core.state = dead.saved_state().map(Arc::new).or(core.state.take());
                        dead.stop();
                    }
                    let mut o = ExecOutcome::failed_to_start(
                        format!("the shell of session '{}' does not respond", slot.name),
                        limits.start.elapsed(),
                    );
                    o.notices = notices;
                    return o;
                }
            }
        }
    }

    /// Run in a fresh shell started from the busy session's current state; the shell is discarded after.
    #[allow(clippy::too_many_arguments)]
    async fn run_one_shot(
        &self,
        slot: &Slot,
        key: &SessionKey,
        plan: &CommandPlan<'_>,
        spawn_cwd: &Path,
        limits: RunLimits,
        sink: &mut SendSink<'_>,
        cancel: &CancellationToken,
    ) -> ExecOutcome {
        let state = lock(&slot.shared).last_saved_state();
        let spawned = self
            .spawn_for(slot, key, state.as_deref().map(Vec::as_slice), spawn_cwd, true)
            .await;
        let mut shell = match spawned {
            Ok((shell, _)) => shell,
            Err(e) => {
                return ExecOutcome::failed_to_start(
                    format!("cannot start a shell for busy session '{}': {e}", slot.name),
                    limits.start.elapsed(),
                );
            }
        };
        let mut outcome = match shell.run(plan, limits, sink, cancel).await {
            Ok(RunEnd::Finished { outcome, .. }) => outcome,
            Ok(RunEnd::Unresponsive) => {
                ExecOutcome::failed_to_start("the fresh shell did not respond", limits.start.elapsed())
            }
            Err(e) => {
                ExecOutcome::failed_to_start(format!("session shell failed: {e}"), limits.start.elapsed())
            }
        };
        shell.stop();
        if outcome.cwd_after.is_none() {
            outcome.cwd_after = Some(spawn_cwd.to_path_buf());
        }
        outcome.notices.insert(
            0,
            format!(
                "Session '{}' was busy; the command ran in a fresh shell started from its current state.",
                slot.name
            ),
        );
        outcome
    }

    async fn spawn_for(
        &self,
        slot: &Slot,
        key: &SessionKey,
        state: Option<&[u8]>,
        cwd: &Path,
        want_snapshot_notice: bool,
    ) -> std::io::Result<(ShellProcess, Option<String>)> {
        let snap = if key.snapshot && state.is_none() {
            Some(self.snapshot(&slot.program, slot.kind, &key.env).await)
        } else {
            None
        };
        let layers = key.layers.stack.then(&self.inner.options.layers);
        let plan = SpawnPlan {
            program: &slot.program,
            kind: slot.kind,
            login: key.shell.login,
            env: &key.env,
            env_remove: &self.inner.options.env_remove,
            cwd,
            snapshot: snap.as_ref().and_then(|s| s.path.as_deref()),
            state,
            parent_dir: &self.inner.dir,
            ready_timeout: self.inner.options.respond_timeout,
            layers: &layers,
        };
        let shell = ShellProcess::spawn(&plan).await?;
        let notice = if want_snapshot_notice {
            snap.and_then(|s| s.notice)
        } else {
            None
        };
        Ok((shell, notice))
    }

    async fn snapshot(&self, program: &Path, kind: ShellKind, env: &BTreeMap<String, String>) -> Snapshot {
        let cell = {
            let mut map = lock(&self.inner.snapshots);
            map.entry((program.to_path_buf(), env.clone()))
                .or_default()
                .clone()
        };
        cell.get_or_init(|| {
            snapshot::capture(
                program,
                kind,
                env,
                &self.inner.dir,
                self.inner.options.snapshot_timeout,
                &self.inner.options.layers,
            )
        })
        .await
        .clone()
    }

    fn slot(&self, key: &SessionKey) -> Result<Arc<Slot>, String> {
        let mut map = lock(&self.inner.sessions);
        if let Some(slot) = map.get(key) {
            return Ok(slot.clone());
        }
        let (program, kind) = session_shell(&key.shell)?;
        let slot = Arc::new(Slot {
            name: key.name.clone(),
            program,
            kind,
            core: tokio::sync::Mutex::default(),
            shared: Mutex::new(Shared {
                cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
                pid: None,
                tree: None,
                busy: false,
                last_used: Instant::now(),
                commands: 0,
                restarts: 0,
                state_file: None,
                state: None,
                closed: false,
            }),
        });
        map.insert(key.clone(), slot.clone());
        Ok(slot)
    }

    /// The session named `name`, as [`SessionManager::list`] reports it.
    pub fn info(&self, name: &str) -> Option<SessionInfo> {
        self.list().into_iter().find(|s| s.name == name)
    }

    /// Every open session.
    pub fn list(&self) -> Vec<SessionInfo> {
        self.reap_idle();
        let map = lock(&self.inner.sessions);
        let mut out: Vec<SessionInfo> = map
            .values()
            .map(|slot| {
                let shared = lock(&slot.shared);
                SessionInfo {
                    name: slot.name.clone(),
                    shell: slot.program.clone(),
                    pid: shared.pid,
                    cwd: shared.cwd.clone(),
                    busy: shared.busy,
                    idle_for: shared.last_used.elapsed(),
                    commands: shared.commands,
                    restarts: shared.restarts,
                }
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Close every session named `name` (stopping its shell and anything running in it). Returns whether
    /// there was one.
    pub fn close(&self, name: &str) -> bool {
        let removed: Vec<Arc<Slot>> = {
            let mut map = lock(&self.inner.sessions);
            let keys: Vec<SessionKey> = map.keys().filter(|k| k.name == name).cloned().collect();
            keys.iter().filter_map(|k| map.remove(k)).collect()
        };
        for slot in &removed {
            close_slot(slot);
        }
        !removed.is_empty()
    }

    /// Close sessions unused for longer than the idle timeout; returns how many were closed.
    pub fn reap_idle(&self) -> usize {
        reap_idle(&self.inner)
    }

    /// Close every session and remove the snapshot files.
    pub fn shutdown(&self) {
        let removed: Vec<Arc<Slot>> = lock(&self.inner.sessions).drain().map(|(_, v)| v).collect();
        for slot in &removed {
            close_slot(slot);
        }
        let cells: Vec<Arc<OnceCell<Snapshot>>> =
            lock(&self.inner.snapshots).drain().map(|(_, v)| v).collect();
        for cell in cells {
            if let Some(path) = cell.get().and_then(|s| s.path.as_ref()) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Clears a session's busy flag when dropped (also when the call is abandoned).
struct BusyFlag<'a>(&'a Mutex<Shared>);

impl Drop for BusyFlag<'_> {
    fn drop(&mut self) {
        lock(self.0).busy = false;
    }
}

fn close_slot(slot: &Slot) {
    let mut shared = lock(&slot.shared);
    shared.closed = true;
    if let Ok(mut core) = slot.core.try_lock() {
        if let Some(mut shell) = core.shell.take() {
            shell.stop();
        }
    } else if let Some(tree) = &shared.tree {
        // A command is running: stop the whole tree; the running call sees the shell die and returns.
        tree.kill_all();
    }
    shared.pid = None;
}

fn reap_idle(inner: &Inner) -> usize {
    let limit = inner.options.idle_timeout;
    let removed: Vec<Arc<Slot>> = {
        let mut map = lock(&inner.sessions);
        let idle: Vec<SessionKey> = map
            .iter()
            .filter(|(_, slot)| {
                let shared = lock(&slot.shared);
                !shared.busy && shared.last_used.elapsed() >= limit
            })
            .map(|(k, _)| k.clone())
            .collect();
        idle.iter().filter_map(|k| map.remove(k)).collect()
    };
    for slot in &removed {
        close_slot(slot);
    }
    removed.len()
}

async fn reap_idle_loop(inner: Weak<Inner>, period: Duration) {
    loop {
        tokio::time::sleep(period).await;
        let Some(inner) = inner.upgrade() else { return };
        reap_idle(&inner);
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let slots: Vec<Arc<Slot>> = self
            .sessions
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, v)| v)
            .collect();
        for slot in &slots {
            close_slot(slot);
        }
        drop(slots);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn restart_notice(name: &str, why: &str) -> String {
    format!(
        "Session '{name}' was restarted ({why}); its last saved state (directory, variables, functions, \
         aliases, options) was restored."
    )
}

/// The program and family for sessions with `config`: bash or zsh as configured, else bash on `PATH`.
fn session_shell(config: &ShellConfig) -> Result<(PathBuf, ShellKind), String> {
    let program = config.resolve_shell();
    if let Some(kind) = ShellKind::of(&program) {
        return Ok((program, kind));
    }
    if config.shell.is_none()
        && let Some(bash) = find_on_path("bash")
    {
        return Ok((bash, ShellKind::Bash));
    }
    Err(format!(
        "Persistent sessions need bash or zsh; {} is neither.",
        program.display()
    ))
}

fn default_runtime_dir() -> PathBuf {
    let candidates = [
        std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
        Some(PathBuf::from("/dev/shm")),
    ];
    for dir in candidates.into_iter().flatten() {
        if dir.is_dir()
            && dir.is_absolute()
            && nix::unistd::access(&dir, nix::unistd::AccessFlags::W_OK).is_ok()
        {
            return dir;
        }
    }
    std::env::temp_dir()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[path = "restore.rs"]
pub(super) mod restore;
