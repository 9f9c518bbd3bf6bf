//! Starting a process for the pipe executor: pipes, environment, run marker, the `pre_exec` hook.

use std::ffi::{OsStr, OsString};
use std::io::{self, PipeReader, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Instant;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use tokio::net::unix::pipe;
use tokio::process::{Child, ChildStdin};

use crate::cwd::validate_cwd;
use crate::direct::{self, ChildFds, CommandWatch, DirectChild};
use crate::error::ExecError;
use crate::guard::{self, ExecImage};
use crate::spec::{StatusReport, parse_status_trailer};
use crate::tree::{self, ProcessTree, RUN_MARKER_VAR};
use crate::{LaunchSpec, StdinMode};

/// A started process and everything needed to follow it.
pub(crate) struct Launched {
    pub(crate) child: Leader,
    pub(crate) output: pipe::Receiver,
    pub(crate) status: Option<PipeReader>,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) tree: ProcessTree,
    pub(crate) pid: u32,
    pub(crate) start: Instant,
}

/// Start `spec` in a new session with stdout and stderr on one pipe. Needs a tokio runtime.
pub(crate) fn launch(spec: &LaunchSpec, guarded: bool) -> Result<Launched, ExecError> {
    let mode = match (guarded, crate::vmguard::SUPPORTED) {
        (false, _) => StartMode::Direct,
        (true, true) => StartMode::VmGuard,
        (true, false) => StartMode::ForkGuard,
    };
    launch_mode(spec, mode)
}

/// How the command is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StartMode {
    /// The command is the engine's child (`clone(CLONE_VM | CLONE_VFORK)` + `execve`).
    Direct,
    /// A guard sharing the engine's memory starts the command (x86-64, aarch64).
    VmGuard,
    /// A forked guard starts the command (any architecture).
    ForkGuard,
}

pub(crate) fn launch_mode(spec: &LaunchSpec, mode: StartMode) -> Result<Launched, ExecError> {
    let start = Instant::now();
    validate_cwd(&spec.cwd)?;
    // Idempotent; without it escaped descendants are re-parented to init and only a full /proc scan
    // (by session, group and marker) finds them.
    let _ = tree::init_subreaper();
    let pipe_err = |what| move |source| ExecError::Pipe { what, source };
    let (reader, writer) = std::io::pipe().map_err(pipe_err("output pipe"))?;
    let status_pipe = if spec.status_report {
        let (r, w) = std::io::pipe().map_err(pipe_err("status pipe"))?;
        fcntl(&r, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(|e| ExecError::Pipe {
            what: "status pipe",
            source: e.into(),
        })?;
        Some((r, w))
    } else {
        None
    };
    let marker = tree::new_run_marker();
    let mut image = exec_image(spec, &marker)?;
    let cgroup = crate::cgroup::RunCgroup::create(spec.cgroup_limits).map(std::sync::Arc::new);
    if let Some(cgroup) = &cgroup {
        image.set_cgroup(cgroup);
    }
    let needle = crate::marked::needle(&marker);

    let status_fd = status_pipe.as_ref().map(|(_, w)| w.as_raw_fd());
    let (leader, stdin) = match mode {
        StartMode::VmGuard => start_direct(spec, image, &writer, status_fd, Some(needle))?,
        StartMode::ForkGuard => {
            // std hands the child its stdout and stderr as two descriptors (the direct starts dup
            // one descriptor onto both in the child, so they need no copy).
            let stderr_writer = writer.try_clone().map_err(pipe_err("output pipe"))?;
            start_guarded(spec, image, writer, stderr_writer, status_fd, needle)?
        }
        StartMode::Direct => start_direct(spec, image, &writer, status_fd, None)?,
    };
    // Our copies of the write ends are gone (dropped above or in `cmd`), so EOF arrives when the
    // process tree closes its copies.
    let status = status_pipe.map(|(r, _w)| r);
    let pid = leader.id();
    let tree = ProcessTree::new(pid, Some(marker)).with_cgroup(cgroup);
    let output = match pipe::Receiver::from_owned_fd(OwnedFd::from(reader)) {
        Ok(r) => r,
        Err(source) => {
            tree.kill_all();
            return Err(ExecError::Pipe {
                what: "output watcher",
                source,
            });
        }
    };
    Ok(Launched {
        stdin,
        child: leader,
        output,
        status,
        tree,
        pid,
        start,
    })
}

/// The process the executor follows: the guard (a tokio child) or the command itself.
pub(crate) enum Leader {
    /// Forked by std with the guard hook; tokio reaps it.
    Guarded(Child),
    /// Started by [`direct::spawn`]; reaped through its pidfd.
    Direct(DirectChild),
}

impl Leader {
    fn id(&self) -> u32 {
        match self {
            Self::Guarded(c) => c.id().unwrap_or(0),
            Self::Direct(d) => d.id(),
        }
    }

    /// For a guard started by `vmguard`: a watcher of its command (see [`CommandWatch`]).
    pub(crate) fn command_watch(&self) -> Option<CommandWatch> {
        match self {
            Self::Guarded(_) => None,
            Self::Direct(d) => d.command_watch(),
        }
    }

    /// Let the leader be reaped in the background (it was killed or is exiting).
    pub(crate) fn reap_later(self) {
        match self {
            // tokio reaps its children in the background once they are dropped.
            Self::Guarded(c) => drop(c),
            Self::Direct(d) => d.reap_later(),
        }
    }

    /// Wait for the leader to exit. Cancel-safe.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            Self::Guarded(c) => c.wait().await,
            Self::Direct(d) => d.wait().await,
        }
    }
}

