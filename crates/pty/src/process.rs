//! A process running under a pseudo-terminal, with an interactive handle: write, keys, paste,
//! resize, screen, waiting-for-input, wait and kill.
//!
//! portable-pty's pitfalls are handled here: its reads block, so a reader thread polls a
//! non-blocking copy of the master; the slave is dropped right after spawning so the reader sees the
//! end of output; killing goes to the whole session, not just the pid; and its writer (whose `Drop`
//! types `"\n"` + EOF into the terminal) is never taken — input is written to our own copy of the
//! master descriptor instead.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc as std_mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::Signal;
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;
use portable_pty::{CommandBuilder, MasterPty, PtyPair, PtySize, native_pty_system};
use shellgate_executor::tree::{ProcessTree, RUN_MARKER_VAR, new_run_marker};
use shellgate_executor::{LaunchSpec, signal_name};
use tokio::sync::{mpsc, watch};

use crate::error::PtyError;
use crate::input_queue::InputForecast;
use crate::input_wait::foreground_waiting_for_input;
use crate::keys::{KeyModes, KeySpec, encode_keys, paste_bytes};
use crate::kill::{signal_tree, tree_alive};
use crate::modes::{DEVICE_ATTRIBUTES_REPORT, ModeTracker, TerminalQuery, cursor_position_report};
use crate::output_processing;
use crate::screen::{Screen, ScreenSnapshot};
use crate::size::TermSize;

/// Largest chunk handed to the output channel.
const READ_CHUNK: usize = 64 * 1024;
/// Chunks buffered between the reader thread and the consumer before the program is held back.
const CHANNEL_CHUNKS: usize = 64;
/// How often blocked threads look at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);
/// How long dropping a process waits for its threads before leaving them to finish alone.
const JOIN_WAIT: Duration = Duration::from_secs(2);

/// How to run a process under a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtyOptions {
    /// Initial size (clamped to cols 20–400, rows 5–200).
    pub size: TermSize,
    /// Keep a headless emulator of the screen (needed for [`PtyProcess::screen`] and for answering
    /// cursor-position queries with the real cursor; without it they are answered with 1;1).
    ///
    /// Without it the terminal is transcript-only and starts with output post-processing off
    /// (`stty -opost`): the kernel no longer turns `\n` into `\r\n`, so the output stream is the
    /// program's bytes unchanged, as through a pipe, and bulk output is several times cheaper. The
    /// program still has a terminal (`isatty`, sizes, job control, cooked input, echo); what
    /// changes is that a bare `\n` moves down without returning to the first column on a real
    /// screen, which matters only to whoever renders the bytes (here no one), and `stty -a` shows
    /// `-opost`. Programs that need a cooked terminal may turn it back on (`stty opost`); full-screen
    /// programs set their own modes in any case. With screen emulation the terminal is left cooked,
    /// as a terminal emulator would have it.
    pub emulate_screen: bool,
    /// Rows of scrollback the emulator keeps.
    pub scrollback: usize,
    /// How long a write may wait for the program to take its input.
    pub write_timeout: Duration,
    /// Value of `TERM` for the program (unless the launch spec sets one).
    pub term: String,
}

impl Default for PtyOptions {
    fn default() -> Self {
        Self {
            size: TermSize::default(),
            emulate_screen: true,
            scrollback: 2000,
            write_timeout: Duration::from_secs(5),
            term: "xterm-256color".to_owned(),
        }
    }
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExitInfo {
    /// Exit code when it exited normally.
    pub code: Option<i32>,
    /// Signal number when a signal ended it.
    pub signal: Option<i32>,
}

impl ExitInfo {
    /// The conventional name of the terminating signal (`"SIGINT"`).
    pub fn signal_name(&self) -> Option<String> {
        self.signal.map(signal_name)
    }
}

/// The output stream of a [`PtyProcess`]: raw terminal bytes, in order; `None` once the terminal
/// is closed and everything was delivered.
#[derive(Debug)]
pub struct PtyOutput {
    rx: mpsc::Receiver<Vec<u8>>,
}

impl PtyOutput {
    /// The next chunk, waiting for it.
    pub async fn recv(&mut self) -> Option<Vec<u8>> {
        self.rx.recv().await
    }

