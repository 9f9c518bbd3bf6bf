//! The shell-side half of the session protocol: bootstrap, per-command lines, state filtering.
//!
//! Everything the engine sends is written in the shell's own language and read by the shell as its script
//! (from the request FIFO). Only fixed text and single-quoted paths/values are interpolated; the user's
//! command never enters this stream — it is written to a file and `source`d, so a syntax error, a stray
//! quote or a heredoc in it cannot desynchronise the protocol.

use std::fmt::Write as _;
use std::path::Path;

/// The shell families sessions support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShellKind {
    /// GNU bash.
    Bash,
    /// zsh.
    Zsh,
}

impl ShellKind {
    /// The family of the shell at `path`, judged by its file name; `None` for other shells.
    pub fn of(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_str()?;
        if name.contains("zsh") {
            Some(Self::Zsh)
        } else if name.contains("bash") {
            Some(Self::Bash)
        } else {
            None
        }
    }

    /// Arguments that start the shell reading its script from `script` (the request FIFO).
    pub(crate) fn session_args(self, login: bool, script: &Path) -> Vec<String> {
        let mut args: Vec<String> = match (self, login) {
            (Self::Bash, false) => vec!["--noprofile".into(), "--norc".into()],
            (Self::Bash, true) => vec!["-l".into()],
            (Self::Zsh, false) => vec!["-f".into()],
            (Self::Zsh, true) => vec!["-l".into(), "-f".into()],
        };
        args.push(script.to_string_lossy().into_owned());
        args
    }

    /// The rc file the snapshot reads, relative to `$HOME`.
    pub(crate) fn rc_name(self) -> &'static str {
        match self {
            Self::Bash => ".bashrc",
            Self::Zsh => ".zshrc",
        }
    }
}

/// `value` as one single-quoted shell word (valid in bash and zsh).
pub(crate) fn quote(value: &str) -> String {
    crate::sh_quote(value)
}

fn quote_path(path: &Path) -> String {
    quote(&path.to_string_lossy())
}

/// Whether `name` can be exported by the shell.
pub(crate) fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Marker between the variable part of a saved state and the rest (functions, aliases).
const STATE_SPLIT: &str = "#shellgate-state-functions";

/// Marker before the part of a saved state that is only read to judge later commands, never
/// restored: traps (`trap -p`), hashed command paths (`hash -l`), enabled builtins (`enable -a`;
/// zsh: traps only), then [`STATE_END`], so that a state cut short or written by something else
/// is told from a complete one.
const STATE_HOOKS: &str = "#shellgate-state-hooks";

/// (bash: `DEBUG` and `RETURN` traps show inside a function only when it and its callers have the
/// trace attribute, so the functions that end a command and save have it — a session's own `DEBUG`
/// trap then also runs for their commands. Each command of the save redirects on its own: a
/// `DEBUG` trap runs before its command's redirection applies, so what the trap prints goes to the
/// shell's own output, `/dev/null`, never into the state.)
///
/// The last line of a complete saved state.
const STATE_END: &str = ": shellgate-state-end";

/// The state file the shell writes when a command ends it (`exit`, a failure under `set -e`): bash's
/// `EXIT` trap, zsh's `TRAPEXIT`. The engine uses it only when the command was neither timed out nor
/// cancelled. Installed once, when
/// the shell starts; a command that sets its own `EXIT` trap replaces it (the user's trap wins, and that
/// shell's exit then keeps the previous save). Subshells do not write it.
pub(crate) const EXIT_STATE: &str = "x";

/// The working directory at that exit (written next to [`EXIT_STATE`]).
pub(crate) const EXIT_CWD: &str = "xcwd";