#[allow(unsafe_code)] // `pre_exec`: the guard hook between fork and exec
fn start_guarded(
    spec: &LaunchSpec,
    mut image: ExecImage,
    writer: std::io::PipeWriter,
    stderr_writer: std::io::PipeWriter,
    status_fd: Option<RawFd>,
    needle: Box<[u8]>,
) -> Result<(Leader, Option<ChildStdin>), ExecError> {
    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.current_dir(&spec.cwd);
    cmd.stdin(match spec.stdin {
        StdinMode::Null => Stdio::null(),
        StdinMode::Piped => Stdio::piped(),
    });
    cmd.stdout(Stdio::from(OwnedFd::from(writer)));
    cmd.stderr(Stdio::from(OwnedFd::from(stderr_writer)));
    cmd.process_group(0);
    // Only reaches the guard; the guard's death takes the command down through its parent-death
    // signal, and the executor kills the rest of the tree itself.
    cmd.kill_on_drop(true);
    let engine = std::process::id() as libc::pid_t;
    image.reserve_stack();
    // SAFETY: the hook only makes async-signal-safe system calls and does not allocate (see guard.rs);
    // it captures plain integers and the exec image, laid out before the fork.
    unsafe {
        cmd.pre_exec(move || guard::in_child_exec(&mut image, engine, status_fd, true, &needle));
    }
    let mut child = cmd.spawn().map_err(|source| ExecError::Spawn {
        program: spec.program.clone(),
        source,
    })?;
    let stdin = child.stdin.take();
    Ok((Leader::Guarded(child), stdin))
}

/// `/dev/null` for reading, opened once: every run started without stdin gets a copy of it (an `open`
/// and a `close` fewer per run). The copies share one open file, which a command can change only in
/// ways a read of `/dev/null` does not notice (its offset, `O_NONBLOCK`).
fn dev_null() -> std::io::Result<RawFd> {
    static DEV_NULL: std::sync::OnceLock<std::fs::File> = std::sync::OnceLock::new();
    if let Some(file) = DEV_NULL.get() {
        return Ok(file.as_raw_fd());
    }
    let file = std::fs::File::open("/dev/null")?;
    Ok(DEV_NULL.get_or_init(|| file).as_raw_fd())
}

