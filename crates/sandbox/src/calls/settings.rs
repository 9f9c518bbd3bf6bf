//! The `[sandbox]` settings: as the tool holds them and as a configuration file spells them.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;

use crate::{ResourceLimits, SandboxMode};
use serde::{Deserialize, Serialize};

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
    pub network: Option<NetworkSetting>,
    /// With `network = "proxy"`: the destinations the proxy lets through (`host`, `*.suffix`,
    /// optionally `:port`).
    pub allowed_domains: Vec<String>,
    /// Destinations refused even when `allowed_domains` lists them.
    pub denied_domains: Vec<String>,
    /// `[sandbox.proxy] hosts`: names the proxy looks up here before DNS.
    pub proxy_hosts: BTreeMap<String, IpAddr>,
    /// `[sandbox.proxy] allow_local_addresses`: a listed name may lead to a local address.
    pub allow_local_addresses: bool,
    /// Unix-domain sockets while the network is off (default on).
    pub unix_sockets: bool,
    /// Unix sockets outside the sandbox it may connect to while the network is off.
    pub unix_socket_paths: Vec<PathBuf>,
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
    /// The engine's own files — configuration, approvals, trust store, artifacts, its executable —
    /// kept read-only (and uncreatable) in every sandbox, whatever its writable roots: a command
    /// that could rewrite them would decide how the next command is judged or confined. Filled in
    /// by the tool (its own configuration, approvals, trust store and executable) besides what is
    /// set here.
    pub engine_files: Vec<PathBuf>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            mode: None,
            writable_roots: Vec::new(),
            protected_paths: Vec::new(),
            network: None,
            allowed_domains: Vec::new(),
            denied_domains: Vec::new(),
            proxy_hosts: BTreeMap::new(),
            allow_local_addresses: false,
            unix_sockets: true,
            unix_socket_paths: Vec::new(),
            limits: ResourceLimits::sandbox_defaults(),
            allow_degraded: false,
            min_landlock_abi: None,
            helper: None,
            helper_args: vec!["sandbox-exec".to_owned()],
            engine_files: Vec::new(),
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

/// `[sandbox] network`: `false`, `true` or `"proxy"` (only through the engine's proxy, to the
/// destinations `allowed_domains` lists).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkSetting {
    /// No network (a loopback of the sandbox's own).
    Off,
    /// The machine's network.
    On,
    /// Only the engine's proxy.
    Proxy,
}

impl Serialize for NetworkSetting {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Off => serializer.serialize_bool(false),
            Self::On => serializer.serialize_bool(true),
            Self::Proxy => serializer.serialize_str("proxy"),
        }
    }
}

impl<'de> Deserialize<'de> for NetworkSetting {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Spelled {
            Flag(bool),
            Word(String),
        }
        match Spelled::deserialize(deserializer)? {
            Spelled::Flag(on) => Ok(if on { Self::On } else { Self::Off }),
            Spelled::Word(word) if word == "proxy" => Ok(Self::Proxy),
            Spelled::Word(word) => Err(serde::de::Error::custom(format!(
                "unknown network setting {word:?}: expected false, true or \"proxy\""
            ))),
        }
    }
}

/// `[sandbox.proxy]`: how the engine's proxy resolves names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxyFile {
    /// Static names, looked up before DNS (`{ "registry.internal" = "10.1.2.3" }`).
    pub hosts: Option<BTreeMap<String, IpAddr>>,
    /// Whether a listed name may lead to a loopback, link-local, private or metadata address.
    pub allow_local_addresses: Option<bool>,
}