    /// The next chunk, blocking the thread (not for use inside an async runtime).
    pub fn blocking_recv(&mut self) -> Option<Vec<u8>> {
        self.rx.blocking_recv()
    }

    /// The next chunk if one is ready: `Ok(None)` means none yet, `Err(())` the end of output.
    #[allow(clippy::result_unit_err)]
    pub fn try_recv(&mut self) -> Result<Option<Vec<u8>>, ()> {
        match self.rx.try_recv() {
            Ok(chunk) => Ok(Some(chunk)),
            Err(mpsc::error::TryRecvError::Empty) => Ok(None),
            Err(mpsc::error::TryRecvError::Disconnected) => Err(()),
        }
    }
}

/// Output kept by a terminal without screen emulation, to answer cursor-position queries.
const RECENT_OUTPUT: usize = 16 * 1024;

/// Terminal state derived from the output: input modes and the emulated screen.
struct Terminal {
    modes: ModeTracker,
    screen: Option<Screen>,
    /// Without a screen: the last [`RECENT_OUTPUT`] bytes of output (up to twice that between trims).
    recent: Vec<u8>,
    /// The terminal's size, for replaying `recent`.
    size: TermSize,
}

impl Terminal {
    fn new(screen: Option<Screen>, size: TermSize) -> Self {
        Self {
            modes: ModeTracker::new(),
            screen,
            recent: Vec::new(),
            size,
        }
    }

    /// Feed output; returns the replies owed to the program's queries, in order.
    fn feed(&mut self, chunk: &[u8]) -> Vec<u8> {
        let mut replies = Vec::new();
        let mut fed = 0;
        let Self {
            modes,
            screen,
            recent,
            size,
        } = self;
        modes.scan(chunk, |end, query| {
            // Bring the screen up to the query so the cursor is where the program left it.
            if let Some(screen) = screen.as_mut() {
                screen.process(&chunk[fed..end]);
                fed = end;
            }
            match query {
                TerminalQuery::CursorPosition => {
                    let (row, col) = match screen.as_ref() {
                        Some(screen) => screen.cursor(),
                        None => replayed_cursor(recent, &chunk[..end], *size),
                    };
                    replies.extend(cursor_position_report(row, col));
                }
                TerminalQuery::DeviceAttributes => replies.extend_from_slice(DEVICE_ATTRIBUTES_REPORT),
            }
        });
        if let Some(screen) = screen.as_mut() {
            screen.process(&chunk[fed..]);
        } else {
            recent.extend_from_slice(chunk);
            if recent.len() > 2 * RECENT_OUTPUT {
                recent.drain(..recent.len() - RECENT_OUTPUT);
            }
        }
        replies
    }

    fn resize(&mut self, size: TermSize) {
        self.size = size;
        if let Some(screen) = self.screen.as_mut() {
            screen.resize(size);
        }
    }
}

/// Where the cursor of a terminal without screen emulation is: the recent output replayed through
/// a fresh emulator. Exact unless the program placed the cursor with sequences older than the kept
/// output (full-screen programs get screen emulation); queries are rare, so this costs nothing until
/// a program asks.
fn replayed_cursor(recent: &[u8], current: &[u8], size: TermSize) -> (u16, u16) {
    let mut screen = Screen::new(size, 0);
    screen.process(recent);
    screen.process(current);
    screen.cursor()
}

/// State shared with the reader thread.
struct Shared {
    /// Our own non-blocking copy of the master, used for every write.
    writer: Mutex<File>,
    terminal: Mutex<Terminal>,
    write_timeout: Duration,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere must not make the terminal unusable; the data stays consistent enough.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Shared {
    fn write_all(&self, mut bytes: &[u8]) -> Result<(), PtyError> {
        let file = lock(&self.writer);
        let deadline = Instant::now() + self.write_timeout;
        while !bytes.is_empty() {
            match (&*file).write(bytes) {
                Ok(0) => return Err(PtyError::Exited),
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(PtyError::WriteTimeout(self.write_timeout));
                    }
                    let mut fds = [PollFd::new(file.as_fd(), PollFlags::POLLOUT)];
                    let ms = u16::try_from(left.as_millis().min(1000)).unwrap_or(1000);
                    let _ = poll(&mut fds, PollTimeout::from(ms));
                }
                Err(e) if e.raw_os_error() == Some(libc::EIO) => return Err(PtyError::Exited),
                Err(e) => return Err(PtyError::Io(e)),
            }
        }
        Ok(())
    }
}