/// Start without forking the engine: the command directly (no `guard`), or the shared-memory guard
/// that starts it (`guard` holds the run's marker entry, see [`crate::marked`]).
fn start_direct(
    spec: &LaunchSpec,
    image: ExecImage,
    writer: &std::io::PipeWriter,
    status_fd: Option<RawFd>,
    guard: Option<Box<[u8]>>,
) -> Result<(Leader, Option<ChildStdin>), ExecError> {
    let spawn_err = |source| ExecError::Spawn {
        program: spec.program.clone(),
        source,
    };
    let (stdin_read, stdin_write): (Option<OwnedFd>, Option<std::io::PipeWriter>) = match spec.stdin {
        StdinMode::Null => (None, None),
        StdinMode::Piped => {
            let (r, w) = std::io::pipe().map_err(|source| ExecError::Pipe {
                what: "stdin pipe",
                source,
            })?;
            (Some(r.into()), Some(w))
        }
    };
    let stdin = match &stdin_read {
        Some(fd) => fd.as_raw_fd(),
        None => dev_null().map_err(spawn_err)?,
    };
    let fds = ChildFds {
        stdin,
        stdout: writer.as_raw_fd(),
        stderr: writer.as_raw_fd(),
        status: status_fd,
    };
    let child = match guard {
        Some(needle) => crate::vmguard::spawn(image, &spec.cwd, &fds, needle),
        None => direct::spawn(&image, &spec.cwd, &fds),
    }
    .map_err(spawn_err)?;
    drop(stdin_read);
    let stdin = match stdin_write {
        Some(w) => Some(
            ChildStdin::from_std(std::process::ChildStdin::from(OwnedFd::from(w))).map_err(|source| {
                ExecError::Pipe {
                    what: "stdin pipe",
                    source,
                }
            })?,
        ),
        None => None,
    };
    Ok((Leader::Direct(child), stdin))
}

/// The command's program path, arguments and final environment (inherited unless cleared, minus
/// `env_remove`, plus `env`, plus the run marker), as C arrays.
fn exec_image(spec: &LaunchSpec, marker: &str) -> Result<ExecImage, ExecError> {
    // The spec's own variables and the marker replace inherited ones of the same name; the rest is
    // passed on as the engine has it (no map: this runs for every command).
    let replaced = |key: &OsStr| {
        key == RUN_MARKER_VAR
            || key.to_str().is_some_and(|k| spec.env.contains_key(k))
            || spec.env_remove.iter().any(|r| key == r.as_str())
    };
    let inherited: Vec<(OsString, OsString)> = if spec.env_clear {
        Vec::new()
    } else {
        std::env::vars_os().filter(|(key, _)| !replaced(key)).collect()
    };
    let own = spec
        .env
        .iter()
        .filter(|(k, _)| *k != RUN_MARKER_VAR)
        .map(|(k, v)| (OsStr::new(k), OsStr::new(v)));
    let marker = std::iter::once((OsStr::new(RUN_MARKER_VAR), OsStr::new(marker)));
    let env = || {
        inherited
            .iter()
            .map(|(k, v)| (k.as_os_str(), v.as_os_str()))
            .chain(own.clone())
            .chain(marker.clone())
    };
    let spawn_err = |source| ExecError::Spawn {
        program: spec.program.clone(),
        source,
    };
    let path_var = env().find(|(k, _)| *k == "PATH").map(|(_, v)| v);
    let path = resolve_program(&spec.program, &spec.cwd, path_var).ok_or_else(|| {
        spawn_err(io::Error::new(
            io::ErrorKind::NotFound,
            "not found, or not an executable file",
        ))
    })?;
    ExecImage::new(&path, spec.args.iter().map(OsStr::new), env()).map_err(spawn_err)
}

