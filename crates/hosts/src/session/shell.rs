//! One persistent shell on a host, over one client channel (`ssh … sh`, `docker exec -i … sh`): the
//! script goes in on stdin, output and records come back on stdout.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use shellgate_executor::{
    CancellationToken, ExecOutcome, LaunchSpec, LayerStack, RunStatus, SendSink, SessionCommand,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::framing::{Piece, Record, Scanner};
use crate::clients::Invocation;
use crate::quote::{is_shell_name, sh_quote};
use crate::script::{self, MARKER_VAR, REAP_FUNCTION};
use crate::{HostError, RemoteHost};

/// How much of the client's stderr is kept for error messages.
const STDERR_KEEP: usize = 4096;
/// How long a stopped command may take to report its end before its shell is ended too.
const STOP_REPORT_WAIT: Duration = Duration::from_secs(2);

/// Which saved state a new shell starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Restore {
    /// None: a new session.
    Fresh,
    /// The state saved after command `id`.
    After(u64),
    /// The state the shell saved as it exited (`exit`, `set -e`).
    AtExit,
}

/// A live remote shell.
pub(crate) struct RemoteShell {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    scanner: Scanner,
    marker: String,
    /// The shell's pid on the host.
    pid: u32,
    next_id: u64,
    /// The id of the last command whose state was saved.
    pub(crate) last_saved: Option<u64>,
    /// The shell's directory on the host.
    pub(crate) cwd: String,
    /// The session's function and alias names (bash), as of the last save: a command naming none of
    /// them that only runs programs cannot change the state, so its save is skipped.
    /// `None` until the first save reported them (a restored state may hold any).
    names: Option<std::collections::HashSet<String>>,
    buf: Vec<u8>,
}

