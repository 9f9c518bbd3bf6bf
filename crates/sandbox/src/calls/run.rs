//! The sandbox one call runs in, and the layer that confines a session's shell.

use std::path::{Path, PathBuf};

use super::CallRefusal;
use crate::{SandboxLayer, SandboxMode};
use shellgate_executor::{LaunchLayer, LaunchSpec, LayerStack, NamedLayers, SessionKey};

/// The sandbox one call runs in.
#[derive(Debug, Clone)]
pub struct SandboxRun {
    /// Its mode.
    pub mode: SandboxMode,
    /// Whether this is the configured mode (a session then keeps its name).
    pub configured: bool,
    /// The layer that confines its launches.
    pub layer: SandboxLayer,
    pub(super) runtime_dir: PathBuf,
}

/// Why a call's `allowed_domains` cannot narrow its sandbox's network.
pub const NARROWING_NEEDS_PROXY: &str =
    "allowed_domains narrows the network only where [sandbox] network = \"proxy\"";

impl SandboxRun {
    /// Have the engine's supervisor report the run's denials and make its Unix connects (without
    /// it, the helper refuses Unix sockets outright while the network is off).
    pub fn use_supervisor(&mut self) {
        self.layer.policy.denial_supervisor = crate::denial_supervisor().ok();
    }

    /// Reach only `domains` of the configured ones in this call. Refused where the sandbox's
    /// network is on (it cannot be narrowed) or a pattern is malformed; with the network off
    /// there is nothing to narrow.
    pub fn narrow_domains(&mut self, domains: &[String]) -> Result<(), String> {
        let policy = &mut self.layer.policy;
        match &mut policy.proxy {
            Some(proxy) => {
                proxy.narrowed_to = Some(domains.to_vec());
                proxy.validate().map_err(|e| e.to_string())
            }
            None if policy.network => Err(format!("{NARROWING_NEEDS_PROXY}; here the network is on")),
            None => Ok(()),
        }
    }

    /// A call's `allowed_domains` on its sandbox `run` (see [`SandboxRun::narrow_domains`]); a call
    /// that is not sandboxed cannot be narrowed.
    pub fn narrow(run: Option<&mut Self>, domains: &[String]) -> Result<(), CallRefusal> {
        match run {
            Some(run) => run.narrow_domains(domains).map_err(CallRefusal::NotNarrowed),
            None => Err(CallRefusal::NotNarrowed(format!(
                "{NARROWING_NEEDS_PROXY}; this call is not sandboxed"
            ))),
        }
    }

    /// What the result of a narrowed call says: it does not run in the session it names (the
    /// rules belong to the sandbox a shell runs in), but in `shell`, a shell of its own.
    pub fn narrowed_session_notice(shell: &str, session: &str) -> String {
        format!(
            "allowed_domains narrows this call's network, so it ran in a shell of its own (session '{shell}'), \
             not in session '{session}': that session's variables, functions and directory are not there, and \
             what this call changes stays there."
        )
    }

    /// Wrap a one-shot, terminal or job launch; `engine_root`, a directory of the engine's the
    /// command may write (a restored state file's own), stays writable in every mode.
    pub fn wrap_with_engine_root(&self, spec: LaunchSpec, engine_root: Option<&Path>) -> LaunchSpec {
        match engine_root {
            Some(root) => {
                let mut layer = self.layer.clone();
                layer.policy.engine_roots.push(root.to_path_buf());
                layer.wrap(spec)
            }
            None => self.layer.wrap(spec),
        }
    }

    /// Make `key` a session whose shell runs in this sandbox: its own layers (the shell is
    /// started through the helper, its private FIFO directory writable), and, for a mode
    /// stricter than the configured one, its own name (`default@read-only`), so that it is a
    /// shell of its own and never the configured one's.
    pub fn session_key(&self, key: &mut SessionKey) {
        if !self.configured {
            key.name = format!("{}@{}", key.name, self.mode);
        }
        if self
            .layer
            .policy
            .proxy
            .as_ref()
            .is_some_and(|p| p.narrowed_to.is_some())
        {
            key.name = format!("{}@narrowed", key.name);
        }
        let layer = SessionShellLayer {
            sandbox: self.layer.clone(),
            runtime_dir: self.runtime_dir.clone(),
        };
        // Keys compare layers by this id: proxy rules that changed (a destination a person allowed)
        // get a shell of their own, started with them.
        let rules = self
            .layer
            .policy
            .proxy
            .as_ref()
            .map_or_else(String::new, |proxy| {
                use std::hash::{Hash as _, Hasher as _};
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                serde_json::to_string(proxy).unwrap_or_default().hash(&mut hasher);
                format!(":proxy-{:016x}", hasher.finish())
            });
        key.layers = NamedLayers::new(
            format!("sandbox:{}{rules}", self.mode),
            LayerStack::new().with(layer),
        );
    }
}

/// The sandbox layer of a session shell: also makes the shell's own directory (where its script,
/// named in its arguments, lives) writable, and nothing else of the runtime directory — other
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
