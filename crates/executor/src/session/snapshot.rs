//! The shell snapshot (SPEC E-11): the user's rc file, run once per shell, captured as a sourceable file.
//!
//! The rc file runs in an interactive shell (`-i -c`, so the usual "return unless interactive" guard at
//! the top of `~/.bashrc` passes) in its own session without a terminal, stdin at EOF and a time limit, so
//! a prompt or a hang in the rc cannot block. What it defined — functions, aliases, options and `PATH` —
//! is written to a file that every new session sources. A broken rc gives a notice, never a failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use super::script::{self, ShellKind};
use crate::tree::{self, ProcessTree, RUN_MARKER_VAR};
use crate::{LaunchSpec, guard, non_interactive};

/// The result of capturing a snapshot.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    /// The file to source, when capture succeeded.
    pub path: Option<PathBuf>,
    /// What went wrong with the rc file, if anything.
    pub notice: Option<String>,
}

/// Run `program`'s rc file and capture the snapshot into `dir`.
pub(crate) async fn capture(
    program: &Path,
    kind: ShellKind,
    env: &BTreeMap<String, String>,
    dir: &Path,
    timeout: Duration,
    layers: &crate::LayerStack,
) -> Snapshot {
    let home = env
        .get("HOME")
        .cloned()
        .or_else(|| std::env::var("HOME").ok())
        .unwrap_or_default();
    let rc = Path::new(&home).join(kind.rc_name());
    let rc_shown = format!("~/{}", kind.rc_name());
    let Ok(work) = super::process::private_dir(dir) else {
        return Snapshot {
            path: None,
            notice: Some("Shell snapshot skipped: cannot create a private directory.".into()),
        };
    };
    let raw = work.join("raw");
    let err = work.join("stderr");
    let result = run_capture(program, kind, env, &raw, &err, timeout, layers).await;
    let stderr = std::fs::read(&err).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&stderr);
    let problem = rc_errors(&stderr);
    let snapshot = match (result, std::fs::read(&raw)) {
        (Ok(true), Ok(text)) => {
            let path = dir.join(format!(
                "snapshot-{}.sh",
                work.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            ));
            let filtered = script::filter_snapshot(kind, &String::from_utf8_lossy(&text));
            match std::fs::write(&path, filtered) {
                Ok(()) => Snapshot {
                    path: Some(path),
                    notice: problem.map(|line| format!("{rc_shown} reported errors while loading: {line}")),
                },
                Err(e) => Snapshot {
                    path: None,
                    notice: Some(format!("Shell snapshot could not be saved: {e}")),
                },
            }
        }
        (Err(why), _) => Snapshot {
            path: None,
            notice: Some(format!(
                "Shell snapshot of {rc_shown} skipped: {why}; sessions start without it."
            )),
        },
        _ => {
            let why = problem.unwrap_or_else(|| "the shell exited before the snapshot was taken".into());
            Snapshot {
                path: None,
                notice: Some(format!(
                    "Shell snapshot of {rc_shown} failed ({why}); sessions start without it."
                )),
            }
        }
    };
    let _ = std::fs::remove_dir_all(&work);
    if !rc.exists() {
        return Snapshot {
            notice: None,
            ..snapshot
        };
    }
    snapshot
}

/// Ok(true) when the capture script ran to its end.
#[allow(unsafe_code)] // `pre_exec`: the guard hook between fork and exec
async fn run_capture(
    program: &Path,
    kind: ShellKind,
    env: &BTreeMap<String, String>,
    raw: &Path,
    err: &Path,
    timeout: Duration,
    layers: &crate::LayerStack,
) -> Result<bool, String> {
    let _ = tree::init_subreaper();
    let mut spec = LaunchSpec::new(
        program.to_string_lossy().into_owned(),
        [
            "-i".to_owned(),
            "-c".to_owned(),
            script::snapshot_script(kind, raw),
        ],
        std::env::temp_dir(),
    );
    spec.env = env.clone();
    // The user's rc runs wrapped like every other process (a sandbox confines it too).
    let spec = layers.apply(non_interactive(spec));
    let marker = tree::new_run_marker();
    let err_file = std::fs::File::create(err).map_err(|e| e.to_string())?;
    let mut cmd = tokio::process::Command::from(spec.command());
    cmd.env(RUN_MARKER_VAR, &marker);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(err_file));
    cmd.kill_on_drop(true);
    let engine = std::process::id() as libc::pid_t;
    let needle = crate::marked::needle(&marker);
    // SAFETY: the guard hook only makes async-signal-safe system calls and does not allocate.
    unsafe {
        let none = crate::cgroup_entry::CgroupHandles::default();
        cmd.pre_exec(move || guard::in_child(engine, None, &needle, &none));
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
    let tree = ProcessTree::new(child.id().unwrap_or(0), Some(marker));
    let waited = tokio::time::timeout(timeout, child.wait()).await;
    tree.kill_all();
    match waited {
        Ok(Ok(status)) => Ok(status.success()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "the rc file did not finish within {} s",
            timeout.as_secs_f64()
        )),
    }
}

/// The first line of the rc's stderr that reports a real error (job-control chatter of an interactive
/// shell without a terminal is ignored).
fn rc_errors(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .map(str::trim)
        .find(|l| {
            let lower = l.to_ascii_lowercase();
            (lower.contains("syntax error") || lower.contains("parse error") || lower.contains("unexpected"))
                && !lower.contains("job control")
        })
        .map(|l| l.chars().take(200).collect())
}