impl RemoteShell {
    /// Start a shell on `host` whose saved state lives in `state_dir` (on the host), from `restore`.
    pub(crate) async fn spawn(
        host: &RemoteHost,
        layers: &LayerStack,
        env: &std::collections::BTreeMap<String, String>,
        state_dir: &str,
        restore: Restore,
        ready_timeout: Duration,
    ) -> Result<Self, HostError> {
        let marker = script::new_marker();
        let nonce = script::new_marker();
        let launcher = format!(
            "{MARKER_VAR}={}; export {MARKER_VAR}\n\
             if command -v bash >/dev/null 2>&1; then exec bash --noprofile --norc; fi\nexec sh\n",
            sh_quote(&marker)
        );
        let argv = host.argv(
            &launcher,
            &Invocation {
                stdin: true,
                ..Invocation::default()
            },
        );
        let mut like = LaunchSpec::new("", Vec::<String>::new(), "/");
        like.stdin = shellgate_executor::StdinMode::Piped;
        let spec = layers.apply(RemoteHost::client_spec(argv, &like));
        let mut cmd = tokio::process::Command::from(spec.command());
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let unreachable = |reason: String| HostError::Unreachable {
            host: host.target().to_string(),
            reason,
        };
        let mut child = cmd
            .spawn()
            .map_err(|e| unreachable(format!("cannot start {}: {e}", spec.program)))?;
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(unreachable("the client's pipes are missing".into()));
        };
        let kept = Arc::new(Mutex::new(VecDeque::new()));
        tokio::spawn(keep_tail(stderr, Arc::clone(&kept)));
        stdin
            .write_all(bootstrap(&nonce, env, state_dir, restore).as_bytes())
            .await
            .map_err(|e| unreachable(format!("the host's shell did not take its start script: {e}")))?;
        let mut shell = Self {
            child,
            stdin,
            stdout,
            stderr: kept,
            scanner: Scanner::new(&nonce),
            marker,
            pid: 0,
            next_id: 1,
            last_saved: None,
            cwd: String::new(),
            names: None,
            buf: vec![0; 16 * 1024],
        };
        match tokio::time::timeout(ready_timeout, shell.wait_ready()).await {
            Ok(Ok(())) => Ok(shell),
            Ok(Err(())) => Err(unreachable(
                shell.stderr_text_or("the shell ended during startup"),
            )),
            Err(_) => Err(unreachable(
                shell.stderr_text_or("the shell did not start in time"),
            )),
        }
    }

    async fn wait_ready(&mut self) -> Result<(), ()> {
        loop {
            let n = self.stdout.read(&mut self.buf).await.map_err(|_| ())?;
            if n == 0 {
                return Err(());
            }
            let mut ready = None;
            self.scanner.feed(&self.buf[..n], |piece| {
                if let Piece::Record(r) = piece
                    && r.kind == b'r'
                {
                    ready = Some(r);
                }
            });
            if let Some(record) = ready {
                self.pid = record.id as u32;
                self.cwd = record.cwd;
                return Ok(());
            }
        }
    }

    fn stderr_text_or(&self, fallback: &str) -> String {
        let kept = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
        let text = String::from_utf8_lossy(&kept.iter().copied().collect::<Vec<u8>>())
            .trim()
            .to_owned();
        if text.is_empty() {
            fallback.to_owned()
        } else {
            text
        }
    }

    /// Whether the client (and so the shell) has ended.
    pub(crate) fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Run one command to its end, streaming its output into `sink`. `Ok(false)` when the shell
    /// ended with it (the next command needs a new shell).
    pub(crate) async fn run(
        &mut self,
        host: &RemoteHost,
        command: &SessionCommand<'_>,
        kill_grace: Duration,
        sink: &mut SendSink<'_>,
        cancel: &CancellationToken,
    ) -> (ExecOutcome, bool) {
        let start = Instant::now();
        let id = self.next_id;
        self.next_id += 1;
        let save = !self
            .names
            .as_ref()
            .is_some_and(|names| shellgate_executor::cannot_change_state(command.text, names));
        let line = command_line(command, id, save);
        if let Err(e) = self.stdin.write_all(line.as_bytes()).await {
            let mut outcome = ExecOutcome::failed_to_start(
                format!("the session's shell on {} is gone: {e}", host.target()),
                start.elapsed(),
            );
            outcome.cwd_after = None;
            return (outcome, false);
        }
        let deadline = tokio::time::Instant::now() + command.timeout;
        let mut status = RunStatus::Completed;
        let mut stopped_output = false;
        // Once a stop was sent: when to give up waiting for the command's end and end the shell too.
        let mut give_up_at: Option<tokio::time::Instant> = None;
        let mut stop_task: Option<tokio::task::JoinHandle<()>> = None;
        let end = loop {
            let mut end: Option<Record> = None;
            let mut want_stop = false;
            tokio::select! {
                read = self.stdout.read(&mut self.buf) => {
                    let n = read.unwrap_or(0);
                    if n == 0 {
                        break None;
                    }
                    self.scanner.feed(&self.buf[..n], |piece| match piece {
                        Piece::Output(bytes) => {
                            if !stopped_output && sink.write(bytes).is_stop() {
                                stopped_output = true;
                                want_stop = true;
                            }
                        }
                        Piece::Record(r) if r.id == id && (r.kind == b'e' || r.kind == b'd') => end = Some(r),
                        Piece::Record(r) if r.id == id && r.kind == b'n' => {
                            self.names = Some(r.cwd.split_whitespace().map(str::to_owned).collect());
                        }
                        Piece::Record(_) => {}
                    });
                }
                () = tokio::time::sleep_until(deadline), if status == RunStatus::Completed => {
                    status = RunStatus::TimedOut;
                    stop_task = Some(self.stop_command(host, kill_grace, "TERM"));
                    give_up_at = Some(tokio::time::Instant::now() + kill_grace + STOP_REPORT_WAIT);
                }
                () = cancel.cancelled(), if status == RunStatus::Completed => {
                    status = RunStatus::Cancelled;
                    stop_task = Some(self.stop_command(host, kill_grace, "TERM"));
                    give_up_at = Some(tokio::time::Instant::now() + kill_grace + STOP_REPORT_WAIT);
                }
                () = sleep_until_opt(give_up_at), if give_up_at.is_some() => {
                    // A builtin loop in the shell itself: only ending the shell stops it.
                    self.end_shell(host, None).await;
                    break None;
                }
            }
            if want_stop {
                // As a closed pipe would: the command's processes get SIGPIPE; the shell stays.
                stop_task = Some(self.stop_command(host, Duration::ZERO, "PIPE"));
                give_up_at.get_or_insert(tokio::time::Instant::now() + kill_grace + STOP_REPORT_WAIT);
            }
            if let Some(record) = end {
                break Some(record);
            }
        };
        if let Some(task) = stop_task {
            let _ = task.await;
        }
        let mut outcome = ExecOutcome::new(status, start.elapsed());
        outcome.output_stopped = stopped_output;
        match end {
            Some(record) if record.kind == b'd' => {
                let dir = command.cwd.map(|d| d.display().to_string()).unwrap_or_default();
                outcome = ExecOutcome::failed_to_start(
                    HostError::NoDirectory {
                        host: host.target().to_string(),
                        dir,
                    }
                    .to_string(),
                    start.elapsed(),
                );
                outcome.cwd_after = Some(record.cwd.clone().into());
                self.cwd = record.cwd;
                (outcome, true)
            }
            Some(record) => {
                if save {
                    self.last_saved = Some(id);
                }
                outcome.exit_code = Some(record.status);
                outcome.cwd_after = Some(record.cwd.clone().into());
                self.cwd = record.cwd;
                (outcome, true)
            }
            None => {
                // The shell ended (`exit`, `set -e`, killed): its client's status is the shell's.
                let rest = self.scanner.take_pending();
                if !rest.is_empty() && !stopped_output {
                    let _ = sink.write(&rest);
                }
                let waited = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
                if let Ok(Ok(exit)) = waited {
                    outcome.exit_code = exit.code();
                }
                (outcome, false)
            }
        }
    }

    /// Start the stop of the running command's processes (the shell is spared).
    fn stop_command(&self, host: &RemoteHost, grace: Duration, signal: &str) -> tokio::task::JoinHandle<()> {
        let spec = if signal == "TERM" {
            host.stop_spec(&self.marker, grace, &[self.pid], "")
        } else {
            host.side_spec(&format!(
                "{REAP_FUNCTION}__sg_reap {} {signal} {}\n",
                sh_quote(&self.marker),
                self.pid
            ))
        };
        tokio::spawn(run_quietly(spec))
    }

    /// End the shell and everything it started, on the host and here; `forget` also removes the
    /// session's saved state there (the session is closed, not restarted).
    pub(crate) async fn end_shell(&mut self, host: &RemoteHost, forget: Option<&str>) {
        let then = forget
            .map(|dir| format!("rm -rf \"{dir}\"\n"))
            .unwrap_or_default();
        run_quietly(host.stop_spec(&self.marker, Duration::ZERO, &[], &then)).await;
        let _ = self.child.kill().await;
    }
}

