//! The sandbox policy: plain data, serialized to JSON for the helper's command line.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::SandboxError;

/// How much of the file system a command may change (SPEC X-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Nothing is writable except a few devices (`/dev/null`, terminals).
    ReadOnly,
    /// The writable roots (workspace, `$TMPDIR`, `/tmp`, configured ones) are writable; protected
    /// paths inside them stay read-only.
    WorkspaceWrite,
    /// No file-system restriction (network and syscall rules still apply).
    Full,
}

/// A sandbox mode name that is not one of `read-only`, `workspace-write`, `full`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode {0:?}: expected read-only, workspace-write or full")]
pub struct UnknownMode(pub String);

impl FromStr for SandboxMode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-only" => Ok(Self::ReadOnly),
            "workspace-write" => Ok(Self::WorkspaceWrite),
            "full" => Ok(Self::Full),
            other => Err(UnknownMode(other.to_owned())),
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::Full => "full",
        })
    }
}

/// Resource limits set (soft and hard) before the command starts; `None` (or 0) leaves the inherited
/// limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ResourceLimits {
    /// CPU time in seconds (`RLIMIT_CPU`; SIGXCPU, then SIGKILL).
    pub cpu_seconds: Option<u64>,
    /// Virtual address space in bytes (`RLIMIT_AS`; allocations beyond it fail).
    pub address_space_bytes: Option<u64>,
    /// Largest file the command may write, in bytes (`RLIMIT_FSIZE`; SIGXFSZ).
    pub file_size_bytes: Option<u64>,
    /// Open file descriptors (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
    /// Processes of the real user id (`RLIMIT_NPROC`; not enforced for root); also the run's
    /// `pids.max` where the engine gives it a cgroup (which holds root too).
    pub processes: Option<u64>,
    /// Memory of the run, page cache included, where the engine gives it a cgroup with the memory
    /// controller (`memory.limit_in_bytes`, `memory.max`); no rlimit stands for it.
    pub memory_bytes: Option<u64>,
}

impl ResourceLimits {
    /// Whether any limit is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The limits a sandboxed command gets unless configured otherwise: enough processes, open
    /// files and file size for any build, few enough that a fork bomb, a descriptor leak or a
    /// runaway log ends at a limit instead of at the machine's. (`RLIMIT_NPROC` counts every
    /// process of the user and never binds root; where the engine can use a cgroup, `pids.max`
    /// holds the run itself.)
    pub fn sandbox_defaults() -> Self {
        Self {
            cpu_seconds: None,
            address_space_bytes: None,
            file_size_bytes: Some(64 << 30),
            open_files: Some(65_536),
            processes: Some(8_192),
            memory_bytes: half_the_memory(),
        }
    }
}

/// Half of the machine's memory (`MemTotal`), the default ceiling of a sandboxed run's cgroup.
fn half_the_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024 / 2)
}

/// What a sandboxed command may do. Serialized as JSON on the helper's command line
/// ([`SandboxPolicy::to_json`], [`SandboxPolicy::from_json`]); unknown keys are rejected so that a
/// helper never silently ignores a restriction it does not understand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SandboxPolicy {
    /// File-system mode.
    pub mode: SandboxMode,
    /// The workspace root (usually the command's starting directory); always a writable root in
    /// `workspace-write` mode.
    pub workspace: PathBuf,
    /// Writable roots in `workspace-write` mode besides the workspace (`$TMPDIR` and `/tmp` by
    /// default, plus configured ones). Roots that do not exist are skipped.
    #[serde(default)]
    pub writable_roots: Vec<PathBuf>,
    /// Directories writable in every file-system mode, `read-only` included, and never protected:
    /// the engine's own (a session shell's FIFOs and state files live there).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub engine_roots: Vec<PathBuf>,
    /// Names that stay read-only directly inside every writable root (`.git` by default).
    #[serde(default)]
    pub protected_names: Vec<String>,
    /// Further absolute paths that stay read-only even inside a writable root.
    #[serde(default)]
    pub protected_paths: Vec<PathBuf>,
    /// Whether network access (TCP and every non-Unix socket family) is allowed.
    pub network: bool,
    /// Whether Unix-domain sockets (stream and seqpacket; datagram sockets send by path without a
    /// connect and stay refused) may be created while the network is off. They then reach only
    /// sockets bound inside the same sandbox and [`SandboxPolicy::unix_socket_paths`] (the
    /// engine's supervisor makes each connect); `socketpair` always works.
    #[serde(default = "yes")]
    pub unix_sockets: bool,
    /// Unix sockets outside the sandbox it may connect to while the network is off (an
    /// ssh-agent's, say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unix_socket_paths: Vec<PathBuf>,
    /// Resource limits.
    #[serde(default)]
    pub limits: ResourceLimits,
    /// Run with whatever the kernel can enforce instead of failing when it cannot enforce this
    /// policy (the caller must then say so in a notice).
    #[serde(default)]
    pub allow_degraded: bool,
    /// The lowest Landlock ABI the kernel must offer, on top of what the mode needs (ABI 3 for the
    /// file-system rules, ABI 4 for the network rules). Raising it makes a run fail on older kernels
    /// instead of running with fewer restrictions.
    #[serde(default)]
    pub min_landlock_abi: Option<u8>,
    /// Where the engine's denial supervisor listens ([`crate::denial_supervisor`]): with it, the
    /// helper hands the supervisor a seccomp listener, so that writes to protected paths and
    /// refused sockets are reported too. Without it (or when it cannot be reached) those stay
    /// refused, unreported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denial_supervisor: Option<String>,
    /// The network by name: with the network off, a loopback port inside the sandbox leads to the
    /// engine's proxy, which reaches only the destinations these rules allow. Needs the denial
    /// supervisor (the port is handed to the engine with the rest of the sandbox).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxyPolicy>,
}

