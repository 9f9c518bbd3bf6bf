//! Sandboxed runs (SPEC X-1, X-2): which sandbox mode a call gets, the launch layer that confines
//! it, the kernel check before it starts, and the denials read back from the kernel after it.
//!
//! - The mode is the configured one (`[sandbox] mode`), or a stricter one the call asks for with
//!   `sandbox` (`full` → `workspace-write` → `read-only`); a looser request is refused with a
//!   notice and the configured mode applies.
//! - The workspace is the tool's directory ([`ToolConfig::cwd`](crate::ToolConfig::cwd)), not the
//!   call's `cwd`: a call cannot widen what it may write by choosing where it runs.
//! - Every launch of a sandboxed call (one-shot, terminal, job) is wrapped by a
//!   [`SandboxLayer`] (the engine's own binary in its `sandbox-exec` mode); a persistent session
//!   gets a shell of its own, started through the same layer (see [`SandboxRun::session_key`]).
//! - Enforcement is checked, never assumed: [`check_kernel`] before the run, and the helper's
//!   own refusal (exit 125, `shellgate-sandbox: unavailable: …`) after it, both become
//!   `failed_to_start` with `error: {kind: "sandbox_unavailable", reason}` — unless the
//!   configuration allows degrading, which a notice then says.
//! - Denials are data: a [`DenialCollector`] around the run gives `sandbox_denied`. Outside a
//!   sandbox no collector runs, so an ordinary permission error is never labelled a denial.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use shellgate_executor::{
    BoxedOutcome, CancellationToken, DynExecutor, LaunchLayer, LaunchSpec, LayerStack, NamedLayers, SendSink,
    SessionKey,
};
use shellgate_sandbox::{
    DenialCollector, HelperFailure, ResourceLimits, SandboxError, SandboxLayer, SandboxMode, SandboxPolicy,
    check_kernel,
};

use crate::{ResultError, ToolResult, ToolStatus};

/// `error.kind` when the sandbox cannot be enforced.
pub const SANDBOX_UNAVAILABLE: &str = "sandbox_unavailable";
/// `error.kind` when the sandbox helper was invoked wrongly (an engine fault).
pub const SANDBOX_ERROR: &str = "sandbox_error";

/// The `host` values this engine runs on.
const LOCAL_HOSTS: &[&str] = &["local", "auto", "sandbox"];

/// The `[sandbox]` settings (SPEC X-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// The mode every call gets; `None` (`"off"`): no sandbox unless a call asks for one.
    pub mode: Option<SandboxMode>,
    /// Writable roots in `workspace-write` mode besides the workspace, `$TMPDIR` and `/tmp`.
    pub writable_roots: Vec<PathBuf>,
    /// Paths that stay read-only inside writable roots (besides `.git` in each).
    pub protected_paths: Vec<PathBuf>,
    /// Network access; `None`: off in `read-only` and `workspace-write`, on in `full`.
    pub network: Option<bool>,
    /// Unix-domain sockets while the network is off (default on).
    pub unix_sockets: bool,
    /// Resource limits of sandboxed commands.
    pub limits: ResourceLimits,
    /// Run with what the kernel can enforce instead of failing (a notice says so).
    pub allow_degraded: bool,
    /// The lowest Landlock ABI the kernel must offer (a run fails below it).
    pub min_landlock_abi: Option<u8>,
    /// The helper binary; `None`: the running executable (the `shellgate` binary).
    pub helper: Option<PathBuf>,
    /// Arguments selecting the helper mode (`["sandbox-exec"]`; none for a dedicated helper).
    pub helper_args: Vec<String>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            mode: None,
            writable_roots: Vec::new(),
            protected_paths: Vec::new(),
            network: None,
            unix_sockets: true,
            limits: ResourceLimits::default(),
            allow_degraded: false,
            min_landlock_abi: None,
            helper: None,
            helper_args: vec!["sandbox-exec".to_owned()],
        }
    }
}