/// Remove a closed session's saved state on the host (its shell had already ended).
pub(crate) async fn forget_state(host: &RemoteHost, state_dir: &str) {
    run_quietly(host.side_spec(&format!("rm -rf \"{state_dir}\"\n"))).await;
}

/// Run a client on the side (a stop, a clean-up) with nothing connected, for at most its spec's
/// timeout (20 s when it has none): killed if it takes longer, since what it does is best effort.
async fn run_quietly(spec: LaunchSpec) {
    let limit = spec.timeout.unwrap_or(Duration::from_secs(20));
    let mut cmd = tokio::process::Command::from(spec.command());
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    if let Ok(mut child) = cmd.spawn() {
        let _ = tokio::time::timeout(limit, child.wait()).await;
    }
}

async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Keep the last [`STDERR_KEEP`] bytes the client writes to stderr.
async fn keep_tail(mut stderr: tokio::process::ChildStderr, kept: Arc<Mutex<VecDeque<u8>>>) {
    let mut buf = [0u8; 1024];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.extend(&buf[..n]);
        let excess = kept.len().saturating_sub(STDERR_KEEP);
        kept.drain(..excess);
    }
}

/// The shell's start: the saved state it restores, the functions that end each command, and the
/// ready record. Runs in the shell reading stdin, so nothing here may read stdin.
fn bootstrap(
    nonce: &str,
    env: &std::collections::BTreeMap<String, String>,
    state_dir: &str,
    restore: Restore,
) -> String {
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut s = script::environment(&env, script::EnvDelivery::InScript);
    // Built by the engine from `$TMPDIR` and hex digits only: expanded by the host's shell.
    s += &format!(
        "__sg_dir=\"{state_dir}\"\nmkdir -p \"$__sg_dir\" 2>/dev/null; chmod 700 \"$__sg_dir\" 2>/dev/null\n"
    );
    let file = match restore {
        Restore::Fresh => None,
        Restore::After(id) => Some(format!("s{}", id % 2)),
        Restore::AtExit => Some("sx".to_owned()),
    };
    if let Some(file) = file {
        // The saved marker belongs to the old shell: this shell's own is set again below.
        s.push_str(&format!(
            "__sg_m=${MARKER_VAR}\n[ -r \"$__sg_dir/{file}\" ] && . \"$__sg_dir/{file}\" >/dev/null 2>&1\n\
             {MARKER_VAR}=$__sg_m; export {MARKER_VAR}\n\
             [ -n \"${{__SG_CWD-}}\" ] && cd -- \"$__SG_CWD\" 2>/dev/null; unset __SG_CWD\n"
        ));
    }
    s.push_str(REAP_FUNCTION);
    s.push_str(&format!(
        r#"[ -n "${{BASH_VERSION-}}" ] && shopt -s expand_aliases
__sg_n={nonce}
__sg_save() {{
  __SG_CWD=$PWD; export __SG_CWD
  {{ export -p; if [ -n "${{BASH_VERSION-}}" ]; then declare -f; alias -p; fi; }} >"$__sg_dir/s$1" 2>/dev/null
  unset __SG_CWD
}}
__sg_end() {{
  __sg_st=$1
  __sg_save $(( $2 % 2 ))
  # The names of functions and aliases, so that later commands calling none of them skip the save.
  # (A plain `sh` saves no functions or aliases: its list stays empty.)
  printf '\036%s:n:%s:0:' "$__sg_n" "$2"
  [ -n "${{BASH_VERSION-}}" ] && compgen -A function -A alias
  printf '\036'
  __sg_done "$__sg_st" "$2"
}}
__sg_done() {{
  __sg_st=$1
  __sg_k=
  read -r __sg_k 2>/dev/null </proc/$$/task/$$/children
  if [ -n "$__sg_k" ] || __sg_escaped; then __sg_reap "${MARKER_VAR}" KILL; fi
  printf '\036%s:e:%s:%s:%s\036' "$__sg_n" "$2" "$__sg_st" "$PWD"
}}
# The last pid the host gave out (the fifth field of /proc/loadavg), before a command.
__sg_mark() {{ read -r __sg_x __sg_x __sg_x __sg_x __sg_p0 __sg_x </proc/loadavg 2>/dev/null || __sg_p0=; }}
# Whether a process made during the command may still run outside the shell (`setsid`, a double
# fork): one of the pids given out since `__sg_mark` still exists, or too many were to look at each.
__sg_escaped() {{
  [ -n "$__sg_p0" ] || return 1
  read -r __sg_x __sg_x __sg_x __sg_x __sg_p1 __sg_x </proc/loadavg 2>/dev/null || return 1
  [ "$__sg_p1" = "$__sg_p0" ] && return 1
  [ "$__sg_p1" -gt "$__sg_p0" ] && [ $((__sg_p1 - __sg_p0)) -le 64 ] || return 0
  __sg_i=$__sg_p0
  while [ "$__sg_i" -lt "$__sg_p1" ]; do
    __sg_i=$((__sg_i + 1))
    [ -d "/proc/$__sg_i" ] && return 0
  done
  return 1
}}
__sg_envsave() {{
  for __sg_v; do eval "__sg_had_$__sg_v=\${{$__sg_v+1}}; __sg_old_$__sg_v=\${{$__sg_v-}}"; done
}}
__sg_envrestore() {{
  for __sg_v; do
    eval "if [ -n \"\$__sg_had_$__sg_v\" ]; then $__sg_v=\$__sg_old_$__sg_v; else unset $__sg_v; fi; unset __sg_had_$__sg_v __sg_old_$__sg_v"
  done
}}
__sg_nodir() {{ printf '\036%s:d:%s:0:%s\036' "$__sg_n" "$1" "$PWD"; }}
trap '__sg_save x' EXIT
printf '\036%s:r:%s:0:%s\036' "$__sg_n" "$$" "$PWD"
"#,
        nonce = sh_quote(nonce)
    ));
    s
}

