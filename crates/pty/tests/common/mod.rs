//! Helpers shared by the PTY integration tests.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use shellgate_executor::LaunchSpec;
use shellgate_pty::{PtyOptions, PtyOutput, PtyProcess};

/// Generous bound for anything a test waits for; reached only when something is broken.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The first executable file named `name` on `PATH`.
pub fn find_on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Whether a program is installed; when it is not, the test is skipped with a printed reason, or
/// fails when `SHELLGATE_REQUIRE_ALL=1`.
pub fn have(program: &str) -> bool {
    if find_on_path(program).is_some() {
        return true;
    }
    assert!(
        std::env::var_os("SHELLGATE_REQUIRE_ALL").is_none_or(|v| v != "1"),
        "{program} is required (SHELLGATE_REQUIRE_ALL=1) but not installed"
    );
    eprintln!("skipping: {program} is not installed");
    false
}

/// A spec for `program args…` in the temp directory with a quiet, predictable environment.
pub fn spec(program: &str, args: &[&str]) -> LaunchSpec {
    LaunchSpec::new(program, args.iter().copied(), std::env::temp_dir())
        .with_env("LC_ALL", "C")
        .with_env("PS1", "$ ")
        .with_env("LESSHISTFILE", "-")
        .with_env("LESS", "")
        .with_env("HOME", std::env::temp_dir().to_string_lossy())
}

/// A sh -c script under a terminal.
pub fn spawn_sh(script: &str) -> (PtyProcess, Transcript) {
    spawn(&spec("sh", &["-c", script]))
}

/// Spawn with default options; returns the process and its collected output.
pub fn spawn(spec: &LaunchSpec) -> (PtyProcess, Transcript) {
    let mut process = PtyProcess::spawn(spec, &PtyOptions::default()).expect("spawn under a terminal");
    let output = process.take_output().expect("output");
    (
        process,
        Transcript {
            output,
            bytes: Vec::new(),
            ended: false,
        },
    )
}

/// Output collected so far.
pub struct Transcript {
    output: PtyOutput,
    pub bytes: Vec<u8>,
    pub ended: bool,
}

impl Transcript {
    fn pump(&mut self) {
        loop {
            match self.output.try_recv() {
                Ok(Some(chunk)) => self.bytes.extend(chunk),
                Ok(None) => return,
                Err(()) => {
                    self.ended = true;
                    return;
                }
            }
        }
    }

    /// The text so far (lossy).
    pub fn text(&mut self) -> String {
        self.pump();
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// Wait until the output contains `needle`; panics with the output after [`PATIENCE`].
    pub fn expect(&mut self, needle: &str) -> String {
        let end = Instant::now() + PATIENCE;
        loop {
            let text = self.text();
            if text.contains(needle) {
                return text;
            }
            assert!(
                Instant::now() < end,
                "never saw {needle:?}; output so far: {text:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Read until the output ends; returns the whole text.
    pub fn read_to_end(&mut self) -> String {
        let end = Instant::now() + PATIENCE;
        while !self.ended {
            self.pump();
            assert!(
                Instant::now() < end,
                "output never ended: {:?}",
                String::from_utf8_lossy(&self.bytes)
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        self.text()
    }
}

/// Wait until `cond` holds, polling; panics with `what` after [`PATIENCE`].
pub fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + PATIENCE;
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Wait until the screen satisfies `cond`; returns the screen text.
pub fn screen_until(process: &PtyProcess, what: &str, mut cond: impl FnMut(&str) -> bool) -> String {
    let end = Instant::now() + PATIENCE;
    loop {
        let text = process.screen().expect("screen emulation").text;
        if cond(&text) {
            return text;
        }
        assert!(Instant::now() < end, "screen never showed {what}; screen: {text}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Wait for the process to exit (blocking).
pub fn wait_exit(process: &PtyProcess) -> shellgate_pty::ExitInfo {
    let mut info = None;
    eventually("process exit", || {
        info = process.try_wait();
        info.is_some()
    });
    info.unwrap()
}

/// Pids of live `sleep <marker>` processes.
pub fn processes_matching(marker: &str) -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rfind(')')
                .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z'));
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            !zombie
                && String::from_utf8_lossy(&cmdline).replace('\0', " ").trim_end()
                    == format!("sleep {marker}")
        })
        .collect()
}
