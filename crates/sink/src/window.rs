//! [`OutputWindow`]: the first and last bytes of a stream in fixed memory, with exact totals.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::Sink;

/// Sizes of the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowConfig {
    /// Bytes kept from the start of the stream.
    pub head_bytes: usize,
    /// Bytes kept from the end of the stream.
    pub tail_bytes: usize,
}

impl Default for WindowConfig {
    fn default() -> Self {
        Self {
            head_bytes: 20 * 1024,
            tail_bytes: 50 * 1024,
        }
    }
}

/// What was elided from the model text, and where the full output is (SPEC S-6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    /// `"head"`, `"tail"` or `"both"`: which ends of the stream are shown.
    pub direction: String,
    /// Lines in the whole stream.
    pub total_lines: u64,
    /// Bytes in the whole stream.
    pub total_bytes: u64,
    /// Shown line ranges, 1-based and inclusive.
    pub shown_ranges: Vec<(u64, u64)>,
    /// Lines not shown.
    pub elided_lines: u64,
    /// Bytes not shown.
    pub elided_bytes: u64,
    /// Where the full output is, when it was spilled.
    pub artifact: Option<String>,
}

/// The result of a capture: model text plus exact accounting.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CaptureSummary {
    /// Model text: the kept part of the stream, decoded lossily.
    pub text: String,
    /// Bytes in the whole stream.
    pub total_bytes: u64,
    /// Lines in the whole stream (a trailing newline does not add one).
    pub total_lines: u64,
    /// Present when part of the stream is not in `text`.
    pub truncation: Option<Truncation>,
    /// The artifact holding the full stream, if any.
    pub artifact: Option<String>,
    /// Things the reader should know (spill failures, replaced bytes).
    pub notices: Vec<String>,
}

/// Keeps the first `head_bytes` and the last `tail_bytes` of a stream; memory is O(window).
#[derive(Debug, Clone)]
pub struct OutputWindow {
    config: WindowConfig,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total_bytes: u64,
    newlines: u64,
    last_byte: Option<u8>,
}

impl OutputWindow {
    /// A window with the given sizes.
    pub fn new(config: WindowConfig) -> Self {
        Self {
            head: Vec::with_capacity(config.head_bytes.min(64 * 1024)),
            tail: VecDeque::new(),
            config,
            total_bytes: 0,
            newlines: 0,
            last_byte: None,
        }
    }

    /// Bytes seen so far.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Lines seen so far; a trailing newline does not add a line.
    pub fn total_lines(&self) -> u64 {
        match self.last_byte {
            None => 0,
            Some(b'\n') => self.newlines,
            Some(_) => self.newlines + 1,
        }
    }

    /// Whether part of the stream is no longer held.
    pub fn is_truncated(&self) -> bool {
        self.total_bytes > (self.head.len() + self.tail.len()) as u64
    }

    /// Model text and accounting for everything seen so far.
    pub fn summary(&self) -> CaptureSummary {
        let total_lines = self.total_lines();
        let mut summary = CaptureSummary {
            total_bytes: self.total_bytes,
            total_lines,
            ..CaptureSummary::default()
        };
        if !self.is_truncated() {
            let mut all = self.head.clone();
            all.extend(self.tail.iter());
            summary.text = String::from_utf8_lossy(&all).into_owned();
            return summary;
        }
        // Cut the head after its last complete line and the tail before its first complete line.
        let head_end = memchr::memrchr(b'\n', &self.head).map_or(0, |i| i + 1);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail_start = memchr::memchr(b'\n', &tail).map_or(tail.len(), |i| i + 1);
        let head_part = &self.head[..head_end];
        let tail_part = &tail[tail_start..];
        let head_lines = memchr::memchr_iter(b'\n', head_part).count() as u64;
        let tail_lines = if tail_part.is_empty() {
            0
        } else {
            memchr::memchr_iter(b'\n', tail_part).count() as u64 + u64::from(!tail_part.ends_with(b"\n"))
        };
        let shown_bytes = (head_part.len() + tail_part.len()) as u64;
        let mut shown_ranges = Vec::new();
        if head_lines > 0 {
            shown_ranges.push((1, head_lines));
        }
        if tail_lines > 0 {
            shown_ranges.push((total_lines - tail_lines + 1, total_lines));
        }
        let direction = match (head_lines > 0, tail_lines > 0) {
            (true, true) => "both",
            (true, false) => "head",
            _ => "tail",
        };
        let mut text = String::from_utf8_lossy(head_part).into_owned();
        text.push_str(&String::from_utf8_lossy(tail_part));
        summary.text = text;
        summary.truncation = Some(Truncation {
            direction: direction.to_owned(),
            total_lines,
            total_bytes: self.total_bytes,
            shown_ranges,
            elided_lines: total_lines.saturating_sub(head_lines + tail_lines),
            elided_bytes: self.total_bytes - shown_bytes,
            artifact: None,
        });
        summary
    }
}

impl Sink for OutputWindow {
    fn write(&mut self, mut chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.total_bytes += chunk.len() as u64;
        self.newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.last_byte = chunk.last().copied();
        let room = self.config.head_bytes - self.head.len();
        if room > 0 {
            let take = room.min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        let cap = self.config.tail_bytes;
        if chunk.len() >= cap {
            self.tail.clear();
            self.tail.extend(&chunk[chunk.len() - cap..]);
        } else {
            let overflow = (self.tail.len() + chunk.len()).saturating_sub(cap);
            self.tail.drain(..overflow);
            self.tail.extend(chunk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut w = OutputWindow::new(WindowConfig::default());
        w.write(b"a\nb");
        w.write(b"\n");
        let s = w.summary();
        assert_eq!(s.text, "a\nb\n");
        assert_eq!(s.total_lines, 2);
        assert!(s.truncation.is_none());
    }

    #[test]
    fn large_output_keeps_head_and_tail_with_exact_counts() {
        let mut w = OutputWindow::new(WindowConfig {
            head_bytes: 20,
            tail_bytes: 20,
        });
        let mut all = String::new();
        for i in 1..=1000 {
            let line = format!("{i}\n");
            all.push_str(&line);
            w.write(line.as_bytes());
        }
        let s = w.summary();
        assert_eq!(s.total_lines, 1000);
        assert_eq!(s.total_bytes, all.len() as u64);
        assert!(s.text.starts_with("1\n2\n"));
        assert!(s.text.ends_with("999\n1000\n"));
        let t = s.truncation.unwrap();
        assert_eq!(t.shown_ranges.last().unwrap().1, 1000);
        let shown: u64 = t.shown_ranges.iter().map(|(a, b)| b - a + 1).sum();
        assert_eq!(shown + t.elided_lines, 1000);
    }
}
