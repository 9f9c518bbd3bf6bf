//! One job's output: a bounded ring of recent raw bytes addressed by stream position, the head/tail
//! window for the final summary, and a spill file that keeps the whole stream once the ring overflows.
//!
//! Positions (`cursor`, `since`) are byte offsets into the job's merged stdout/stderr stream, counted
//! from 0. The ring holds bytes `[base, total)`. Once bytes leave the ring they are still in the spill
//! file (when it could be written); otherwise they are reported as dropped, with exact ranges.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shellgate_sink::{ArtifactStore, OutputWindow, Sink, WindowConfig};

use shellgate_sink::sanitize;

use super::text::incomplete_suffix;

/// Where a job's whole output is kept once its ring overflows.
#[derive(Debug, Clone)]
pub enum SpillTarget {
    /// A private file in this directory, removed when the job is forgotten.
    Dir(PathBuf),
    /// A new artifact of this store (`artifact://<n>`), kept under the store's quota and expiry.
    Store(Arc<ArtifactStore>),
}

/// Where older output goes once the ring is full.
#[derive(Debug)]
enum Spill {
    /// Spilling is disabled.
    Off,
    /// Not needed yet.
    Ready(SpillTarget),
    /// Every byte of the stream so far is in the file.
    Active {
        path: PathBuf,
        writer: BufWriter<File>,
        artifact: Option<String>,
        written: u64,
        limit: u64,
    },
    /// Writing failed (or the quota was reached); bytes that left the ring are gone.
    Failed(String),
}

/// A slice of the stream for `poll`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamRead {
    /// Clean text of the bytes delivered.
    pub text: String,
    /// Position after the delivered bytes (the next cursor).
    pub end: u64,
    /// Bytes `[from, to)` that were skipped (too much pending, or no longer retained).
    pub skipped: Option<(u64, u64)>,
}

/// Lines for `log`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineRead {
    /// Clean text of the lines, each ending in a newline except possibly the last.
    pub text: String,
    /// 0-based index of the first line returned.
    pub first: u64,
    /// Number of lines returned.
    pub count: u64,
    /// Lines in the whole stream.
    pub total_lines: u64,
    /// Things the reader should know (lines not retained, byte cap hit).
    pub notices: Vec<String>,
}

/// The output of one job.
#[derive(Debug)]
pub struct JobOutput {
    ring: VecDeque<u8>,
    ring_cap: usize,
    base: u64,
    base_line: u64,
    base_starts_line: bool,
    total: u64,
    newlines: u64,
    last_byte: Option<u8>,
    window: OutputWindow,
    spill: Spill,
    file_name: String,
    /// A private spill file to remove when the output is dropped.
    owned_file: Option<PathBuf>,
    /// Most bytes the spill may hold.
    spill_limit: u64,
}

/// Most bytes one `log` call returns.
const LOG_MAX_BYTES: usize = 256 * 1024;

impl JobOutput {
    /// Output for job `id` with a ring of `ring_cap` bytes, spilling to `spill` when given.
    pub fn new(
        id: &str,
        ring_cap: usize,
        window: WindowConfig,
        spill: Option<SpillTarget>,
        spill_limit: u64,
    ) -> Self {
        Self {
            ring: VecDeque::new(),
            ring_cap: ring_cap.max(1024),
            base: 0,
            base_line: 0,
            base_starts_line: true,
            total: 0,
            newlines: 0,
            last_byte: None,
            window: OutputWindow::new(window),
            spill: spill.map_or(Spill::Off, Spill::Ready),
            file_name: format!("{id}.log"),
            owned_file: None,
            spill_limit,
        }
    }

    /// Bytes in the whole stream so far.
    #[cfg(test)]
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Lines in the whole stream so far (a trailing newline does not add one).
    pub fn total_lines(&self) -> u64 {
        match self.last_byte {
            None => 0,
            Some(b'\n') => self.newlines,
            Some(_) => self.newlines + 1,
        }
    }

    /// Whether the stream so far ends with a complete line.
    pub fn ends_line(&self) -> bool {
        self.last_byte == Some(b'\n')
    }

    /// Bytes held in memory for this job (ring plus window).
    pub fn retained_bytes(&self) -> usize {
        self.ring.len() + 70 * 1024
    }

    /// The head/tail window over the whole stream (raw bytes).
    pub fn window(&self) -> &OutputWindow {
        &self.window
    }