/// The proxy port inside a sandbox's network namespace unless the policy names another (the
/// namespace is the sandbox's own, so any port is free there).
pub const DEFAULT_PROXY_PORT: u16 = 3128;

/// What the engine's proxy lets a sandbox reach ([`SandboxPolicy::proxy`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ProxyPolicy {
    /// The loopback port inside the sandbox where the proxy answers.
    #[serde(default = "default_proxy_port")]
    pub port: u16,
    /// Destinations the command may reach: `host`, `*.suffix` (names below `suffix`, not `suffix`
    /// itself), each with an optional `:port`.
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    /// Destinations refused even when `allowed_domains` lists them (same patterns).
    #[serde(default)]
    pub denied_domains: Vec<String>,
    /// Names looked up here before DNS.
    #[serde(default)]
    pub hosts: BTreeMap<String, IpAddr>,
    /// Whether an allowed name may lead to a loopback, link-local, private, metadata or this
    /// machine's own address.
    #[serde(default)]
    pub allow_local_addresses: bool,
    /// A narrower list one request asked for (same patterns): a destination must then match it
    /// too. It never widens `allowed_domains`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub narrowed_to: Option<Vec<String>>,
}

fn default_proxy_port() -> u16 {
    DEFAULT_PROXY_PORT
}

impl ProxyPolicy {
    /// Rules allowing `allowed_domains` and nothing else, on the default port.
    pub fn allowing(allowed_domains: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            port: DEFAULT_PROXY_PORT,
            allowed_domains: allowed_domains.into_iter().map(Into::into).collect(),
            denied_domains: Vec::new(),
            hosts: BTreeMap::new(),
            allow_local_addresses: false,
            narrowed_to: None,
        }
    }

    /// Check every pattern and name; the first malformed one is the error.
    pub fn validate(&self) -> Result<(), SandboxError> {
        crate::proxy::DomainRules::new(self)
            .map(drop)
            .map_err(SandboxError::InvalidPolicy)
    }

    /// The environment a proxied command gets: the proxy variables in upper and lower case and
    /// those of npm, pip and git, all naming `http://127.0.0.1:<port>` (SOCKS5 for `ALL_PROXY`).
    /// `existing` tells what the command's environment holds otherwise: git's `http.proxy` is
    /// added after the `GIT_CONFIG_COUNT` entries already there, not over them.
    pub fn environment(&self, existing: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
        let http = format!("http://127.0.0.1:{}", self.port);
        let socks = format!("socks5h://127.0.0.1:{}", self.port);
        let no_proxy = "localhost,127.0.0.1,::1".to_owned();
        let mut env = Vec::new();
        for (name, value) in [
            ("HTTP_PROXY", &http),
            ("HTTPS_PROXY", &http),
            ("ALL_PROXY", &socks),
            ("NO_PROXY", &no_proxy),
        ] {
            env.push((name.to_owned(), value.clone()));
            env.push((name.to_lowercase(), value.clone()));
        }
        for name in ["npm_config_proxy", "npm_config_https_proxy", "PIP_PROXY"] {
            env.push((name.to_owned(), http.clone()));
        }
        // git reads `http.proxy` from these without a configuration file. A count git would
        // refuse (not a number) is replaced: git would stop on it anyway.
        let index = existing("GIT_CONFIG_COUNT")
            .and_then(|count| count.trim().parse::<u32>().ok())
            .unwrap_or(0);
        env.push(("GIT_CONFIG_COUNT".to_owned(), (index + 1).to_string()));
        env.push((format!("GIT_CONFIG_KEY_{index}"), "http.proxy".to_owned()));
        env.push((format!("GIT_CONFIG_VALUE_{index}"), http));
        env
    }
}

fn yes() -> bool {
    true
}

