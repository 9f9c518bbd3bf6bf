//! Is a pipe job waiting for input? Decided from the kernel: some process of the job's tree is asleep
//! waiting to read the job's stdin pipe — in a `read` of a descriptor that links to the same pipe as
//! our write end, or in a `poll`/`select`/`epoll` wait that watches one (event loops such as Node's).

use std::path::Path;

/// Whether any of `pids` is blocked reading the pipe whose link text is `pipe`. `None` when the
/// kernel does not say (no permission to read `/proc/<pid>/syscall`, unknown architecture).
pub fn reading_pipe(pids: impl IntoIterator<Item = u32>, pipe: &str) -> Option<bool> {
    let is_pipe = |target: &Path| target.as_os_str() == pipe;
    let mut unknown = false;
    for pid in pids {
        match shellgate_pty::waiting_to_read(pid as i32, &is_pipe) {
            Some(true) => return Some(true),
            Some(false) => {}
            None => unknown |= std::path::Path::new(&format!("/proc/{pid}")).exists(),
        }
    }
    if unknown { None } else { Some(false) }
}
