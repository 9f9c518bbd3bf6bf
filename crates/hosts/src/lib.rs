//! Remote hosts for shellgate (SPEC X-3): commands run on other machines through engines people
//! already operate — the OpenSSH client, `docker exec`, `podman exec`, `kubectl exec` — with the
//! same contract as local runs: directory, variables (values with spaces and quotes), exit codes,
//! timeouts and cancels that stop the *remote* process tree, and no remote process left behind.
//!
//! - [`HostTarget`] parses `ssh:<destination>`, `docker:<container>`, `podman:<container>` and
//!   `k8s:<pod>[/<container>][@<namespace>]`.
//! - [`RemoteHost`] holds the client settings, the shared ssh connection (ControlMaster, owned by
//!   the engine) and the reachability check that turns an unreachable host, a missing container or
//!   a missing `sh` into a clear error before anything runs.
//! - [`HostLayer`] is a launch layer: it rewrites a spec into the client's argv, with a script that
//!   marks every process of the run, reaps what the command leaves, and a
//!   [`LaunchSpec::remote_stop`](shellgate_executor::LaunchSpec::remote_stop) that the executor runs
//!   when the run is stopped early.
//! - [`RemoteSessions`] keeps persistent shells on hosts.
//!
//! Hosts must be Linux with `sh`, `grep -z` (GNU or busybox) and `/proc`. No Kubernetes API server
//! is available to this crate's tests: `k8s:` is tested as the argv it produces.

#![forbid(unsafe_code)]
// Scripts are assembled from a few formatted pieces once per launch; `push_str(&format!(…))` reads
// best there and costs nothing that matters.
#![allow(clippy::format_push_string, clippy::format_collect)]

mod clients;
mod error;
mod exec;
mod host;
mod named;
mod quote;
pub mod script;
mod session;
mod target;

pub use clients::{ClientSettings, Invocation, SshSettings};
pub use error::HostError;
pub use exec::HostExecutor;
pub use host::{HostLayer, RemoteHost};
pub use named::{
    CLIENT_KEYS, ClientFile, HOSTS_KEYS, HostFile, HostRun, HostSections, Hosts, HostsConfig, HostsFile,
    NamedHost, SSH_KEYS, SshFile, effective,
};
pub use quote::{is_shell_name, sh_quote};
pub use session::{RemoteSessionInfo, RemoteSessionOptions, RemoteSessions};
pub use target::{Engine, HostTarget};