/// What the shell runs first: open the control FIFO, restore state, define the protocol helpers, report
/// readiness. `snapshot` is sourced only for a brand-new session; `init` is a saved state to restore.
pub(crate) fn bootstrap(
    kind: ShellKind,
    dir: &Path,
    cwd: &Path,
    snapshot: Option<&Path>,
    init: Option<&Path>,
    marker: &str,
) -> String {
    let dir_q = quote_path(dir);
    let command_q = quote_path(&dir.join(COMMAND_FILE));
    let copy_q = quote_path(&dir.join(STATUS_COPY_FILE));
    let mut s = String::new();
    let _ = writeln!(s, "\\exec 3>{}", quote_path(&dir.join(RESPONSE_FIFO)));
    match kind {
        Kind::Bash => {
            s.push_str("\\builtin shopt -s expand_aliases\n");
            if let Some(snap) = snapshot {
                let _ = writeln!(s, "{} </dev/null >/dev/null 2>&1", sourced(Kind::Bash, snap));
            }
            if let Some(init) = init {
                let _ = writeln!(s, "{} </dev/null >/dev/null 2>&1", sourced(Kind::Bash, init));
            }
            // Options are saved as the values of SHELLOPTS/BASHOPTS (cheaper than `shopt -p; set +o`
            // after every command) and re-applied here: on ones switched on, missing ones off.
            s.push_str(
                r#"__shellgate_options() {
  \builtin local __o IFS=:
  for __o in $SHELLOPTS; do case ":$1:" in *":$__o:"*) ;; *) \builtin set +o "$__o";; esac; done
  for __o in $1; do \builtin set -o "$__o"; done
  for __o in $BASHOPTS; do case ":$2:" in *":$__o:"*) ;; *) \builtin shopt -u "$__o";; esac; done
  for __o in $2; do \builtin shopt -s "$__o"; done
} 2>/dev/null
"#,
            );
            let wait = bash_wait(dir);
            // `__shellgate_end` first forgets the command's background jobs: the engine kills what is
            // left after "done", and bash would print a "Killed" notice for each into the next
            // command's output (zsh prints none when not interactive).
            let _ = write!(
                s,
                r#"__shellgate_begin() {{
  \builtin unset __shellgate_ps __shellgate_w
  case $2$- in 0*|*[xvT]*) {FILE_VAR}={command_q};; *) {FILE_VAR}={copy_q};; esac
  case $- in *a*) \builtin export -n {FILE_VAR};; esac
}}
__shellgate_end() {{
  \builtin disown -a
  \builtin printf 'D\0%s\0%s\0%s\0%s\0' "$2" "$1" "$PWD" "${{__shellgate_ps-}}" >&3
  \builtin unset __shellgate_ps __shellgate_st
  case $3 in 1) \__shellgate_save {dir_q}/s$(( $2 % 2 )); \builtin printf 'S\0%s\0' "$2" >&3;; esac
  {wait}
}}
__shellgate_save() {{
  __shellgate_so=$SHELLOPTS __shellgate_bo=$BASHOPTS
  \builtin declare -p >|"$1" 2>/dev/null
  \builtin printf '%s\n' '{STATE_SPLIT}' >>"$1"
  \builtin declare -f >>"$1" 2>/dev/null
  \builtin alias -p >>"$1"
  \builtin printf '%s\n' '{STATE_HOOKS}' >>"$1"
  \builtin trap -p >>"$1"
  \builtin hash -l >>"$1" 2>/dev/null
  \builtin enable -a >>"$1"
  \builtin printf '%s\n' '{STATE_END}' >>"$1"
}}
__shellgate_exit() {{
  case $BASHPID in $$) ;; *) \builtin return 0;; esac
  if \builtin declare -F __shellgate_restore >/dev/null; then \__shellgate_restore; \builtin unset -f __shellgate_restore; fi
  \__shellgate_save {dir_q}/{EXIT_STATE}
  \builtin printf '%s' "$PWD" >|{dir_q}/{EXIT_CWD}
}}
\builtin declare -ft __shellgate_end __shellgate_save __shellgate_exit
"#
            );
            // The output FIFO's path, as a variable, which keeps the command lines short.
            let _ = writeln!(s, "{OUTPUT_VAR}={}", quote_path(&dir.join(OUTPUT_FIFO)));
            // Under `allexport` (from an rc file) it would reach every command's environment.
            let _ = writeln!(s, "\\builtin export -n {OUTPUT_VAR}");
            if init.is_some() {
                s.push_str("__shellgate_options \"${__shellgate_so-}\" \"${__shellgate_bo-}\"\n");
            }
            let _ = writeln!(s, "\\builtin export SHELLGATE_RUN_ID={}", quote(marker));
            let _ = writeln!(s, "\\builtin cd -- {} 2>/dev/null", quote_path(cwd));
            s.push_str("\\builtin trap '{ \\__shellgate_exit; } 2>/dev/null' EXIT\n");
            s.push_str("\\builtin printf 'R\\0%s\\0' \"$$\" >&3\n");
            s.push_str(&wait);
            s.push('\n');
            pad_for_block_reads(&mut s);
        }
        Kind::Zsh => {
            if let Some(snap) = snapshot {
                let _ = writeln!(s, "{} </dev/null >/dev/null 2>&1", sourced(Kind::Zsh, snap));
            }
            if let Some(init) = init {
                let _ = writeln!(s, "{} </dev/null >/dev/null 2>&1", sourced(Kind::Zsh, init));
            }
            let _ = write!(
                s,
                r#"__shellgate_end() {{
  \builtin print -rn -- D$'\0'"$2"$'\0'"$1"$'\0'"$PWD"$'\0'"${{__shellgate_ps-}}"$'\0' >&3
  \builtin unset __shellgate_ps __shellgate_st
  case $3 in 0) \builtin return 0;; esac
  \__shellgate_opts
  \__shellgate_save {dir_q}/s$(( $2 % 2 ))
  \builtin print -rn -- S$'\0'"$2"$'\0' >&3
}}
__shellgate_opts() {{
  __shellgate_on="\builtin setopt ${{(k)options[(R)on]:#(interactive|login|shinstdin|privileged|restricted|zle|monitor|singlecommand)}}"
  __shellgate_off="\builtin unsetopt ${{(k)options[(R)off]:#(interactive|login|shinstdin|privileged|restricted|zle|monitor|singlecommand)}}"
}}
__shellgate_save() {{
  \builtin setopt localoptions extendedglob
  {{ \builtin typeset -p -- ${{(k)parameters[(R)^(*special*|*local*)]}}; \builtin print -r -- '{STATE_SPLIT}';
     \builtin typeset -f -- ${{(k)functions:#TRAPEXIT}}; \builtin alias -L;
     \builtin print -r -- "$__shellgate_on"; \builtin print -r -- "$__shellgate_off";
     \builtin print -r -- '{STATE_HOOKS}'; \builtin trap; \builtin print -r -- '{STATE_END}';
  }} >|"$1" 2>/dev/null
}}
__shellgate_rc() {{ \builtin return "$1" }}
"#
            );
            // The exit trap is a function with sticky zsh emulation and `xtrace`/`verbose` off, so
            // nothing of it is traced (a command substitution runs it too, and returns at once). The
            // emulation resets every option inside it, so the options saved at an exit are the ones
            // `__shellgate_opts` noted at the last save (or at startup). It is left out of saved states.
            let trap = format!(
                r#"TRAPEXIT() {{
  (( ZSH_SUBSHELL )) && return 0
  if (( $+functions[__shellgate_restore] )); then \__shellgate_restore; \builtin unset -f __shellgate_restore; fi
  \__shellgate_save {dir_q}/{EXIT_STATE}
  \builtin print -rn -- "$PWD" >|{dir_q}/{EXIT_CWD}
}}"#
            );
            let _ = writeln!(
                s,
                "\\builtin emulate zsh +o xtrace +o verbose -c {}",
                quote(&trap)
            );
            s.push_str("\\__shellgate_opts\n");
            let _ = writeln!(s, "\\builtin export SHELLGATE_RUN_ID={}", quote(marker));
            let _ = writeln!(s, "\\builtin cd -- {} 2>/dev/null", quote_path(cwd));
            s.push_str("\\builtin print -rn -- R$'\\0'\"$$\"$'\\0' >&3\n");
        }
    }
    s
}

