//! Hosts for tests: a stand-in container engine that runs the script locally (always there), and the
//! real sshd, Docker and Podman that `.ci/hosts.sh` starts (named by `SHELLGATE_TEST_*`).

#![allow(dead_code)]

pub mod contract;

use std::path::PathBuf;

use shellgate_hosts::{ClientSettings, HostTarget, RemoteHost, SshSettings};

/// A container engine stand-in (see the script's header).
const FAKE_ENGINE: &str = include_str!("stand_in_engine.sh");

/// A host whose "container" is this machine, through the stand-in engine.
pub fn fake_host(dir: &std::path::Path) -> RemoteHost {
    let engine = dir.join("fake-engine");
    std::fs::write(&engine, FAKE_ENGINE).unwrap();
    std::fs::set_permissions(&engine, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let clients = ClientSettings {
        docker: vec![engine.display().to_string()],
        ..ClientSettings::default()
    };
    RemoteHost::new(HostTarget::parse("docker:here").unwrap(), clients, dir)
}

/// The same stand-in with a container that does not exist.
pub fn fake_missing_host(dir: &std::path::Path) -> RemoteHost {
    let host = fake_host(dir);
    RemoteHost::new(
        HostTarget::parse("docker:missing").unwrap(),
        host.clients().clone(),
        dir,
    )
}

/// Whether every component must be present (CI).
pub fn require_all() -> bool {
    std::env::var_os("SHELLGATE_REQUIRE_ALL").is_some_and(|v| v == "1")
}

/// `Some(value)` of a test host variable, or `None` after saying why the test skips (a failure under
/// `SHELLGATE_REQUIRE_ALL=1`).
pub fn component(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(value) if !value.is_empty() => Some(value),
        _ => {
            assert!(
                !require_all(),
                "{var} is not set but SHELLGATE_REQUIRE_ALL=1: {what} must be available (run .ci/hosts.sh up)"
            );
            eprintln!("skipped: {var} is not set ({what}; `.ci/hosts.sh up` starts it)");
            None
        }
    }
}

/// The sshd started by `.ci/hosts.sh`, as a host.
pub fn ssh_host(runtime: &std::path::Path) -> Option<RemoteHost> {
    let config = component("SHELLGATE_TEST_SSH_CONFIG", "an sshd on loopback")?;
    let dest = component("SHELLGATE_TEST_SSH_DEST", "an sshd on loopback")?;
    let clients = ClientSettings {
        ssh: SshSettings {
            config_file: Some(PathBuf::from(config)),
            ..SshSettings::default()
        },
        ..ClientSettings::default()
    };
    Some(RemoteHost::new(
        HostTarget::parse(&format!("ssh:{dest}")).unwrap(),
        clients,
        runtime,
    ))
}

/// A container of `engine` started by `.ci/hosts.sh`, as a host.
pub fn container_host(engine: &str, runtime: &std::path::Path) -> Option<RemoteHost> {
    let var = format!("SHELLGATE_TEST_{}", engine.to_uppercase());
    let name = component(&var, &format!("a running {engine} container"))?;
    let mut clients = ClientSettings::default();
    if engine == "podman"
        && let Ok(args) = std::env::var("SHELLGATE_TEST_PODMAN_ARGS")
    {
        clients.podman.extend(args.split_whitespace().map(str::to_owned));
    }
    Some(RemoteHost::new(
        HostTarget::parse(&format!("{engine}:{name}")).unwrap(),
        clients,
        runtime,
    ))
}
