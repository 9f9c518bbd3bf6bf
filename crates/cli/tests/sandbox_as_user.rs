//! The sandbox's promises for an engine that runs as an ordinary user (here `nobody`, switched to
//! with `setpriv` from a root test run): no kernel auditing to read, no capabilities anywhere, and
//! still denials as data, Unix sockets outside out of reach, and ordinary work done.

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const NOBODY: u32 = 65_534;

/// A directory `nobody` owns, outside `/tmp` (a writable root of the sandbox).
fn owned_dir(name: &str) -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("as-user-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    std::os::unix::fs::chown(&base, Some(NOBODY), Some(NOBODY)).unwrap();
    base
}

/// Whether this test can switch users (it runs as root, `setpriv` is there).
fn can_switch() -> bool {
    let root = rustix::process::geteuid().is_root();
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    common::available(
        root && setpriv,
        "switching to an ordinary user needs root and setpriv",
    )
}

/// `shellgate run --json ARGS…` as `nobody`, in `workspace`, with its home in `home`.
fn run_as_nobody(workspace: &Path, home: &Path, args: &[&str]) -> Value {
    let output = Command::new("setpriv")
        .args(["--reuid", "65534", "--regid", "65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_shellgate"))
        .args(["run", "--json"])
        .args(args)
        .current_dir(workspace)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home)
        .output()
        .unwrap();
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {} {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn an_ordinary_user_gets_the_sandbox_and_its_denials_as_data() {
    if !can_switch() || shellgate_sandbox::landlock_abi() < 4 {
        return;
    }
    let workspace = owned_dir("ws");
    let home = owned_dir("home");
    // A Unix socket of root's that nobody may connect to by its permissions alone.
    let socket_dir = owned_dir("sock");
    let socket = socket_dir.join("daemon.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777)).unwrap();
    let probe = format!("/etc/shellgate-user-probe-{}", std::process::id());
    let script = format!(
        "id -u; touch ./ok && echo made; touch {probe} 2>/dev/null || echo refused-etc; \
         python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{}\")' 2>/dev/null \
         && echo REACHED || echo refused-socket",
        socket.display()
    );
    let v = run_as_nobody(&workspace, &home, &["--sandbox", "workspace-write", &script]);
    let out = v["output"].as_str().unwrap_or_default();
    assert_eq!(v["status"], "completed", "{v}");
    assert!(out.starts_with("65534"), "{v}");
    for marker in ["made", "refused-etc", "refused-socket"] {
        assert!(out.contains(marker), "{marker}: {v}");
    }
    assert!(!out.contains("REACHED"), "{v}");
    assert!(listener.accept().is_err(), "the socket was reached");
    assert!(workspace.join("ok").exists());
    // Denials come from the engine's own supervisor: no root, no kernel auditing needed.
    let denied = v["sandbox_denied"].to_string();
    assert!(denied.contains(&probe), "{v}");
    assert!(denied.contains("unix:"), "{v}");
    assert!(!v["notices"].to_string().contains("reporting is off"), "{v}");
}
