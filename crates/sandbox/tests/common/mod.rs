//! Shared helpers for the sandbox integration tests: the helper binary, skip-or-require, runs.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub mod static_server;

use shellgate_sandbox::{DenialCollector, DenialReport, SandboxLayer, SandboxMode, SandboxPolicy};

/// The helper binary built from this crate.
pub const HELPER: &str = env!("CARGO_BIN_EXE_shellgate-sandbox-exec");

/// Whether a missing component must fail the test instead of skipping it.
pub fn require_all() -> bool {
    std::env::var_os("SHELLGATE_REQUIRE_ALL").is_some_and(|v| v == "1")
}

/// Skip (print the reason, return false) or, under `SHELLGATE_REQUIRE_ALL=1`, fail.
pub fn available(ok: bool, reason: &str) -> bool {
    if !ok {
        assert!(!require_all(), "required component missing: {reason}");
        eprintln!("skipping: {reason}");
    }
    ok
}

/// Landlock with TCP rules (ABI 4) is needed by every sandbox test.
pub fn landlock_available() -> bool {
    let abi = shellgate_sandbox::landlock_abi();
    available(abi >= 4, &format!("Landlock ABI 4 needed, kernel offers {abi}"))
}

/// A collector, turning kernel auditing on first (the tests run as root); `None` (skip) where the
/// kernel cannot report denials.
pub fn collector() -> Option<DenialCollector> {
    let _ = shellgate_sandbox::enable_kernel_audit();
    match DenialCollector::start() {
        Ok(c) => Some(c),
        Err(off) => {
            available(false, &off.to_string());
            None
        }
    }
}

/// A scratch directory outside `/tmp` (which sandboxed commands may write).
pub fn scratch() -> tempfile::TempDir {
    // Never under `/tmp`: that is a writable root of the test policies, so "outside" would be writable.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let base = if target.starts_with("/tmp") {
        Path::new("/var/tmp")
    } else {
        target
    };
    tempfile::tempdir_in(base).expect("scratch dir")
}

/// A workspace-write policy around `workspace` with `/tmp` as the only other writable root
/// (whatever `$TMPDIR` the test runner has).
pub fn workspace_policy(workspace: &Path) -> SandboxPolicy {
    let mut policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, workspace);
    policy.writable_roots = vec![PathBuf::from("/tmp")];
    policy
}

/// The outcome of one run.
pub struct Run {
    pub output: Output,
    pub pid: u32,
    pub report: Option<DenialReport>,
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
}

/// Run `argv` in `cwd` through the launch layer (so the real argv rewriting is exercised), with
/// a collector around the run when one is given.
pub fn run_sandboxed(
    policy: &SandboxPolicy,
    cwd: &Path,
    env: &[(&str, &OsStr)],
    argv: &[&str],
    collector: Option<DenialCollector>,
) -> Run {
    let mut policy = policy.clone();
    if collector.is_some() {
        // The engine names its denial supervisor in every policy it reports denials for.
        policy.denial_supervisor = Some(shellgate_sandbox::denial_supervisor().expect("denial supervisor"));
    }
    let layer = SandboxLayer::new(HELPER, policy);
    let spec = layer.wrap(shellgate_executor::LaunchSpec::new(
        argv[0],
        argv[1..].iter().copied(),
        cwd,
    ));
    let mut command = Command::new(&spec.program);
    command.args(&spec.args).current_dir(&spec.cwd);
    run(command, env, collector)
}

/// Run a command as it is, with an optional collector around it.
pub fn run(mut command: Command, env: &[(&str, &OsStr)], collector: Option<DenialCollector>) -> Run {
    for (k, v) in env {
        command.env(k, v);
    }
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let output = child.wait_with_output().expect("wait");
    let report = collector.map(|c| c.finish(&[pid]));
    Run { output, pid, report }
}
