//! Running a program while measuring its wall time and peak resident set size.
//!
//! Peak RSS comes from GNU time (`/usr/bin/time -f %M`, the child's `ru_maxrss` from `wait4`) when it is
//! installed, else from sampling the child's `VmHWM` in `/proc` until it exits.

use std::ffi::OsStr;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;

const GNU_TIME: &str = "/usr/bin/time";

/// What one measured run produced.
#[derive(Debug)]
pub struct Measured {
    /// Wall-clock time from spawn to exit.
    pub wall: Duration,
    /// Peak resident set size in KiB, when it could be measured.
    pub peak_rss_kib: Option<u64>,
    /// Exit status.
    pub status: ExitStatus,
    /// Captured standard output.
    pub stdout: Vec<u8>,
    /// Captured standard error.
    pub stderr: Vec<u8>,
}

/// How peak RSS is measured on this machine (for the report).
pub fn rss_method() -> &'static str {
    if Path::new(GNU_TIME).is_file() {
        "GNU time %M (wait4 ru_maxrss)"
    } else {
        "VmHWM sampled from /proc every 10 ms"
    }
}

/// Run `program args…` with `configure` applied (cwd, env), capturing its output.
pub fn run(
    program: impl AsRef<OsStr>,
    args: &[impl AsRef<OsStr>],
    configure: impl FnOnce(&mut Command),
) -> anyhow::Result<Measured> {
    let program = program.as_ref();
    if Path::new(GNU_TIME).is_file() {
        let report = scratch_file("time");
        let mut command = Command::new(GNU_TIME);
        command
            .arg("-f")
            .arg("%M")
            .arg("-o")
            .arg(&report)
            .arg(program)
            .args(args);
        configure(&mut command);
        let start = Instant::now();
        let output = command
            .output()
            .with_context(|| format!("running {}", program.display()))?;
        let wall = start.elapsed();
        let peak = std::fs::read_to_string(&report)
            .ok()
            .and_then(|s| last_number(&s));
        let _ = std::fs::remove_file(&report);
        return Ok(Measured {
            wall,
            peak_rss_kib: peak,
            status: output.status,
            stdout: output.stdout,
            stderr: output.stderr,
        });
    }
    let mut command = Command::new(program);
    command.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    configure(&mut command);
    let start = Instant::now();
    let mut child = command
        .spawn()
        .with_context(|| format!("running {}", program.display()))?;
    let pid = child.id();
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let mut peak = None;
    let status = loop {
        if let Some(hwm) = crate::procs::peak_rss_kib(pid) {
            peak = Some(hwm);
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall = start.elapsed();
    Ok(Measured {
        wall,
        peak_rss_kib: peak,
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    })
}

/// A shell script writing exactly `bytes` bytes of 80-byte lines (79 × `a` and a newline).
pub fn flood_script(bytes: u64) -> String {
    format!("yes \"$(printf 'a%.0s' {{1..79}})\" | head -c {bytes}")
}

/// A unique path in the temporary directory (not created).
pub fn scratch_file(tag: &str) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("xtask-{tag}-{}-{n}", std::process::id()))
}

fn last_number(text: &str) -> Option<u64> {
    text.lines().rev().find_map(|l| l.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_a_child_and_captures_its_output() {
        let m = run("sh", &["-c", "echo out; echo err >&2; sleep 0.1; exit 3"], |_| {}).unwrap();
        assert_eq!(m.status.code(), Some(3));
        assert_eq!(m.stdout, b"out\n");
        assert!(String::from_utf8_lossy(&m.stderr).contains("err"));
        assert!(m.peak_rss_kib.is_some_and(|kib| kib > 0));
    }

    #[test]
    fn flood_script_writes_exact_bytes_of_80_byte_lines() {
        let out = Command::new("bash")
            .arg("-c")
            .arg(flood_script(8000 + 40))
            .output()
            .unwrap();
        assert_eq!(out.stdout.len(), 8040);
        assert_eq!(out.stdout.split(|&b| b == b'\n').count(), 101);
        assert_eq!(&out.stdout[..80], format!("{}\n", "a".repeat(79)).as_bytes());
    }

    #[test]
    fn gnu_time_output_parses() {
        assert_eq!(
            last_number("Command exited with non-zero status 3\n2048\n"),
            Some(2048)
        );
        assert_eq!(last_number("garbage"), None);
    }
}
