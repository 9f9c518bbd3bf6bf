//! The POSIX `sh` text run on the host around a command: its marker, environment, directory, the
//! reaping of what it leaves behind, and the stop command run when a run is killed.
//!
//! Every process a run starts on the host carries `SHELLGATE_REMOTE_RUN=<marker>` in its
//! environment, which survives `setsid`, double forks and reparenting. Reaping finds them with one
//! `grep -lz` over `/proc/*/task/*/environ` (GNU grep or busybox), so it costs one process however
//! many the host runs.

use crate::quote::{is_shell_name, sh_quote};

/// The variable marking a run's processes on the host.
pub const MARKER_VAR: &str = "SHELLGATE_REMOTE_RUN";

/// The variable carrying `PATH` entries to put in front of the host's own `PATH` (a container's or
/// login shell's `PATH` is the host's; replacing it with the engine's would break the host).
pub const PATH_PREPEND_VAR: &str = "SHELLGATE_PATH_PREPEND";

/// Defines `__sg_reap MARKER SIGNAL [PID…]` (and `__sg_marked MARKER`, which lists the marked
/// processes' `environ` files): send SIGNAL to every process marked MARKER except the calling shell
/// and the PIDs given. A process caught in `execve` shows an empty environment for a moment (a
/// leftover started just before its shell exited is often still starting), so the first pass is
/// always followed by a second, and a later pass that found anything by one more (at most three in
/// all).
///
/// Each thread's environment is read (`/proc/*/task/*/environ`): a process whose main thread has
/// exited while others run on cannot be read through its own `/proc/<pid>/environ`. A process with
/// several threads is signalled once per pass all the same. Past 2,000 threads the file names go to
/// `grep` through `xargs`, where the host has it, so they never exceed the host's argument limit.
pub const REAP_FUNCTION: &str = r#"__sg_marked() {
  __sg_entry="SHELLGATE_REMOTE_RUN=$1"
  set -- /proc/[0-9]*/task/[0-9]*/environ
  if [ $# -gt 2000 ] && command -v xargs >/dev/null 2>&1; then
    printf '%s\n' "$@" | xargs grep -lzxF "$__sg_entry" 2>/dev/null
  else
    grep -lzxF "$__sg_entry" "$@" 2>/dev/null
  fi
}
__sg_reap() {
  __sg_m=$1; __sg_sig=$2; shift 2
  for __sg_pass in 1 2 3; do
    __sg_found=; __sg_seen=" $$ $* "
    for __sg_f in $(__sg_marked "$__sg_m"); do
      __sg_p=${__sg_f#/proc/}; __sg_p=${__sg_p%%/*}
      case "$__sg_seen" in *" $__sg_p "*) continue ;; esac
      __sg_seen="$__sg_seen$__sg_p "
      kill -s "$__sg_sig" "$__sg_p" 2>/dev/null && __sg_found=1
    done
    [ -n "$__sg_found" ] || [ "$__sg_pass" = 1 ] || break
  done
}
"#;

/// Picks the shell for a command: bash where the host has it, else `sh`.
const PICK_SHELL: &str = "if command -v bash >/dev/null 2>&1; then __sg_sh=bash; else __sg_sh=sh; fi\n";

/// A fresh marker: unpredictable, so no other run's processes carry it.
pub fn new_marker() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    format!("{:016x}{:08x}", hasher.finish(), std::process::id())
}

/// How the environment reaches the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvDelivery {
    /// Exported by the script (ssh, kubectl: the client passes a command string only).
    InScript,
    /// Passed by the client (`docker exec -e K=V`): the script only prepends `PATH`.
    ByClient,
}

/// What runs on the host.
#[derive(Debug, Clone, Copy)]
pub struct RemoteCommand<'a> {
    /// The program; `bash`, `sh` or a path ending in either picks the host's own shell.
    pub program: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// The directory on the host; `None`: where the client starts (the login directory).
    pub cwd: Option<&'a str>,
    /// Variables to set.
    pub env: &'a [(String, String)],
    /// The command reads from the client's stdin (a job's input) rather than `/dev/null`.
    pub stdin: bool,
}

/// Whether `program` names a shell the host should supply.
fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(name, "bash" | "sh")
}

/// The script that runs `command` under `marker` and reaps what it leaves when it ends.
pub fn run_script(command: &RemoteCommand<'_>, marker: &str, delivery: EnvDelivery) -> String {
    let mut s = format!("{MARKER_VAR}={}; export {MARKER_VAR}\n", sh_quote(marker));
    s.push_str(REAP_FUNCTION);
    s.push_str(&environment(command.env, delivery));
    if let Some(dir) = command.cwd {
        let dir = sh_quote(dir);
        s.push_str(&format!(
            "cd -- {dir} || {{ printf 'shellgate: no such directory on the host: %s\\n' {dir} >&2; exit 1; }}\n"
        ));
    }
    let program = if is_shell(command.program) {
        s.push_str(PICK_SHELL);
        "\"$__sg_sh\"".to_owned()
    } else {
        sh_quote(command.program)
    };
    s.push_str(&program);
    for arg in command.args {
        s.push(' ');
        s.push_str(&sh_quote(arg));
    }
    if !command.stdin {
        s.push_str(" </dev/null");
    }
    s.push_str(&format!(
        "\n__sg_s=$?\n__sg_reap {} KILL\nexit $__sg_s\n",
        sh_quote(marker)
    ));
    s
}

