//! Persistent sessions on hosts (SPEC X-3, E-10 on another machine): one shell per session over one
//! client channel, so a command costs about one round trip; its state (directory, exported
//! variables, functions, aliases) is saved on the host after each command and restored by the next
//! shell when one ends (`exit`, `set -e`, a stop).

mod framing;
mod shell;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use shellgate_executor::{CancellationToken, ExecOutcome, LayerStack, SendSink, SessionCommand};

use self::shell::{RemoteShell, Restore};
use crate::RemoteHost;

/// Settings of [`RemoteSessions`].
#[derive(Debug, Clone)]
pub struct RemoteSessionOptions {
    /// Time between SIGTERM and SIGKILL when a command is stopped.
    pub kill_grace: Duration,
    /// A shell that does not report ready within this time fails the command.
    pub ready_timeout: Duration,
    /// Wrappers of the local client's launch spec.
    pub layers: LayerStack,
    /// A session unused for this long is closed (its shell ended, its saved state removed).
    pub idle_timeout: Duration,
    /// Variables every session's shell exports when it starts (what a command adds per call costs
    /// a round of parsing on every call).
    pub env: std::collections::BTreeMap<String, String>,
}

impl Default for RemoteSessionOptions {
    fn default() -> Self {
        Self {
            kill_grace: Duration::from_secs(2),
            ready_timeout: Duration::from_secs(20),
            layers: LayerStack::new(),
            idle_timeout: Duration::from_secs(30 * 60),
            env: std::collections::BTreeMap::new(),
        }
    }
}

impl RemoteSessionOptions {
    /// Options whose shells run non-interactively as a local client run does
    /// ([`shellgate_executor::non_interactive`]: no pager, no prompt for credentials, …), stopped
    /// with `kill_grace`, launched through `layers`, closed after `idle_timeout` unused.
    pub fn non_interactive(kill_grace: Duration, layers: LayerStack, idle_timeout: Duration) -> Self {
        let plain = shellgate_executor::LaunchSpec::new("", Vec::<String>::new(), "");
        Self {
            kill_grace,
            layers,
            idle_timeout,
            env: shellgate_executor::non_interactive(plain).env,
            ..Self::default()
        }
    }
}

/// One session: its shell (while alive) and where its state is kept on the host.
struct Slot {
    shell: Option<RemoteShell>,
    /// The state directory on the host.
    state_dir: String,
    /// Where the next shell starts from.
    restore: Restore,
    /// When a command last ended here.
    last_used: std::time::Instant,
    /// Commands run so far.
    commands: u64,
}

type SlotRef = Arc<tokio::sync::Mutex<Slot>>;

/// Sessions by (host, name), each with its host.
type Slots = HashMap<(String, String), (RemoteHost, SlotRef)>;

/// The persistent sessions on every host, by host and session name.
#[derive(Clone, Default)]
pub struct RemoteSessions {
    options: Arc<RemoteSessionOptions>,
    slots: Arc<Mutex<Slots>>,
}

impl std::fmt::Debug for RemoteSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSessions").finish_non_exhaustive()
    }
}

/// A session's directory, as last reported by its shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSessionInfo {
    /// The host.
    pub host: String,
    /// The session's name.
    pub name: String,
    /// Its directory on the host (empty before its first shell).
    pub cwd: String,
    /// Whether a command is running in it now.
    pub busy: bool,
    /// Time since a command last ended in it.
    pub idle_for: Duration,
    /// Commands run in it so far (`0` while the first runs).
    pub commands: u64,
}

impl RemoteSessions {
    /// A pool with `options`.
    pub fn new(options: RemoteSessionOptions) -> Self {
        Self {
            options: Arc::new(options),
            slots: Arc::default(),
        }
    }

    fn slot(&self, host: &RemoteHost, name: &str) -> SlotRef {
        let key = (host.target().to_string(), name.to_owned());
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let (_, slot) = slots.entry(key).or_insert_with(|| {
            let state_dir = format!("${{TMPDIR:-/tmp}}/.shellgate-{}", crate::script::new_marker());
            (
                host.clone(),
                Arc::new(tokio::sync::Mutex::new(Slot {
                    shell: None,
                    state_dir,
                    restore: Restore::Fresh,
                    last_used: std::time::Instant::now(),
                    commands: 0,
                })),
            )
        });
        Arc::clone(slot)
    }

