//! [`JobIo`]: talking to a job's running process — signals, input, keys, its screen and size.

use std::sync::Arc;
use std::time::Duration;

use shellgate_executor::{ProcessHandle, Signal};
use shellgate_pty::{InputForecast, KeySpec, PtyProcess, ScreenSnapshot, TermSize};
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;

/// The running process of a job.
pub enum JobIo {
    /// Pipes: stdin stays open for `write`; stdout and stderr merged.
    Pipe {
        /// The process tree.
        handle: ProcessHandle,
        /// Its stdin, until closed.
        stdin: tokio::sync::Mutex<Option<ChildStdin>>,
        /// `/proc` link text of the stdin pipe (`pipe:[N]`), to recognise a blocked read of it.
        stdin_link: Option<String>,
    },
    /// A pseudo-terminal.
    Pty(Arc<PtyProcess>),
    /// A foreground run that outlived the auto-yield and went on as a job (SPEC J-1): its process is
    /// owned by the run's task; stopping it cancels the run, which stops the whole tree. Its stdin is
    /// `/dev/null`.
    Detached {
        /// Cancels the run.
        cancel: tokio_util::sync::CancellationToken,
        /// Process id of its shell, when known.
        pid: Option<u32>,
    },
}

impl std::fmt::Debug for JobIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Pipe { handle, .. } => f.debug_tuple("Pipe").field(&handle.pid()).finish(),
            Self::Pty(p) => f.debug_tuple("Pty").field(&p.pid()).finish(),
            Self::Detached { pid, .. } => f.debug_tuple("Detached").field(pid).finish(),
        }
    }
}

impl JobIo {
    /// Process id of the job's leader, when known.
    pub fn pid(&self) -> Option<u32> {
        match self {
            Self::Pipe { handle, .. } => Some(handle.pid()),
            Self::Pty(p) => Some(p.pid()),
            Self::Detached { pid, .. } => *pid,
        }
    }

    /// Send `signal` to the whole tree; returns whether anything received it.
    pub fn signal(&self, signal: Signal) -> bool {
        match self {
            Self::Pipe { handle, .. } => handle.signal(signal).is_ok(),
            Self::Pty(p) => p.kill(signal),
            // Its tree is the run's: any stopping signal stops the run, as a timeout would.
            Self::Detached { cancel, .. } => {
                cancel.cancel();
                true
            }
        }
    }

    /// SIGTERM the whole tree now (for pipes the executor follows with SIGKILL after the grace).
    pub fn terminate(&self) {
        match self {
            Self::Pipe { handle, .. } => handle.cancel(),
            Self::Pty(p) => {
                p.kill(Signal::SIGTERM);
            }
            Self::Detached { cancel, .. } => cancel.cancel(),
        }
    }

    /// SIGKILL everything left of the tree. Blocks briefly (re-scans `/proc`); call off the runtime.
    pub fn kill_now(&self) {
        match self {
            Self::Pipe { handle, .. } => {
                handle.cancel();
                handle.tree().kill_all();
            }
            Self::Pty(p) => {
                p.kill(Signal::SIGKILL);
            }
            Self::Detached { cancel, .. } => cancel.cancel(),
        }
    }

    /// Drop our end of a pipe stdin (the process has ended).
    pub fn close_input(&self) {
        if let Self::Pipe { stdin, .. } = self
            && let Ok(mut guard) = stdin.try_lock()
        {
            *guard = None;
        }
    }