impl SandboxPolicy {
    /// A policy for `mode` around `workspace`: writable roots `$TMPDIR` and `/tmp`, `.git` protected,
    /// network off except in `full` mode, Unix sockets allowed, no resource limits, fail closed.
    pub fn new(mode: SandboxMode, workspace: impl Into<PathBuf>) -> Self {
        let mut writable_roots = Vec::new();
        if let Some(tmp) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty()) {
            writable_roots.push(PathBuf::from(tmp));
        }
        if !writable_roots.iter().any(|r| r == Path::new("/tmp")) {
            writable_roots.push(PathBuf::from("/tmp"));
        }
        Self {
            mode,
            workspace: workspace.into(),
            writable_roots,
            engine_roots: Vec::new(),
            protected_names: vec![".git".to_owned()],
            protected_paths: Vec::new(),
            network: mode == SandboxMode::Full,
            unix_sockets: true,
            unix_socket_paths: Vec::new(),
            limits: ResourceLimits::default(),
            allow_degraded: false,
            min_landlock_abi: None,
            denial_supervisor: None,
            proxy: None,
        }
    }

    /// Reach the network only through the engine's proxy, with these rules (the network itself is
    /// then off).
    #[must_use]
    pub fn with_proxy(mut self, proxy: ProxyPolicy) -> Self {
        self.network = false;
        self.proxy = Some(proxy);
        self
    }

    /// Set whether the network is allowed.
    #[must_use]
    pub fn with_network(mut self, network: bool) -> Self {
        self.network = network;
        self
    }

    /// Add a writable root.
    #[must_use]
    pub fn with_writable_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.writable_roots.push(root.into());
        self
    }

    /// Add a directory writable in every mode (see [`SandboxPolicy::engine_roots`]).
    #[must_use]
    pub fn with_engine_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.engine_roots.push(root.into());
        self
    }

    /// Add an absolute path that stays read-only inside writable roots.
    #[must_use]
    pub fn with_protected_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.protected_paths.push(path.into());
        self
    }

    /// Set the resource limits.
    #[must_use]
    pub fn with_limits(mut self, limits: ResourceLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Allow running with reduced enforcement when the kernel cannot enforce the policy.
    #[must_use]
    pub fn with_allow_degraded(mut self, allow: bool) -> Self {
        self.allow_degraded = allow;
        self
    }

    /// Every writable root in `workspace-write` mode: the workspace first, then the others.
    pub fn all_writable_roots(&self) -> Vec<&Path> {
        let mut roots: Vec<&Path> = vec![self.workspace.as_path()];
        for root in &self.writable_roots {
            if !roots.contains(&root.as_path()) {
                roots.push(root);
            }
        }
        roots
    }

    /// The protected paths: each protected name directly inside each writable root, then the
    /// configured protected paths. Only meaningful in `workspace-write` mode.
    ///
    /// A repository (`.git`) is protected where git takes commands from: its configuration, its
    /// hooks and the places that lead to other configurations, so that a
    /// commit still works but nothing can make a later git run code. A `.git` *file* (a worktree's
    /// or submodule's `gitdir:` pointer) is protected itself, and so are those places in the
    /// directory it names. Whether or not they exist yet: the ones that do are read-only mounts,
    /// the others cannot be created.
    pub fn all_protected_paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = Vec::new();
        for root in self.all_writable_roots() {
            for name in &self.protected_names {
                let path = root.join(name);
                if name != ".git" {
                    paths.push(path);
                    continue;
                }
                match git_dir_of_file(&path) {
                    Some(target) => {
                        paths.push(path);
                        paths.extend(GIT_CODE_PATHS.iter().map(|p| target.join(p)));
                    }
                    None => paths.extend(GIT_CODE_PATHS.iter().map(|p| path.join(p))),
                }
            }
        }
        paths.extend(self.protected_paths.iter().cloned());
        paths
    }

    /// Whether `path` (absolute, already resolved) may be written under this policy.
    pub fn may_write(&self, path: &Path) -> bool {
        if self.mode != SandboxMode::Full && self.engine_roots.iter().any(|root| path.starts_with(root)) {
            return true;
        }
        match self.mode {
            SandboxMode::Full => true,
            SandboxMode::ReadOnly => is_writable_device(path),
            SandboxMode::WorkspaceWrite => {
                is_writable_device(path)
                    || (self
                        .all_writable_roots()
                        .iter()
                        .any(|root| path.starts_with(root))
                        && !self
                            .all_protected_paths()
                            .iter()
                            .any(|protected| path.starts_with(protected)))
            }
        }
    }

    /// The policy as one line of JSON (what the launch layer puts on the helper's command line).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a policy always serializes")
    }

    /// Parse a policy written by [`SandboxPolicy::to_json`].
    pub fn from_json(json: &str) -> Result<Self, SandboxError> {
        serde_json::from_str(json).map_err(|e| SandboxError::InvalidPolicy(e.to_string()))
    }
}

