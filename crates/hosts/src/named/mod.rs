//! Named hosts (SPEC X-3): which host a call names, the host object that reaches it
//! (one per host, sharing its ssh connection), its persistent sessions, and the directory mapping
//! of named hosts.

mod config;
mod mapping;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::{HostTarget, RemoteHost, RemoteSessionOptions, RemoteSessions};

pub use config::{
    CLIENT_KEYS, ClientFile, HOSTS_KEYS, HostFile, HostsConfig, HostsFile, NamedHost, SSH_KEYS, SshFile,
};
pub use config::{HostSections, effective};

/// The `host` values that mean this machine.
const LOCAL: &[&str] = &["local", "auto", "sandbox"];

/// The hosts of one tool.
#[derive(Debug, Clone)]
pub struct Hosts {
    config: Arc<HostsConfig>,
    runtime_dir: PathBuf,
    reached: Arc<Mutex<HashMap<String, RemoteHost>>>,
    sessions: RemoteSessions,
}

/// A call that runs on a host.
#[derive(Debug, Clone)]
pub struct HostRun {
    /// The host.
    pub host: RemoteHost,
    /// Its configuration, when named.
    pub named: Option<NamedHost>,
}

impl HostRun {
    /// Where the call runs on the host: `requested` (the call's `cwd`, as given) or, without one,
    /// the tool's directory, mapped from a named host's `workspace` to its `workdir`. `None`: the
    /// host's own starting directory.
    pub fn remote_cwd(&self, requested: Option<&str>, tool_cwd: &Path) -> Option<String> {
        mapping::remote_cwd(self.named.as_ref(), requested, tool_cwd)
    }

    /// The host's directory `remote` as this machine's side sees it.
    pub fn local_cwd(&self, remote: &str) -> String {
        mapping::local_cwd(self.named.as_ref(), remote)
    }

    /// The variables of the host, then the call's.
    pub fn env(
        &self,
        call: &std::collections::BTreeMap<String, String>,
    ) -> std::collections::BTreeMap<String, String> {
        let mut env = self.named.as_ref().map(|n| n.env.clone()).unwrap_or_default();
        env.extend(call.iter().map(|(k, v)| (k.clone(), v.clone())));
        env
    }
}

impl Hosts {
    /// The hosts of `config`; sockets of shared connections go below `runtime_dir`.
    pub fn new(config: &HostsConfig, runtime_dir: &Path, options: RemoteSessionOptions) -> Self {
        Self {
            config: Arc::new(config.clone()),
            runtime_dir: runtime_dir.to_path_buf(),
            reached: Arc::default(),
            sessions: RemoteSessions::new(options),
        }
    }

    /// The host a call names: `Ok(None)` for this machine, `Err` (a message naming the host) for one
    /// that cannot be used. `sandboxed`: a sandbox is configured, so unnamed hosts are refused
    /// unless the configuration allows them.
    pub fn select(&self, host: Option<&str>, sandboxed: bool) -> Result<Option<HostRun>, String> {
        let Some(name) = host.filter(|h| !Self::is_local(h)) else {
            return Ok(None);
        };
        let (target, named) = self.target_of(name)?;
        if named.is_none() && !self.config.allow_unnamed.unwrap_or(!sandboxed) {
            return Err(format!(
                "host {name} is not named in the configuration, and this configuration runs \
                 commands only on this machine{} or on the hosts it names ([hosts.NAME]).",
                if sandboxed { " in its sandbox" } else { "" }
            ));
        }
        let named = named.cloned();
        let key = target.to_string();
        let host = self
            .reached
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key)
            .or_insert_with(|| RemoteHost::new(target, self.config.clients.clone(), &self.runtime_dir))
            .clone();
        Ok(Some(HostRun { host, named }))
    }

    /// Whether `host` names this machine.
    pub fn is_local(host: &str) -> bool {
        LOCAL.contains(&host)
    }

    /// The key a host's sessions are kept under (its target as printed), for a named host or a
    /// target; `None` when `host` is neither.
    pub fn session_key(&self, host: &str) -> Option<String> {
        self.target_of(host).ok().map(|(target, _)| target.to_string())
    }

    /// The target `name` stands for: a named host's (with its configuration), or `name` parsed as a
    /// target.
    fn target_of(&self, name: &str) -> Result<(HostTarget, Option<&NamedHost>), String> {
        match self.config.named.get(name) {
            Some(named) => Ok((named.target.clone(), Some(named))),
            None => HostTarget::parse(name)
                .map(|t| (t, None))
                .map_err(|e| e.to_string()),
        }
    }

    /// The persistent sessions on hosts.
    pub fn sessions(&self) -> &RemoteSessions {
        &self.sessions
    }

    /// End every remote session and shared connection.
    pub async fn shutdown(&self) {
        self.sessions.shutdown().await;
        let hosts: Vec<RemoteHost> = self
            .reached
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, h)| h)
            .collect();
        for host in hosts {
            host.shutdown();
        }
    }
}