/// The keys of the `[sandbox]` section ([`SandboxFile`]), for the configuration file's key check:
/// a value's name, `table.key` inside a table.
pub const SANDBOX_KEYS: &[&str] = &[
    "mode",
    "writable_roots",
    "protected_paths",
    "network",
    "allowed_domains",
    "denied_domains",
    "proxy.hosts",
    "proxy.allow_local_addresses",
    "unix_sockets",
    "unix_socket_paths",
    "cpu_seconds",
    "address_space_bytes",
    "file_size_bytes",
    "open_files",
    "processes",
    "memory_bytes",
    "allow_degraded",
    "min_landlock_abi",
];

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
    /// Network access in the sandbox: `false`, `true` or `"proxy"`.
    pub network: Option<NetworkSetting>,
    /// Destinations the proxy lets through.
    pub allowed_domains: Option<Vec<String>>,
    /// Destinations the proxy refuses whatever `allowed_domains` says.
    pub denied_domains: Option<Vec<String>>,
    /// `[sandbox.proxy]`.
    pub proxy: Option<ProxyFile>,
    /// Unix-domain sockets while the network is off.
    pub unix_sockets: Option<bool>,
    /// Unix sockets outside the sandbox it may connect to while the network is off.
    pub unix_socket_paths: Option<Vec<PathBuf>>,
    /// `RLIMIT_CPU`, seconds.
    pub cpu_seconds: Option<u64>,
    /// `RLIMIT_AS`, bytes.
    pub address_space_bytes: Option<u64>,
    /// `RLIMIT_FSIZE`, bytes.
    pub file_size_bytes: Option<u64>,
    /// `RLIMIT_NOFILE`.
    pub open_files: Option<u64>,
    /// `RLIMIT_NPROC` (and the run cgroup's `pids.max` where there is one).
    pub processes: Option<u64>,
    /// The run cgroup's memory ceiling, bytes (where the memory controller is available).
    pub memory_bytes: Option<u64>,
    /// Run with reduced enforcement instead of failing.
    pub allow_degraded: Option<bool>,
    /// The lowest Landlock ABI the kernel must offer.
    pub min_landlock_abi: Option<u8>,
}

impl SandboxFile {
    /// Refuse a malformed `allowed_domains`/`denied_domains` pattern when the file is read, naming
    /// its key and place, rather than at the first proxied run.
    pub fn check_domains(&self) -> Result<(), String> {
        for (key, list) in [
            ("sandbox.allowed_domains", &self.allowed_domains),
            ("sandbox.denied_domains", &self.denied_domains),
        ] {
            for (i, pattern) in list.iter().flatten().enumerate() {
                crate::check_domain_pattern(pattern).map_err(|e| format!("{key}[{i}]: {e}"))?;
            }
        }
        Ok(())
    }

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
        if let Some(domains) = &self.allowed_domains {
            config.allowed_domains.clone_from(domains);
        }
        if let Some(domains) = &self.denied_domains {
            config.denied_domains.clone_from(domains);
        }
        if let Some(proxy) = &self.proxy {
            if let Some(hosts) = &proxy.hosts {
                config.proxy_hosts.clone_from(hosts);
            }
            if let Some(allow) = proxy.allow_local_addresses {
                config.allow_local_addresses = allow;
            }
        }
        if let Some(unix) = self.unix_sockets {
            config.unix_sockets = unix;
        }
        if let Some(paths) = &self.unix_socket_paths {
            config.unix_socket_paths.clone_from(paths);
        }
        let limits = &mut config.limits;
        for (value, slot) in [
            (self.cpu_seconds, &mut limits.cpu_seconds),
            (self.address_space_bytes, &mut limits.address_space_bytes),
            (self.file_size_bytes, &mut limits.file_size_bytes),
            (self.open_files, &mut limits.open_files),
            (self.processes, &mut limits.processes),
            (self.memory_bytes, &mut limits.memory_bytes),
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
            allowed_domains: Some(config.allowed_domains.clone()),
            denied_domains: Some(config.denied_domains.clone()),
            proxy: Some(ProxyFile {
                hosts: Some(config.proxy_hosts.clone()),
                allow_local_addresses: Some(config.allow_local_addresses),
            }),
            unix_sockets: Some(config.unix_sockets),
            unix_socket_paths: Some(config.unix_socket_paths.clone()),
            cpu_seconds: config.limits.cpu_seconds,
            address_space_bytes: config.limits.address_space_bytes,
            file_size_bytes: config.limits.file_size_bytes,
            open_files: config.limits.open_files,
            processes: config.limits.processes,
            memory_bytes: config.limits.memory_bytes,
            allow_degraded: Some(config.allow_degraded),
            min_landlock_abi: config.min_landlock_abi,
        }
    }
}

