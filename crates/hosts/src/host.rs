//! [`RemoteHost`]: one host with its client settings, its shared ssh connection, the check that it
//! can be reached, and the launch layer that moves a launch spec onto it.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use shellgate_executor::{LaunchLayer, LaunchSpec};
use tokio::io::AsyncReadExt;

use crate::HostError;
use crate::clients::{ClientSettings, Invocation};
use crate::script::{self, EnvDelivery, PATH_PREPEND_VAR, RemoteCommand};
use crate::target::HostTarget;

/// How long the check that a host can be reached may take.
const REACH_TIMEOUT: Duration = Duration::from_secs(20);

/// One remote host. Cheap to clone; clones share the ssh connection.
#[derive(Debug, Clone)]
pub struct RemoteHost {
    inner: Arc<HostInner>,
}

#[derive(Debug)]
struct HostInner {
    target: HostTarget,
    clients: ClientSettings,
    /// Where the multiplexing socket of an ssh host lives (`None`: no multiplexing).
    control_path: Option<PathBuf>,
    state: tokio::sync::Mutex<Reach>,
    /// The ssh master, once started (kept so that it can be stopped with the host).
    master: Mutex<Option<std::process::Child>>,
}

/// What is known of the host's reachability.
#[derive(Debug, Default)]
enum Reach {
    #[default]
    Unknown,
    Reached,
}

impl RemoteHost {
    /// `target` reached with `clients`; an ssh host multiplexes through a socket in `runtime_dir`.
    pub fn new(target: HostTarget, clients: ClientSettings, runtime_dir: &Path) -> Self {
        let control_path = match &target {
            HostTarget::Ssh { destination } if clients.ssh.multiplex => {
                Some(control_socket(runtime_dir, destination, &clients))
            }
            _ => None,
        };
        Self {
            inner: Arc::new(HostInner {
                target,
                clients,
                control_path,
                state: tokio::sync::Mutex::new(Reach::Unknown),
                master: Mutex::new(None),
            }),
        }
    }

    /// The host.
    pub fn target(&self) -> &HostTarget {
        &self.inner.target
    }

    /// The client settings.
    pub fn clients(&self) -> &ClientSettings {
        &self.inner.clients
    }

    /// The multiplexing socket, once the shared connection is up.
    pub(crate) fn control_path(&self) -> Option<&Path> {
        self.inner
            .control_path
            .as_deref()
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
    }

    /// Make sure the host answers (once; again after [`Self::recheck`]): an ssh host gets its shared
    /// connection, a container host is asked to run `sh`. `Err` says why it cannot be used.
    pub async fn ensure_reachable(&self) -> Result<(), HostError> {
        let mut state = self.inner.state.lock().await;
        if matches!(*state, Reach::Reached) && self.master_alive() {
            return Ok(());
        }
        if self.inner.control_path.is_some() {
            self.start_master().await?;
        }
        self.probe().await?;
        *state = Reach::Reached;
        Ok(())
    }

    /// Forget that the host was reached (a run ended the way a client ends when it cannot reach it),
    /// and check again: `Err` then says why the run could not start.
    pub async fn recheck(&self) -> Result<(), HostError> {
        *self.inner.state.lock().await = Reach::Unknown;
        self.ensure_reachable().await
    }

    /// Whether `code` is what this host's client exits with when it could not run the command at
    /// all (connection refused, no such container, no `sh`). A command may exit so too; a recheck
    /// tells them apart.
    pub fn is_client_failure(&self, code: Option<i32>) -> bool {
        match self.inner.target {
            HostTarget::Ssh { .. } => code == Some(255),
            // docker: 1 for a missing or stopped container, 126/127 for a missing `sh`; podman:
            // 125 missing, 255 stopped, 126/127 as docker.
            HostTarget::Container { .. } => matches!(code, Some(1 | 125..=127 | 255)),
            HostTarget::Kube { .. } => code == Some(1),
        }
    }

    fn master_alive(&self) -> bool {
        let mut master = self.inner.master.lock().unwrap_or_else(PoisonError::into_inner);
        match master.as_mut() {
            None => self.inner.control_path.is_none(),
            Some(child) => matches!(child.try_wait(), Ok(None)),
        }
    }

