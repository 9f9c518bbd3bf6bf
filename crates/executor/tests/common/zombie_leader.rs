//! A process whose main thread has exited while another thread and its child run on (see
//! `zombie_leader.c`): `/proc/<pid>/stat` reads `Z`, and the process's own environment, command line
//! and descriptors cannot be read. The program is compiled once per test binary with `cc`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const SOURCE: &str = include_str!("zombie_leader.c");

/// The compiled program; `None` (with the reason printed) when there is no C compiler, a failure
/// when `SHELLGATE_REQUIRE_ALL=1`.
pub fn program() -> Option<&'static Path> {
    static PROGRAM: OnceLock<Option<PathBuf>> = OnceLock::new();
    PROGRAM.get_or_init(compile).as_deref()
}

/// Compiles the program into the build's temporary directory, named by a hash of its source: a
/// later test run (of any test binary) finds it there, and nothing is left in the system's `/tmp`.
/// It is built under a name of this process's own and renamed into place, so test binaries running
/// at once never see a half-written program.
fn compile() -> Option<PathBuf> {
    use std::hash::{Hash, Hasher};
    let required = std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() == Ok("1");
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    SOURCE.hash(&mut hasher);
    // The program keeps its plain name: notices name a process by it.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("zombie_leader-{:016x}", hasher.finish()));
    let program = dir.join("zombie_leader");
    if program.exists() {
        return Some(program);
    }
    std::fs::create_dir_all(&dir).unwrap();
    let partial = dir.join(format!("zombie_leader.{}.partial", std::process::id()));
    let built = std::process::Command::new("cc")
        .args(["-O", "-pthread", "-x", "c", "-o"])
        .arg(&partial)
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut cc| {
            use std::io::Write as _;
            cc.stdin.take().expect("piped").write_all(SOURCE.as_bytes())?;
            cc.wait()
        });
    match built {
        Ok(status) if status.success() => {
            std::fs::rename(&partial, &program).unwrap();
            Some(program)
        }
        other => {
            let _ = std::fs::remove_file(&partial);
            assert!(!required, "cc is required (SHELLGATE_REQUIRE_ALL=1): {other:?}");
            eprintln!("skipping: cannot compile the zombie-leader helper with cc: {other:?}");
            None
        }
    }
}

/// Shell text that starts the program in the background (`setsid`: out of the run's session), waits
/// until its main thread has exited, and prints its pid. Its child is `sleep <seconds>`. It holds no
/// descriptor of the caller's (nothing ties it to the run but its group, session and environment).
pub fn start_in_background(program: &Path, seconds: &str, setsid: bool) -> String {
    let flag = if setsid { " --setsid" } else { "" };
    format!(
        "'{}'{flag} {seconds} </dev/null >/dev/null 2>&1 & p=$!; for i in $(seq 1000); do \
         [ \"$(cut -d' ' -f3 /proc/$p/stat)\" = Z ] && break; sleep 0.01; done; echo $p",
        program.display()
    )
}

/// Whether any thread of process `pid` is still alive (not a zombie).
pub fn alive(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("stat")).is_ok_and(|stat| {
            let state = stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next());
            !matches!(state, Some('Z' | 'X') | None)
        })
    })
}

/// Wait up to `limit` for every thread of `pid` to be gone; false (after killing it) if one lives on.
pub fn wait_dead(pid: u32, limit: Duration) -> bool {
    if wait_until(limit, || !alive(pid)) {
        return true;
    }
    // Cleanup after a failure, so the leftover does not outlive the test.
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
    false
}

/// Whether `check` holds within `limit` (polled every 20 ms). A process just sent SIGKILL still shows
/// its command line until it has run, so what was killed is looked for this way.
pub fn wait_until(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if check() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