/// The line that runs one command at the shell's top level (so `declare`, `local` errors, `exit` and
/// `set -e` mean what they mean in a script), with its directory and variables, then reports.
fn command_line(command: &SessionCommand<'_>, id: u64, save: bool) -> String {
    let end = if save { "__sg_end" } else { "__sg_done" };
    // Variables for this command only: saved, set, then restored (`K=v eval …` would keep them in a
    // POSIX shell, where `eval` is a special builtin).
    let names: Vec<&str> = command
        .env
        .keys()
        .map(String::as_str)
        .filter(|k| is_shell_name(k))
        .collect();
    let mut run = String::from("__sg_mark; ");
    if names.is_empty() {
        run.push_str(&format!(
            "eval {} </dev/null 2>&1; {end} $? {id}",
            sh_quote(command.text)
        ));
    } else {
        let list = names.join(" ");
        run.push_str(&format!("__sg_envsave {list}; "));
        for (key, value) in command.env {
            if key == "PATH" {
                run.push_str(&format!(
                    "PATH={}\"${{PATH:+:$PATH}}\"; export PATH; ",
                    sh_quote(value)
                ));
            } else if is_shell_name(key) {
                run.push_str(&format!("{key}={}; export {key}; ", sh_quote(value)));
            }
        }
        run.push_str(&format!(
            "eval {} </dev/null 2>&1; __sg_st=$?; __sg_envrestore {list}; {end} $__sg_st {id}",
            sh_quote(command.text)
        ));
    }
    match command.cwd {
        Some(dir) => format!(
            "if cd -- {} 2>/dev/null; then {run}; else __sg_nodir {id}; fi\n",
            sh_quote(&dir.to_string_lossy())
        ),
        None => format!("{run}\n"),
    }
}
