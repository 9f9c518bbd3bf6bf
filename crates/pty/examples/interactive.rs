//! Drives an interactive shell under a terminal: type a command, watch the screen, ask whether it
//! waits for input, and end it with Ctrl-D.
//!
//! `cargo run -p shellgate-pty --example interactive`

use std::time::{Duration, Instant};

use shellgate_executor::LaunchSpec;
use shellgate_pty::{KeySpec, PtyOptions, PtyProcess};

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn main() -> Result<(), shellgate_pty::PtyError> {
    let spec = LaunchSpec::new("sh", ["-i"], std::env::temp_dir()).with_env("PS1", "demo$ ");
    let mut shell = PtyProcess::spawn(&spec, &PtyOptions::default())?;
    drop(shell.take_output()); // this demo looks at the screen only
    wait_until("the prompt", || shell.waiting_for_input() == Some(true));
    shell.send_keys(&[
        KeySpec::Text("echo $((6*7)); tty".into()),
        KeySpec::Key("Enter".into()),
    ])?;
    wait_until("the answer", || {
        shell.screen().is_some_and(|s| s.text.contains("/dev/pts/"))
    });
    wait_until("the next prompt", || shell.waiting_for_input() == Some(true));
    let screen = shell.screen().expect("screen emulation is on by default");
    println!(
        "--- screen ({}x{}, cursor at {},{}) ---",
        screen.cols, screen.rows, screen.cursor_row, screen.cursor_col
    );
    println!("{}", screen.text);
    shell.send_keys(&[KeySpec::Key("C-d".into())])?;
    wait_until("exit", || shell.try_wait().is_some());
    println!("--- exited: {:?}", shell.try_wait());
    Ok(())
}
