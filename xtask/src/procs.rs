//! Process inspection through `/proc`: who is alive, memory high-water marks, open descriptors.

use std::path::Path;
use std::time::{Duration, Instant};

/// Pids (other than ours) whose command line contains `marker`.
pub fn matching(marker: &str) -> Vec<u32> {
    let me = std::process::id();
    all_pids()
        .into_iter()
        .filter(|&pid| pid != me)
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|raw| {
                let line: Vec<u8> = raw.into_iter().map(|b| if b == 0 { b' ' } else { b }).collect();
                String::from_utf8_lossy(&line).contains(marker)
            })
        })
        .collect()
}

/// Wait up to `timeout` for every process matching `marker` to go; returns the survivors.
pub fn wait_gone(marker: &str, timeout: Duration) -> Vec<u32> {
    let deadline = Instant::now() + timeout;
    loop {
        let alive = matching(marker);
        if alive.is_empty() || Instant::now() >= deadline {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// SIGKILL `pids` (processes this harness started, found by their marker), so a failed check leaves
/// nothing behind.
pub fn kill_all(pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    // The shell's builtin `kill`: no procps needed, and no unsafe code here.
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    let _ = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("kill -KILL {}", list.join(" ")))
        .stderr(std::process::Stdio::null())
        .status();
}

/// Direct children of `parent`.
pub fn children(parent: u32) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|&pid| parent_of(pid) == Some(parent))
        .collect()
}

/// Peak resident set size of a live process, in KiB (`VmHWM`).
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    status_field(pid, "VmHWM:")
}

/// Current resident set size of a live process, in KiB (`VmRSS`).
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_field(pid, "VmRSS:")
}

/// Number of open file descriptors of a live process.
pub fn fd_count(pid: u32) -> Option<usize> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()
        .map(Iterator::count)
}

fn status_field(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn all_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(Path::new("/proc")) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn finds_measures_and_outlives_a_marked_child() {
        let mut child = Command::new("sleep").arg("987.1234").spawn().unwrap();
        let pid = child.id();
        let deadline = Instant::now() + Duration::from_secs(5);
        while matching("987.1234").is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(matching("987.1234"), vec![pid]);
        assert!(children(std::process::id()).contains(&pid));
        assert!(peak_rss_kib(pid).unwrap() > 0);
        assert!(rss_kib(pid).unwrap() > 0);
        assert!(fd_count(pid).unwrap() >= 3);
        kill_all(&[pid]);
        child.wait().unwrap();
        assert!(wait_gone("987.1234", Duration::from_secs(5)).is_empty());
        assert!(peak_rss_kib(pid).is_none());
    }
}