/// A mode setting of the configuration file: a [`SandboxMode`] or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModeSetting {
    /// No sandbox unless a call asks for one.
    Off,
    /// See [`SandboxMode::ReadOnly`].
    ReadOnly,
    /// See [`SandboxMode::WorkspaceWrite`].
    WorkspaceWrite,
    /// See [`SandboxMode::Full`].
    Full,
}

impl From<ModeSetting> for Option<SandboxMode> {
    fn from(setting: ModeSetting) -> Self {
        match setting {
            ModeSetting::Off => None,
            ModeSetting::ReadOnly => Some(SandboxMode::ReadOnly),
            ModeSetting::WorkspaceWrite => Some(SandboxMode::WorkspaceWrite),
            ModeSetting::Full => Some(SandboxMode::Full),
        }
    }
}

impl From<Option<SandboxMode>> for ModeSetting {
    fn from(mode: Option<SandboxMode>) -> Self {
        match mode {
            None => Self::Off,
            Some(SandboxMode::ReadOnly) => Self::ReadOnly,
            Some(SandboxMode::WorkspaceWrite) => Self::WorkspaceWrite,
            Some(SandboxMode::Full) => Self::Full,
        }
    }
}

/// The `[sandbox]` section of a configuration file; every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxFile {
    /// `off`, `read-only`, `workspace-write` or `full`.
    pub mode: Option<ModeSetting>,
    /// Further writable roots in `workspace-write` mode.
    pub writable_roots: Option<Vec<PathBuf>>,
    /// Paths that stay read-only inside writable roots.
    pub protected_paths: Option<Vec<PathBuf>>,
    /// Network access in the sandbox.
    pub network: Option<bool>,
    /// Unix-domain sockets while the network is off.
    pub unix_sockets: Option<bool>,
    /// `RLIMIT_CPU`, seconds.
    pub cpu_seconds: Option<u64>,
    /// `RLIMIT_AS`, bytes.
    pub address_space_bytes: Option<u64>,
    /// `RLIMIT_FSIZE`, bytes.
    pub file_size_bytes: Option<u64>,
    /// `RLIMIT_NOFILE`.
    pub open_files: Option<u64>,
    /// `RLIMIT_NPROC`.
    pub processes: Option<u64>,
    /// Run with reduced enforcement instead of failing.
    pub allow_degraded: Option<bool>,
    /// The lowest Landlock ABI the kernel must offer.
    pub min_landlock_abi: Option<u8>,
}

impl SandboxFile {
    /// Apply the values that are set.
    pub fn apply(&self, config: &mut SandboxConfig) {
        if let Some(mode) = self.mode {
            config.mode = mode.into();
        }
        if let Some(roots) = &self.writable_roots {
            config.writable_roots.clone_from(roots);
        }
        if let Some(paths) = &self.protected_paths {
            config.protected_paths.clone_from(paths);
        }
        if self.network.is_some() {
            config.network = self.network;
        }
        if let Some(unix) = self.unix_sockets {
            config.unix_sockets = unix;
        }
        let limits = &mut config.limits;
        for (value, slot) in [
            (self.cpu_seconds, &mut limits.cpu_seconds),
            (self.address_space_bytes, &mut limits.address_space_bytes),
            (self.file_size_bytes, &mut limits.file_size_bytes),
            (self.open_files, &mut limits.open_files),
            (self.processes, &mut limits.processes),
        ] {
            if value.is_some() {
                *slot = value;
            }
        }
        if let Some(allow) = self.allow_degraded {
            config.allow_degraded = allow;
        }
        if self.min_landlock_abi.is_some() {
            config.min_landlock_abi = self.min_landlock_abi;
        }
    }