use ShellKind as Kind;

/// The file bash reads as its script (see `feed.rs`); zsh reads the request FIFO.
pub(crate) const SCRIPT_FILE: &str = "script";

/// The request FIFO: bash's wake-ups, zsh's script.
pub(crate) const REQUEST_FIFO: &str = "req";

/// The response FIFO: the shell's records, on its descriptor 3.
pub(crate) const RESPONSE_FIFO: &str = "resp";

/// How every bash line ends (the bootstrap too): waiting for the engine's byte on the request FIFO,
/// which it writes once the next line is in the script file, so the shell never reads the file's end.
/// `-t`: a `TMOUT` that a command sets (read-only, even) would otherwise end the wait, and the shell.
/// The wait starts again after a timeout or a signal (status above 128: in POSIX mode bash's `read`
/// returns on a trapped signal); only end-of-file (the engine gone) ends it. The FIFO is opened for
/// each wait rather than kept as the shell's stdin: traps (`DEBUG`, `ERR`, an `EXIT` on `set -e`) run
/// between a line's statements with the shell's own stdin, and one that reads it must meet
/// `/dev/null`'s end, not wait on the engine (or take the byte that releases the next line).
fn bash_wait(dir: &Path) -> String {
    format!(
        "until \\builtin read -rN1 -t 99999999 __shellgate_w <{}; do (( $? > 128 )) || \\builtin break; done",
        quote_path(&dir.join(REQUEST_FIFO))
    )
}

/// bash reads a seekable script in blocks of the file's size when it opened it, up to 8 KiB: the
/// bootstrap is padded to that with a comment, so each later line takes one read.
fn pad_for_block_reads(s: &mut String) {
    const BLOCK: usize = 8192;
    if s.len() + 2 < BLOCK {
        s.push('#');
        s.extend(std::iter::repeat_n(' ', BLOCK - s.len() - 1));
        s.push('\n');
    }
}

/// The name under which the shell reads every file it sources: the control descriptor's path. Both
/// shells put the path they were given to `source` into their messages (`<path>: line 3: …`, zsh
/// `<path>:3: …`) and into `BASH_SOURCE` / `$0`; the command file's own path is long and internal, so
/// the file is opened on descriptor 3 for the duration of the `source` (the control FIFO is back on it
/// afterwards, as for every redirection of a brace group) and read as `/dev/fd/3`. bash then labels
/// messages as for its own input (`bash: line 3: …`, like `bash -c`); zsh prints the path given
/// (`/dev/fd/3:3: …`), since the name of a sourced file is always that path (a bare name would be
/// looked up in `$PATH` and the working directory).
const SOURCED_AS: &str = "/dev/fd/3";

