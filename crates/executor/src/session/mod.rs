//! Persistent shell sessions (SPEC E-10) and the rc snapshot (SPEC E-11).
//!
//! A session is a live bash or zsh that keeps its working directory, variables, functions, aliases and
//! options from one command to the next. [`SessionManager`] keeps one per [`SessionKey`].
//!
//! # Protocol, and why
//!
//! Every shell gets a private directory (mode 0700, on a memory-backed file system when available) with
//! two FIFOs, `req` and `resp`, and (bash) a script file:
//!
//! - The shell's **script** is what the engine writes: zsh is started as `zsh -f <dir>/req` and reads
//!   the request FIFO; bash is started as `bash --noprofile --norc <dir>/script`, a regular file the
//!   engine appends each line to. bash reads a FIFO one byte per system call and a regular file in
//!   blocks; every bash line ends by waiting for one byte on `req`, which the engine writes once the next
//!   line is in the file, so bash never reads the file's end (see `feed.rs`). Each command is one line:
//!   (zsh) acknowledge, `cd` to the
//!   call's directory and export its variables (for that command only: afterwards each is put back unless
//!   the command changed it), then `source /dev/fd/3 3<<dir>/c </dev/null ><dir>/o 2>&1` (zsh: the same
//!   in a brace group), then report. The user's text is written to the file `c` (rewritten in place for
//!   each command: a shell runs one at a time), never into the script stream, so quotes,
//!   heredocs or syntax errors in it cannot desynchronise anything, and `return` ends just the command.
//!   Reading it as `/dev/fd/3` keeps the engine's directory out of error messages (bash: `bash: line 1:
//!   …`; zsh: `/dev/fd/3:1: …`; lines counted from the command's first).
//!   Because the command is sourced by the shell itself (no subshell), `cd`, `export`, functions, aliases
//!   and options persist. Running at the top level of the script (not inside a `while read` loop) means a
//!   stray `break` or `continue` in a command cannot end the session.
//!   The fixed parts of a bash line are functions and path variables defined once by the bootstrap
//!   (`__shellgate_begin 7 0; source /dev/fd/3 3<"$__shellgate_f" … ; __shellgate_end "$?" 7 0`); the
//!   `source` itself stays on the line, at the top level (in a function the command's `declare` would be
//!   local; in `eval` its trace lines would get one more `+`). bash sends no acknowledgement either:
//!   when the pick-up time runs out before the command is done, the engine asks the request FIFO
//!   instead, which is empty once bash has taken the byte that releases the line.
//! - `resp` (the shell's fd 3) carries NUL-separated control records: ready, acknowledged (zsh), done (status
//!   and `$PWD`), state saved. While a command runs, fd 3 is its own command file (read-only), not the
//!   control channel, and its stdout/stderr go to the output FIFO (`o`; kept for the next command once
//!   every writer has gone, else made anew), so nothing a command prints — NUL bytes, fake sentinels,
//!   escape sequences — can be mistaken for a control record.
//!   Redirections of the `source` are undone by the shell when it returns, which also neutralises
//!   `exec >file` or `exec 3>&-` inside a command. The trace of the `source` itself (`xtrace`) and a
//!   `DEBUG` trap run for it happen before its redirections apply, on the shell's own stdout and stderr
//!   (`/dev/null`), so neither shows in the output.
//! - The output FIFO gives the pipe executor's completion rule unchanged: after "done", the
//!   engine drops its own write end and reads until EOF (every writer gone) or the bounded drain ends;
//!   processes the command left behind are then killed, the shell itself is kept.
//!
//! After each command that may have changed it, the shell writes its state (`declare -p`, `declare -f`,
//! `alias -p`, the option sets; zsh: `typeset -p` of non-special parameters, functions, aliases, options) to one of two
//! alternating files and reports "saved"; after them come, for judging later commands only (never
//! restored), the traps (`trap -p`), hashed paths (`hash -l`), enabled builtins (`enable -a`) and an end
//! line; the call returns once the save is confirmed. Saving is the
//! dearest part of a round trip, so commands that provably only run programs (`cargo test | tail`) skip
//! it — the previous save is still exact after them (see `stateless.rs` for the conservative rules).
//! When the shell is lost — `exit N`, `exec cmd`, `set -e` with a failure, a timeout or cancel (the whole
//! tree is stopped, including a loop running inside the shell), a shell that does not pick up a command
//! — the next command runs in a new shell restored from the last saved state, with a notice. A shell
//! that ends through `exit` or a `set -e` failure saves its state and directory on the way out (an exit
//! hook; a command that sets its own `EXIT` trap replaces it), so what that command changed is kept;
//! after a timeout, cancel, `exec` or kill, the last regular save is used. Background jobs a command
//! leaves are disowned when it ends (the engine stops them), so no job notices reach later output.
//!
//! Pipeline statuses: a command containing `|` (no here-document, not ending in `\`, `|`, `&`) is also
//! written with a status line appended, which keeps `PIPESTATUS`/`pipestatus` and `$?` of its last
//! top-level pipeline and ends the sourced file with that `$?`; `__shellgate_end` reports them, and
//! [`ExecOutcome::pipeline_status`](crate::ExecOutcome) gets the stages when there were two or more. The
//! command's status, `pipefail`, `set -e` and `ERR`/`ZERR` traps behave as without the line. Commands
//! that start with `xtrace` or `verbose` (bash: also `functrace`) on run without it (no stages then),
//! so traces stay the command's own. zsh caveats: a `ZERR` or `DEBUG` trap that runs after the last
//! pipeline replaces `pipestatus` (the stages then are the trap's, usually none), and a `DEBUG` trap
//! also runs for the line's two commands; when the last statement is an `&&` list whose last pipeline
//! ran and failed, a `ZERR` trap runs once more; a command that itself switches `xtrace` on shows the
//! line in its trace.
//!
//! Limits: traps and background jobs do not survive a respawn. The timeout passed to
//! [`SessionManager::run`] is used as given (clamp it with `clamp_timeout` first).
//!
//! Shells run like the pipe executor's commands: a new session and process group behind the guard
//! process (parent-death signal), stdin `/dev/null`, the non-interactive environment, and the process
//! tree module to find, signal and kill every descendant.
//!
//! ```
//! use std::collections::BTreeMap;
//! use std::time::Duration;
//! use shellgate_executor::{CancellationToken, SessionKey, SessionManager};
//! use shellgate_sink::Collect;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let sessions = SessionManager::default();
//! let key = SessionKey::new("demo").with_shell("/bin/bash");
//! let env = BTreeMap::new();
//! let t = Duration::from_secs(30);
//! let mut out = Collect::default();
//! sessions.run(&key, "cd /tmp && export V=1", None, &env, t, &mut out, CancellationToken::new()).await;
//! let mut out = Collect::default();
//! let outcome = sessions.run(&key, "echo $V", None, &env, t, &mut out, CancellationToken::new()).await;
//! assert_eq!(out.bytes, b"1\n");
//! assert_eq!(outcome.cwd_after.as_deref(), Some(std::path::Path::new("/tmp")));
//! sessions.shutdown();
//! # });
//! ```

mod feed;
mod manager;
mod process;
mod records;
mod script;
mod snapshot;
mod stateless;

pub use manager::restore::{SessionState, SessionsNamed, StateFile};
pub use manager::{SessionCommand, SessionInfo, SessionKey, SessionManager, SessionOptions};
pub use script::ShellKind;
pub use stateless::cannot_change_state;
