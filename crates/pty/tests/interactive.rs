//! Driving real programs through the interactive handle.

mod common;

use std::time::Duration;

use common::{eventually, have, processes_matching, screen_until, spawn, spawn_sh, spec, wait_exit};
use shellgate_pty::{KeySpec, Signal};

fn key(k: &str) -> KeySpec {
    KeySpec::Key(k.to_owned())
}

fn text(t: &str) -> KeySpec {
    KeySpec::Text(t.to_owned())
}

#[test]
fn tty_reports_a_pseudo_terminal_and_term_is_set() {
    let (process, mut out) = spawn_sh("tty; echo \"term=$TERM\"; stty size");
    let all = out.read_to_end();
    assert!(all.starts_with("/dev/pts/"), "{all:?}");
    assert!(all.contains("term=xterm-256color"), "{all:?}");
    assert!(all.contains("40 120"), "{all:?}");
    assert_eq!(wait_exit(&process).code, Some(0));
    assert!(process.tty_name().unwrap().starts_with("/dev/pts/"));
}

#[test]
fn python_repl_answers() {
    if !have("python3") {
        return;
    }
    let (process, mut out) = spawn(&spec("python3", &["-q", "-i"]));
    out.expect(">>> ");
    process.send_keys(&[text("6*7"), key("Enter")]).unwrap();
    let all = out.expect("42");
    assert!(all.contains("6*7"), "the terminal echoes typed input: {all:?}");
    process.send_keys(&[key("C-d")]).unwrap();
    assert_eq!(wait_exit(&process).code, Some(0));
}

#[test]
fn silent_read_never_echoes_the_secret() {
    let (process, mut out) = spawn(&spec(
        "bash",
        &["-c", "printf 'pw: '; read -s x; echo; echo \"got ${#x} chars\""],
    ));
    out.expect("pw: ");
    // Wait for bash to switch echo off before typing, or the terminal would echo the early bytes.
    eventually("read -s blocked", || process.waiting_for_input() == Some(true));
    process.send_keys(&[text("secret"), key("Enter")]).unwrap();
    let all = out.read_to_end();
    assert!(all.contains("got 6 chars"), "{all:?}");
    assert!(!all.contains("secret"), "{all:?}");
}

#[test]
fn ctrl_c_stops_sleep() {
    let marker = "100.3141";
    let (process, _out) = spawn(&spec("sleep", &[marker]));
    eventually("sleep started", || !processes_matching(marker).is_empty());
    process.send_keys(&[key("C-c")]).unwrap();
    let exit = wait_exit(&process);
    assert_eq!(exit.signal_name().as_deref(), Some("SIGINT"));
    drop(process);
    assert!(processes_matching(marker).is_empty());
}

#[test]
fn waiting_for_input_true_for_read_false_for_sleep() {
    let (reader, _o1) = spawn_sh("read x; echo done");
    eventually("read blocks on the terminal", || {
        reader.waiting_for_input() == Some(true)
    });
    let (sleeper, _o2) = spawn(&spec("sleep", &["5.2718"]));
    eventually("sleep started", || !processes_matching("5.2718").is_empty());
    for _ in 0..10 {
        assert_eq!(sleeper.waiting_for_input(), Some(false));
        std::thread::sleep(Duration::from_millis(20));
    }
    reader.send_keys(&[key("Enter")]).unwrap();
    wait_exit(&reader);
    assert_eq!(reader.waiting_for_input(), Some(false));
}

#[test]
fn python_repl_waiting_for_input_through_poll() {
    if !have("python3") {
        return;
    }
    let (process, mut out) = spawn(&spec("python3", &["-q", "-i"]));
    out.expect(">>> ");
    eventually("the REPL waits for input", || {
        process.waiting_for_input() == Some(true)
    });
    process
        .send_keys(&[text("import time; time.sleep(3)"), key("Enter")])
        .unwrap();
    eventually("the REPL is busy", || process.waiting_for_input() == Some(false));
}

