//! SIGKILL of `shellgate rpc` in the middle of a command: the command's whole process tree must die with
//! it (SPEC E-6: a parent-death signal takes the tree down) and the spilled artifact must hold a clean prefix of the output.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Check, Env};
use crate::procs;
use crate::rpc::RpcClient;

const LINES: u64 = 3_000_000;

/// Run the check.
pub fn run(env: &Env) -> Vec<Check> {
    match one(env) {
        Ok(checks) => checks,
        Err(e) => vec![Check::error("SIGKILL of the server: no orphans", &e)],
    }
}

fn one(env: &Env) -> anyhow::Result<Vec<Check>> {
    let dir = env.fresh_dir("sigkill")?;
    let marker = format!("604.{}", std::process::id());
    let mut client = RpcClient::spawn(&env.shellgate, |c| super::isolate(c, &dir))?;
    client.send(
        "bash",
        &json!({"command": format!("seq 1 {LINES}; sleep {marker} & sleep {marker} & wait"), "timeout": 120}),
    )?;
    // The sleeps start once every line is out; give the sink a moment to write them. The two background
    // sleeps are grandchildren at least: a tree, not just the direct child. (The shell itself carries the
    // marker too when the script is on its command line.)
    let deadline = Instant::now() + Duration::from_secs(30);
    while procs::matching(&marker).len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let started = procs::matching(&marker).len();
    std::thread::sleep(Duration::from_millis(500));
    client.kill()?;
    let survivors = procs::wait_gone(&marker, Duration::from_secs(3));
    procs::kill_all(&survivors);
    let orphans = Check::of(
        "SIGKILL of the server: no orphans",
        started >= 2 && survivors.is_empty(),
        format!(
            "{started} marked processes before the kill, {} alive 3 s after",
            survivors.len()
        ),
    );
    let artifact = match find_artifact(&dir) {
        None => Check::skipped(
            "SIGKILL of the server: artifact intact",
            "no spilled artifact under the server's HOME/TMPDIR/XDG dirs (artifact store not landed?)",
        ),
        Some((path, Ok(lines))) => Check::of(
            "SIGKILL of the server: artifact intact",
            lines > 0,
            format!(
                "{}: clean prefix of {lines} of {LINES} lines ({} written before the kill are missing)",
                path.display(),
                LINES - lines
            ),
        ),
        Some((path, Err(why))) => Check::of(
            "SIGKILL of the server: artifact intact",
            false,
            format!("{}: {why}", path.display()),
        ),
    };
    Ok(vec![orphans, artifact])
}

/// The largest file under `dir` that starts like `seq` output, with its check.
fn find_artifact(dir: &Path) -> Option<(PathBuf, Result<u64, String>)> {
    let mut best: Option<(PathBuf, u64)> = None;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file()
                && starts_like_seq(&path)
                && best.as_ref().is_none_or(|(_, len)| meta.len() > *len)
            {
                best = Some((path, meta.len()));
            }
        }
    }
    let (path, _) = best?;
    let check = std::fs::read(&path)
        .map_err(|e| e.to_string())
        .and_then(|bytes| seq_prefix(&bytes));
    Some((path, check))
}

fn starts_like_seq(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 6];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"1\n2\n3\n"
}

/// How many whole lines of `seq 1 N` output `bytes` holds, if it is a clean prefix of it (the last line
/// may be cut short by the crash).
pub fn seq_prefix(bytes: &[u8]) -> Result<u64, String> {
    let mut expected = 1u64;
    let mut lines = bytes.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        let last = lines.peek().is_none();
        let want = expected.to_string();
        if last {
            // After the final newline (empty) or a line cut short by the crash.
            if !want.as_bytes().starts_with(line) {
                return Err(format!("line {expected} is {:?}", String::from_utf8_lossy(line)));
            }
            break;
        }
        if line != want.as_bytes() {
            return Err(format!("line {expected} is {:?}", String::from_utf8_lossy(line)));
        }
        expected += 1;
    }
    Ok(expected - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seq_prefixes_are_recognized() {
        assert_eq!(seq_prefix(b"1\n2\n3\n"), Ok(3));
        assert_eq!(seq_prefix(b"1\n2\n3\n4"), Ok(3));
        assert_eq!(seq_prefix(b"1\n2\n3\n4\n5\n6\n7\n8\n9\n1"), Ok(9));
        assert!(seq_prefix(b"1\n3\n").is_err());
        assert!(seq_prefix(b"1\n2\nx").is_err());
    }
}
