//! Keeping the engine's inherited environment out of `/proc/<pid>/environ`.
//!
//! The kernel serves `/proc/<pid>/environ` from the process's initial environment block (the bytes
//! between `env_start` and `env_end` on its first stack), not from what the process later does with
//! its variables. Every process of the user can read that file for every other of its processes —
//! a command the engine runs, the engine's own guards (forks of the engine, with the same memory)
//! included — so an inherited `*_API_KEY` there is readable by any command, sandboxed or not.
//! [`move_environment_to_heap`] sets each variable again (the C library then keeps its own copy on
//! the heap and points `environ` at it) and overwrites the initial block with zeros: the variables
//! stay what they were for the engine and the children it builds environments for, and the file
//! shows only zero bytes. (Reading the engine's memory itself needs `ptrace` rights, which no
//! sandboxed command has; an unsandboxed command running as root can.)

use std::ffi::OsString;
use std::io;

/// Move every environment variable to the heap and zero the initial environment block. Call it
/// first thing in `main`, while the process has one thread: changing the environment is not
/// thread-safe.
#[allow(unsafe_code)]
pub fn move_environment_to_heap() -> io::Result<()> {
    let (start, end) = environment_block()?;
    let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    for (key, value) in &vars {
        // SAFETY: the caller guarantees a single thread; setting an existing variable makes the C
        // library allocate a new `KEY=VALUE` string and repoint its `environ` entry to it.
        unsafe { std::env::set_var(key, value) };
    }
    let len = end
        .checked_sub(start)
        .ok_or_else(|| io::Error::other("inverted environment block"))?;
    if len == 0 {
        return Ok(());
    }
    // SAFETY: [start, end) is the process's initial environment block, on its own stack, mapped
    // and writable; nothing points into it any more (every `environ` entry was just repointed, and
    // Rust's own copies are owned strings).
    unsafe { std::ptr::write_bytes(start as *mut u8, 0, len) };
    Ok(())
}

/// `env_start` and `env_end` from `/proc/self/stat` (fields 50 and 51).
fn environment_block() -> io::Result<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or_else(|| io::Error::other("malformed /proc/self/stat"))?;
    // `rest` starts at field 3.
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| -> io::Result<usize> {
        fields
            .get(n - 3)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| io::Error::other(format!("no field {n} in /proc/self/stat")))
    };
    Ok((field(50)?, field(51)?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_block_lies_on_the_stack_and_holds_the_environment() {
        let (start, end) = super::environment_block().unwrap();
        assert!(start > 0 && end > start);
        let own = std::fs::read("/proc/self/environ").unwrap();
        assert_eq!(own.len(), end - start);
    }
}