/// Inside a git directory, what git reads commands from: the configuration (`core.fsmonitor`,
/// `core.pager`, filters, aliases, `include.path`…), the per-worktree configuration, the hooks, and
/// what points git at another repository's configuration (`commondir`, submodules' and
/// worktrees' own git directories).
pub const GIT_CODE_PATHS: &[&str] = &[
    "config",
    "config.worktree",
    "hooks",
    "commondir",
    "modules",
    "worktrees",
];

/// The directory a `.git` file names (`gitdir: <path>`, relative to the file's directory).
fn git_dir_of_file(path: &Path) -> Option<PathBuf> {
    if !std::fs::symlink_metadata(path).ok()?.is_file() {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    Some(path.parent()?.join(target))
}

/// Devices writable in every sandbox mode (besides the terminal directory `/dev/pts`).
pub(crate) const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/random",
    "/dev/urandom",
];

pub(crate) fn is_writable_device(path: &Path) -> bool {
    WRITABLE_DEVICES.iter().any(|d| path == Path::new(d)) || path.starts_with("/dev/pts")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_and_reject_unknown() {
        for mode in [
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite,
            SandboxMode::Full,
        ] {
            assert_eq!(mode.to_string().parse::<SandboxMode>().unwrap(), mode);
        }
        let err = "write-all".parse::<SandboxMode>().unwrap_err();
        assert!(err.to_string().contains("write-all"));
    }

    #[test]
    fn write_rules_per_mode() {
        let ws = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/w");
        assert!(ws.may_write(Path::new("/w/a/b")));
        assert!(ws.may_write(Path::new("/tmp/x")));
        assert!(!ws.may_write(Path::new("/w/.git/config")));
        assert!(!ws.may_write(Path::new("/w/.git/hooks/pre-commit")));
        // A commit writes objects, refs and the index.
        assert!(ws.may_write(Path::new("/w/.git/objects/ab/cdef")));
        assert!(ws.may_write(Path::new("/w/.git/index")));
        assert!(!ws.may_write(Path::new("/wx/file")));
        assert!(!ws.network);
        let ws = ws.with_protected_path("/w/secrets");
        assert!(!ws.may_write(Path::new("/w/secrets/key")));
        let ro = SandboxPolicy::new(SandboxMode::ReadOnly, "/w");
        assert!(!ro.may_write(Path::new("/w/a")));
        assert!(ro.may_write(Path::new("/dev/null")));
        assert!(ro.may_write(Path::new("/dev/pts/3")));
        assert!(SandboxPolicy::new(SandboxMode::Full, "/w").may_write(Path::new("/etc/x")));
        let ro = ro.with_engine_root("/run/engine");
        assert!(ro.may_write(Path::new("/run/engine/fifo")));
        assert!(!ro.may_write(Path::new("/run/other")));
        assert!(SandboxPolicy::new(SandboxMode::Full, "/w").network);
    }

    #[test]
    fn json_round_trips_and_rejects_unknown_keys() {
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/w with space")
            .with_writable_root("/cache")
            .with_limits(ResourceLimits {
                address_space_bytes: Some(1 << 30),
                ..ResourceLimits::default()
            });
        let json = policy.to_json();
        assert!(!json.contains('\n'));
        assert_eq!(SandboxPolicy::from_json(&json).unwrap(), policy);
        let err = SandboxPolicy::from_json(
            r#"{"mode":"read-only","workspace":"/w","network":false,"sandbox_everything":true}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("sandbox_everything"), "{err}");
        let minimal =
            SandboxPolicy::from_json(r#"{"mode":"read-only","workspace":"/w","network":false}"#).unwrap();
        assert!(minimal.unix_sockets);
        assert!(!minimal.allow_degraded);
    }

    #[test]
    fn protected_paths_cover_every_writable_root() {
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/w").with_writable_root("/c");
        let protected = policy.all_protected_paths();
        for root in ["/w", "/c"] {
            for inside in GIT_CODE_PATHS {
                assert!(protected.contains(&Path::new(root).join(".git").join(inside)));
            }
        }
        assert_eq!(policy.all_writable_roots()[0], Path::new("/w"));
    }

    #[test]
    fn a_git_file_is_protected_with_the_directory_it_names() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".git"), "gitdir: ../real/.git/worktrees/w\n").unwrap();
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, dir.path());
        let protected = policy.all_protected_paths();
        assert!(protected.contains(&dir.path().join(".git")));
        let target = dir.path().join("../real/.git/worktrees/w");
        assert!(protected.contains(&target.join("config")), "{protected:?}");
        assert!(protected.contains(&target.join("hooks")), "{protected:?}");
    }
}