    /// The settings in effect (what `shellgate config` prints).
    pub fn effective(config: &SandboxConfig) -> Self {
        Self {
            mode: Some(config.mode.into()),
            writable_roots: Some(config.writable_roots.clone()),
            protected_paths: Some(config.protected_paths.clone()),
            network: config.network,
            unix_sockets: Some(config.unix_sockets),
            cpu_seconds: config.limits.cpu_seconds,
            address_space_bytes: config.limits.address_space_bytes,
            file_size_bytes: config.limits.file_size_bytes,
            open_files: config.limits.open_files,
            processes: config.limits.processes,
            allow_degraded: Some(config.allow_degraded),
            min_landlock_abi: config.min_landlock_abi,
        }
    }
}

/// How strict a mode is: a request may only go up.
fn strictness(mode: Option<SandboxMode>) -> u8 {
    match mode {
        None => 0,
        Some(SandboxMode::Full) => 1,
        Some(SandboxMode::WorkspaceWrite) => 2,
        Some(SandboxMode::ReadOnly) => 3,
    }
}

fn mode_name(mode: Option<SandboxMode>) -> String {
    mode.map_or_else(|| "off".to_owned(), |m| m.to_string())
}

/// The tool's sandbox state: the settings, the helper, and whether denials can be read.
#[derive(Debug)]
pub(crate) struct Sandboxing {
    config: SandboxConfig,
    workspace: PathBuf,
    helper: PathBuf,
    /// The session manager's private directory (each session shell's own directory in it must stay
    /// writable).
    runtime_dir: PathBuf,
}

impl Sandboxing {
    /// The state for a tool working in `workspace` whose sessions live under `runtime_dir`. With a
    /// configured mode the denial reader starts now, so that a session shell's sandbox is known
    /// from its first denial on.
    pub(crate) fn new(config: &SandboxConfig, workspace: &Path, runtime_dir: &Path) -> Self {
        if config.mode.is_some() {
            // A failure shows up again, as a notice, in every sandboxed call.
            let _ = DenialCollector::prepare();
        }
        let helper = config
            .helper
            .clone()
            .unwrap_or_else(|| std::env::current_exe().unwrap_or_else(|_| PathBuf::from("shellgate")));
        Self {
            config: config.clone(),
            workspace: workspace.to_path_buf(),
            helper,
            runtime_dir: runtime_dir.to_path_buf(),
        }
    }

    /// The sandbox of a call with these `sandbox` and `host` parameters: `Ok(None)` unsandboxed,
    /// `Err` a call that must not run (an unsupported host, a sandbox the kernel cannot enforce).
    pub(crate) fn decide(
        &self,
        sandbox: Option<SandboxMode>,
        host: Option<&str>,
        notices: &mut Vec<String>,
    ) -> Result<Option<SandboxRun>, Box<ToolResult>> {
        let configured = match host {
            None | Some("local" | "auto") => self.config.mode,
            Some("sandbox") => self.config.mode.or(Some(SandboxMode::WorkspaceWrite)),
            Some(other) => {
                return Err(Box::new(ToolResult::not_run(
                    ToolStatus::FailedToStart,
                    format!(
                        "host {other:?} is not supported yet: commands run on this machine \
                         (host {}).",
                        LOCAL_HOSTS.join(", ")
                    ),
                    self.workspace.display().to_string(),
                )));
            }
        };
        let mode = match sandbox {
            Some(requested) if strictness(Some(requested)) >= strictness(configured) => Some(requested),
            Some(requested) => {
                notices.push(format!(
                    "Sandbox mode {requested} is looser than the configured {}; the configured mode applies.",
                    mode_name(configured)
                ));
                configured
            }
            None => configured,
        };
        let Some(mode) = mode else { return Ok(None) };
        let policy = self.policy(mode);
        if mode == SandboxMode::Full
            && policy.network
            && policy.limits.is_empty()
            && policy.min_landlock_abi.is_none()
        {
            // Nothing to confine: no file-system rule, the network on, no limit.
            return Ok(None);
        }
        if let Err(error) = check_kernel(&policy) {
            let reason = match error {
                SandboxError::Unavailable { reason } => reason,
                other => other.to_string(),
            };
            if !policy.allow_degraded {
                return Err(Box::new(unavailable(reason, &self.workspace)));
            }
            notices.push(format!(
                "The {mode} sandbox cannot be fully enforced here ({reason}); the command runs with what \
                 the kernel can enforce (allow_degraded)."
            ));
        }
        Ok(Some(SandboxRun {
            mode,
            configured: self.config.mode == Some(mode),
            layer: SandboxLayer::new(&self.helper, policy).with_helper_args(self.config.helper_args.clone()),
            runtime_dir: self.runtime_dir.clone(),
        }))
    }

