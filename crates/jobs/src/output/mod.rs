//! One job's output: a bounded ring of recent raw bytes addressed by stream position, the head/tail
//! window for the final summary, and a spill file that keeps the whole stream once the ring overflows.
//!
//! Positions (`cursor`, `since`) are byte offsets into the job's merged stdout/stderr stream, counted
//! from 0. The ring holds bytes `[base, total)`. Once bytes leave the ring they are still in the spill
//! file (when it could be written); otherwise they are reported as dropped, with exact ranges.
//!
//! `spill` keeps the whole stream in a file or artifact; `lines` answers `log` by line number.

mod lines;
mod spill;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::path::PathBuf;

use shellgate_sink::{OutputWindow, Sink, WindowConfig, sanitize};

use super::text::incomplete_suffix;

use spill::Spill;
pub use spill::SpillTarget;

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
}

impl Drop for JobOutput {
    fn drop(&mut self) {
        if let Some(path) = &self.owned_file {
            let _ = std::fs::remove_file(path);
        }
    }
}