#[test]
fn less_is_driven_by_keys() {
    if !have("less") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("shellgate-pty-less-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("numbers.txt");
    std::fs::write(
        &file,
        (1..=500)
            .map(|i| format!("row {i:03}"))
            .collect::<Vec<_>>()
            .join("\n")
            + "\n",
    )
    .unwrap();
    let (process, _out) = spawn(&spec("less", &[file.to_str().unwrap()]));
    screen_until(&process, "the first page", |s| {
        s.contains("row 001") && s.contains("row 039")
    });
    process.send_keys(&[key("pagedown")]).unwrap();
    let page = screen_until(&process, "the second page", |s| s.contains("row 040"));
    assert!(!page.contains("row 001"), "{page}");
    process.send_keys(&[key("End")]).unwrap();
    screen_until(&process, "the end", |s| s.contains("row 500"));
    process.send_keys(&[text("g")]).unwrap();
    screen_until(&process, "the top again", |s| s.contains("row 001"));
    process.send_keys(&[text("/row 250"), key("Enter")]).unwrap();
    screen_until(&process, "the search hit", |s| {
        s.lines().next().is_some_and(|l| l.contains("row 250"))
    });
    process.send_keys(&[text("q")]).unwrap();
    assert_eq!(wait_exit(&process).code, Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn vim_edits_a_file() {
    let Some(vim) = ["vim", "vim.tiny", "vi"]
        .into_iter()
        .find(|v| common::find_on_path(v).is_some())
    else {
        assert!(have("vim"));
        return;
    };
    let dir = std::env::temp_dir().join(format!("shellgate-pty-vim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("note.txt");
    std::fs::write(&file, "first\nsecond\n").unwrap();
    let (process, _out) = spawn(&spec(
        vim,
        &["-u", "NONE", "-i", "NONE", "-N", "-n", file.to_str().unwrap()],
    ));
    screen_until(&process, "the file in vim", |s| {
        s.contains("first") && s.contains("second")
    });
    // Arrow keys must follow the application cursor mode vim switches on.
    process
        .send_keys(&[
            key("down"),
            key("End"),
            text("a"),
            text(" line"),
            key("Escape"),
            key("up"),
            text("I"),
            text("the "),
            key("Escape"),
        ])
        .unwrap();
    screen_until(&process, "the edits", |s| {
        s.contains("the first") && s.contains("second line")
    });
    process.send_keys(&[text(":wq"), key("Enter")]).unwrap();
    assert_eq!(wait_exit(&process).code, Some(0));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "the first\nsecond line\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn top_renders_a_screen() {
    if !have("top") {
        return;
    }
    let (process, _out) = spawn(&spec("top", &["-d", "1", "-n", "30"]));
    let screen = screen_until(&process, "top's process table", |s| {
        s.contains("PID") && s.contains("COMMAND") && s.contains("top")
    });
    let snap = process.screen().unwrap();
    assert_eq!((snap.cols, snap.rows), (120, 40));
    assert!(
        screen
            .lines()
            .any(|l| l.starts_with("top -") || l.contains("load average")),
        "{screen}"
    );
    process.send_keys(&[text("q")]).unwrap();
    assert_eq!(wait_exit(&process).code, Some(0));
}

#[test]
fn resize_reaches_the_program() {
    let (process, mut out) = spawn_sh("stty size; read x; stty size");
    out.expect("40 120");
    assert_eq!(
        process.resize(100, 30).unwrap(),
        shellgate_pty::TermSize { cols: 100, rows: 30 }
    );
    assert_eq!(
        process.resize(5000, 1).unwrap(),
        shellgate_pty::TermSize { cols: 400, rows: 5 }
    );
    process.send_keys(&[key("Enter")]).unwrap();
    out.expect("5 400");
    let snap = process.screen().unwrap();
    assert_eq!((snap.cols, snap.rows), (400, 5));
}

#[test]
fn cursor_position_queries_are_answered_even_when_split() {
    let script = r#"printf 'abc\033[6n'; IFS= read -r -d R a; printf 'xy\033['; sleep 0.2; printf '6n'; IFS= read -r -d R b; echo; echo "first=${a#*[} second=${b#*[}""#;
    let (process, mut out) = spawn(&spec("bash", &["-c", script]));
    let all = out.read_to_end();
    // "abc" leaves the cursor at row 1, column 4. The terminal echoes the first answer, so the
    // second query's column depends on the echo; its row is still 1.
    assert!(all.contains("first=1;4"), "{all:?}");
    assert!(all.contains("second=1;"), "{all:?}");
    wait_exit(&process);
}

#[test]
fn bracketed_paste_only_when_enabled() {
    let script = r#"read -r x; printf '[%s]\n' "$x" | od -c | head -2; printf '\033[?2004h'; read -r y; printf '<%s>\n' "$y" | od -c | head -3"#;
    let (process, mut out) = spawn(&spec("bash", &["-c", script]));
    eventually("first read", || process.waiting_for_input() == Some(true));
    assert!(!process.modes().bracketed_paste);
    process.paste("hi").unwrap();
    process.send_keys(&[key("Enter")]).unwrap();
    out.expect("[   h   i   ]");
    eventually("bracketed paste enabled", || process.modes().bracketed_paste);
    process.paste("yo").unwrap();
    process.send_keys(&[key("Enter")]).unwrap();
    let all = out.read_to_end();
    assert!(all.contains("033   [   2   0   0   ~   y   o"), "{all}");
}

#[test]
fn kill_reaches_the_whole_session() {
    let marker = "987.6543";
    let (process, _out) = spawn(&spec(
        "bash",
        &["-c", &format!("sleep {marker} & sleep {marker} & wait")],
    ));
    eventually("both sleeps", || processes_matching(marker).len() == 2);
    assert!(process.kill(Signal::SIGKILL));
    wait_exit(&process);
    eventually("the sleeps are gone", || processes_matching(marker).is_empty());
}

#[test]
fn dropping_the_handle_kills_everything() {
    let marker = "986.5432";
    let (process, _out) = spawn(&spec(
        "bash",
        &["-c", &format!("set -m; sleep {marker} & sleep {marker}")],
    ));
    eventually("both sleeps", || processes_matching(marker).len() == 2);
    drop(process);
    eventually("the sleeps are gone", || processes_matching(marker).is_empty());
}

#[test]
fn arrow_keys_follow_application_cursor_mode_set_by_the_program() {
    let script = r#"stty -echo; read -r a; printf 'A:%s\n' "$a" | od -An -c; printf '\033[?1h'; read -r b; printf 'B:%s\n' "$b" | od -An -c"#;
    let (process, mut out) = spawn(&spec("bash", &["-c", script]));
    eventually("first read", || process.waiting_for_input() == Some(true));
    assert!(!process.modes().application_cursor);
    process.send_keys(&[key("up"), key("Enter")]).unwrap();
    out.expect("A   : 033   [   A");
    eventually("application cursor mode", || process.modes().application_cursor);
    process
        .send_keys(&[key("up"), key("C-left"), key("Enter")])
        .unwrap();
    let all = out.read_to_end();
    assert!(all.contains("B   : 033   O   A 033   [   1   ;   5   D"), "{all}");
}
