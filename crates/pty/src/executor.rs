//! The PTY executor: runs a [`LaunchSpec`] to completion under a pseudo-terminal, falling back to
//! pipes (stdin left open, with a notice) when no terminal can be had.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use portable_pty::PtyPair;
use shellgate_executor::{
    CancellationToken, ExecOutcome, Executor, LaunchSpec, PipeExecutor, RunStatus, SendSink, StdinMode,
};

use crate::error::PtyError;
use crate::process::{PtyOptions, PtyProcess, open_pty};
use crate::size::TermSize;
use crate::transcript::CrlfToLf;

/// Upper bound on waiting for the end of output once no process of the session is left.
const ORPHANED_DRAIN_MAX: Duration = Duration::from_secs(30);

/// Runs commands under a pseudo-terminal.
///
/// The sink receives the program's output as it wrote it: with screen emulation (the default)
/// the terminal's `\r\n` is turned back into `\n`; without it (`options.emulate_screen = false`)
/// the terminal adds nothing (output post-processing is off) and the bytes are passed through as a
/// pipe would, converting only while the program itself has turned post-processing back on. Escape
/// sequences are kept for the sink's sanitizer.
#[derive(Debug, Clone)]
pub struct PtyExecutor {
    /// Terminal size, emulation and input settings.
    pub options: PtyOptions,
    /// After the program exits, stop reading once no output arrived for this long.
    pub drain_idle: Duration,
    /// After the program exits, stop reading after this long in any case.
    pub drain_max: Duration,
    /// Used when no pseudo-terminal can be opened.
    pub fallback: PipeExecutor,
}

impl Default for PtyExecutor {
    fn default() -> Self {
        Self {
            options: PtyOptions::default(),
            drain_idle: Duration::from_millis(250),
            drain_max: Duration::from_secs(2),
            fallback: PipeExecutor::default(),
        }
    }
}

impl PtyExecutor {
    /// An executor with these terminal options and default timings.
    pub fn with_options(options: PtyOptions) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }
}

impl Executor for PtyExecutor {
    fn run<'a>(
        &'a self,
        spec: LaunchSpec,
        sink: &'a mut SendSink<'_>,
        cancel: CancellationToken,
    ) -> impl std::future::Future<Output = ExecOutcome> + Send + 'a {
        run_pty(self, spec, sink, cancel, open_pty)
    }
}

pub(crate) async fn run_pty(
    exec: &PtyExecutor,
    spec: LaunchSpec,
    sink: &mut SendSink<'_>,
    cancel: CancellationToken,
    open: impl FnOnce(TermSize) -> Result<PtyPair, PtyError>,
) -> ExecOutcome {
    let start = Instant::now();
    match PtyProcess::spawn_with(&spec, &exec.options, open) {
        Ok(process) => drive(exec, process, &spec, sink, cancel, start).await,
        Err(e) if e.is_pty_unavailable() => {
            let mut piped = spec;
            piped.pty = false;
            piped.stdin = StdinMode::Piped;
            if let Some(timeout) = piped.timeout {
                piped.timeout = Some(timeout.saturating_sub(start.elapsed()));
            }
            let mut outcome = exec.fallback.run(piped, sink, cancel).await;
            outcome.notices.insert(
                0,
                format!("Warning: PTY unavailable ({e}); ran without a terminal."),
            );
            outcome.duration = start.elapsed();
            outcome
        }
        Err(e) => ExecOutcome::failed_to_start(e.to_string(), start.elapsed()),
    }
}

