//! `shellgate artifact read|list` and the JSON-RPC `artifact` method: read the artifacts that hold
//! the full raw output of commands whose output did not fit the window.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use serde_json::{Value, json};
use shellgate::sink::{
    ArtifactStore, ByteRange, LineRange, MAX_COLUMN_LIMIT, Sanitizer, StoreConfig, StoreError, parse_range,
};

/// Default number of lines (or matches) one RPC call returns.
pub(crate) const RPC_DEFAULT_LIMIT: u64 = 2000;
/// Default bound on the text one RPC call returns.
pub(crate) const RPC_DEFAULT_MAX_BYTES: u64 = 64 * 1024;
/// Hard bound on the text one RPC call returns.
pub(crate) const RPC_MAX_BYTES: u64 = 1 << 20;

/// Artifact subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ArtifactCommand {
    /// Print an artifact: its raw bytes, a line range, a byte range, or the lines matching a regex.
    #[command(after_help = crate::help::ARTIFACT_READ)]
    Read {
        /// `artifact://<n>` or `<n>`.
        id: String,
        /// Only lines A:B (1-based, inclusive; `A:` and `:B` are open-ended).
        #[arg(long, value_name = "A:B", conflicts_with = "bytes")]
        lines: Option<String>,
        /// Only bytes A:B (0-based offsets, end exclusive).
        #[arg(long, value_name = "A:B")]
        bytes: Option<String>,
        /// Only lines matching this regular expression, printed as `N:line`.
        #[arg(long, value_name = "RE", conflicts_with = "bytes")]
        grep: Option<String>,
        /// The store directory (default: $SHELLGATE_ARTIFACT_DIR, else $XDG_STATE_HOME/shellgate/artifacts,
        /// else ~/.local/state/shellgate/artifacts).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// List the artifacts in the store.
    #[command(after_help = crate::help::ARTIFACT_LIST)]
    List {
        /// Print JSON (one array) instead of a table.
        #[arg(long)]
        json: bool,
        /// The store directory (see `read --dir`).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

fn open_store(dir: Option<PathBuf>) -> Result<ArtifactStore, StoreError> {
    match dir {
        Some(dir) => ArtifactStore::open(StoreConfig::new(dir)),
        None => ArtifactStore::open_default(),
    }
}

/// Run an artifact subcommand; returns the process exit code (1 for a missing artifact, a bad
/// argument, or `--grep` without matches).
pub fn run(cmd: ArtifactCommand) -> anyhow::Result<i32> {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(256 * 1024, stdout.lock());
    let result = match cmd {
        ArtifactCommand::Read {
            id,
            lines,
            bytes,
            grep,
            dir,
        } => read(
            &id,
            lines.as_deref(),
            bytes.as_deref(),
            grep.as_deref(),
            dir,
            &mut out,
        ),
        ArtifactCommand::List { json, dir } => list(json, dir, &mut out),
    };
    let flushed = out.flush();
    match result {
        Ok(code) => match flushed {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(code),
            other => other.map(|()| code).context("writing to stdout"),
        },
        Err(Failure::User(message)) => {
            eprintln!("shellgate: {message}");
            Ok(1)
        }
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(0),
        Err(Failure::Io(e)) => Err(e).context("writing to stdout"),
        Err(Failure::Store(e)) => Err(e.into()),
    }
}

enum Failure {
    User(String),
    Io(io::Error),
    Store(StoreError),
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe => {
                Failure::Io(source)
            }
            StoreError::Io { .. } | StoreError::NoDirectory => Failure::Store(e),
            StoreError::InvalidId(_)
            | StoreError::NotFound { .. }
            | StoreError::BadRange(_)
            | StoreError::BadPattern(_) => Failure::User(e.to_string()),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

fn read(
    id: &str,
    lines: Option<&str>,
    bytes: Option<&str>,
    grep: Option<&str>,
    dir: Option<PathBuf>,
    out: &mut dyn Write,
) -> Result<i32, Failure> {
    let store = open_store(dir)?;
    let line_range = match lines {
        Some(text) => {
            let (first, last) = parse_range(text)?;
            LineRange { first, last }
        }
        None => LineRange::default(),
    };
    if let Some(pattern) = grep {
        let mut matched = 0u64;
        let mut error = None;
        store.grep(id, pattern, line_range, |n, line| {
            matched += 1;
            let written = write!(out, "{n}:")
                .and_then(|()| out.write_all(line))
                .and_then(|()| out.write_all(b"\n"));
            if let Err(e) = written {
                error = Some(e);
                return false;
            }
            true
        })?;
        if let Some(e) = error {
            return Err(Failure::Io(e));
        }
        return Ok(i32::from(matched == 0));
    }
    if let Some(text) = bytes {
        let (start, end) = parse_range(text)?;
        store.copy_bytes(id, ByteRange { start, end }, out)?;
    } else {
        store.copy_lines(id, line_range, out)?;
    }
    Ok(0)
}

fn list(as_json: bool, dir: Option<PathBuf>, out: &mut dyn Write) -> Result<i32, Failure> {
    let store = open_store(dir)?;
    let artifacts = store.list()?;
    if as_json {
        let value = serde_json::to_value(&artifacts).map_err(|e| Failure::User(e.to_string()))?;
        writeln!(out, "{value}")?;
        return Ok(0);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    writeln!(out, "{:<20} {:>12}  {:>10}", "ARTIFACT", "BYTES", "AGE")?;
    for a in &artifacts {
        writeln!(
            out,
            "{:<20} {:>12}  {:>10}",
            a.uri,
            a.bytes,
            age(now.saturating_sub(a.modified_unix))
        )?;
    }
    if artifacts.is_empty() {
        writeln!(out, "(no artifacts in {})", store.dir().display())?;
    }
    Ok(0)
}

fn age(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

/// Parameters the `artifact` method knows.
const RPC_KEYS: [&str; 8] = [
    "action",
    "id",
    "offset",
    "limit",
    "grep",
    "byte_offset",
    "max_bytes",
    "raw",
];

/// The JSON-RPC `artifact` method, on the engine's store (its project's, see
/// `ArtifactStore::open_for_project`).
///
/// `action` is `"read"` (the default) or `"list"`. `list` takes no other parameter and returns
/// `{artifacts: [{id, uri, bytes, modified_unix}], dir}`.
///
/// `read` params: `id` (`"artifact://7"`, `"7"` or `7`, required), `offset` (first line, 1-based, default
/// 1), `limit` (lines, or matches with `grep`; default 2000), `grep` (regular expression),
/// `byte_offset` (read bytes from this 0-based offset instead of lines), `max_bytes` (text bound,
/// default 64 KiB), `raw` (skip sanitizing; default false). Unknown parameters are an error.
///
/// Result by lines: `{id, offset, lines, content, total_lines, total_bytes, next_offset, truncated}`
/// where `next_offset` is the line to ask for next (null at the end). By bytes: `{id, byte_offset,
/// bytes, content, total_bytes, next_byte_offset, truncated}`. With `grep`: `{id, matches: [{line,
/// text}], total_lines, total_bytes, truncated}`.
pub(crate) fn rpc_with(store: &ArtifactStore, params: &Value) -> Result<Value, String> {
    if let Some(unknown) = params
        .as_object()
        .and_then(|map| map.keys().find(|k| !RPC_KEYS.contains(&k.as_str())))
    {
        return Err(format!(
            "artifact: unknown parameter `{unknown}` (known: {})",
            RPC_KEYS.join(", ")
        ));
    }
    match params.get("action").and_then(Value::as_str).unwrap_or("read") {
        "read" => {}
        "list" => {
            let artifacts = store.list().map_err(|e| e.to_string())?;
            return Ok(json!({ "artifacts": artifacts, "dir": store.dir().display().to_string() }));
        }
        other => return Err(format!("artifact: unknown action `{other}` (read or list)")),
    }
    let id = match params.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err("artifact: `id` (artifact://<n>) is required".to_owned()),
    };
    let number = |key: &str, default: u64| -> Result<u64, String> {
        match params.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v
                .as_u64()
                .ok_or_else(|| format!("artifact: `{key}` must be a non-negative integer")),
        }
    };
    let offset = number("offset", 1)?.max(1);
    let limit = number("limit", RPC_DEFAULT_LIMIT)?.max(1);
    let max_bytes = number("max_bytes", RPC_DEFAULT_MAX_BYTES)?.clamp(1, RPC_MAX_BYTES) as usize;
    let raw = params.get("raw").and_then(Value::as_bool).unwrap_or(false);
    let uri = shellgate::sink::ArtifactId::parse(&id)
        .map_err(|e| e.to_string())?
        .uri();
    let total_bytes = store.size(&id).map_err(|e| e.to_string())?;
    let clean = |bytes: &[u8]| clean_text(bytes, raw);

    if let Some(start) = params.get("byte_offset").filter(|v| !v.is_null()) {
        let start = start
            .as_u64()
            .ok_or("artifact: `byte_offset` must be a non-negative integer")?;
        let end = start.saturating_add(max_bytes as u64).min(total_bytes);
        let mut content = Vec::new();
        if start < total_bytes {
            store
                .copy_bytes(
                    &id,
                    ByteRange {
                        start: Some(start),
                        end: Some(end),
                    },
                    &mut content,
                )
                .map_err(|e| e.to_string())?;
        }
        let next = (end < total_bytes).then_some(end);
        return Ok(json!({
            "id": uri,
            "byte_offset": start,
            "bytes": content.len(),
            "content": clean(&content),
            "total_bytes": total_bytes,
            "next_byte_offset": next,
            "truncated": next.is_some(),
        }));
    }

    if let Some(pattern) = params.get("grep").and_then(Value::as_str) {
        let mut matches = Vec::new();
        let mut used = 0usize;
        let mut truncated = false;
        let range = LineRange {
            first: Some(offset),
            last: None,
        };
        store
            .grep(&id, pattern, range, |n, line| {
                if matches.len() as u64 >= limit || used >= max_bytes {
                    truncated = true;
                    return false;
                }
                let text = clean(&line[..line.len().min(max_bytes - used)]);
                used += text.len();
                matches.push(json!({ "line": n, "text": text }));
                true
            })
            .map_err(|e| format!("artifact: {e}"))?;
        let total_lines = store.for_each_line(&id, |_, _| true).map_err(|e| e.to_string())?;
        return Ok(json!({
            "id": uri,
            "matches": matches,
            "total_lines": total_lines,
            "total_bytes": total_bytes,
            "truncated": truncated,
        }));
    }

    let mut content = Vec::new();
    let mut lines = 0u64;
    let mut next_offset = None;
    let mut cut_line = false;
    let total_lines = store
        .for_each_line(&id, |n, line| {
            if n < offset || next_offset.is_some() {
                return true;
            }
            if lines >= limit {
                next_offset = Some(n);
                return true;
            }
            let room = max_bytes.saturating_sub(content.len());
            if line.len() + 1 > room {
                if lines > 0 {
                    next_offset = Some(n);
                    return true;
                }
                // A single line larger than the bound: return its start.
                content.extend_from_slice(&line[..room.min(line.len())]);
                content.push(b'\n');
                cut_line = true;
                lines = 1;
                next_offset = Some(n + 1);
                return true;
            }
            content.extend_from_slice(line);
            content.push(b'\n');
            lines += 1;
            true
        })
        .map_err(|e| e.to_string())?;
    let next_offset = next_offset.filter(|&n| n <= total_lines);
    Ok(json!({
        "id": uri,
        "offset": offset,
        "lines": lines,
        "content": clean(&content),
        "total_lines": total_lines,
        "total_bytes": total_bytes,
        "next_offset": next_offset,
        "truncated": next_offset.is_some() || cut_line,
    }))
}

/// Artifact bytes as text: sanitized like model text (escapes removed, overwrites collapsed) unless
/// `raw`, then decoded lossily.
pub(crate) fn clean_text(bytes: &[u8], raw: bool) -> String {
    if raw {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut sanitizer = Sanitizer::new(MAX_COLUMN_LIMIT);
    let mut out = Vec::with_capacity(bytes.len());
    sanitizer.push(bytes, &mut out);
    sanitizer.finish(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store in a fresh directory, removed on drop.
    struct TempStore(PathBuf);

    impl Drop for TempStore {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn store_with(bytes: &[u8]) -> (TempStore, ArtifactStore, String) {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("shellgate-artifact-cmd-{}-{n}", std::process::id()));
        let store = ArtifactStore::open(StoreConfig::new(&dir)).unwrap();
        let mut new = store.create().unwrap();
        new.file.write_all(bytes).unwrap();
        let id = new.id.uri();
        (TempStore(dir), store, id)
    }

    #[test]
    fn rpc_pages_by_lines() {
        let text: Vec<u8> = (1..=10)
            .flat_map(|i| format!("\x1b[1m{i}\x1b[0m\n").into_bytes())
            .collect();
        let (_dir, store, id) = store_with(&text);
        let page = rpc_with(&store, &json!({ "id": id, "offset": 3, "limit": 4 })).unwrap();
        assert_eq!(page["content"], "3\n4\n5\n6\n");
        assert_eq!(page["next_offset"], 7);
        assert_eq!(page["total_lines"], 10);
        let last = rpc_with(&store, &json!({ "id": id, "offset": 9 })).unwrap();
        assert_eq!(last["content"], "9\n10\n");
        assert_eq!(last["next_offset"], Value::Null);
        assert_eq!(last["truncated"], false);
    }

    #[test]
    fn rpc_reads_bytes_lists_and_rejects_unknown_parameters() {
        let (_dir, store, id) = store_with(b"0123456789abcdef");
        let page = rpc_with(&store, &json!({ "id": id, "byte_offset": 4, "max_bytes": 5 })).unwrap();
        assert_eq!(page["content"], "45678");
        assert_eq!(page["bytes"], 5);
        assert_eq!(page["next_byte_offset"], 9);
        let last = rpc_with(&store, &json!({ "id": id, "byte_offset": 12 })).unwrap();
        assert_eq!(last["content"], "cdef");
        assert_eq!(last["next_byte_offset"], Value::Null);
        let past = rpc_with(&store, &json!({ "id": id, "byte_offset": 99 })).unwrap();
        assert_eq!(past["content"], "");
        let listed = rpc_with(&store, &json!({ "action": "list" })).unwrap();
        assert_eq!(listed["artifacts"].as_array().unwrap().len(), 1);
        assert_eq!(listed["artifacts"][0]["uri"], id.as_str());
        let err = rpc_with(&store, &json!({ "id": id, "bytes": "0:4" })).unwrap_err();
        assert!(err.contains("unknown parameter `bytes`"), "{err}");
        let err = rpc_with(&store, &json!({ "action": "delete" })).unwrap_err();
        assert!(err.contains("unknown action"), "{err}");
    }

    #[test]
    fn rpc_greps_and_rejects_bad_ids() {
        let (_dir, store, id) = store_with(b"alpha\nbeta\ngamma\nalphabet\n");
        let found = rpc_with(&store, &json!({ "id": id, "grep": "^alpha" })).unwrap();
        assert_eq!(
            found["matches"],
            json!([{ "line": 1, "text": "alpha" }, { "line": 4, "text": "alphabet" }])
        );
        let err = rpc_with(&store, &json!({ "id": "../../etc/passwd" })).unwrap_err();
        assert!(err.contains("must be a number"), "{err}");
        let err = rpc_with(&store, &json!({ "id": 99 })).unwrap_err();
        assert!(err.contains("not found"), "{err}");
    }
}