    /// Run `command` in session `name` on `host`, starting its shell when needed.
    pub async fn run_command(
        &self,
        host: &RemoteHost,
        name: &str,
        command: &SessionCommand<'_>,
        sink: &mut SendSink<'_>,
        cancel: CancellationToken,
    ) -> ExecOutcome {
        let start = std::time::Instant::now();
        self.close_idle().await;
        let slot = self.slot(host, name);
        let mut slot = slot.lock().await;
        if slot.shell.as_mut().is_some_and(RemoteShell::has_exited) {
            slot.shell = None;
        }
        if slot.shell.is_none() {
            if let Err(e) = host.ensure_reachable().await {
                return not_started(e.to_string(), start);
            }
            // The state directory is expanded by the host's shell (`$TMPDIR`).
            let dir = slot.state_dir.clone();
            match RemoteShell::spawn(
                host,
                &self.options.layers,
                &self.options.env,
                &dir,
                slot.restore,
                self.options.ready_timeout,
            )
            .await
            {
                Ok(shell) => slot.shell = Some(shell),
                Err(e) => return not_started(e.to_string(), start),
            }
        }
        let Some(shell) = slot.shell.as_mut() else {
            return not_started("no shell".into(), start);
        };
        let (outcome, alive) = shell
            .run(host, command, self.options.kill_grace, sink, &cancel)
            .await;
        let last_saved = shell.last_saved;
        if !alive {
            slot.shell = None;
            // A shell that ended by its command's doing saved its state on the way out.
            slot.restore = if outcome.status == shellgate_executor::RunStatus::Completed {
                Restore::AtExit
            } else {
                last_saved.map_or(Restore::Fresh, Restore::After)
            };
        } else if let Some(id) = last_saved {
            slot.restore = Restore::After(id);
        }
        slot.last_used = std::time::Instant::now();
        slot.commands += 1;
        outcome
    }

    /// Close the sessions unused for longer than the idle timeout (those not running a command).
    async fn close_idle(&self) {
        let limit = self.options.idle_timeout;
        let idle: Vec<(RemoteHost, SlotRef)> = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            let keys: Vec<(String, String)> = slots
                .iter()
                .filter(|(_, (_, slot))| slot.try_lock().is_ok_and(|s| s.last_used.elapsed() > limit))
                .map(|(key, _)| key.clone())
                .collect();
            keys.iter().filter_map(|key| slots.remove(key)).collect()
        };
        for (host, slot) in idle {
            let mut slot = slot.lock().await;
            if let Some(mut shell) = slot.shell.take() {
                shell.end_shell(&host, Some(&slot.state_dir)).await;
            }
        }
    }

    /// The directory of the live session `name` on `host` (the host as its target names it).
    pub fn cwd_of(&self, host: &str, name: &str) -> Option<String> {
        self.list()
            .into_iter()
            .find(|s| s.host == host && s.name == name && !s.cwd.is_empty())
            .map(|s| s.cwd)
    }

    /// The sessions with their directories.
    pub fn list(&self) -> Vec<RemoteSessionInfo> {
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        slots
            .iter()
            .map(|((host, name), (_, slot))| {
                let idle = slot.try_lock().ok();
                RemoteSessionInfo {
                    host: host.clone(),
                    name: name.clone(),
                    cwd: idle
                        .as_ref()
                        .and_then(|s| s.shell.as_ref().map(|sh| sh.cwd.clone()))
                        .unwrap_or_default(),
                    busy: idle.is_none(),
                    idle_for: idle.as_ref().map_or(Duration::ZERO, |s| s.last_used.elapsed()),
                    commands: idle.as_ref().map_or(0, |s| s.commands),
                }
            })
            .collect()
    }

    /// Close session `name` on the host `host` (as [`HostTarget`](crate::HostTarget) prints it):
    /// its shell ends once a running command is over, with what it started, and its saved state
    /// is removed. `false` when there is no such session.
    pub async fn close(&self, host: &str, name: &str) -> bool {
        let removed = self
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&(host.to_owned(), name.to_owned()));
        let Some((host, slot)) = removed else {
            return false;
        };
        let mut slot = slot.lock().await;
        match slot.shell.take() {
            Some(mut shell) => shell.end_shell(&host, Some(&slot.state_dir)).await,
            None => shell::forget_state(&host, &slot.state_dir).await,
        }
        true
    }

    /// End every session's shell, and what it started on its host.
    pub async fn shutdown(&self) {
        let slots: Vec<(RemoteHost, SlotRef)> = self
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, v)| v)
            .collect();
        for (host, slot) in slots {
            let mut slot = slot.lock().await;
            if let Some(mut shell) = slot.shell.take() {
                shell.end_shell(&host, Some(&slot.state_dir)).await;
            }
            host.shutdown();
        }
    }
}

fn not_started(message: String, start: std::time::Instant) -> ExecOutcome {
    let mut outcome = ExecOutcome::failed_to_start(message, start.elapsed());
    outcome.cwd_after = None;
    outcome
}