async fn drive(
    exec: &PtyExecutor,
    mut process: PtyProcess,
    spec: &LaunchSpec,
    sink: &mut SendSink<'_>,
    cancel: CancellationToken,
    start: Instant,
) -> ExecOutcome {
    let Some(mut output) = process.take_output() else {
        unreachable!("a fresh process has its output");
    };
    let mut transcript = Transcript::new(exec.options.emulate_screen);
    let deadline = spec.timeout.map(|t| tokio::time::Instant::from_std(start + t));
    let mut kill_at: Option<tokio::time::Instant> = None;
    let mut status = RunStatus::Completed;
    let mut eof = false;

    // Phase 1: until the program exits.
    let exit = loop {
        tokio::select! {
            chunk = output.recv(), if !eof => match chunk {
                Some(chunk) => transcript.emit(&chunk, &process, sink),
                None => eof = true,
            },
            info = process.wait() => break info,
            () = sleep_until_opt(deadline), if status == RunStatus::Completed && deadline.is_some() => {
                status = RunStatus::TimedOut;
                kill_at = Some(stop_politely(&process, spec.kill_grace));
            }
            () = cancel.cancelled(), if status == RunStatus::Completed => {
                status = RunStatus::Cancelled;
                kill_at = Some(stop_politely(&process, spec.kill_grace));
            }
            () = sleep_until_opt(kill_at), if kill_at.is_some() => {
                process.kill(Signal::SIGKILL);
                kill_at = None;
            }
        }
    };

    // Phase 2: drain what is still in the terminal. When nothing of the session is left, no one can
    // write any more and the end of output is certain to come, so it is awaited (bounded generously,
    // a loaded machine may be slow to deliver it); otherwise a background process may hold the
    // terminal open forever, so reading stops once output goes idle.
    if !eof {
        let orphaned = !process.session_alive();
        let drain_end = tokio::time::Instant::now()
            + if orphaned {
                exec.drain_max.max(ORPHANED_DRAIN_MAX)
            } else {
                exec.drain_max
            };
        loop {
            let idle_end = if orphaned {
                drain_end
            } else {
                (tokio::time::Instant::now() + exec.drain_idle).min(drain_end)
            };
            tokio::select! {
                chunk = output.recv() => {
                    let Some(chunk) = chunk else {
                        eof = true;
                        break;
                    };
                    transcript.emit(&chunk, &process, sink);
                }
                () = tokio::time::sleep_until(idle_end) => break,
            }
        }
    }
    // A run on another host: the terminal's processes here are only its client, and what it
    // started there is stopped by the host's own stop.
    if status != RunStatus::Completed
        && let Some(stop) = &spec.remote_stop
    {
        shellgate_executor::run_remote_stop(stop).await;
    }
    let mut notices = Vec::new();
    // Nothing of a foreground run outlives it.
    if process.session_alive() {
        let tree = process.tree().clone();
        let killed = tokio::task::spawn_blocking(move || tree.kill_all().len())
            .await
            .unwrap_or(0);
        if status == RunStatus::Completed && killed > 0 {
            notices.push(if eof {
                "Background processes left by the command were stopped.".to_owned()
            } else {
                "The terminal was still held open by a background process after the command exited; it was stopped."
                    .to_owned()
            });
        }
    }
    transcript.finish(sink);

    let pid = process.pid();
    // Dropping joins the process's threads; keep that off the async workers.
    drop(output);
    let _ = tokio::task::spawn_blocking(move || drop(process)).await;

    let mut outcome = ExecOutcome::new(status, start.elapsed());
    outcome.exit_code = exit.code;
    outcome.signal = exit.signal_name();
    outcome.pid = Some(pid);
    outcome.notices = notices;
    outcome
}

/// Turns the terminal's output into the program's: undoes the terminal's `\n` → `\r\n`.
struct Transcript {
    crlf: CrlfToLf,
    text: Vec<u8>,
    /// With screen emulation the terminal is left cooked and `\r\n` always becomes `\n`.
    always: bool,
    /// Whether the terminal added `\r` to newlines when last asked.
    translating: bool,
}

impl Transcript {
    fn new(emulate_screen: bool) -> Self {
        Self {
            crlf: CrlfToLf::new(),
            text: Vec::new(),
            always: emulate_screen,
            // Transcript-only terminals start without output processing.
            translating: emulate_screen,
        }
    }

    fn emit(&mut self, chunk: &[u8], process: &PtyProcess, sink: &mut SendSink<'_>) {
        // Without screen emulation the terminal starts with output processing off and passes the
        // program's bytes through unchanged (a `\r\n` is then the program's own and is kept, as
        // through a pipe). Should the program turn processing back on (`stty sane`), its newlines
        // are undone again. The terminal is asked only when the chunk holds a `\r`, so bulk output
        // costs no system call.
        let convert = self.always
            || self.crlf.holds_cr()
            || (memchr::memchr(b'\r', chunk).is_some() && {
                if let Some(now) = process.translates_newlines() {
                    self.translating = now;
                }
                self.translating
            });
        if !convert {
            sink.write(chunk);
            return;
        }
        self.text.clear();
        self.crlf.push(chunk, &mut self.text);
        if !self.text.is_empty() {
            sink.write(&self.text);
        }
    }