    fn policy(&self, mode: SandboxMode) -> SandboxPolicy {
        let mut policy = SandboxPolicy::new(mode, &self.workspace);
        policy
            .writable_roots
            .extend(self.config.writable_roots.iter().cloned());
        policy.protected_paths.clone_from(&self.config.protected_paths);
        policy.network = self.config.network.unwrap_or(mode == SandboxMode::Full);
        policy.unix_sockets = self.config.unix_sockets;
        policy.limits = self.config.limits;
        policy.allow_degraded = self.config.allow_degraded;
        policy.min_landlock_abi = self.config.min_landlock_abi;
        policy
    }
}

/// The result of a call the sandbox cannot be enforced for.
fn unavailable(reason: String, cwd: &Path) -> ToolResult {
    let mut result = ToolResult::not_run(
        ToolStatus::FailedToStart,
        format!("The sandbox cannot be enforced here: {reason}. Nothing ran."),
        cwd.display().to_string(),
    );
    result.error = Some(ResultError {
        kind: SANDBOX_UNAVAILABLE.to_owned(),
        reason,
    });
    result
}

/// The sandbox one call runs in.
#[derive(Debug, Clone)]
pub(crate) struct SandboxRun {
    mode: SandboxMode,
    /// Whether this is the configured mode (a session then keeps its name).
    configured: bool,
    layer: SandboxLayer,
    runtime_dir: PathBuf,
}

impl SandboxRun {
    /// Wrap a one-shot, terminal or job launch.
    pub(crate) fn wrap(&self, spec: LaunchSpec) -> LaunchSpec {
        self.layer.wrap(spec)
    }

    /// Make `key` a session whose shell runs in this sandbox: its own layers (the shell is
    /// started through the helper, its private FIFO directory writable), and, for a mode
    /// stricter than the configured one, its own name (`default@read-only`), so that it is a
    /// shell of its own and never the configured one's.
    pub(crate) fn session_key(&self, key: &mut SessionKey) {
        if !self.configured {
            key.name = format!("{}@{}", key.name, self.mode);
        }
        let layer = SessionShellLayer {
            sandbox: self.layer.clone(),
            runtime_dir: self.runtime_dir.clone(),
        };
        key.layers = NamedLayers::new(format!("sandbox:{}", self.mode), LayerStack::new().with(layer));
    }
}

/// The sandbox layer of a session shell: also makes the shell's own directory (where its request
/// FIFO, named in its arguments, lives) writable, and nothing else of the runtime directory — other
/// sessions' FIFOs there stay out of reach.
struct SessionShellLayer {
    sandbox: SandboxLayer,
    runtime_dir: PathBuf,
}

impl LaunchLayer for SessionShellLayer {
    fn wrap(&self, spec: LaunchSpec) -> LaunchSpec {
        let mut layer = self.sandbox.clone();
        let own_dir = spec.args.iter().find_map(|arg| {
            let rest = Path::new(arg).strip_prefix(&self.runtime_dir).ok()?;
            let first = rest.components().next()?;
            Some(self.runtime_dir.join(first))
        });
        if let Some(dir) = own_dir {
            layer.policy.engine_roots.push(dir);
        }
        layer.wrap(spec)
    }
}

/// Watches one sandboxed run: records the pids it spawned and collects its denials.
pub(crate) struct DenialWatch {
    collector: Option<DenialCollector>,
    pids: Arc<Mutex<Vec<u32>>>,
}