impl SandboxFile {
    /// What of this section, from a file the user has not trusted, may apply over `now`: only what
    /// makes the sandbox stricter — a stricter mode, more protected paths, the network or Unix
    /// sockets off, lower limits, no degrading, a higher Landlock ABI. The keys applied go to
    /// `applied`.
    #[must_use]
    pub fn tightening(&self, now: &SandboxConfig, applied: &mut Vec<&'static str>) -> SandboxFile {
        let wanted = self;
        let mut out = SandboxFile::default();
        if let Some(mode) = wanted.mode {
            let mode: Option<SandboxMode> = mode.into();
            if strictness(mode) >= strictness(now.mode) {
                out.mode = Some(mode.into());
                applied.push("sandbox.mode");
            }
        }
        if let Some(paths) = &wanted.protected_paths {
            let mut merged = now.protected_paths.clone();
            merged.extend(paths.iter().cloned());
            out.protected_paths = Some(merged);
            applied.push("sandbox.protected_paths");
        }
        if wanted.network == Some(NetworkSetting::Off) {
            out.network = Some(NetworkSetting::Off);
            applied.push("sandbox.network");
        }
        if wanted.unix_sockets == Some(false) {
            out.unix_sockets = Some(false);
            applied.push("sandbox.unix_sockets");
        }
        let limits = &now.limits;
        let lower = |wanted: Option<u64>, now: Option<u64>| {
            wanted.filter(|&w| w != 0 && now.is_none_or(|n| n == 0 || w <= n))
        };
        for (key, value, slot) in [
            (
                "sandbox.cpu_seconds",
                lower(wanted.cpu_seconds, limits.cpu_seconds),
                &mut out.cpu_seconds,
            ),
            (
                "sandbox.address_space_bytes",
                lower(wanted.address_space_bytes, limits.address_space_bytes),
                &mut out.address_space_bytes,
            ),
            (
                "sandbox.file_size_bytes",
                lower(wanted.file_size_bytes, limits.file_size_bytes),
                &mut out.file_size_bytes,
            ),
            (
                "sandbox.open_files",
                lower(wanted.open_files, limits.open_files),
                &mut out.open_files,
            ),
            (
                "sandbox.processes",
                lower(wanted.processes, limits.processes),
                &mut out.processes,
            ),
        ] {
            if value.is_some() {
                *slot = value;
                applied.push(key);
            }
        }
        if wanted.allow_degraded == Some(false) {
            out.allow_degraded = Some(false);
            applied.push("sandbox.allow_degraded");
        }
        if let Some(abi) = wanted
            .min_landlock_abi
            .filter(|&a| now.min_landlock_abi.is_none_or(|n| a >= n))
        {
            out.min_landlock_abi = Some(abi);
            applied.push("sandbox.min_landlock_abi");
        }
        out
    }
}

/// How strict a mode is: a request may only go up.
pub(super) fn strictness(mode: Option<SandboxMode>) -> u8 {
    match mode {
        None => 0,
        Some(SandboxMode::Full) => 1,
        Some(SandboxMode::WorkspaceWrite) => 2,
        Some(SandboxMode::ReadOnly) => 3,
    }
}

pub(super) fn mode_name(mode: Option<SandboxMode>) -> String {
    mode.map_or_else(|| "off".to_owned(), |m| m.to_string())
}