    /// Start the shared ssh connection (a child of the engine, not a run: runs come and go, the
    /// connection stays) and wait for its socket.
    async fn start_master(&self) -> Result<(), HostError> {
        let Some(path) = self.inner.control_path.clone() else {
            return Ok(());
        };
        if self.master_alive() && std::fs::symlink_metadata(&path).is_ok() {
            return Ok(());
        }
        let _ = std::fs::remove_file(&path);
        let HostTarget::Ssh { destination } = &self.inner.target else {
            return Ok(());
        };
        let mut argv = self.inner.clients.ssh_base(None);
        argv.extend([
            "-o".to_owned(),
            "ControlMaster=yes".to_owned(),
            "-o".to_owned(),
            format!("ControlPath={}", path.display()),
            "-o".to_owned(),
            "ControlPersist=no".to_owned(),
            "-N".to_owned(),
            "-T".to_owned(),
            "--".to_owned(),
            destination.clone(),
        ]);
        let mut child = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.unreachable(format!("cannot start {}: {e}", argv[0])))?;
        let deadline = std::time::Instant::now() + REACH_TIMEOUT;
        loop {
            if std::fs::symlink_metadata(&path).is_ok() {
                break;
            }
            if let Ok(Some(status)) = child.try_wait() {
                let mut err = String::new();
                if let Some(mut stderr) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut stderr, &mut err);
                }
                return Err(self.unreachable(format!("{} ({status})", err.trim())));
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(self.unreachable("the connection did not come up in time".to_owned()));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The master's later complaints are of no use to anyone; reading them keeps it from blocking.
        if let Some(stderr) = child.stderr.take() {
            std::thread::spawn(move || std::io::copy(&mut { stderr }, &mut std::io::sink()));
        }
        *self.inner.master.lock().unwrap_or_else(PoisonError::into_inner) = Some(child);
        Ok(())
    }

    /// Run `sh -c 'exit 0'` on the host.
    async fn probe(&self) -> Result<(), HostError> {
        let argv = self.argv("exit 0", &Invocation::default());
        let mut child = tokio::process::Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| self.unreachable(format!("cannot start {}: {e}", argv[0])))?;
        let mut err = Vec::new();
        let mut stderr = child.stderr.take();
        let waited = tokio::time::timeout(REACH_TIMEOUT, async {
            if let Some(stderr) = stderr.as_mut() {
                let _ = stderr.take(64 * 1024).read_to_end(&mut err).await;
            }
            child.wait().await
        })
        .await;
        match waited {
            Ok(Ok(status)) if status.success() => Ok(()),
            Ok(Ok(status)) => {
                Err(self.unreachable(format!("{} ({status})", String::from_utf8_lossy(&err).trim())))
            }
            Ok(Err(e)) => Err(self.unreachable(e.to_string())),
            Err(_) => Err(self.unreachable("no answer in time".to_owned())),
        }
    }

    fn unreachable(&self, reason: String) -> HostError {
        let reason = if reason.is_empty() {
            "the client failed without saying why".to_owned()
        } else {
            reason
        };
        HostError::Unreachable {
            host: self.inner.target.to_string(),
            reason,
        }
    }

    /// The client argv that runs `script` on the host.
    pub(crate) fn argv(&self, script: &str, how: &Invocation<'_>) -> Vec<String> {
        let how = Invocation {
            control_path: self.control_path(),
            ..*how
        };
        self.inner.clients.argv(&self.inner.target, script, &how)
    }

    /// A local launch spec running `argv` (the client), keeping what the engine needs of `like`.
    pub(crate) fn client_spec(argv: Vec<String>, like: &LaunchSpec) -> LaunchSpec {
        let mut argv = argv.into_iter();
        let program = argv.next().unwrap_or_default();
        let mut spec = LaunchSpec::new(program, argv, "/");
        spec.env_remove.clone_from(&like.env_remove);
        spec.env_clear = like.env_clear;
        spec.stdin = like.stdin;
        spec.pty = like.pty;
        spec.timeout = like.timeout;
        spec.kill_grace = like.kill_grace;
        spec
    }

    /// The spec that stops every process marked `marker` on the host, sparing `except`, then runs
    /// `then` (shell text, may be empty).
    pub(crate) fn stop_spec(&self, marker: &str, grace: Duration, except: &[u32], then: &str) -> LaunchSpec {
        let grace_secs = grace.as_secs().min(5) as u32;
        let mut spec = self.side_spec(&(script::stop_script(marker, grace_secs, except) + then));
        spec.timeout = Some(Duration::from_secs(u64::from(grace_secs) + 15));
        spec
    }

    /// A client run of `script` on the host beside the sessions and commands (a stop, a clean-up),
    /// started in `/` with the engine's environment.
    pub(crate) fn side_spec(&self, script: &str) -> LaunchSpec {
        let argv = self.argv(script, &Invocation::default());
        Self::client_spec(argv, &LaunchSpec::new("", Vec::<String>::new(), "/"))
    }

    /// Stop the shared connection.
    pub fn shutdown(&self) {
        if let Some(mut child) = self
            .inner
            .master
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(path) = &self.inner.control_path {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for HostInner {
    fn drop(&mut self) {
        if let Some(mut child) = self.master.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(path) = &self.control_path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A short socket path (a Unix socket path has at most 107 bytes): a hash of what identifies the
/// connection, in a private directory.
fn control_socket(runtime_dir: &Path, destination: &str, clients: &ClientSettings) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (
        destination,
        &clients.ssh.config_file,
        &clients.ssh.options,
        std::process::id(),
    )
        .hash(&mut hasher);
    let name = format!("ssh-{:016x}", hasher.finish());
    let mut dir = runtime_dir.join("hosts");
    if dir.as_os_str().len() + name.len() > 100 {
        dir = std::env::temp_dir().join(format!("shellgate-{}", own_uid()));
    }
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir);
    dir.join(name)
}

/// The engine's own uid (the owner of `/proc/self`).
fn own_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or(0, |m| m.uid())
}

/// Moves a launch spec onto its host (SPEC X-3): the client runs locally, the command on the host,
/// in its directory, with its variables, marked so that a stop reaches all it started there.
#[derive(Debug, Clone)]
pub struct HostLayer {
    host: RemoteHost,
}

impl HostLayer {
    /// A layer for `host`.
    pub fn new(host: RemoteHost) -> Self {
        Self { host }
    }
}

impl LaunchLayer for HostLayer {
    fn wrap(&self, spec: LaunchSpec) -> LaunchSpec {
        let marker = script::new_marker();
        let env: Vec<(String, String)> = spec.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let by_client = matches!(self.host.target(), HostTarget::Container { .. });
        let delivery = if by_client {
            EnvDelivery::ByClient
        } else {
            EnvDelivery::InScript
        };
        let cwd = spec.cwd.to_string_lossy();
        let command = RemoteCommand {
            program: &spec.program,
            args: &spec.args,
            cwd: (!cwd.is_empty()).then_some(&*cwd),
            env: &env,
            // A terminal run reads the terminal; a job its input pipe; anything else nothing.
            stdin: spec.pty || spec.stdin == shellgate_executor::StdinMode::Piped,
        };
        let text = script::run_script(&command, &marker, delivery);
        let client_env: Vec<(String, String)> = if by_client {
            env.iter()
                .map(|(k, v)| {
                    let key = if k == "PATH" { PATH_PREPEND_VAR } else { k.as_str() };
                    (key.to_owned(), v.clone())
                })
                .collect()
        } else {
            Vec::new()
        };
        let how = Invocation {
            tty: spec.pty,
            stdin: true,
            env: &client_env,
            control_path: None,
        };
        let argv = self.host.argv(&text, &how);
        let mut wrapped = RemoteHost::client_spec(argv, &spec);
        wrapped.remote_stop = Some(Box::new(self.host.stop_spec(&marker, spec.kill_grace, &[], "")));
        wrapped
    }
}