/// A thread and the means to wait for it with a bound.
struct Worker {
    handle: JoinHandle<()>,
    // In a mutex only so the handle is `Sync`; it is used once, by `join_within`.
    done: Mutex<std_mpsc::Receiver<()>>,
}

impl Worker {
    fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> std::io::Result<Self> {
        let (done_tx, done) = std_mpsc::channel::<()>();
        let handle = std::thread::Builder::new().name(name.to_owned()).spawn(move || {
            // Dropped when the thread ends, which wakes the bounded join.
            let _done = done_tx;
            f();
        })?;
        Ok(Self {
            handle,
            done: Mutex::new(done),
        })
    }

    /// Join if the thread ends within `wait`; otherwise leave it to finish on its own.
    fn join_within(self, wait: Duration) {
        let done = self
            .done
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if matches!(
            done.recv_timeout(wait),
            Err(std_mpsc::RecvTimeoutError::Disconnected)
        ) {
            let _ = self.handle.join();
        }
    }
}

/// A process running under a pseudo-terminal.
///
/// Dropping it kills everything left in its session and closes the terminal.
pub struct PtyProcess {
    master: Mutex<Box<dyn MasterPty + Send>>,
    shared: Arc<Shared>,
    pid: u32,
    tree: ProcessTree,
    tty: Option<PathBuf>,
    size: Mutex<TermSize>,
    exit_rx: watch::Receiver<Option<ExitInfo>>,
    output: Option<PtyOutput>,
    stop: Arc<AtomicBool>,
    reader: Option<Worker>,
    waiter: Option<Worker>,
}

impl std::fmt::Debug for PtyProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtyProcess")
            .field("pid", &self.pid)
            .field("tty", &self.tty)
            .field("exit", &*self.exit_rx.borrow())
            .finish_non_exhaustive()
    }
}