/// Shell text setting `env` (per `delivery`). The host's own variables are left as the host has
/// them: what the engine keeps from its children is this machine's environment.
pub(crate) fn environment(env: &[(String, String)], delivery: EnvDelivery) -> String {
    let mut s = String::new();
    for (key, value) in env {
        if key == "PATH" {
            if delivery == EnvDelivery::InScript {
                s.push_str(&format!("{PATH_PREPEND_VAR}={}\n", sh_quote(value)));
            }
            s.push_str(&format!(
                "PATH=\"${PATH_PREPEND_VAR}${{PATH:+:$PATH}}\"; export PATH; unset {PATH_PREPEND_VAR}\n"
            ));
        } else if delivery == EnvDelivery::InScript && is_shell_name(key) {
            s.push_str(&format!("{key}={}; export {key}\n", sh_quote(value)));
        }
    }
    s
}

/// The script that stops a run's processes: SIGTERM, then SIGKILL after `grace_secs` to those left.
/// `except` are pids to spare (a remote session's own shell while only its command is stopped).
pub fn stop_script(marker: &str, grace_secs: u32, except: &[u32]) -> String {
    let spare: String = except.iter().map(|p| format!(" {p}")).collect();
    let marker = sh_quote(marker);
    let mut s = String::from(REAP_FUNCTION);
    s.push_str(&format!("__sg_reap {marker} TERM{spare}\n"));
    if grace_secs > 0 {
        s.push_str(&format!("sleep {grace_secs}\n"));
    }
    s.push_str(&format!("__sg_reap {marker} KILL{spare}\n"));
    s
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    fn run_locally(script: &str) -> std::process::Output {
        Command::new("sh").args(["-c", script]).output().unwrap()
    }

    #[test]
    fn runs_with_cwd_env_and_path_prepend() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = bin.join("only-here");
        std::fs::write(&tool, "#!/bin/sh\necho found\n").unwrap();
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let args = vec![
            "-c".to_owned(),
            "pwd; printf '%s\\n' \"$GREETING\"; only-here; echo \"${SECRET-unset}\"; exit 7".to_owned(),
        ];
        let env = vec![
            ("GREETING".to_owned(), "it's \"quoted\" $HOME".to_owned()),
            ("PATH".to_owned(), bin.display().to_string()),
        ];
        let cwd = dir.path().display().to_string();
        let command = RemoteCommand {
            program: "/usr/bin/bash",
            args: &args,
            cwd: Some(&cwd),
            env: &env,
            stdin: false,
        };
        let script = run_script(&command, &new_marker(), EnvDelivery::InScript);
        let out = Command::new("sh")
            .args(["-c", &script])
            .env("SECRET", "s3")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(7));
        let text = String::from_utf8(out.stdout).unwrap();
        let real = dir.path().canonicalize().unwrap();
        assert_eq!(
            text,
            format!("{}\nit's \"quoted\" $HOME\nfound\ns3\n", real.display())
        );
    }

    #[test]
    fn a_missing_directory_is_named_and_nothing_runs() {
        let args = vec!["-c".to_owned(), "echo ran".to_owned()];
        let command = RemoteCommand {
            program: "sh",
            args: &args,
            cwd: Some("/no/such/dir"),
            env: &[],
            stdin: false,
        };
        let out = run_locally(&run_script(&command, &new_marker(), EnvDelivery::InScript));
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no such directory on the host: /no/such/dir"),
            "{err}"
        );
    }

    #[test]
    fn leftovers_are_reaped_at_the_end_and_by_the_stop_script() {
        let marker = new_marker();
        // A detached sleeper survives its shell but not the reaping at the end.
        let args = vec![
            "-c".to_owned(),
            "setsid sleep 30 >/dev/null 2>&1 & echo $!".to_owned(),
        ];
        let command = RemoteCommand {
            program: "sh",
            args: &args,
            cwd: None,
            env: &[],
            stdin: false,
        };
        let out = run_locally(&run_script(&command, &marker, EnvDelivery::InScript));
        let pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        wait_gone(pid);

        // A run still going: the stop script ends it.
        let marker = new_marker();
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30"])
            .env(MARKER_VAR, &marker)
            .spawn()
            .unwrap();
        let stop = run_locally(&stop_script(&marker, 0, &[]));
        assert!(stop.status.success());
        let status = child.wait().unwrap();
        assert!(!status.success());
    }

    #[test]
    fn the_stop_script_spares_the_pids_given() {
        let marker = new_marker();
        let mut spared = Command::new("sleep")
            .arg("30")
            .env(MARKER_VAR, &marker)
            .spawn()
            .unwrap();
        let mut other = Command::new("sleep")
            .arg("30")
            .env(MARKER_VAR, &marker)
            .spawn()
            .unwrap();
        run_locally(&stop_script(&marker, 0, &[spared.id()]));
        assert!(!other.wait().unwrap().success());
        assert!(spared.try_wait().unwrap().is_none());
        spared.kill().unwrap();
        spared.wait().unwrap();
    }

    fn wait_gone(pid: i32) {
        for _ in 0..200 {
            if !std::path::Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
            {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("process {pid} was not reaped");
    }
}