    /// Write raw bytes as input; `eof` closes a pipe's stdin afterwards, or sends ^D to a terminal.
    pub async fn write(&self, data: &[u8], eof: bool, limit: Duration) -> Result<usize, String> {
        match self {
            Self::Pipe { stdin, .. } => {
                let mut guard = stdin.lock().await;
                let Some(pipe) = guard.as_mut() else {
                    return Err("stdin is closed".to_owned());
                };
                let written = tokio::time::timeout(limit, async {
                    pipe.write_all(data).await?;
                    pipe.flush().await
                })
                .await;
                match written {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        *guard = None;
                        return Err(format!("stdin is not writable: {e}"));
                    }
                    Err(_) => {
                        return Err(format!(
                            "the job did not read its input: writing {} bytes did not finish within {} s",
                            data.len(),
                            limit.as_secs()
                        ));
                    }
                }
                if eof {
                    *guard = None;
                }
                Ok(data.len())
            }
            Self::Detached { .. } => {
                Err("it was started in the foreground, so its stdin is /dev/null".to_owned())
            }
            Self::Pty(p) => {
                let mut bytes = data.to_vec();
                if eof {
                    bytes.push(0x04);
                }
                let p = Arc::clone(p);
                tokio::task::spawn_blocking(move || p.write(&bytes).map(|()| bytes.len()))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// Terminal only: encode keys for the terminal's current modes and send them.
    pub async fn send_keys(&self, keys: Vec<KeySpec>) -> Option<Result<usize, String>> {
        let Self::Pty(p) = self else { return None };
        let p = Arc::clone(p);
        Some(
            tokio::task::spawn_blocking(move || p.send_keys(&keys).map_err(|e| e.to_string()))
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r),
        )
    }

    /// Terminal only: paste text (bracketed when the program enabled bracketed paste).
    pub async fn paste(&self, text: String) -> Option<Result<usize, String>> {
        let Self::Pty(p) = self else { return None };
        let p = Arc::clone(p);
        Some(
            tokio::task::spawn_blocking(move || p.paste(&text).map_err(|e| e.to_string()))
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r),
        )
    }

    /// Terminal only: what the screen shows.
    pub fn screen(&self) -> Option<ScreenSnapshot> {
        match self {
            Self::Pty(p) => p.screen(),
            Self::Pipe { .. } | Self::Detached { .. } => None,
        }
    }

    /// Terminal only: resize.
    pub fn resize(&self, cols: u16, rows: u16) -> Option<Result<TermSize, String>> {
        match self {
            Self::Pty(p) => Some(p.resize(cols, rows).map_err(|e| e.to_string())),
            Self::Pipe { .. } | Self::Detached { .. } => None,
        }
    }

    /// Whether the job is blocked reading its input (its terminal, or its stdin pipe while open).
    pub fn waiting_for_input(&self) -> Option<bool> {
        match self {
            Self::Pty(p) => p.waiting_for_input(),
            Self::Detached { .. } => Some(false),
            Self::Pipe {
                handle,
                stdin,
                stdin_link,
            } => {
                // A closed stdin cannot be waited on by anyone.
                let open = stdin.try_lock().map_or(true, |s| s.is_some());
                if !open {
                    return Some(false);
                }
                let link = stdin_link.as_deref()?;
                super::input_wait::reading_pipe(handle.tree().members().into_iter().map(|p| p.pid), link)
            }
        }
    }

    /// Pids of the job's process tree now (none for a detached run: it takes no input).
    pub fn tree_pids(&self) -> Vec<u32> {
        let members = match self {
            Self::Pipe { handle, .. } => handle.tree().members(),
            Self::Pty(p) => p.tree().members(),
            Self::Detached { .. } => Vec::new(),
        };
        members.into_iter().map(|p| p.pid).collect()
    }

    /// Input written but not read yet: the terminal's unread input, or the bytes in the stdin pipe.
    /// `None` when that cannot be told (closed, or a write to the pipe is in progress).
    pub fn unread_input(&self) -> Option<usize> {
        match self {
            Self::Pty(p) => p.unread_input(),
            Self::Pipe { stdin, .. } => {
                let guard = stdin.try_lock().ok()?;
                shellgate_pty::unread_bytes(std::os::fd::AsFd::as_fd(guard.as_ref()?)).ok()
            }
            Self::Detached { .. } => None,
        }
    }

    /// What writing `bytes` now will do: whether the program gets something to read, and how much
    /// of it the terminal echoes. A pipe passes everything on and echoes nothing. `None` when it
    /// cannot be told.
    pub fn forecast_input(&self, bytes: &[u8]) -> Option<InputForecast> {
        match self {
            Self::Pty(p) => p.forecast_input(bytes),
            Self::Pipe { .. } => Some(InputForecast {
                reaches_program: !bytes.is_empty(),
                echoed: 0,
            }),
            Self::Detached { .. } => None,
        }
    }
}
