//! `tmux`: its commands (separated by `;`) that start a shell command — `new-session`,
//! `new-window`, `split-window`, `respawn-pane`, `respawn-window`, `run-shell`, `if-shell`,
//! `pipe-pane`, `display-popup`, and `tmux -c` — have that command judged. A command that only
//! lists, attaches or kills is nothing more; any other (`send-keys` types into a shell, `bind-key`
//! and `set-option` store commands, `source-file` reads them, a `#(…)` format runs one) may run
//! any command, and fails closed. The server itself needs a rule.

use super::options::{self, Order};
use super::runners::{run_string, run_words};
use super::{Invocation, Walker};
use crate::argv::Arg;
use crate::meaning::Table;

/// tmux 3.x's own options.
static GLOBAL: Table = Table::new("2 C D d l N q u U v V c= f= L= S= T=");

/// The canonical name of a command written `name` (tmux's aliases), when this module knows it.
fn canonical(name: &str) -> Option<&'static str> {
    const NAMES: &[(&str, &str)] = &[
        ("new", "new-session"),
        ("neww", "new-window"),
        ("splitw", "split-window"),
        ("respawnp", "respawn-pane"),
        ("respawnw", "respawn-window"),
        ("run", "run-shell"),
        ("if", "if-shell"),
        ("pipep", "pipe-pane"),
        ("popup", "display-popup"),
        ("ls", "list-sessions"),
        ("lsw", "list-windows"),
        ("lsp", "list-panes"),
        ("lsc", "list-clients"),
        ("lsb", "list-buffers"),
        ("lsk", "list-keys"),
        ("lscm", "list-commands"),
        ("attach", "attach-session"),
        ("a", "attach-session"),
        ("at", "attach-session"),
        ("detach", "detach-client"),
        ("killw", "kill-window"),
        ("killp", "kill-pane"),
        ("has", "has-session"),
        ("selectw", "select-window"),
        ("selectp", "select-pane"),
        ("rename", "rename-session"),
        ("renamew", "rename-window"),
        ("resizep", "resize-pane"),
        ("capturep", "capture-pane"),
        ("showb", "show-buffer"),
        ("switchc", "switch-client"),
        ("next", "next-window"),
        ("prev", "previous-window"),
        ("last", "last-window"),
        ("start", "start-server"),
        ("info", "server-info"),
    ];
    const OWN: &[&str] = &[
        "new-session",
        "new-window",
        "split-window",
        "respawn-pane",
        "respawn-window",
        "run-shell",
        "if-shell",
        "pipe-pane",
        "display-popup",
        "list-sessions",
        "list-windows",
        "list-panes",
        "list-clients",
        "list-buffers",
        "list-keys",
        "list-commands",
        "attach-session",
        "detach-client",
        "kill-server",
        "kill-session",
        "kill-window",
        "kill-pane",
        "has-session",
        "select-window",
        "select-pane",
        "rename-session",
        "rename-window",
        "resize-pane",
        "capture-pane",
        "show-buffer",
        "switch-client",
        "next-window",
        "previous-window",
        "last-window",
        "start-server",
        "server-info",
    ];
    NAMES
        .iter()
        .find(|(a, _)| *a == name)
        .map(|(_, c)| *c)
        .or_else(|| OWN.iter().find(|c| **c == name).copied())
}

/// The options of a command that starts a shell command (tmux 3.3's manual).
fn runner_table(command: &str) -> Option<&'static Table> {
    static NEW_SESSION: Table = Table::new("A d D E P X c= e= f= F= n= s= t= x= y=");
    static NEW_WINDOW: Table = Table::new("a b d k P S c= e= F= n= t=");
    static SPLIT_WINDOW: Table = Table::new("b d f h I v P Z c= e= l= t= F= p=");
    static RESPAWN: Table = Table::new("k c= e= t=");
    static RUN_SHELL: Table = Table::new("b c= d= t=");
    static IF_SHELL: Table = Table::new("b F t=");
    static PIPE_PANE: Table = Table::new("I O o t=");
    static POPUP: Table = Table::new("B C E b= c= d= e= h= s= S= t= T= w= x= y=");
    Some(match command {
        "new-session" => &NEW_SESSION,
        "new-window" => &NEW_WINDOW,
        "split-window" => &SPLIT_WINDOW,
        "respawn-pane" | "respawn-window" => &RESPAWN,
        "run-shell" => &RUN_SHELL,
        "if-shell" => &IF_SHELL,
        "pipe-pane" => &PIPE_PANE,
        "display-popup" => &POPUP,
        _ => return None,
    })
}

pub(super) fn run(w: &mut Walker<'_, '_>, text: &str, inv: &Invocation) {
    w.record(text, inv.clone());
    let argv = &inv.argv;
    let read = match options::read(argv, 1, &GLOBAL, Order::Posix, "tmux") {
        Ok(r) => r,
        Err(u) => return super::prefixes::unreadable(w, text, argv, u),
    };
    if let Some(c) = read.value("c") {
        return run_string(w, text, c, inv);
    }
    let rest = &argv[read.end..];
    for command in rest.split(|a| a.is(";")) {
        tmux_command(w, text, command, inv);
    }
}

/// One tmux command: its shell command judged, or nothing run, or any command.
fn tmux_command(w: &mut Walker<'_, '_>, text: &str, words: &[Arg], inv: &Invocation) {
    let Some(first) = words.first() else { return };
    let any = |w: &mut Walker<'_, '_>, why: String| {
        let raw = words.iter().map(|a| a.raw.as_str()).collect::<Vec<_>>().join(" ");
        w.fail_running(text, why, &format!("(tmux {raw})"));
    };
    if words.iter().any(|a| a.raw.contains("#(")) {
        return any(w, "a tmux format `#(…)` runs a shell command".into());
    }
    let Some(name) = first.get().and_then(canonical) else {
        return any(w, format!("the tmux command `{}` may run a command", first.raw));
    };
    let Some(table) = runner_table(name) else { return };
    let read = match options::read(words, 1, table, Order::Posix, name) {
        Ok(r) => r,
        Err(u) => return any(w, u.why),
    };
    let shell = &words[read.end..];
    match name {
        "run-shell" if read.has("C") => any(w, "`run-shell -C` runs tmux commands".into()),
        "if-shell" => {
            if let Some(condition) = shell.first() {
                run_string(w, text, condition, inv);
            }
            if shell.len() > 1 {
                any(w, "`if-shell` runs tmux commands".into());
            }
        }
        // The shell command is one string or words run as they are.
        _ if shell.is_empty() => {}
        _ if shell.len() == 1 => run_string(w, text, &shell[0], inv),
        _ => run_words(w, text, shell, inv),
    }
}