/// Open a pseudo-terminal pair of `size`.
pub(crate) fn open_pty(size: TermSize) -> Result<PtyPair, PtyError> {
    native_pty_system()
        .openpty(PtySize {
            rows: size.rows,
            cols: size.cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(|e| PtyError::Open(format!("{e:#}")))
}

fn command_for(spec: &LaunchSpec, options: &PtyOptions, marker: &str) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(&spec.program);
    cmd.args(&spec.args);
    cmd.cwd(&spec.cwd);
    if spec.env_clear {
        cmd.env_clear();
    }
    for key in &spec.env_remove {
        cmd.env_remove(key);
    }
    cmd.env("TERM", &options.term);
    for (key, value) in &spec.env {
        cmd.env(key, value);
    }
    // Lets the process tree recognise descendants that leave the session.
    cmd.env(RUN_MARKER_VAR, marker);
    cmd
}

/// Whether a spawn error is the program's fault (it cannot run anywhere) rather than the terminal's.
fn is_program_error(err: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    match err.downcast_ref::<std::io::Error>() {
        Some(io) => matches!(
            io.raw_os_error(),
            Some(
                libc::ENOENT
                    | libc::EACCES
                    | libc::ENOEXEC
                    | libc::ENOTDIR
                    | libc::ELOOP
                    | libc::ENAMETOOLONG
                    | libc::E2BIG
                    | libc::ETXTBSY
                    | libc::EISDIR
            )
        ),
        // portable-pty reports program lookup failures ("Unable to spawn …") as plain messages.
        None => true,
    }
}

/// A close-on-exec, non-blocking copy of the master descriptor.
#[allow(unsafe_code)]
pub(crate) fn own_master_fd(master: &dyn MasterPty) -> Result<OwnedFd, PtyError> {
    let raw = master
        .as_raw_fd()
        .ok_or_else(|| PtyError::Setup("the terminal has no descriptor".into()))?;
    // SAFETY: `raw` is the master descriptor owned by `master`, which outlives this borrow; it is
    // only duplicated here, never closed.
    let borrowed = unsafe { BorrowedFd::borrow_raw(raw) };
    // `try_clone_to_owned` duplicates with F_DUPFD_CLOEXEC, so other children never inherit it.
    let fd = borrowed
        .try_clone_to_owned()
        .map_err(|e| PtyError::Setup(format!("cannot duplicate the terminal: {e}")))?;
    let flags = fcntl(&fd, FcntlArg::F_GETFL).map_err(|e| PtyError::Setup(format!("fcntl: {e}")))?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(&fd, FcntlArg::F_SETFL(flags)).map_err(|e| PtyError::Setup(format!("fcntl: {e}")))?;
    Ok(fd)
}

impl PtyProcess {
    /// Start `spec` under a new pseudo-terminal. `spec.stdin` and `spec.pty` are ignored: the
    /// terminal is the program's stdin, stdout and stderr. `spec.timeout` is the caller's to enforce.
    pub fn spawn(spec: &LaunchSpec, options: &PtyOptions) -> Result<Self, PtyError> {
        Self::spawn_with(spec, options, open_pty)
    }

    pub(crate) fn spawn_with(
        spec: &LaunchSpec,
        options: &PtyOptions,
        open: impl FnOnce(TermSize) -> Result<PtyPair, PtyError>,
    ) -> Result<Self, PtyError> {
        let size = options.size.clamped();
        // portable-pty silently falls back to $HOME for a missing directory; refuse instead.
        if !spec.cwd.is_dir() {
            return Err(PtyError::Spawn {
                program: spec.program.clone(),
                reason: format!(
                    "working directory {} does not exist or is not a directory",
                    spec.cwd.display()
                ),
            });
        }
        let pair = open(size)?;
        let fd = own_master_fd(&*pair.master)?;
        if !options.emulate_screen {
            // Transcript only: the kernel's `\n` → `\r\n` rewriting would only be undone again, and
            // it is the costliest part of the terminal's output path.
            output_processing::disable(&fd)
                .map_err(|e| PtyError::Setup(format!("cannot set the terminal's modes: {e}")))?;
        }
        let marker = new_run_marker();
        let spawned = pair.slave.spawn_command(command_for(spec, options, &marker));
        // The reader sees the end of output only once no slave descriptor is left open here.
        drop(pair.slave);
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) if is_program_error(&*e) => {
                return Err(PtyError::Spawn {
                    program: spec.program.clone(),
                    reason: format!("{e:#}"),
                });
            }
            Err(e) => return Err(PtyError::Setup(format!("{e:#}"))),
        };
        let Some(pid) = child.process_id() else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(PtyError::Setup("the process has no id".into()));
        };
        let master = pair.master;
        let tree = ProcessTree::new(pid, Some(marker));
        let abort = |child: &mut Box<dyn portable_pty::Child + Send + Sync>, err: PtyError| {
            tree.kill_all();
            let _ = child.wait();
            err
        };
        let writer = File::from(fd);
        let reader_file = match writer.try_clone() {
            Ok(f) => f,
            Err(e) => {
                return Err(abort(
                    &mut child,
                    PtyError::Setup(format!("cannot duplicate the terminal: {e}")),
                ));
            }
        };
        let shared = Arc::new(Shared {
            writer: Mutex::new(writer),
            terminal: Mutex::new(Terminal::new(
                options
                    .emulate_screen
                    .then(|| Screen::new(size, options.scrollback)),
                size,
            )),
            write_timeout: options.write_timeout,
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (exit_tx, exit_rx) = watch::channel(None);
        let waiter = match Worker::spawn("pty-wait", move || wait_loop(pid, child, &exit_tx)) {
            Ok(w) => w,
            Err(e) => {
                // The child moved into the failed closure and was dropped; kill and reap it.
                tree.kill_all();
                let _ = waitid(Id::Pid(Pid::from_raw(pid as i32)), WaitPidFlag::WEXITED);
                return Err(PtyError::Setup(format!("cannot start a wait thread: {e}")));
            }
        };
        let (tx, rx) = mpsc::channel(CHANNEL_CHUNKS);
        let reader = {
            let shared = Arc::clone(&shared);
            let stop = Arc::clone(&stop);
            Worker::spawn("pty-read", move || read_loop(&reader_file, &shared, &tx, &stop))
        };
        let mut process = Self {
            tty: master.tty_name(),
            master: Mutex::new(master),
            shared,
            pid,
            tree,
            size: Mutex::new(size),
            exit_rx,
            output: Some(PtyOutput { rx }),
            stop,
            reader: None,
            waiter: Some(waiter),
        };
        match reader {
            Ok(r) => process.reader = Some(r),
            // Dropping `process` kills the session and joins the waiter.
            Err(e) => return Err(PtyError::Setup(format!("cannot start a reader thread: {e}"))),
        }
        Ok(process)
    }

    /// The program's process id (also its session and process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The terminal's device path (`/dev/pts/N`).
    pub fn tty_name(&self) -> Option<&Path> {
        self.tty.as_deref()
    }

    /// The output stream; `None` after the first call.
    pub fn take_output(&mut self) -> Option<PtyOutput> {
        self.output.take()
    }

    /// Write raw bytes to the terminal, as if typed. Blocks at most the write timeout when the
    /// program does not read its input.
    pub fn write(&self, bytes: &[u8]) -> Result<(), PtyError> {
        self.shared.write_all(bytes)
    }

    /// Encode `keys` for the terminal's current modes and write them in one go. Returns the number
    /// of bytes sent.
    pub fn send_keys(&self, keys: &[KeySpec]) -> Result<usize, PtyError> {
        let bytes = encode_keys(keys, self.modes())?;
        self.write(&bytes)?;
        Ok(bytes.len())
    }

    /// Paste `text`: bracketed (`ESC[200~ … ESC[201~`) when the program enabled bracketed paste,
    /// raw otherwise. Returns the number of bytes sent.
    pub fn paste(&self, text: &str) -> Result<usize, PtyError> {
        let bytes = paste_bytes(text, self.modes());
        self.write(&bytes)?;
        Ok(bytes.len())
    }

    /// Input modes the program has set so far (application cursor/keypad, bracketed paste).
    pub fn modes(&self) -> KeyModes {
        lock(&self.shared.terminal).modes.modes()
    }

    /// Resize the terminal (clamped to cols 20–400, rows 5–200); the program gets SIGWINCH.
    /// Returns the size applied.
    pub fn resize(&self, cols: u16, rows: u16) -> Result<TermSize, PtyError> {
        let size = TermSize::new(cols, rows);
        lock(&self.master)
            .resize(PtySize {
                rows: size.rows,
                cols: size.cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| PtyError::Io(std::io::Error::other(format!("{e:#}"))))?;
        *lock(&self.size) = size;
        lock(&self.shared.terminal).resize(size);
        Ok(size)
    }

    /// The current size.
    pub fn size(&self) -> TermSize {
        *lock(&self.size)
    }

    /// What the terminal shows now; `None` without screen emulation.
    pub fn screen(&self) -> Option<ScreenSnapshot> {
        lock(&self.shared.terminal).screen.as_ref().map(Screen::snapshot)
    }

    /// Scrollback followed by the visible screen, as text; `None` without screen emulation.
    pub fn screen_with_scrollback(&self) -> Option<String> {
        lock(&self.shared.terminal)
            .screen
            .as_mut()
            .map(Screen::text_with_scrollback)
    }

    /// Whether the terminal's foreground process group is blocked reading the terminal, from
    /// `/proc`. `Some(false)` once the process has exited; `None` when the kernel cannot tell.
    pub fn waiting_for_input(&self) -> Option<bool> {
        if self.try_wait().is_some() {
            return Some(false);
        }
        let pgrp = {
            let writer = lock(&self.shared.writer);
            nix::unistd::tcgetpgrp(writer.as_fd()).ok()?
        };
        let tree = self.tree.members().into_iter().map(|p| p.pid as i32);
        foreground_waiting_for_input(pgrp.as_raw(), self.tty.as_deref()?, tree)
    }

    /// Input written to the terminal that the program has not read yet (complete lines only, in
    /// canonical mode). `None` when the terminal cannot be asked (closed, not openable).
    pub fn unread_input(&self) -> Option<usize> {
        crate::input_queue::terminal_unread(self.tty.as_deref()?)
    }

    /// What the terminal will make of `bytes` written as input now: whether they give the program
    /// something to read, and how much of them it echoes. `None` when the terminal cannot be asked
    /// or a write is in progress (the caller must not wait for it).
    pub fn forecast_input(&self, bytes: &[u8]) -> Option<InputForecast> {
        let writer = match self.shared.writer.try_lock() {
            Ok(writer) => writer,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        crate::input_queue::forecast(&*writer, bytes)
    }

    /// Whether the terminal currently turns the program's `\n` into `\r\n` (output
    /// post-processing on). `None` when the terminal cannot be asked, or a write to it is in
    /// progress: that may wait for the program to read, and the caller must not wait with it.
    pub(crate) fn translates_newlines(&self) -> Option<bool> {
        let writer = match self.shared.writer.try_lock() {
            Ok(writer) => writer,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        output_processing::translates_newlines(&*writer)
    }

    /// How the process ended, if it has.
    pub fn try_wait(&self) -> Option<ExitInfo> {
        *self.exit_rx.borrow()
    }

    /// Wait for the process to end.
    pub async fn wait(&self) -> ExitInfo {
        let mut rx = self.exit_rx.clone();
        match rx.wait_for(Option::is_some).await {
            Ok(info) => info.unwrap_or_default(),
            // The wait thread is gone without a status (it could not reap): nothing more to learn.
            Err(_) => ExitInfo::default(),
        }
    }

    /// Send `signal` to every process of the terminal's session and process group. Returns whether
    /// anything received it.
    pub fn kill(&self, signal: Signal) -> bool {
        signal_tree(&self.tree, signal)
    }

    /// Kill every process of the tree with SIGKILL (re-scanning until none is left, briefly) and reap
    /// the ones the engine adopted. Returns how many processes other than the program were killed.
    pub fn kill_tree(&self) -> usize {
        self.tree.kill_all().len()
    }

    /// Whether any process of the session is still alive (the program or what it left behind).
    pub fn session_alive(&self) -> bool {
        tree_alive(&self.tree)
    }

    /// The process tree of this terminal session.
    pub fn tree(&self) -> &ProcessTree {
        &self.tree
    }
}

impl Drop for PtyProcess {
    fn drop(&mut self) {
        if self.try_wait().is_none() || tree_alive(&self.tree) {
            self.tree.kill_all();
        } else {
            // Descendants that outlived the program and ended on their own may have been adopted
            // by the engine (when it is a subreaper); collect their exit statuses.
            self.tree.reap_adopted();
        }
        self.stop.store(true, Ordering::Relaxed);
        if let Some(waiter) = self.waiter.take() {
            waiter.join_within(JOIN_WAIT);
        }
        if let Some(reader) = self.reader.take() {
            reader.join_within(JOIN_WAIT);
        }
    }
}

/// Wait for `pid` to end, reading its status without reaping first (portable-pty's status keeps
/// only a signal's description, not its number), then reap it through portable-pty.
fn wait_loop(
    pid: u32,
    mut child: Box<dyn portable_pty::Child + Send + Sync>,
    exit_tx: &watch::Sender<Option<ExitInfo>>,
) {
    let peek = loop {
        match waitid(
            Id::Pid(Pid::from_raw(pid as i32)),
            WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT,
        ) {
            Err(Errno::EINTR) => {}
            other => break other,
        }
    };
    let reaped = child.wait();
    let info = match peek {
        Ok(WaitStatus::Exited(_, code)) => ExitInfo {
            code: Some(code),
            signal: None,
        },
        Ok(WaitStatus::Signaled(_, signal, _)) => ExitInfo {
            code: None,
            signal: Some(signal as i32),
        },
        _ => match reaped {
            Ok(status) if status.signal().is_none() => ExitInfo {
                code: i32::try_from(status.exit_code()).ok(),
                signal: None,
            },
            _ => ExitInfo::default(),
        },
    };
    let _ = exit_tx.send(Some(info));
}

/// Read the terminal until it closes: update modes and screen, answer queries, pass chunks on.
fn read_loop(file: &File, shared: &Shared, tx: &mpsc::Sender<Vec<u8>>, stop: &AtomicBool) {
    let mut buf = vec![0u8; READ_CHUNK];
    // Output not yet handed over: while the consumer is still busy with earlier chunks, new output
    // is gathered into one larger chunk instead of many small ones.
    let mut pending: Vec<u8> = Vec::with_capacity(2 * READ_CHUNK);
    let mut consumer_gone = false;
    let idle_wait = PollTimeout::from(u16::try_from(STOP_POLL.as_millis()).unwrap_or(50));
    let busy_wait = PollTimeout::from(1u16);
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let mut fds = [PollFd::new(file.as_fd(), PollFlags::POLLIN)];
        let ready = match poll(&mut fds, if pending.is_empty() { idle_wait } else { busy_wait }) {
            Ok(n) => n > 0,
            Err(Errno::EINTR) => false,
            Err(_) => return,
        };
        let mut ended = false;
        if ready {
            // Take everything available, up to one chunk.
            let mut filled = 0;
            while filled < buf.len() {
                match (&*file).read(&mut buf[filled..]) {
                    Ok(0) => {
                        ended = true;
                        break;
                    }
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    // EIO: every slave descriptor is closed.
                    Err(_) => {
                        ended = true;
                        break;
                    }
                }
            }
            if filled > 0 {
                let chunk = &buf[..filled];
                let replies = lock(&shared.terminal).feed(chunk);
                if !replies.is_empty() {
                    let _ = shared.write_all(&replies);
                }
                if !consumer_gone {
                    pending.extend_from_slice(chunk);
                }
            }
        }
        let consumer_idle = tx.capacity() == tx.max_capacity();
        if !pending.is_empty() && (consumer_idle || !ready || ended || pending.len() >= READ_CHUNK) {
            // An exact-size copy: `pending` keeps its capacity, so gathering never reallocates and a
            // small chunk does not pin a large buffer while it waits in the channel.
            let chunk = pending.as_slice().to_vec();
            pending.clear();
            consumer_gone = !deliver(tx, chunk, stop);
        }
        if ended {
            return;
        }
    }
}

/// Hand a chunk to the consumer, waiting while its buffer is full (which holds the program back).
/// Returns false once the consumer is gone (later output is read and dropped so the program never
/// blocks on a full terminal) or a stop was requested.
fn deliver(tx: &mpsc::Sender<Vec<u8>>, mut chunk: Vec<u8>, stop: &AtomicBool) -> bool {
    let mut pause = Duration::from_micros(50);
    loop {
        match tx.try_send(chunk) {
            Ok(()) => return true,
            Err(mpsc::error::TrySendError::Closed(_)) => return false,
            Err(mpsc::error::TrySendError::Full(back)) => {
                if stop.load(Ordering::Relaxed) {
                    return false;
                }
                chunk = back;
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(5));
            }
        }
    }
}
