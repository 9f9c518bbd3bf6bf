//! The host settings: `[ssh]`, `[docker]`, `[podman]`, `[kubectl]` and named hosts `[hosts.NAME]`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::{ClientSettings, HostTarget};
use serde::{Deserialize, Serialize};

/// A host named in the configuration (`[hosts.NAME]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedHost {
    /// Where it runs (`ssh:…`, `docker:…`, `podman:…`, `k8s:…`).
    pub target: HostTarget,
    /// The directory on this machine that corresponds to [`Self::workdir`] on the host: a request's
    /// `cwd` inside it runs at the same place under `workdir`, and the result's `cwd` maps back.
    pub workspace: Option<PathBuf>,
    /// The directory on the host commands start in (and that `workspace` maps to).
    pub workdir: Option<String>,
    /// Variables every command on the host gets (a request's `env` wins).
    pub env: BTreeMap<String, String>,
}

/// Every host setting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostsConfig {
    /// How each client is invoked.
    pub clients: ClientSettings,
    /// Hosts by name.
    pub named: BTreeMap<String, NamedHost>,
    /// Whether a call may name a host that is not configured (`ssh:box`). Default: yes, unless a
    /// sandbox is configured (a sandboxed configuration runs only locally or on hosts it names).
    pub allow_unnamed: Option<bool>,
}

/// The keys of the `[ssh]` section ([`SshFile`]), for the configuration file's key check.
pub const SSH_KEYS: &[&str] = &["program", "config_file", "options", "multiplex"];

/// `[ssh]` of a configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SshFile {
    /// The client program.
    pub program: Option<String>,
    /// Passed as `-F`.
    pub config_file: Option<PathBuf>,
    /// Passed as `-o`, `Key=Value` each.
    pub options: Option<Vec<String>>,
    /// One shared connection per destination.
    pub multiplex: Option<bool>,
}

/// The keys of a container client's section (`[docker]`, `[podman]`, `[kubectl]`: [`ClientFile`]).
pub const CLIENT_KEYS: &[&str] = &["command"];

/// `[docker]`, `[podman]` or `[kubectl]` of a configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientFile {
    /// The client and its arguments before `exec` (`["podman", "--runtime", "runc"]`).
    pub command: Option<Vec<String>>,
}

/// `[hosts.NAME]` of a configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostFile {
    /// `ssh:…`, `docker:…`, `podman:…` or `k8s:…`.
    pub target: String,
    /// See [`NamedHost::workspace`].
    pub workspace: Option<PathBuf>,
    /// See [`NamedHost::workdir`].
    pub workdir: Option<String>,
    /// See [`NamedHost::env`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

/// The keys of the `[hosts]` section ([`HostsFile`]), for the configuration file's key check: its
/// values, and `*.key` in each named host's table (`[hosts.web] target = …`).
pub const HOSTS_KEYS: &[&str] = &["allow_unnamed", "*.target", "*.workspace", "*.workdir", "*.env"];

/// `[hosts]` of a configuration file: named hosts, and whether unnamed ones are allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostsFile {
    /// See [`HostsConfig::allow_unnamed`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_unnamed: Option<bool>,
    /// The named hosts.
    #[serde(flatten)]
    pub named: BTreeMap<String, HostFile>,
}

/// The host sections of a configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostSections<'a> {
    /// `[ssh]`.
    pub ssh: Option<&'a SshFile>,
    /// `[docker]`.
    pub docker: Option<&'a ClientFile>,
    /// `[podman]`.
    pub podman: Option<&'a ClientFile>,
    /// `[kubectl]`.
    pub kubectl: Option<&'a ClientFile>,
    /// `[hosts.NAME]`.
    pub hosts: Option<&'a HostsFile>,
}

impl HostSections<'_> {
    /// Check the sections (a named host's target must parse).
    pub fn check(&self) -> Result<(), String> {
        for (name, host) in self.hosts.into_iter().flat_map(|h| &h.named) {
            HostTarget::parse(&host.target).map_err(|e| format!("hosts.{name}.target: {e}"))?;
            if matches!(name.as_str(), "local" | "auto" | "sandbox") || name.contains(':') {
                return Err(format!(
                    "hosts.{name}: this name is reserved (local, auto, sandbox, kind:…)"
                ));
            }
        }
        for (section, file) in [
            ("docker", self.docker),
            ("podman", self.podman),
            ("kubectl", self.kubectl),
        ] {
            if file.and_then(|f| f.command.as_ref()).is_some_and(Vec::is_empty) {
                return Err(format!("{section}.command: must name the client program"));
            }
        }
        Ok(())
    }

    /// Apply the values that are set (after [`Self::check`]).
    pub fn apply(&self, config: &mut HostsConfig) {
        if let Some(ssh) = self.ssh {
            let target = &mut config.clients.ssh;
            if let Some(program) = &ssh.program {
                target.program.clone_from(program);
            }
            if ssh.config_file.is_some() {
                target.config_file.clone_from(&ssh.config_file);
            }
            if let Some(options) = &ssh.options {
                target.options.clone_from(options);
            }
            if let Some(multiplex) = ssh.multiplex {
                target.multiplex = multiplex;
            }
        }
        for (file, slot) in [
            (self.docker, &mut config.clients.docker),
            (self.podman, &mut config.clients.podman),
            (self.kubectl, &mut config.clients.kubectl),
        ] {
            if let Some(command) = file.and_then(|f| f.command.as_ref()) {
                slot.clone_from(command);
            }
        }
        if let Some(hosts) = self.hosts {
            if hosts.allow_unnamed.is_some() {
                config.allow_unnamed = hosts.allow_unnamed;
            }
            for (name, host) in &hosts.named {
                let Ok(target) = HostTarget::parse(&host.target) else {
                    continue;
                };
                config.named.insert(
                    name.clone(),
                    NamedHost {
                        target,
                        workspace: host.workspace.clone(),
                        workdir: host.workdir.clone(),
                        env: host.env.clone(),
                    },
                );
            }
        }
    }
}

/// The settings in effect, as file sections (what `shellgate config` prints).
pub fn effective(config: &HostsConfig) -> (SshFile, [ClientFile; 3], HostsFile) {
    let ssh = &config.clients.ssh;
    let ssh = SshFile {
        program: Some(ssh.program.clone()),
        config_file: ssh.config_file.clone(),
        options: Some(ssh.options.clone()),
        multiplex: Some(ssh.multiplex),
    };
    let client = |command: &Vec<String>| ClientFile {
        command: Some(command.clone()),
    };
    let clients = [
        client(&config.clients.docker),
        client(&config.clients.podman),
        client(&config.clients.kubectl),
    ];
    let hosts = HostsFile {
        allow_unnamed: config.allow_unnamed,
        named: config
            .named
            .iter()
            .map(|(name, host)| {
                (
                    name.clone(),
                    HostFile {
                        target: host.target.to_string(),
                        workspace: host.workspace.clone(),
                        workdir: host.workdir.clone(),
                        env: host.env.clone(),
                    },
                )
            })
            .collect(),
    };
    (ssh, clients, hosts)
}