impl DenialWatch {
    /// Start watching a sandboxed run (a notice when the kernel cannot report its denials).
    pub(crate) fn start(notices: &mut Vec<String>) -> Self {
        let collector = match DenialCollector::start() {
            Ok(collector) => Some(collector),
            Err(off) => {
                notices.push(format!("sandbox {off}"));
                None
            }
        };
        Self {
            collector,
            pids: Arc::default(),
        }
    }

    /// Where pids of the run's processes are recorded (a job's, once it started).
    pub(crate) fn pids(&self) -> Arc<Mutex<Vec<u32>>> {
        Arc::clone(&self.pids)
    }

    /// `executor`, recording the pid of what it starts.
    pub(crate) fn recording(&self, executor: Arc<dyn DynExecutor>) -> Arc<dyn DynExecutor> {
        Arc::new(PidRecorder {
            inner: executor,
            pids: Arc::clone(&self.pids),
        })
    }

    /// After the run: map the helper's refusal to `failed_to_start`, add the denials of the run's
    /// processes (`pids`: those not started through [`DenialWatch::recording`], such as a session's
    /// shell or a job) to `result`.
    pub(crate) fn finish(self, result: &mut ToolResult, pids: &[u32]) {
        map_helper_failure(result);
        let Some(collector) = self.collector else { return };
        let mut all = self.pids.lock().unwrap_or_else(PoisonError::into_inner).clone();
        all.extend_from_slice(pids);
        all.extend(result.pid);
        all.retain(|&pid| pid != 0);
        all.sort_unstable();
        all.dedup();
        let report = collector.finish(&all);
        if !report.complete {
            result.notices.push(
                "The sandbox denial list may be incomplete: the kernel dropped audit records or did not \
                 answer in time."
                    .to_owned(),
            );
        }
        if !report.denials.is_empty() {
            let listed: Vec<String> = report
                .denials
                .iter()
                .map(|d| {
                    let kind = serde_json::to_value(d.kind)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    let object = d.path.as_deref().or(d.address.as_deref()).unwrap_or("?");
                    format!("{kind} {object} ({}×)", d.count)
                })
                .collect();
            result
                .notices
                .push(format!("The sandbox denied: {}.", listed.join(", ")));
        }
        // A run that goes on as a job may still be denied things: an empty list would claim too much.
        if result.status != ToolStatus::Running || !report.denials.is_empty() {
            result.sandbox_denied = Some(report.denials);
        }
    }
}

/// The helper's one line (exit 125) at the start of the output → `failed_to_start` with the reason.
fn map_helper_failure(result: &mut ToolResult) {
    if result.exit_code != Some(shellgate_sandbox::helper::EXIT_SANDBOX_FAILED) {
        return;
    }
    let first = result.output.lines().next().unwrap_or_default();
    let (kind, reason) = match HelperFailure::parse(first) {
        Some(HelperFailure::Unavailable { reason }) => (SANDBOX_UNAVAILABLE, reason),
        Some(HelperFailure::Invalid { message }) => (SANDBOX_ERROR, message),
        _ => return,
    };
    result.status = ToolStatus::FailedToStart;
    result.is_error = true;
    result.error = Some(ResultError {
        kind: kind.to_owned(),
        reason,
    });
}

/// An executor that remembers the pid of every run it starts.
struct PidRecorder {
    inner: Arc<dyn DynExecutor>,
    pids: Arc<Mutex<Vec<u32>>>,
}

