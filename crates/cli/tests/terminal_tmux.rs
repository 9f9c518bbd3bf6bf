//! `shellgate run` on a real terminal: a detached tmux session runs it while `capture-pane` watches the
//! screen. During the run the spinner and elapsed time show under the live lines; after it, the status
//! line is gone and the lines and the `Wall | Timeout | Artifact | Exit` footer remain, coloured unless
//! `NO_COLOR` is set. Skipped (with the reason) when tmux is missing; a failure under
//! `SHELLGATE_REQUIRE_ALL=1`.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Whether tmux can be used, else skip (or fail under SHELLGATE_REQUIRE_ALL=1).
fn tmux_or_skip() -> bool {
    let why = match Command::new("tmux").arg("-V").output() {
        Ok(out) if out.status.success() => return true,
        Ok(out) => format!("`tmux -V` failed: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => format!("tmux not found: {e}"),
    };
    assert!(
        std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() != Ok("1"),
        "tmux is required (SHELLGATE_REQUIRE_ALL=1) but unusable: {why}"
    );
    eprintln!("skipping: {why} (install the Debian package `tmux`)");
    false
}

/// A tmux server of its own (private socket, no user configuration), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn new(name: &str) -> Self {
        Self {
            socket: format!("shellgate-test-{name}-{}", std::process::id()),
        }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &self.socket, "-f", "/dev/null"]);
        // The server's environment becomes the pane's: a UTF-8 locale, colours allowed.
        cmd.env_remove("NO_COLOR")
            .env("LANG", "C.UTF-8")
            .env("TERM", "xterm-256color");
        cmd
    }

    /// Start `script` in a detached 100×30 pane.
    fn start(&self, script: &str) {
        let out = self
            .command()
            .args(["new-session", "-d", "-s", "t", "-x", "100", "-y", "30", script])
            .output()
            .unwrap();
        assert_ok("new-session", &out);
    }

    /// The pane's text; with `escapes`, including the colour sequences.
    fn capture(&self, escapes: bool) -> String {
        let mut cmd = self.command();
        cmd.args(["capture-pane", "-p", "-t", "t"]);
        if escapes {
            cmd.arg("-e");
        }
        let out = cmd.output().unwrap();
        assert_ok("capture-pane", &out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}

fn assert_ok(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "tmux {what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The shell script a pane runs: `shellgate run ARGS`, then its exit status, then idling so the pane
/// stays to be captured.
fn pane_script(env: &str, run_args: &str, store: &Path) -> String {
    format!(
        "env {env} SHELLGATE_ARTIFACT_DIR='{}' '{}' run {run_args}; echo \"[exited $?]\"; sleep 600",
        store.display(),
        assert_cmd::cargo::cargo_bin!("shellgate").display(),
    )
}

/// Whether `screen` shows the status line: a spinner frame, `running`, and an elapsed time like `0.4s`.
fn shows_status(screen: &str) -> bool {
    const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    screen.lines().any(|line| {
        let mut words = line.split_whitespace();
        let spinner = words.next().and_then(|w| w.chars().next());
        let (Some(running), Some(elapsed)) = (words.next(), words.next()) else {
            return false;
        };
        let seconds = elapsed.strip_suffix('s').and_then(|s| s.parse::<f64>().ok());
        spinner.is_some_and(|c| SPINNER.contains(&c)) && running == "running" && seconds.is_some()
    })
}

/// Capture the pane until `[exited N]` shows; returns every screen seen while running, and the last.
fn watch(tmux: &Tmux) -> (Vec<String>, String) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut during = Vec::new();
    loop {
        let screen = tmux.capture(false);
        if screen.contains("[exited ") {
            return (during, screen);
        }
        assert!(Instant::now() < deadline, "no exit after 30 s:\n{screen}");
        during.push(screen);
        std::thread::sleep(Duration::from_millis(40));
    }
}

fn footer_line(screen: &str) -> &str {
    screen
        .lines()
        .find(|l| l.contains("Wall "))
        .unwrap_or_else(|| panic!("no footer:\n{screen}"))
}

#[test]
fn run_on_a_terminal_shows_spinner_live_lines_then_preview_and_footer() {
    if !tmux_or_skip() {
        return;
    }
    let store = tempfile::Builder::new()
        .prefix("shellgate-tmux-")
        .tempdir()
        .unwrap();
    let tmux = Tmux::new("live");
    tmux.start(&pane_script(
        "",
        r"'for i in 1 2 3; do echo line$i; sleep 0.4; done'",
        store.path(),
    ));
    let (during, after) = watch(&tmux);

    assert!(
        during.iter().any(|s| shows_status(s)),
        "no spinner with elapsed time in {} screens:\n{}",
        during.len(),
        during.join("\n-----\n")
    );
    assert!(
        during
            .iter()
            .any(|s| shows_status(s) && s.contains("line1") && !s.contains("line3")),
        "output must stream while running:\n{}",
        during.join("\n-----\n")
    );

    assert!(!shows_status(&after), "the status line is erased:\n{after}");
    let lines: Vec<&str> = after.lines().collect();
    let first = lines.iter().position(|l| *l == "line1").expect("line1");
    assert_eq!(&lines[first..first + 3], ["line1", "line2", "line3"], "{after}");
    let footer = footer_line(&after);
    assert!(
        footer.starts_with("Wall ") && footer.ends_with(" | Timeout 300s | Artifact - | Exit 0"),
        "{footer:?}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("line")).count(),
        3,
        "each line once:\n{after}"
    );
    assert!(after.contains("[exited 0]"), "{after}");

    let coloured = tmux.capture(true);
    assert!(
        footer_line(&coloured).contains("\x1b["),
        "a terminal gets colours: {:?}",
        footer_line(&coloured)
    );
}

#[test]
fn no_color_turns_colours_off_and_the_exit_status_is_mirrored() {
    if !tmux_or_skip() {
        return;
    }
    let store = tempfile::Builder::new()
        .prefix("shellgate-tmux-")
        .tempdir()
        .unwrap();
    let tmux = Tmux::new("nocolor");
    tmux.start(&pane_script(
        "NO_COLOR=1",
        "'seq 1 30; sleep 0.3; exit 3'",
        store.path(),
    ));
    let (_, after) = watch(&tmux);
    assert!(after.contains("[exited 3]"), "{after}");
    // The collapsed preview: the last 20 lines, after a note of the 10 before them.
    assert!(after.contains("… 10 earlier lines not shown"), "{after}");
    let lines: Vec<&str> = after.lines().collect();
    assert!(
        lines.contains(&"11") && lines.contains(&"30") && !lines.contains(&"10"),
        "{after}"
    );
    assert!(after.contains("Command exited with code 3"), "{after}");
    assert!(footer_line(&after).ends_with("| Exit 3"), "{after}");
    let raw = tmux.capture(true);
    assert!(
        !raw.contains("\x1b["),
        "NO_COLOR leaves no colour sequences:\n{raw:?}"
    );
}