/// Whether [`SOURCED_AS`] can be opened (it needs `/dev/fd`, i.e. `/proc`); checked once.
fn dev_fd_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| Path::new("/dev/fd").is_dir())
}

/// A brace group that sources `file` (add the group's other redirections after it): read as
/// [`SOURCED_AS`] when possible, else by its own path.
fn sourced(kind: ShellKind, file: &Path) -> String {
    let (name, redirect) = if dev_fd_available() {
        (SOURCED_AS.to_owned(), format!(" 3<{}", quote_path(file)))
    } else {
        (quote_path(file), String::new())
    };
    match kind {
        Kind::Bash => format!("{{ \\builtin source {name}; }}{redirect}"),
        Kind::Zsh => format!("{{ \\builtin source {name} }}{redirect}"),
    }
}

/// Appended to a copy of a bash command file to report per-stage statuses: keeps `PIPESTATUS` and `$?`
/// of the last top-level pipeline in `__shellgate_ps` (space-separated, `$?` last; `IFS` plays no part),
/// then ends the sourced file with that `$?`. The command's status, `set -e`, `pipefail` and `ERR` traps
/// behave as without it (`return N` at the end of a sourced file is not a failing command of its own).
/// The redirections keep both commands out of a trace the command itself switched on (`set -x`).
const BASH_STATUS_LINE: &str = "\n{ \\builtin printf -v __shellgate_ps ' %s' \"${PIPESTATUS[@]}\" \"$?\"; } 2>/dev/null; \
{ if [[ -o pipefail ]]; then __shellgate_ps=\"p$__shellgate_ps\"; fi; } 2>/dev/null; \
{ \\builtin return \"${__shellgate_ps##* }\"; } 2>/dev/null\n";

/// The zsh counterpart of [`BASH_STATUS_LINE`] (`pipestatus`). zsh remembers whether the failure of a
/// file's last command was already dealt with (`ZERR` ran, or `!` exempted it); if not — `a && b` whose
/// `a` failed — `ERR_EXIT` and `ZERR` act on the `source` itself. The line must leave the same mark, and
/// only the shape of the statement that ends with the status does that: a brace group around `f N && :`
/// counts as dealt with, a bare `f N && :` does not (`__shellgate_rc N` returns `N`). zsh traces the
/// commands of a sourced file whatever their redirections, so a command that switches `xtrace` on itself
/// shows these lines in its trace.
const ZSH_STATUS_LINE_HANDLED: &str = "\n\\builtin printf -v __shellgate_ps ' %s' \"${pipestatus[@]}\" \"$?\"; \
if [[ -o pipefail ]]; then __shellgate_ps=\"p$__shellgate_ps\"; fi; \
{ \\__shellgate_rc \"${__shellgate_ps##* }\" && \\builtin : }\n";

/// [`ZSH_STATUS_LINE_HANDLED`] for a command whose last statement is an `&&` list, whose failure zsh may
/// leave to the caller.
const ZSH_STATUS_LINE_AND_LIST: &str = "\n\\builtin printf -v __shellgate_ps ' %s' \"${pipestatus[@]}\" \"$?\"; \
if [[ -o pipefail ]]; then __shellgate_ps=\"p$__shellgate_ps\"; fi; \
\\__shellgate_rc \"${__shellgate_ps##* }\" && \\builtin :\n";

/// The status line to append to command `text` so `__shellgate_end` can report the stages of its last
/// pipeline, or `None` when it has no pipe or appending could change its meaning: a here-document (the
/// line would become part of it) or a last line that continues on the next or ends in the background
/// (`\`, `|`, `||`, `&&`, `|&`, `&`).
///
/// With `always`, a command without a pipe gets the line too (its single status and `pipefail` are
/// reported; see [`crate::shell_spec_reporting_status`]).
pub(crate) fn status_line(kind: ShellKind, text: &str, always: bool) -> Option<&'static str> {
    let trimmed = text.trim_end_matches([' ', '\t', '\n']);
    if !(always || text.contains('|'))
        || !crate::spec::script_takes_status_trailer(text)
        || trimmed.ends_with('|')
        || trimmed.ends_with('&')
    {
        return None;
    }
    Some(match kind {
        Kind::Bash => BASH_STATUS_LINE,
        Kind::Zsh if last_statement_has_and(trimmed) => ZSH_STATUS_LINE_AND_LIST,
        Kind::Zsh => ZSH_STATUS_LINE_HANDLED,
    })
}

