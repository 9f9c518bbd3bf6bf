//! Which sandbox a call gets: the configured mode, a stricter request, the kernel check.

use std::path::{Path, PathBuf};

use crate::{
    DenialCollector, HelperImage, ProxyPolicy, ResourceLimits, SandboxError, SandboxLayer, SandboxMode,
    SandboxPolicy, check_kernel,
};

use super::settings::{NetworkSetting, mode_name, strictness};
use super::{SandboxConfig, SandboxRun};

/// Why a call must not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallRefusal {
    /// It names a host this engine does not sandbox (remote hosts are run by the host layer).
    #[error("{0}")]
    NotHere(String),
    /// The kernel cannot enforce its sandbox (and degrading is not allowed).
    #[error("The sandbox cannot be enforced here: {0}. Nothing ran.")]
    Unavailable(String),
    /// Its `allowed_domains` cannot narrow its network (it is not sandboxed, the network is on, or
    /// a pattern is malformed): it asked for less than it would get.
    #[error("The network cannot be narrowed as asked: {0}. Nothing ran.")]
    NotNarrowed(String),
}

impl CallRefusal {
    /// Why the sandbox could not give the call what it needs, when that is the refusal (a result's
    /// `error` of kind [`SANDBOX_UNAVAILABLE`](crate::SANDBOX_UNAVAILABLE)).
    pub fn unavailable_reason(&self) -> Option<&str> {
        match self {
            Self::NotHere(_) => None,
            Self::Unavailable(reason) | Self::NotNarrowed(reason) => Some(reason),
        }
    }
}

/// The `host` values this engine runs on.
const LOCAL_HOSTS: &[&str] = &["local", "auto", "sandbox"];

/// An engine's sandbox state: the settings, the helper, and where its sessions live. It decides
/// which sandbox each call gets.
#[derive(Debug)]
pub struct Sandboxing {
    config: SandboxConfig,
    workspace: PathBuf,
    helper: PathBuf,
    /// The session manager's private directory (each session shell's own directory in it must stay
    /// writable).
    runtime_dir: PathBuf,
}

impl Sandboxing {
    /// The state for an engine working in `workspace` whose sessions live under `runtime_dir`. With
    /// a configured mode the denial reader starts now, so that a session shell's sandbox is known
    /// from its first denial on.
    pub fn new(config: &SandboxConfig, workspace: &Path, runtime_dir: &Path) -> Self {
        if config.mode.is_some() {
            // A failure shows up again, as a notice, in every sandboxed call.
            let _ = DenialCollector::prepare();
        }
        let helper = helper_image(config.helper.as_deref());
        Self {
            config: config.clone(),
            workspace: workspace.to_path_buf(),
            helper,
            runtime_dir: runtime_dir.to_path_buf(),
        }
    }

    /// The sandbox of a call with these `sandbox` and `host` parameters: `Ok(None)` unsandboxed,
    /// `Err` a call that must not run (an unsupported host, a sandbox the kernel cannot enforce).
    /// A request looser than the configured mode is refused with a notice and the configured
    /// mode applies.
    pub fn decide(
        &self,
        sandbox: Option<SandboxMode>,
        host: Option<&str>,
        notices: &mut Vec<String>,
    ) -> Result<Option<SandboxRun>, CallRefusal> {
        self.decide_with_domains(sandbox, host, &[], notices)
    }