impl DynExecutor for PidRecorder {
    fn run_dyn<'a>(
        &'a self,
        spec: LaunchSpec,
        sink: &'a mut SendSink<'_>,
        cancel: CancellationToken,
    ) -> BoxedOutcome<'a> {
        Box::pin(async move {
            let outcome = self.inner.run_dyn(spec, sink, cancel).await;
            if let Some(pid) = outcome.pid {
                self.pids.lock().unwrap_or_else(PoisonError::into_inner).push(pid);
            }
            outcome
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandboxing(mode: Option<SandboxMode>) -> Sandboxing {
        let config = SandboxConfig {
            mode,
            helper: Some("/opt/helper".into()),
            ..SandboxConfig::default()
        };
        Sandboxing::new(&config, Path::new("/w"), Path::new("/run/sg"))
    }

    #[test]
    fn requests_only_tighten() {
        let tool = sandboxing(Some(SandboxMode::WorkspaceWrite));
        let mut notices = Vec::new();
        let run = tool
            .decide(Some(SandboxMode::Full), None, &mut notices)
            .unwrap_or_else(|r| panic!("{r:?}"))
            .unwrap();
        assert_eq!(run.mode, SandboxMode::WorkspaceWrite);
        assert!(run.configured);
        assert!(notices[0].contains("looser"), "{notices:?}");
        notices.clear();
        let run = tool
            .decide(Some(SandboxMode::ReadOnly), Some("auto"), &mut notices)
            .unwrap_or_else(|r| panic!("{r:?}"))
            .unwrap();
        assert_eq!(run.mode, SandboxMode::ReadOnly);
        assert!(!run.configured);
        assert!(notices.iter().all(|n| !n.contains("looser")), "{notices:?}");
        let off = sandboxing(None);
        assert!(off.decide(None, Some("local"), &mut notices).unwrap().is_none());
        let run = off.decide(None, Some("sandbox"), &mut notices).unwrap().unwrap();
        assert_eq!(run.mode, SandboxMode::WorkspaceWrite);
        assert!(!run.configured);
        // `full` with the network on and no limits has nothing to confine.
        assert!(
            off.decide(Some(SandboxMode::Full), None, &mut notices)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn unsupported_hosts_fail_to_start_by_name() {
        let err = sandboxing(None)
            .decide(None, Some("ssh:build"), &mut Vec::new())
            .unwrap_err();
        assert_eq!(err.status, ToolStatus::FailedToStart);
        assert!(
            err.output.contains("\"ssh:build\" is not supported yet"),
            "{}",
            err.output
        );
    }

    #[test]
    fn an_unenforceable_policy_fails_unless_degrading_is_allowed() {
        let mut config = SandboxConfig {
            mode: Some(SandboxMode::ReadOnly),
            min_landlock_abi: Some(u8::MAX),
            ..SandboxConfig::default()
        };
        let tool = Sandboxing::new(&config, Path::new("/w"), Path::new("/r"));
        let err = tool.decide(None, None, &mut Vec::new()).unwrap_err();
        let error = err.error.as_ref().unwrap();
        assert_eq!(error.kind, SANDBOX_UNAVAILABLE);
        assert!(error.reason.contains("ABI"), "{}", error.reason);
        config.allow_degraded = true;
        let tool = Sandboxing::new(&config, Path::new("/w"), Path::new("/r"));
        let mut notices = Vec::new();
        assert!(tool.decide(None, None, &mut notices).unwrap().is_some());
        assert!(notices[0].contains("allow_degraded"), "{notices:?}");
    }

    #[test]
    fn policies_carry_the_configuration() {
        let config = SandboxConfig {
            mode: Some(SandboxMode::WorkspaceWrite),
            writable_roots: vec!["/cache".into()],
            protected_paths: vec!["/w/secrets".into()],
            network: Some(true),
            ..SandboxConfig::default()
        };
        let policy = Sandboxing::new(&config, Path::new("/w"), Path::new("/r")).policy(SandboxMode::ReadOnly);
        assert_eq!(policy.mode, SandboxMode::ReadOnly);
        assert_eq!(policy.workspace, Path::new("/w"));
        assert!(policy.writable_roots.contains(&PathBuf::from("/cache")));
        assert_eq!(policy.protected_paths, [PathBuf::from("/w/secrets")]);
        assert!(policy.network);
    }

    #[test]
    fn a_session_shell_may_write_its_own_directory_only() {
        let tool = sandboxing(Some(SandboxMode::ReadOnly));
        let run = tool.decide(None, None, &mut Vec::new()).unwrap().unwrap();
        let mut key = SessionKey::new("default");
        run.session_key(&mut key);
        assert_eq!(key.name, "default");
        assert_eq!(key.layers.id, "sandbox:read-only");
        let spec = key.layers.stack.apply(LaunchSpec::new(
            "bash",
            ["--noprofile", "/run/sg/shellgate-1-2/req"],
            "/w",
        ));
        assert_eq!(spec.program, "/opt/helper");
        let policy = SandboxPolicy::from_json(&spec.args[2]).unwrap();
        assert_eq!(policy.engine_roots, [PathBuf::from("/run/sg/shellgate-1-2")]);
        assert!(!policy.may_write(Path::new("/run/sg/shellgate-9-9/req")));
        let mut tighter = SessionKey::new("work");
        sandboxing(Some(SandboxMode::Full))
            .decide(Some(SandboxMode::ReadOnly), None, &mut Vec::new())
            .unwrap()
            .unwrap()
            .session_key(&mut tighter);
        assert_eq!(tighter.name, "work@read-only");
    }

    #[test]
    fn the_sandbox_section_loads_and_round_trips() {
        let text = "[sandbox]\nmode = \"read-only\"\nwritable_roots = [\"/c\"]\nnetwork = true\n\
                    unix_sockets = false\ncpu_seconds = 5\naddress_space_bytes = 1024\nfile_size_bytes = 7\n\
                    open_files = 64\nprocesses = 9\nallow_degraded = true\nmin_landlock_abi = 5\n";
        let file = crate::FileConfig::parse(text, Path::new("s.toml")).unwrap();
        let mut config = crate::ToolConfig::default();
        file.apply(&mut config);
        let sandbox = &config.sandbox;
        assert_eq!(sandbox.mode, Some(SandboxMode::ReadOnly));
        assert_eq!(sandbox.writable_roots, [PathBuf::from("/c")]);
        assert_eq!((sandbox.network, sandbox.unix_sockets), (Some(true), false));
        assert_eq!(sandbox.limits.cpu_seconds, Some(5));
        assert_eq!(sandbox.limits.address_space_bytes, Some(1024));
        assert_eq!(sandbox.limits.file_size_bytes, Some(7));
        assert_eq!(sandbox.limits.open_files, Some(64));
        assert_eq!(sandbox.limits.processes, Some(9));
        assert!(sandbox.allow_degraded);
        assert_eq!(sandbox.min_landlock_abi, Some(5));
        let again = crate::FileConfig::effective(&config).to_toml();
        let reparsed = crate::FileConfig::parse(&again, Path::new("e.toml")).unwrap();
        let mut back = crate::ToolConfig::default();
        reparsed.apply(&mut back);
        assert_eq!(back.sandbox, config.sandbox);
        let err = crate::FileConfig::parse("[sandbox]\nmode = \"on\"\n", Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("on") && err.contains("workspace-write"), "{err}");
    }

    #[test]
    fn the_helpers_refusal_becomes_failed_to_start() {
        let mut result = ToolResult::not_run(
            ToolStatus::Completed,
            "shellgate-sandbox: unavailable: Landlock: no\n",
            "/",
        );
        result.exit_code = Some(125);
        map_helper_failure(&mut result);
        assert_eq!(result.status, ToolStatus::FailedToStart);
        assert_eq!(result.error.as_ref().unwrap().reason, "Landlock: no");
        let mut ordinary = ToolResult::not_run(ToolStatus::Completed, "unavailable: x\n", "/");
        ordinary.exit_code = Some(125);
        map_helper_failure(&mut ordinary);
        assert_eq!(ordinary.status, ToolStatus::Completed);
        assert!(ordinary.error.is_none());
    }
}