/// Whether the last statement of `text` is an `&&` list: its last line (with the lines that line
/// continues), after the last `;`, contains `&&`. A compound command that ends there (`}`, `fi`, `done`,
/// `esac`) deals with a failure inside it itself. Text only, so the guess can be wrong (`x && { y; }`, or
/// an `&&` or `;` inside quotes); the other form then differs only when the last pipeline failed and a
/// `ZERR` trap ran or `!` negated it, or when `x` failed under `ERR_EXIT`.
fn last_statement_has_and(text: &str) -> bool {
    let mut lines = text.lines().rev();
    let Some(last) = lines.next() else {
        return false;
    };
    let mut statement = vec![last];
    for prev in lines {
        let prev_end = prev.trim_end();
        if !["&&", "||", "|", "\\"].iter().any(|end| prev_end.ends_with(end)) {
            break;
        }
        statement.push(prev);
    }
    statement.reverse();
    let statement = statement.join("\n");
    let last = statement
        .rsplit(';')
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or("");
    last.contains("&&") && !["}", "fi", "done", "esac"].contains(&last)
}

/// The command file, written before each command (a shell runs one command at a time).
pub(crate) const COMMAND_FILE: &str = "c";

/// The command file followed by its [`status_line`], when there is one.
pub(crate) const STATUS_COPY_FILE: &str = "p";

/// The output FIFO of the running command: kept for the next command when every writer has gone,
/// else removed and made anew.
pub(crate) const OUTPUT_FIFO: &str = "o";

/// bash variable holding the file a command's line sources: [`COMMAND_FILE`], or [`STATUS_COPY_FILE`]
/// when the command has one and neither `xtrace`, `verbose` nor `functrace` is on (each would put the
/// status line's commands into the command's output; `functrace` would also run a `DEBUG` trap for
/// them). `__shellgate_begin` sets it.
const FILE_VAR: &str = "__shellgate_f";

/// bash variable holding the path of [`OUTPUT_FIFO`].
const OUTPUT_VAR: &str = "__shellgate_o";

/// A zsh brace group that sources `file` (one of the files above) with stdin from `/dev/null` and
/// stdout+stderr into the output FIFO (the control descriptor replaced by the read-only command file,
/// see [`SOURCED_AS`]).
fn zsh_source_group(dir: &Path, file: &str) -> String {
    let out = quote_path(&dir.join(OUTPUT_FIFO));
    let closed = if dev_fd_available() { "" } else { " 3>&-" };
    format!(
        "{} </dev/null >{out} 2>&1{closed}",
        sourced(Kind::Zsh, &dir.join(file))
    )
}

/// The line that runs command `id` (its text in [`COMMAND_FILE`], and with `status_copy` in
/// [`STATUS_COPY_FILE`] too): acknowledge, apply the call's directory and variables, source the command
/// file with stdin from `/dev/null` and stdout+stderr into the command's output FIFO (the control
/// descriptor replaced by the read-only command file, see [`SOURCED_AS`]), put the call's variables back,
/// then report and save state.
///
/// With `status_copy`, the copy is sourced unless `xtrace` or `verbose` (bash: also `functrace`) is
/// on — each would put the status line's commands into the command's output — so `__shellgate_end` can
/// report the stages.
///
/// In bash the fixed parts are functions and variables the bootstrap defined (`__shellgate_begin` picks
/// the file), and the line ends in `__shellgate_end`, which waits for the next line. bash sends no
/// acknowledgement: that it took the line is seen from the request FIFO, which is empty once it has
/// taken the byte that releases the line (see `ShellProcess::run`); zsh, which reads ahead,
/// acknowledges. The command file is still sourced by the line itself, at
/// the top level: inside a function the command's `declare` would be local, and inside `eval` its trace
/// lines would get one more `+`.
pub(crate) fn command_line(
    kind: ShellKind,
    dir: &Path,
    id: u64,
    cd: Option<&Path>,
    env: &[(&str, &str)],
    save_state: bool,
    status_copy: bool,
) -> String {
    let mut s = String::new();
    match kind {
        Kind::Bash => {
            let _ = write!(s, "\\__shellgate_begin {id} {};", u8::from(status_copy));
        }
        Kind::Zsh => {
            let _ = write!(s, "\\builtin print -rn -- A$'\\0'{id}$'\\0' >&3; ");
            // A command that ends before its status line (`return`, an error) must not report a stale
            // value (bash: `__shellgate_begin` does this).
            s.push_str("\\builtin unset __shellgate_ps; ");
        }
    }
    if let Some(cd) = cd {
        let _ = write!(s, "\\builtin cd -- {} 2>/dev/null; ", quote_path(cd));
    }
    if !env.is_empty() {
        // Putting the call's variables back is a function, so the exit trap can do it too (a command
        // that exits must not leave them in the state its shell saves on the way out).
        s.push_str("__shellgate_restore() { ");
        for (i, (key, value)) in env.iter().enumerate() {
            s.push_str(&restore_var(kind, i, key, value));
        }
        s.push_str("}; ");
    }
    for (i, (key, value)) in env.iter().enumerate() {
        s.push_str(&remember_var(kind, i, key));
        let _ = write!(s, "\\builtin export {key}={}; ", quote(value));
    }
    match kind {
        // bash prints the trace of `source` itself (`+ source …`, with `xtrace` on) and runs a `DEBUG`
        // trap for it before it applies the command's redirections: both go to the shell's own stderr
        // and stdout, /dev/null. (A brace group around it, as zsh needs, would have them in the
        // output, and cost a redirection more.)
        Kind::Bash if dev_fd_available() => {
            let _ = write!(
                s,
                "\\builtin source {SOURCED_AS} 3<\"${FILE_VAR}\" </dev/null >\"${OUTPUT_VAR}\" 2>&1;"
            );
        }
        Kind::Bash => {
            let _ = write!(
                s,
                "\\builtin source \"${FILE_VAR}\" </dev/null >\"${OUTPUT_VAR}\" 2>&1 3>&-;"
            );
        }
        Kind::Zsh if status_copy => {
            let _ = write!(
                s,
                "case $- in *[xv]*) {};; *) {};; esac; ",
                zsh_source_group(dir, COMMAND_FILE),
                zsh_source_group(dir, STATUS_COPY_FILE)
            );
        }
        Kind::Zsh => {
            let _ = write!(s, "{}; ", zsh_source_group(dir, COMMAND_FILE));
        }
    }
    let save = u8::from(save_state);
    if env.is_empty() {
        let _ = writeln!(s, "\\__shellgate_end \"$?\" {id} {save}");
    } else {
        s.push_str("__shellgate_st=$?; \\__shellgate_restore; \\builtin unset -f __shellgate_restore; ");
        let _ = writeln!(s, "\\__shellgate_end \"$__shellgate_st\" {id} {save}");
    }
    s
}