    /// Where the whole output is, once spilled: `artifact://<n>`, or the spill file's path.
    pub fn artifact(&self) -> Option<String> {
        match &self.spill {
            Spill::Active { path, artifact, .. } => {
                Some(artifact.clone().unwrap_or_else(|| path.display().to_string()))
            }
            _ => None,
        }
    }

    /// Path of the spill file, once it exists.
    pub fn spill_path(&self) -> Option<&Path> {
        match &self.spill {
            Spill::Active { path, .. } => Some(path),
            _ => None,
        }
    }

    /// The error that stopped spilling, if any.
    pub fn spill_error(&self) -> Option<&str> {
        match &self.spill {
            Spill::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// Append a chunk.
    pub fn push(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.window.write(chunk);
        self.total += chunk.len() as u64;
        self.newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.last_byte = chunk.last().copied();
        let overflow = (self.ring.len() + chunk.len()).saturating_sub(self.ring_cap);
        if overflow > 0 {
            self.start_spill();
        }
        self.spill_write(chunk);
        if overflow > 0 {
            let from_ring = overflow.min(self.ring.len());
            self.drop_front(from_ring);
            let from_chunk = overflow - from_ring;
            if from_chunk > 0 {
                self.account_dropped(&chunk[..from_chunk]);
            }
            self.ring.extend(&chunk[from_chunk..]);
        } else {
            self.ring.extend(chunk);
        }
    }

    fn drop_front(&mut self, n: usize) {
        let dropped: Vec<u8> = self.ring.drain(..n).collect();
        self.account_dropped(&dropped);
    }

    fn account_dropped(&mut self, bytes: &[u8]) {
        if let Some(&last) = bytes.last() {
            self.base += bytes.len() as u64;
            self.base_line += memchr::memchr_iter(b'\n', bytes).count() as u64;
            self.base_starts_line = last == b'\n';
        }
    }

    fn start_spill(&mut self) {
        let Spill::Ready(target) = &self.spill else {
            return;
        };
        let created = match target {
            SpillTarget::Dir(dir) => {
                let path = dir.join(&self.file_name);
                match std::fs::create_dir_all(dir).and_then(|()| File::create(&path)) {
                    Ok(file) => {
                        self.owned_file = Some(path.clone());
                        Ok((path, file, None, self.spill_limit))
                    }
                    Err(e) => Err(format!("cannot create {}: {e}", path.display())),
                }
            }
            SpillTarget::Store(store) => store
                .create()
                .map(|a| (a.path, a.file, Some(a.id.uri()), a.limit.min(self.spill_limit)))
                .map_err(|e| format!("cannot create an artifact: {e}")),
        };
        self.spill = match created {
            Ok((path, file, artifact, limit)) => {
                let mut writer = BufWriter::with_capacity(64 * 1024, file);
                // Nothing has left the ring yet, so it holds the whole stream so far.
                let (a, b) = self.ring.as_slices();
                let written = (a.len() + b.len()) as u64;
                if written > limit {
                    Spill::Failed(format!("the output limit ({limit} bytes) is used up"))
                } else {
                    match writer.write_all(a).and_then(|()| writer.write_all(b)) {
                        Ok(()) => Spill::Active {
                            path,
                            writer,
                            artifact,
                            written,
                            limit,
                        },
                        Err(e) => Spill::Failed(format!("cannot write {}: {e}", path.display())),
                    }
                }
            }
            Err(e) => Spill::Failed(e),
        };
    }

    fn spill_write(&mut self, chunk: &[u8]) {
        if let Spill::Active {
            path,
            writer,
            written,
            limit,
            ..
        } = &mut self.spill
        {
            *written += chunk.len() as u64;
            if *written > *limit {
                let _ = writer.flush();
                self.spill = Spill::Failed(format!(
                    "the output limit ({limit} bytes) was reached; later output is kept only in memory"
                ));
            } else if let Err(e) = writer.write_all(chunk) {
                self.spill = Spill::Failed(format!("cannot write {}: {e}", path.display()));
            }
        }
    }

    /// Write buffered spill data to the file.
    pub fn flush(&mut self) {
        if let Spill::Active { path, writer, .. } = &mut self.spill
            && let Err(e) = writer.flush()
        {
            self.spill = Spill::Failed(format!("cannot write {}: {e}", path.display()));
        }
    }

    /// The stream has ended.
    pub fn finish(&mut self) {
        self.window.finish();
        self.flush();
    }

    /// Clean text of the last `max_bytes` bytes still in memory.
    pub fn tail_text(&self, max_bytes: usize) -> String {
        let start = self.ring.len().saturating_sub(max_bytes);
        let bytes: Vec<u8> = self.ring.range(start..).copied().collect();
        sanitize(&bytes)
    }

    /// Output from position `since` on, at most `max_bytes` of it (the newest part when there is more).
    ///
    /// While the stream is still open (`complete == false`) an incomplete UTF-8 character or escape
    /// sequence at the very end is held back for the next read.
    pub fn read_since(&self, since: u64, max_bytes: usize, complete: bool) -> StreamRead {
        let since = since.min(self.total);
        let mut start = since.max(self.base);
        let mut end = self.total;
        if !complete {
            let probe_from = start.max(end.saturating_sub(300));
            let held = incomplete_suffix(&self.ring_bytes_between(probe_from, end)) as u64;
            end -= held.min(end - start);
        }
        if end.saturating_sub(start) > max_bytes as u64 {
            // Start the shown part at a line start when one is near, so it does not open mid-line.
            let cut = end - max_bytes as u64;
            let bytes = self.ring_bytes_between(cut, end);
            let nl = memchr::memchr(b'\n', &bytes[..bytes.len().min(4096)]);
            start = cut + nl.map_or(0, |i| i as u64 + 1);
        }
        let skipped = (start > since).then_some((since, start));
        StreamRead {
            text: sanitize(&self.ring_bytes_between(start, end)),
            end,
            skipped,
        }
    }

    fn ring_bytes_between(&self, start: u64, end: u64) -> Vec<u8> {
        let from = (start.max(self.base) - self.base) as usize;
        let to = (end.max(self.base) - self.base) as usize;
        self.ring.range(from..to.min(self.ring.len())).copied().collect()
    }

    /// Lines `[start, end)` (0-based) of the stream, from memory or the spill file.
    pub fn lines(&mut self, start: u64, end: u64) -> LineRead {
        let total_lines = self.total_lines();
        let end = end.min(total_lines);
        let mut notices = Vec::new();
        let mut out = LineRead {
            text: String::new(),
            first: start.min(end),
            count: 0,
            total_lines,
            notices: Vec::new(),
        };
        if start >= end {
            return out;
        }
        self.flush();
        let collected = if self.base == 0 {
            let bytes = self.ring.make_contiguous().to_vec();
            collect_lines(&mut bytes.as_slice(), 0, start, end)
        } else if let Some(path) = self.spill_path().map(Path::to_path_buf) {
            match File::open(&path) {
                Ok(file) => collect_lines(&mut BufReader::new(file), 0, start, end),
                Err(e) => {
                    notices.push(format!("cannot read {}: {e}", path.display()));
                    self.lines_from_ring(start, end, &mut notices)
                }
            }
        } else {
            self.lines_from_ring(start, end, &mut notices)
        };
        let (first, count, bytes, capped) = collected;
        if capped {
            notices.push(format!(
                "Stopped after {count} lines ({} KiB); pass offset={} to continue",
                LOG_MAX_BYTES / 1024,
                first + count
            ));
        }
        out.text = sanitize(&bytes);
        out.first = first;
        out.count = count;
        out.notices = notices;
        out
    }

    fn lines_from_ring(
        &mut self,
        start: u64,
        end: u64,
        notices: &mut Vec<String>,
    ) -> (u64, u64, Vec<u8>, bool) {
        let bytes = self.ring.make_contiguous().to_vec();
        let mut slice = bytes.as_slice();
        let mut first_line = self.base_line;
        if !self.base_starts_line {
            // The ring opens mid-line: that line is incomplete, skip it.
            let skip = memchr::memchr(b'\n', slice).map_or(slice.len(), |i| i + 1);
            slice = &slice[skip..];
            first_line += 1;
        }
        if start < first_line {
            notices.push(format!(
                "Lines 1-{first_line} are no longer retained (earlier output was discarded at the retention cap)"
            ));
        }
        collect_lines(&mut slice, first_line, start.max(first_line), end)
    }
}

impl Drop for JobOutput {
    fn drop(&mut self) {
        if let Some(path) = &self.owned_file {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Read lines from `reader` (whose first line has index `first_index`) and keep lines `[start, end)`,
/// stopping early at [`LOG_MAX_BYTES`]. Returns (first kept index, count, bytes, capped).
fn collect_lines(
    reader: &mut impl BufRead,
    first_index: u64,
    start: u64,
    end: u64,
) -> (u64, u64, Vec<u8>, bool) {
    let mut index = first_index;
    let mut line = Vec::new();
    let mut out = Vec::new();
    let mut count = 0;
    while index < end {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if index >= start {
            if out.len() + line.len() > LOG_MAX_BYTES && count > 0 {
                return (start, count, out, true);
            }
            out.extend_from_slice(&line);
            count += 1;
        }
        index += 1;
    }
    (start, count, out, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(dir: Option<&Path>) -> JobOutput {
        JobOutput::new(
            "t",
            1024,
            WindowConfig {
                head_bytes: 64,
                tail_bytes: 64,
                ..WindowConfig::default()
            },
            dir.map(|d| SpillTarget::Dir(d.to_path_buf())),
            u64::MAX,
        )
    }

    #[test]
    fn reads_since_a_cursor_without_duplicates() {
        let mut out = small(None);
        out.push(b"one\ntw");
        let first = out.read_since(0, 1 << 20, false);
        assert_eq!(first.text, "one\ntw");
        out.push(b"o\n");
        let second = out.read_since(first.end, 1 << 20, false);
        assert_eq!(second.text, "o\n");
        assert_eq!(second.end, 8);
        assert!(second.skipped.is_none());
    }

    #[test]
    fn holds_back_a_split_character_while_running() {
        let mut out = small(None);
        out.push(&"é".as_bytes()[..1]);
        let read = out.read_since(0, 1 << 20, false);
        assert_eq!((read.text.as_str(), read.end), ("", 0));
        out.push(&"é".as_bytes()[1..]);
        assert_eq!(out.read_since(0, 1 << 20, false).text, "é");
    }

    #[test]
    fn too_much_pending_output_is_skipped_exactly() {
        let mut out = small(None);
        for i in 0..100 {
            out.push(format!("line {i:03}\n").as_bytes());
        }
        let read = out.read_since(0, 100, true);
        let (from, to) = read.skipped.unwrap();
        assert_eq!(from, 0);
        assert_eq!(to + read.text.len() as u64, out.total_bytes());
        assert!(read.text.starts_with("line") && read.text.ends_with("line 099\n"));
    }

    #[test]
    fn spill_keeps_every_line_for_log() {
        let dir = std::env::temp_dir().join(format!("sg-jobs-out-{}", std::process::id()));
        let mut out = small(Some(&dir));
        for i in 0..1000 {
            out.push(format!("{i}\n").as_bytes());
        }
        assert!(out.spill_path().is_some());
        assert_eq!(out.total_lines(), 1000);
        let read = out.lines(0, 3);
        assert_eq!(read.text, "0\n1\n2\n");
        let read = out.lines(998, 5000);
        assert_eq!((read.text.as_str(), read.count), ("998\n999\n", 2));
        let path = out.spill_path().unwrap().to_path_buf();
        drop(out);
        assert!(!path.exists());
    }

    #[test]
    fn without_spill_dropped_lines_are_disclosed() {
        let mut out = small(None);
        for i in 0..1000 {
            out.push(format!("{i}\n").as_bytes());
        }
        let read = out.lines(0, 1000);
        assert!(
            read.notices[0].contains("no longer retained"),
            "{:?}",
            read.notices
        );
        assert!(read.text.ends_with("999\n"));
        assert!(read.first > 0);
        assert_eq!(read.first + read.count, 1000);
    }
}

#[cfg(test)]
mod limit_tests {
    use super::*;

    #[test]
    fn spill_stops_at_its_limit_and_says_so() {
        let dir = std::env::temp_dir().join(format!("sg-jobs-limit-{}", std::process::id()));
        let mut out = JobOutput::new(
            "limited",
            1024,
            WindowConfig::default(),
            Some(SpillTarget::Dir(dir.clone())),
            4096,
        );
        for i in 0..2000 {
            out.push(format!("{i}\n").as_bytes());
        }
        let error = out.spill_error().expect("limit reached");
        assert!(error.contains("4096"), "{error}");
        assert!(out.artifact().is_none());
        // The newest lines are still in memory.
        assert_eq!(out.lines(1999, 2000).text, "1999\n");
        drop(out);
        assert!(!dir.join("limited.log").exists());
        let _ = std::fs::remove_dir(&dir);
    }
}