    fn finish(&mut self, sink: &mut SendSink<'_>) {
        self.text.clear();
        self.crlf.finish(&mut self.text);
        if !self.text.is_empty() {
            sink.write(&self.text);
        }
    }
}

/// Hang up the terminal's processes and ask them to terminate; returns when SIGKILL is due.
fn stop_politely(process: &PtyProcess, grace: Duration) -> tokio::time::Instant {
    process.kill(Signal::SIGHUP);
    process.tree().terminate();
    tokio::time::Instant::now() + grace
}

async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shellgate_sink::{Collect, Flow, Sink};

    #[tokio::test]
    async fn falls_back_to_pipes_with_stdin_open_when_no_terminal() {
        let spec = LaunchSpec::new(
            "sh",
            ["-c", "tty; test -p /dev/stdin && echo stdin-is-a-pipe"],
            "/",
        )
        .with_timeout(Duration::from_secs(20));
        let mut out = Collect::default();
        let outcome = run_pty(
            &PtyExecutor::default(),
            spec,
            &mut out,
            CancellationToken::new(),
            |_| Err(PtyError::Open("no ptmx".into())),
        )
        .await;
        assert_eq!(outcome.status, RunStatus::Completed);
        let text = String::from_utf8_lossy(&out.bytes);
        assert!(text.contains("not a tty"), "{text}");
        assert!(text.contains("stdin-is-a-pipe"), "{text}");
        assert!(
            outcome.notices[0].contains("PTY unavailable (cannot open a pseudo-terminal: no ptmx)"),
            "{:?}",
            outcome.notices
        );
    }

    #[tokio::test]
    async fn missing_program_fails_to_start_without_fallback() {
        let spec = LaunchSpec::new("/nonexistent/program-4711", Vec::<String>::new(), "/");
        let mut out = Collect::default();
        let outcome = PtyExecutor::default()
            .run(spec, &mut out, CancellationToken::new())
            .await;
        assert_eq!(outcome.status, RunStatus::FailedToStart);
        assert!(outcome.error.unwrap().contains("program-4711"));
        assert!(outcome.notices.is_empty());
    }

    #[tokio::test]
    async fn missing_directory_fails_to_start() {
        let spec = LaunchSpec::new("true", Vec::<String>::new(), "/nonexistent/dir-4711");
        let mut out = Collect::default();
        let outcome = PtyExecutor::default()
            .run(spec, &mut out, CancellationToken::new())
            .await;
        assert_eq!(outcome.status, RunStatus::FailedToStart);
        assert!(outcome.error.unwrap().contains("dir-4711"));
    }

    /// Counts finishes; the bytes go to `Collect`.
    #[derive(Default)]
    struct CountFinishes(Collect, usize);

    impl Sink for CountFinishes {
        fn write(&mut self, chunk: &[u8]) -> Flow {
            self.0.write(chunk)
        }
        fn finish(&mut self) {
            self.1 += 1;
        }
    }

    #[tokio::test]
    async fn the_callers_sink_is_written_but_never_finished() {
        let mut out = CountFinishes::default();
        let ok = LaunchSpec::new("sh", ["-c", "echo hi"], "/");
        let outcome = PtyExecutor::default()
            .run(ok, &mut out, CancellationToken::new())
            .await;
        assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
        assert!(String::from_utf8_lossy(&out.0.bytes).contains("hi"));
        let missing = LaunchSpec::new("/nonexistent/program-4712", Vec::<String>::new(), "/");
        let outcome = PtyExecutor::default()
            .run(missing, &mut out, CancellationToken::new())
            .await;
        assert_eq!(outcome.status, RunStatus::FailedToStart);
        assert_eq!(out.1, 0, "the caller finishes its own sink");
    }
}