/// Keeps what variable `key` (a valid name) is before the call's `env` sets it, in `__shellgate_e{i}`:
/// empty when unset, else its attributes (bash `${K@a}`, zsh `${(t)K}`), a colon and its value.
fn remember_var(kind: ShellKind, i: usize, key: &str) -> String {
    match kind {
        Kind::Bash => format!("__shellgate_e{i}=${{{key}+${{{key}@a}}:${key}}}; "),
        Kind::Zsh => format!("__shellgate_e{i}=${{{key}+${{(t){key}}}:${key}}}; "),
    }
}

/// Puts variable `key` back as [`remember_var`] found it, unless the command changed it: only while it
/// still holds the call's `value`, exported and not read-only (what `export` made it) is it restored —
/// unset again, or its old value with its old export attribute. Each step is silent and cannot fail
/// under `set -e`/`set -u`.
fn restore_var(kind: ShellKind, i: usize, key: &str, value: &str) -> String {
    let value = quote(value);
    let (attrs, exported, readonly, unexport) = match kind {
        Kind::Bash => (format!("${{{key}@a}}"), "*x*", "*r*", "\\builtin export -n"),
        Kind::Zsh => (
            format!("${{(t){key}}}"),
            "*-export*",
            "*readonly*",
            "\\builtin typeset -g +x",
        ),
    };
    format!(
        "if [[ -n ${{{key}+1}} && {attrs} == {exported} && {attrs} != {readonly} && ${key} == {value} ]]; then \
         case $__shellgate_e{i} in \
         '') \\builtin unset {key} 2>/dev/null || \\builtin :;; \
         *) {key}=${{__shellgate_e{i}#*:}}; \
         case ${{__shellgate_e{i}%%:*}} in {exported}) ;; *) {unexport} {key} 2>/dev/null || \\builtin :;; esac;; \
         esac; fi; \\builtin unset __shellgate_e{i}; "
    )
}

/// Variables a saved state must not restore: the shell's own dynamic or read-only variables, the
/// protocol's run marker, and `PWD` (the directory is restored with `cd`).
const VOLATILE: &[&str] = &[
    "BASH",
    "BASHOPTS",
    "BASHPID",
    "BASH_ARGC",
    "BASH_ARGV",
    "BASH_ARGV0",
    "BASH_COMMAND",
    "BASH_EXECUTION_STRING",
    "BASH_LINENO",
    "BASH_REMATCH",
    "BASH_SOURCE",
    "BASH_SUBSHELL",
    "BASH_VERSINFO",
    "BASH_VERSION",
    "COMP_WORDBREAKS",
    "DIRSTACK",
    "EPOCHREALTIME",
    "EPOCHSECONDS",
    "EUID",
    "FUNCNAME",
    "GROUPS",
    "HISTCMD",
    "LINENO",
    "PIPESTATUS",
    "PPID",
    "PWD",
    "RANDOM",
    "SECONDS",
    "SHELLOPTS",
    "SHLVL",
    "SRANDOM",
    "UID",
    "_",
    "SHELLGATE_RUN_ID",
    "__shellgate_ps",
    "__shellgate_f",
    "__shellgate_o",
    "__shellgate_w",
    "__shellgate_on",
    "__shellgate_off",
    "ZSH_ARGZERO",
    "ZSH_EVAL_CONTEXT",
    "ZSH_SUBSHELL",
    "ZSH_VERSION",
    "ZSH_PATCHLEVEL",
];