/// `program` itself when it names a path (relative ones against `cwd`) to an executable file, else the first executable file of that name on `path_var`
/// (the child's `PATH`, as `execvp` would search it).
fn resolve_program(program: &str, cwd: &Path, path_var: Option<&OsStr>) -> Option<PathBuf> {
    let executable =
        |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.contains('/') {
        let path = cwd.join(program);
        return executable(&path).then(|| PathBuf::from(program));
    }
    if program.is_empty() {
        return None;
    }
    let default = OsStr::new("/usr/local/bin:/usr/bin:/bin");
    std::env::split_paths(path_var.unwrap_or(default))
        .map(|dir| dir.join(program))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// Read what the shell wrote to the status pipe (it is non-blocking: descendants may still hold the
/// write end, so EOF may never come) and parse it.
pub(crate) fn read_status(reader: Option<&mut PipeReader>) -> StatusReport {
    let Some(reader) = reader else {
        return StatusReport::default();
    };
    let mut buf = [0u8; 512];
    let mut text = Vec::new();
    while let Ok(n) = reader.read(&mut buf) {
        if n == 0 || text.len() > 4096 {
            break;
        }
        text.extend_from_slice(&buf[..n]);
    }
    parse_status_trailer(&String::from_utf8_lossy(&text)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PipeExecutor, RunStatus, ShellConfig, shell_spec};
    use shellgate_sink::Collect;
    use tokio_util::sync::CancellationToken;

    /// The spec's variables replace inherited ones, removed ones are gone, the marker is the run's
    /// even when the spec names one, and the program is looked up on the spec's `PATH`.
    #[test]
    fn the_environment_is_the_inherited_one_with_the_spec_applied() {
        let bin = tempfile::tempdir().unwrap();
        let tool = bin.path().join("sg-env-probe");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let inherited: Vec<String> = std::env::vars()
            .map(|(k, _)| k)
            .filter(|k| !["HOME", "PATH", RUN_MARKER_VAR].contains(&k.as_str()))
            .collect();
        let (kept, removed) = (&inherited[0], &inherited[1]);
        let mut spec = LaunchSpec::new("sg-env-probe", ["x"], "/");
        spec.env.insert("PATH".into(), bin.path().display().to_string());
        spec.env.insert("HOME".into(), "/nowhere".into());
        spec.env.insert(RUN_MARKER_VAR.into(), "forged".into());
        spec.env_remove.push(removed.clone());
        let (path, env) = exec_image(&spec, "the-run").unwrap().parts();
        assert_eq!(path, tool.to_str().unwrap());
        let values = |key: &str| -> Vec<&str> {
            env.iter()
                .filter_map(|e| e.strip_prefix(key)?.strip_prefix('='))
                .collect()
        };
        assert_eq!(values("HOME"), ["/nowhere"]);
        assert_eq!(values("PATH"), [bin.path().to_str().unwrap()]);
        assert_eq!(values(RUN_MARKER_VAR), ["the-run"]);
        assert!(values(removed).is_empty(), "{removed} was removed: {env:?}");
        assert_eq!(values(kept).len(), 1, "{kept} was kept: {env:?}");

        spec.env_clear = true;
        let (_, cleared) = exec_image(&spec, "the-run").unwrap().parts();
        assert_eq!(cleared.len(), 3, "{cleared:?}");
    }

    /// The fork-based guard (the fallback on other architectures) behaves like the default one.
    #[tokio::test]
    async fn fork_guard_protects_the_engine_and_forwards_status() {
        let config = ShellConfig {
            shell: Some("/bin/bash".into()),
            ..ShellConfig::default()
        };
        let exec = PipeExecutor::default();
        for (command, output, signal, stages) in [
            (
                "kill -TERM $PPID; echo alive; true | false",
                "alive\n",
                None,
                vec![0, 1],
            ),
            ("kill -USR1 $$", "", Some("SIGUSR1"), vec![]),
        ] {
            let spec = shell_spec(&config, command, "/");
            let launched = launch_mode(&spec, StartMode::ForkGuard).unwrap();
            let mut out = Collect::default();
            let outcome = exec
                .drive(launched, &spec, &mut out, CancellationToken::new())
                .await;
            assert_eq!(outcome.status, RunStatus::Completed);
            assert_eq!(out.bytes, output.as_bytes());
            assert_eq!(outcome.signal.as_deref(), signal);
            assert_eq!(outcome.pipeline_status, stages);
        }
    }
}
