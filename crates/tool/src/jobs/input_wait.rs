//! Is a pipe job waiting for input? Decided from the kernel: some process of the job's tree is asleep
//! in a `read` of the job's stdin pipe (its `/proc/<pid>/syscall` names a read of a descriptor that
//! links to the same pipe as our write end).

use std::fs;

/// `read`, `readv` and `pread64` syscall numbers of this architecture.
#[cfg(target_arch = "x86_64")]
const READ_SYSCALLS: &[i64] = &[0, 19, 17];
#[cfg(target_arch = "aarch64")]
const READ_SYSCALLS: &[i64] = &[63, 65, 67];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const READ_SYSCALLS: &[i64] = &[];

/// Whether any of `pids` is blocked reading the pipe whose link text is `pipe`. `None` when the
/// kernel does not say (no permission to read `/proc/<pid>/syscall`, unknown architecture).
pub fn reading_pipe(pids: impl IntoIterator<Item = u32>, pipe: &str) -> Option<bool> {
    if READ_SYSCALLS.is_empty() {
        return None;
    }
    let mut unknown = false;
    for pid in pids {
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next());
        if state != Some("S") {
            continue;
        }
        let Ok(syscall) = fs::read_to_string(format!("/proc/{pid}/syscall")) else {
            unknown = true;
            continue;
        };
        let mut parts = syscall.split_whitespace();
        let number = parts.next().and_then(|n| n.parse::<i64>().ok());
        let fd = parts
            .next()
            .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok());
        if let (Some(number), Some(fd)) = (number, fd)
            && READ_SYSCALLS.contains(&number)
            && fs::read_link(format!("/proc/{pid}/fd/{fd}")).is_ok_and(|t| t.to_string_lossy() == pipe)
        {
            return Some(true);
        }
    }
    if unknown { None } else { Some(false) }
}