/// A saved state as written by `__shellgate_end`, reduced to what a new shell may restore.
///
/// Variable declarations are one per line (`declare -p` / `typeset -p` quote newlines as `$'…'`), so they
/// can be filtered by name; everything after the split marker is kept as it is.
pub(crate) fn restorable_state(kind: ShellKind, saved: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(saved);
    let (vars, rest) = match marker_line(&text, STATE_SPLIT) {
        Some(i) => (&text[..i], &text[i..]),
        None => (&text[..], ""),
    };
    // Traps, hashed paths and builtins are for judging only: they are not restored.
    let rest = marker_line(rest, STATE_HOOKS).map_or(rest, |i| &rest[..i]);
    let mut out = String::with_capacity(text.len());
    for line in vars.lines() {
        if declared_name(line).is_some_and(|name| VOLATILE.contains(&name)) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    // Aliases are defined last; none may be active while function definitions are read (an alias
    // named like a function would rewrite its definition).
    out.push_str(unalias_all(kind));
    out.push_str(rest);
    out.into_bytes()
}

/// Where `marker` stands as a whole line of `text` (a variable's value may hold the same text
/// inside a line).
fn marker_line(text: &str, marker: &str) -> Option<usize> {
    if text.starts_with(marker) && text[marker.len()..].starts_with(['\n', '\r']) {
        return Some(0);
    }
    text.match_indices(marker)
        .map(|(i, _)| i)
        .find(|&i| text[..i].ends_with('\n') && text[i + marker.len()..].starts_with(['\n', '\r']))
}

/// The variable a `declare -x NAME=…` / `export NAME=…` / `typeset NAME` line declares.
fn declared_name(line: &str) -> Option<&str> {
    let mut words = line.split(' ');
    match words.next()? {
        "declare" | "typeset" | "export" => {}
        _ => return None,
    }
    let word = words.find(|w| !w.starts_with('-'))?;
    Some(word.split('=').next().unwrap_or(word))
}

/// Options a snapshot must not carry into sessions: they would change how every command behaves in ways
/// an rc file only meant for interactive use (or that the protocol cannot survive).
const SNAPSHOT_SKIP_OPTIONS: &[&str] = &[
    "errexit",
    "nounset",
    "noexec",
    "onecmd",
    "monitor",
    "restricted",
    "xtrace",
    "verbose",
    "history",
    "emacs",
    "vi",
    "login_shell",
    "restricted_shell",
    "interactive",
    "login",
    "shinstdin",
    "privileged",
    "zle",
    "singlecommand",
];

/// The script that captures a snapshot after the rc file ran (the shell runs it with `-i -c`).
pub(crate) fn snapshot_script(kind: ShellKind, out: &Path) -> String {
    let out = quote_path(out);
    match kind {
        Kind::Bash => format!(
            r#"\builtin unset HISTFILE
{{ \builtin printf '%s\n' '# shellgate snapshot'
  \builtin declare -f
  \builtin alias -p
  \builtin shopt -p
  \builtin set +o
  \builtin printf '\\builtin export PATH=%q\n' "$PATH"
}} >|{out}
\builtin exit 0
"#
        ),
        Kind::Zsh => format!(
            r#"\builtin unset HISTFILE
{{ \builtin print -r -- '# shellgate snapshot'
  \builtin typeset -f
  \builtin alias -L
  \builtin print -r -- "\builtin setopt ${{(k)options[(R)on]}}"
  \builtin print -r -- "\builtin export PATH=${{(q)PATH}}"
}} >|{out}
\builtin exit 0
"#
        ),
    }
}

fn unalias_all(kind: ShellKind) -> &'static str {
    match kind {
        Kind::Bash => "\\builtin unalias -a 2>/dev/null\n",
        Kind::Zsh => "\\builtin unalias -m '*' 2>/dev/null\n",
    }
}