    /// [`Sandboxing::decide`], with `approved_domains` (`host:port`, allowed always by a person)
    /// reachable besides `allowed_domains` where the network is `"proxy"`.
    pub fn decide_with_domains(
        &self,
        sandbox: Option<SandboxMode>,
        host: Option<&str>,
        approved_domains: &[String],
        notices: &mut Vec<String>,
    ) -> Result<Option<SandboxRun>, CallRefusal> {
        let configured = match host {
            None | Some("local" | "auto") => self.config.mode,
            Some("sandbox") => self.config.mode.or(Some(SandboxMode::WorkspaceWrite)),
            Some(other) => {
                return Err(CallRefusal::NotHere(format!(
                    "host {other:?} is not on this machine: the sandbox confines runs here \
                     (host {}); remote hosts are run by the host layer.",
                    LOCAL_HOSTS.join(", ")
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
        let mut policy = self.policy(mode);
        if let Some(proxy) = &mut policy.proxy {
            proxy.allowed_domains.extend(approved_domains.iter().cloned());
        }
        let limits_chosen = !policy.limits.is_empty() && policy.limits != ResourceLimits::sandbox_defaults();
        if mode == SandboxMode::Full && policy.network && !limits_chosen && policy.min_landlock_abi.is_none()
        {
            // Nothing to confine: no file-system rule, the network on, no limit of the user's.
            return Ok(None);
        }
        if let Err(error) = check_kernel(&policy) {
            let reason = match error {
                SandboxError::Unavailable { reason } => reason,
                other => other.to_string(),
            };
            if !policy.allow_degraded {
                return Err(CallRefusal::Unavailable(reason));
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
        policy
            .protected_paths
            .extend(self.config.engine_files.iter().cloned());
        policy.network = match self.config.network {
            None => mode == SandboxMode::Full,
            Some(setting) => setting == NetworkSetting::On,
        };
        if self.config.network == Some(NetworkSetting::Proxy) {
            let mut proxy = ProxyPolicy::allowing(self.config.allowed_domains.iter().cloned());
            proxy.denied_domains.clone_from(&self.config.denied_domains);
            proxy.hosts.clone_from(&self.config.proxy_hosts);
            proxy.allow_local_addresses = self.config.allow_local_addresses;
            policy = policy.with_proxy(proxy);
        }
        policy.unix_sockets = self.config.unix_sockets;
        policy
            .unix_socket_paths
            .clone_from(&self.config.unix_socket_paths);
        policy.limits = self.config.limits;
        policy.allow_degraded = self.config.allow_degraded;
        policy.min_landlock_abi = self.config.min_landlock_abi;
        policy
    }
}

/// The path that starts the helper, held open since the engine started ([`HelperImage`]): a sealed
/// copy of the configured helper, else of the small `shellgate-sandbox-exec` installed beside the
/// running executable (it starts faster than the whole CLI), else the running executable itself (its
/// `sandbox-exec` subcommand). Nothing that later happens to a file on disk changes what it runs.
/// Opened once per process, by the first tool that sandboxes.
fn helper_image(configured: Option<&Path>) -> PathBuf {
    static IMAGE: std::sync::OnceLock<Option<HelperImage>> = std::sync::OnceLock::new();
    let image = IMAGE.get_or_init(|| {
        let exe = std::env::current_exe().ok();
        let candidate = configured
            .map(Path::to_path_buf)
            .or_else(|| exe.as_ref().map(|e| e.with_file_name("shellgate-sandbox-exec")))
            .filter(|p| p.is_file());
        candidate
            .and_then(|p| HelperImage::sealed_copy(&p).ok())
            .or_else(|| HelperImage::own_image().ok())
    });
    // Without any image a sandboxed run fails to start (the helper is missing): never unconfined.
    image.as_ref().map_or_else(
        || PathBuf::from("/nonexistent/shellgate-sandbox-exec"),
        |i| i.path().to_path_buf(),
    )
}

#[cfg(test)]
mod tests {
    use shellgate_executor::{LaunchSpec, SessionKey};

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
        let CallRefusal::NotHere(message) = err else {
            panic!("{err:?}")
        };
        assert!(
            message.contains("\"ssh:build\" is not on this machine"),
            "{message}"
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
        let CallRefusal::Unavailable(reason) = err else {
            panic!("{err:?}")
        };
        assert!(reason.contains("ABI"), "{reason}");
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
            network: Some(NetworkSetting::On),
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
            ["--noprofile", "/run/sg/shellgate-1-2/script"],
            "/w",
        ));
        // Started through a descriptor held since start-up, never by a path on disk.
        assert!(spec.program.starts_with("/proc/"), "{}", spec.program);
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
}