/// A captured snapshot with the options in [`SNAPSHOT_SKIP_OPTIONS`] removed, clearing aliases first.
pub(crate) fn filter_snapshot(kind: ShellKind, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    out.push_str(unalias_all(kind));
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        match words.as_slice() {
            ["set", "-o" | "+o", name] | ["shopt", "-s" | "-u", name] => {
                if !SNAPSHOT_SKIP_OPTIONS.contains(name) {
                    out.push_str("\\builtin ");
                    out.push_str(line);
                    out.push('\n');
                }
            }
            ["\\builtin", "setopt", names @ ..] => {
                let kept: Vec<&str> = names
                    .iter()
                    .copied()
                    .filter(|n| !SNAPSHOT_SKIP_OPTIONS.contains(n))
                    .collect();
                out.push_str("\\builtin setopt ");
                out.push_str(&kept.join(" "));
                out.push('\n');
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_single_quotes() {
        assert_eq!(quote("a'b"), "'a'\\''b'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn names() {
        assert!(is_valid_name("_A1"));
        assert!(!is_valid_name("1A"));
        assert!(!is_valid_name("A-B"));
        assert!(!is_valid_name(""));
    }

    #[test]
    fn volatile_variables_are_dropped() {
        let saved = b"declare -- V=\"1\"\ndeclare -i RANDOM\ndeclare -x PWD=\"/x\"\ndeclare -a FUNCNAME\n#shellgate-state-functions\nf () \n{ \n    declare -- RANDOM\n}\n";
        let out = String::from_utf8(restorable_state(ShellKind::Bash, saved)).unwrap();
        assert!(out.contains("declare -- V=\"1\""));
        assert!(!out.contains("declare -i RANDOM"));
        assert!(!out.contains("PWD"));
        assert!(
            out.contains("    declare -- RANDOM"),
            "function bodies are kept: {out}"
        );
    }

    #[test]
    fn hooks_are_not_restored_and_markers_are_whole_lines() {
        let saved = b"declare -- V=\"#shellgate-state-functions\"\ndeclare -- W=\"2\"\n#shellgate-state-functions\n\
                      alias ll='ls -l'\n#shellgate-state-hooks\ntrap -- 'echo' DEBUG\nenable echo\n: shellgate-state-end\n";
        let out = String::from_utf8(restorable_state(ShellKind::Bash, saved)).unwrap();
        assert!(out.contains("declare -- W=\"2\"\n"), "{out}");
        assert!(out.contains("alias ll='ls -l'"), "{out}");
        assert!(!out.contains("DEBUG") && !out.contains("enable"), "{out}");
    }

    #[test]
    fn status_lines_only_for_pipes_that_end_cleanly() {
        for kind in [ShellKind::Bash, ShellKind::Zsh] {
            assert!(status_line(kind, "a | b", false).is_some());
            assert!(status_line(kind, "a | b\n# done\n", false).is_some());
            for text in [
                "a",
                "cat <<EOF | x\nhi\nEOF",
                "a | b \\\n",
                "a |\n",
                "a | b &&",
                "a | b ||  ",
                "a |&",
                "a | b &",
            ] {
                assert_eq!(status_line(kind, text, false), None, "{text:?}");
            }
        }
        assert_eq!(
            status_line(ShellKind::Bash, "a | b", false),
            Some(BASH_STATUS_LINE)
        );
        assert_eq!(
            status_line(ShellKind::Zsh, "a | b", false),
            Some(ZSH_STATUS_LINE_HANDLED)
        );
        assert_eq!(
            status_line(ShellKind::Zsh, "! a | b", false),
            Some(ZSH_STATUS_LINE_HANDLED)
        );
        assert_eq!(
            status_line(ShellKind::Zsh, "x && a | b\n", false),
            Some(ZSH_STATUS_LINE_AND_LIST)
        );
        assert_eq!(
            status_line(ShellKind::Zsh, "x &&\n  a | b", false),
            Some(ZSH_STATUS_LINE_AND_LIST)
        );
        assert_eq!(
            status_line(ShellKind::Zsh, "x && y\na | b", false),
            Some(ZSH_STATUS_LINE_HANDLED)
        );
        for handled in [
            "x && y; a | b",
            "if x && y; then a | b; fi",
            "{ x && a | b; }",
            "for f in *; do x && a | b; done",
        ] {
            assert_eq!(
                status_line(ShellKind::Zsh, handled, false),
                Some(ZSH_STATUS_LINE_HANDLED),
                "{handled:?}"
            );
        }
        assert_eq!(
            status_line(ShellKind::Zsh, "a; x && a | b;", false),
            Some(ZSH_STATUS_LINE_AND_LIST)
        );
    }

    #[test]
    fn snapshot_filter_drops_dangerous_options() {
        let out = filter_snapshot(
            ShellKind::Bash,
            "set -o errexit\nset +o allexport\nshopt -s extglob\nalias a='b'\n",
        );
        assert!(!out.contains("errexit"));
        assert!(out.contains("\\builtin set +o allexport"));
        assert!(out.contains("\\builtin shopt -s extglob"));
        assert!(out.contains("alias a='b'"));
    }
}
