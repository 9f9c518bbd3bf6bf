//! [`OutputWindow`]: the first and last bytes of a stream's model text in fixed memory, with exact
//! totals, and (optionally) the full raw stream spilled to an artifact.
//!
//! Raw chunks go through the [`Sanitizer`]; its clean output fills a head buffer and then a tail ring.
//! Accounting (bytes, lines) is of the raw stream. Because the sanitizer keeps lines aligned, the line
//! numbers in [`Truncation::shown_ranges`] are valid in the raw artifact too; byte offsets are mapped
//! back to the raw stream through a few checkpoints recorded only where sanitizing changed a line's
//! length, so plain text pays nothing for them.
//!
//! Once head and tail are full, lines that can only end up elided are counted rather than sanitized
//! (see `ModelText`), with every figure exactly as if they had been.

use std::collections::VecDeque;

use memchr::{memchr, memrchr};

use crate::ring::TailRing;
use crate::sanitize::{CleanOutput, DEFAULT_MAX_COLUMN, Sanitizer, skippable, skippable_prefix};
use crate::scan::count_newlines;
use crate::spill::ArtifactSpill;
use crate::summary::{CaptureSummary, Truncation, elision_marker};
use crate::utf8::{ceil_char_boundary, floor_char_boundary};
use crate::{Flow, Sink};

/// Default bytes of model text kept from the start of the stream.
pub const DEFAULT_HEAD_BYTES: usize = 20 * 1024;
/// Default bytes of model text kept from the end of the stream.
pub const DEFAULT_TAIL_BYTES: usize = 50 * 1024;

/// Sizes of the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowConfig {
    /// Bytes of model text kept from the start of the stream.
    pub head_bytes: usize,
    /// Bytes of model text kept from the end of the stream.
    pub tail_bytes: usize,
    /// Lines of model text longer than this many bytes are cut with a marker (0: the 1 MiB limit).
    pub max_column: usize,
}

impl Default for WindowConfig {
    fn default() -> Self {
        Self {
            head_bytes: DEFAULT_HEAD_BYTES,
            tail_bytes: DEFAULT_TAIL_BYTES,
            max_column: DEFAULT_MAX_COLUMN,
        }
    }
}

/// The clean side: head buffer, tail ring, and the raw-offset checkpoints.
#[derive(Debug, Clone)]
struct CleanWindow {
    head_cap: usize,
    head: Vec<u8>,
    /// Clean and raw offsets just after the last newline in the head (0, 0 when there is none).
    head_cut: (u64, u64),
    /// Holds `tail_bytes + 1` bytes: the extra oldest byte tells whether the tail starts a line.
    ring: TailRing,
    clean_total: u64,
    /// `(clean offset, raw - clean)`: from that clean offset on, newlines sit at clean + delta in the
    /// raw stream. A new entry is pushed only when the delta changes.
    checkpoints: VecDeque<(u64, i64)>,
}

impl CleanWindow {
    fn new(config: &WindowConfig) -> Self {
        Self {
            head_cap: config.head_bytes,
            head: Vec::with_capacity(config.head_bytes.min(64 * 1024)),
            head_cut: (0, 0),
            ring: TailRing::new(config.tail_bytes.saturating_add(1)),
            clean_total: 0,
            checkpoints: VecDeque::from([(0, 0)]),
        }
    }

    fn held(&self) -> u64 {
        (self.head.len() + self.ring.len()) as u64
    }

    fn is_truncated(&self) -> bool {
        self.clean_total > self.held()
    }

    /// Whether head and tail are full and text is already elided: from here on, only the newest
    /// clean bytes can still be shown.
    fn only_tail_matters(&self) -> bool {
        self.head.len() == self.head_cap && self.ring.len() == self.ring.capacity() && self.is_truncated()
    }

    /// Lines of `raw` bytes were passed over without sanitizing: their clean text would have been
    /// elided. Counting them as `raw` clean bytes keeps raw - clean (the checkpoint delta) unchanged,
    /// so raw offsets of later text stay exact.
    fn skip(&mut self, raw: u64) {
        self.clean_total += raw;
    }

    /// Raw offset of the position just after the clean newline at `newline`.
    fn raw_after(&self, newline: u64) -> u64 {
        let idx = self.checkpoints.partition_point(|c| c.0 <= newline);
        let delta = self.checkpoints[idx.saturating_sub(1)].1;
        (newline as i64 + 1 + delta).max(0) as u64
    }
}

impl CleanOutput for CleanWindow {
    fn emit(&mut self, text: &[u8], raw_end: u64) {
        if text.is_empty() {
            return;
        }
        let start = self.clean_total;
        self.clean_total += text.len() as u64;
        let ends_line = text.last() == Some(&b'\n');
        let delta = raw_end as i64 - self.clean_total as i64;
        let room = self.head_cap - self.head.len();
        let (head, rest) = text.split_at(room.min(text.len()));
        if !head.is_empty() {
            self.head.extend_from_slice(head);
            if let Some(k) = memrchr(b'\n', head) {
                let clean = start + k as u64 + 1;
                self.head_cut = (clean, (clean as i64 + delta).max(0) as u64);
            }
        }
        if !rest.is_empty() {
            if ends_line && self.checkpoints.back().map(|c| c.1) != Some(delta) {
                self.checkpoints.push_back((start, delta));
            }
            self.ring.push(rest);
            let ring_start = self.clean_total - self.ring.len() as u64;
            while self.checkpoints.len() >= 2 && self.checkpoints[1].0 <= ring_start {
                self.checkpoints.pop_front();
            }
        }
    }
}

/// Raw bytes held back once only the tail matters, before deciding which of them need sanitizing.
const DEFER_BYTES: usize = 1 << 20;

/// Sanitizer and clean window, with lazy sanitizing of text that would be elided anyway.
///
/// Once head and tail are full, raw bytes are held back (from a line start) instead of sanitized.
/// When enough are held, the newest lines — at least twice the tail — are sanitized; if their clean
/// text alone fills the tail, the older held lines can never be shown and are only counted, after a
/// check that they would change no figure (see [`skippable`]). Otherwise everything held is
/// sanitized as usual, so the result is always exactly that of sanitizing every byte.
#[derive(Debug, Clone)]
struct ModelText {
    sanitizer: Sanitizer,
    clean: CleanWindow,
    /// Raw bytes not yet sanitized; starts at a line start.
    pending: Vec<u8>,
    pending_newlines: u64,
    /// Raw bytes sanitized last, to find out whether they fill the tail: 2 × (tail + 1).
    keep: usize,
    /// Pending bytes that trigger a decision.
    limit: usize,
}

impl ModelText {
    fn new(config: &WindowConfig) -> Self {
        let keep = config.tail_bytes.saturating_add(1).saturating_mul(2);
        Self {
            sanitizer: Sanitizer::new(config.max_column),
            clean: CleanWindow::new(config),
            pending: Vec::new(),
            pending_newlines: 0,
            keep,
            limit: keep.saturating_add(DEFER_BYTES.max(keep)),
        }
    }

    /// Newlines seen, including held bytes.
    fn newlines(&self) -> u64 {
        self.sanitizer.newlines() + self.pending_newlines
    }

    fn push(&mut self, chunk: &[u8]) {
        // Pieces of at most `DEFER_BYTES` keep the held bytes bounded whatever the chunk size.
        for piece in chunk.chunks(DEFER_BYTES) {
            self.push_piece(piece);
        }
    }

    fn push_piece(&mut self, mut chunk: &[u8]) {
        if self.pending.is_empty() {
            if !self.clean.only_tail_matters() {
                self.sanitizer.push(chunk, &mut self.clean);
                return;
            }
            if !self.sanitizer.at_line_start() {
                // Finish the open line first: held bytes start at a line start.
                let Some(k) = memchr(b'\n', chunk) else {
                    self.sanitizer.push(chunk, &mut self.clean);
                    return;
                };
                self.sanitizer.push(&chunk[..=k], &mut self.clean);
                chunk = &chunk[k + 1..];
                if chunk.is_empty() {
                    return;
                }
                if !self.sanitizer.at_line_start() {
                    self.sanitizer.push(chunk, &mut self.clean);
                    return;
                }
            }
            self.pending.reserve(self.limit.min(2 * DEFER_BYTES));
        }
        self.pending.extend_from_slice(chunk);
        self.pending_newlines += count_newlines(chunk);
        if self.pending.len() >= self.limit {
            self.flush();
        }
    }

    /// Sanitize (or pass over) everything held.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut held = std::mem::take(&mut self.pending);
        let newlines = std::mem::take(&mut self.pending_newlines);
        if !self.skip_old_lines(&held, newlines) {
            self.sanitizer.push(&held, &mut self.clean);
        }
        held.clear();
        self.pending = held;
    }

    /// Pass over the older lines of `held` (which has `newlines` newlines) if the newer ones fill
    /// the tail; false if it did nothing.
    fn skip_old_lines(&mut self, held: &[u8], newlines: u64) -> bool {
        if held.len() <= self.keep || !self.sanitizer.at_line_start() {
            return false;
        }
        let Some(k) = memrchr(b'\n', &held[..held.len() - self.keep]) else {
            return false;
        };
        let (old, new) = held.split_at(k + 1);
        let cap = self.sanitizer.cap();
        if skippable(old, cap) {
            let mut probe = self.sanitizer.clone();
            probe.skip_lines(old.len() as u64, newlines - count_newlines(new));
            let mut recorded = Recorded::default();
            probe.push(new, &mut recorded);
            if recorded.text.len() < self.clean.ring.capacity() {
                return false;
            }
            self.sanitizer = probe;
            self.clean.skip(old.len() as u64);
            recorded.replay(&mut self.clean);
            return true;
        }
        // Some old lines would change a figure (invalid UTF-8, a cut line). Whether the newest lines
        // fill the tail does not depend on them (lines are independent): ask first, on a copy.
        let mut probe = self.sanitizer.clone();
        let mut clean_len = CleanLen(0);
        probe.push(new, &mut clean_len);
        if clean_len.0 < self.clean.ring.capacity() {
            return false;
        }
        // Pass over the skippable stretches, sanitize the other lines (their clean text is
        // overwritten in the tail by the newest lines), then the newest lines.
        let mut rest = old;
        while !rest.is_empty() {
            let skip = if self.sanitizer.at_line_start() {
                skippable_prefix(rest, cap)
            } else {
                0
            };
            if skip > 0 {
                self.sanitizer
                    .skip_lines(skip as u64, count_newlines(&rest[..skip]));
                self.clean.skip(skip as u64);
                rest = &rest[skip..];
            }
            let line_end = memchr(b'\n', rest).map_or(rest.len(), |k| k + 1);
            self.sanitizer.push(&rest[..line_end], &mut self.clean);
            rest = &rest[line_end..];
        }
        self.sanitizer.push(new, &mut self.clean);
        true
    }

    fn finish(&mut self) {
        self.flush();
        self.sanitizer.finish(&mut self.clean);
    }
}

/// Counts clean bytes only.
struct CleanLen(usize);

impl CleanOutput for CleanLen {
    fn emit(&mut self, text: &[u8], _raw_end: u64) {
        self.0 += text.len();
    }
}

/// Clean output kept for replay, with the raw offset of each piece.
#[derive(Debug, Default)]
struct Recorded {
    text: Vec<u8>,
    /// `(end of the piece in text, raw_end)`.
    pieces: Vec<(usize, u64)>,
}

impl CleanOutput for Recorded {
    fn emit(&mut self, text: &[u8], raw_end: u64) {
        self.text.extend_from_slice(text);
        self.pieces.push((self.text.len(), raw_end));
    }
}

impl Recorded {
    fn replay(&self, out: &mut impl CleanOutput) {
        let mut start = 0;
        for &(end, raw_end) in &self.pieces {
            out.emit(&self.text[start..end], raw_end);
            start = end;
        }
    }
}

/// Keeps the first `head_bytes` and the last `tail_bytes` of a stream's model text; memory is
/// O(window) whatever the stream size. Optionally spills the full raw stream to an artifact.
///
/// Call [`Sink::finish`] before [`OutputWindow::summary`] so the last line (if it has no newline) is
/// included.
#[derive(Debug)]
pub struct OutputWindow {
    config: WindowConfig,
    model: ModelText,
    raw_bytes: u64,
    raw_last: Option<u8>,
    spill: Option<ArtifactSpill>,
    finished: bool,
}

impl OutputWindow {
    /// A window with the given sizes and no spill.
    pub fn new(config: WindowConfig) -> Self {
        Self {
            model: ModelText::new(&config),
            config,
            raw_bytes: 0,
            raw_last: None,
            spill: None,
            finished: false,
        }
    }

    /// A window that spills the full raw stream to `spill` once the output no longer fits the window
    /// or a line was cut at the column cap.
    pub fn with_spill(config: WindowConfig, spill: ArtifactSpill) -> Self {
        Self::with_optional_spill(config, Some(spill))
    }

    /// [`OutputWindow::with_spill`] when there is a `spill`, else [`OutputWindow::new`].
    pub fn with_optional_spill(config: WindowConfig, spill: Option<ArtifactSpill>) -> Self {
        let mut window = Self::new(config);
        window.spill = spill;
        window
    }

    /// The configuration.
    pub fn config(&self) -> &WindowConfig {
        &self.config
    }

    /// Raw bytes seen so far.
    pub fn total_bytes(&self) -> u64 {
        self.raw_bytes
    }

    /// Lines seen so far; a trailing newline does not add a line.
    pub fn total_lines(&self) -> u64 {
        lines_of(self.raw_last, self.model.newlines())
    }

    /// Whether part of the model text is no longer held.
    pub fn is_truncated(&self) -> bool {
        self.model.clean.is_truncated() || !self.model.pending.is_empty()
    }

    /// Whether the output no longer fits the window (or a line was cut): the spill condition.
    pub fn overflowed(&self) -> bool {
        let window = (self.config.head_bytes as u64).saturating_add(self.config.tail_bytes as u64);
        self.raw_bytes > window
            || self.model.clean.clean_total > window
            || self.model.sanitizer.any_line_capped()
    }

    /// The spill, if one is attached.
    pub fn spill(&self) -> Option<&ArtifactSpill> {
        self.spill.as_ref()
    }

    /// Model text and accounting for everything seen so far.
    pub fn summary(&self) -> CaptureSummary {
        if self.model.pending.is_empty() {
            return self.summary_of(&self.model);
        }
        // Bytes are still held back (no `finish` yet): sanitize them in a copy.
        let mut model = self.model.clone();
        model.flush();
        self.summary_of(&model)
    }

    fn summary_of(&self, model: &ModelText) -> CaptureSummary {
        let stats = model.sanitizer.stats();
        let total_lines = lines_of(self.raw_last, model.newlines());
        let artifact = self.spill.as_ref().and_then(|s| s.artifact().map(str::to_owned));
        let mut summary = CaptureSummary {
            total_bytes: self.raw_bytes,
            total_lines,
            artifact: artifact.clone(),
            replaced_bytes: stats.replaced_bytes,
            capped_lines: stats.capped_lines,
            ..CaptureSummary::default()
        };
        if stats.replaced_bytes > 0 {
            summary.notices.push(format!(
                "{} invalid UTF-8 byte{} shown as U+FFFD",
                stats.replaced_bytes,
                if stats.replaced_bytes == 1 { "" } else { "s" }
            ));
        }
        if stats.dropped_controls > 0 {
            // Otherwise binary output (NULs, say) would vanish without a word.
            summary.notices.push(format!(
                "{} non-printing control byte{} removed",
                stats.dropped_controls,
                if stats.dropped_controls == 1 { "" } else { "s" }
            ));
        }
        if stats.made_visible > 0 {
            // Text that reads differently from what it is (bidi overrides, zero-width and tag
            // characters) is shown as what it is.
            summary.notices.push(format!(
                "{} invisible or reordering character{} shown as <U+…>",
                stats.made_visible,
                if stats.made_visible == 1 { "" } else { "s" }
            ));
        }
        if stats.capped_lines > 0 {
            let (s, verb) = if stats.capped_lines == 1 {
                ("", "was")
            } else {
                ("s", "were")
            };
            summary.notices.push(format!(
                "{} line{s} longer than {} bytes {verb} cut (marked …)",
                stats.capped_lines, self.config.max_column
            ));
        }
        if let Some(spill) = &self.spill {
            summary.notices.extend(spill.notices().iter().cloned());
        }
        let c = &model.clean;
        if !c.is_truncated() {
            let mut all = c.head.clone();
            all.extend_from_slice(&c.ring.to_vec());
            summary.text = into_string(all);
            if stats.capped_lines > 0 {
                summary.truncation = Some(Truncation {
                    direction: "none".to_owned(),
                    total_lines,
                    total_bytes: self.raw_bytes,
                    shown_ranges: if total_lines > 0 {
                        vec![(1, total_lines)]
                    } else {
                        Vec::new()
                    },
                    elided_lines: 0,
                    elided_bytes: stats.capped_bytes.min(self.raw_bytes),
                    artifact,
                });
            }
            return summary;
        }

        // Head: up to its last newline (or, for one giant line, a UTF-8-safe prefix).
        let (head_part, head_lines, raw_head_end) = if c.head_cut.0 > 0 {
            let part = &c.head[..c.head_cut.0 as usize];
            (part, count_newlines(part), c.head_cut.1)
        } else {
            let part = &c.head[..floor_char_boundary(&c.head, c.head.len())];
            (
                part,
                u64::from(!part.is_empty()),
                (part.len() as u64).min(self.raw_bytes),
            )
        };

        // Tail: from the first line that starts inside the ring.
        let ring = c.ring.to_vec();
        let ring_start = c.clean_total - ring.len() as u64;
        let (prev, tail) = ring.split_first().map_or((b'\n', &[][..]), |(p, t)| (*p, t));
        let (offset, at_line_start) = if prev == b'\n' {
            (0, true)
        } else {
            match memchr(b'\n', tail) {
                Some(k) => (k + 1, true),
                None => (ceil_char_boundary(tail, 0), false),
            }
        };
        let tail_part = &tail[offset..];
        let tail_clean_start = ring_start + 1 + offset as u64;
        let raw_tail_start = if at_line_start {
            c.raw_after(tail_clean_start - 1)
        } else {
            // Mid-line (a line longer than the window): the offset is estimated, so keep it in range.
            c.raw_after(tail_clean_start).saturating_sub(1)
        }
        .min(self.raw_bytes);
        let newlines_before_tail = model.sanitizer.newlines() - count_newlines(tail_part);
        let tail_lines = if tail_part.is_empty() {
            0
        } else {
            total_lines.saturating_sub(newlines_before_tail)
        };

        let elided_lines = total_lines.saturating_sub(head_lines + tail_lines);
        let elided_bytes = raw_tail_start.saturating_sub(raw_head_end);
        let mut text = Vec::with_capacity(head_part.len() + tail_part.len() + 64);
        text.extend_from_slice(head_part);
        if !text.is_empty() && !text.ends_with(b"\n") {
            text.push(b'\n');
        }
        text.extend_from_slice(elision_marker(elided_lines, elided_bytes).as_bytes());
        text.push(b'\n');
        text.extend_from_slice(tail_part);
        summary.text = into_string(text);

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
        summary.truncation = Some(Truncation {
            direction: direction.to_owned(),
            total_lines,
            total_bytes: self.raw_bytes,
            shown_ranges,
            elided_lines,
            elided_bytes,
            artifact,
        });
        summary
    }
}

/// Lines of a stream with `newlines` newlines ending in `last`: a trailing newline adds no line.
fn lines_of(last: Option<u8>, newlines: u64) -> u64 {
    match last {
        None => 0,
        Some(b'\n') => newlines,
        Some(_) => newlines + 1,
    }
}

fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

impl Sink for OutputWindow {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        if chunk.is_empty() {
            return Flow::Continue;
        }
        self.raw_bytes += chunk.len() as u64;
        self.raw_last = chunk.last().copied();
        self.model.push(chunk);
        if self.spill.is_some() {
            let overflowed = self.overflowed();
            if let Some(spill) = &mut self.spill {
                spill.push(chunk, overflowed);
            }
        }
        Flow::Continue
    }

    fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.model.finish();
        let overflowed = self.overflowed();
        if let Some(spill) = &mut self.spill {
            spill.finish(overflowed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(head: usize, tail: usize) -> OutputWindow {
        OutputWindow::new(WindowConfig {
            head_bytes: head,
            tail_bytes: tail,
            ..WindowConfig::default()
        })
    }

    #[test]
    fn small_output_is_kept_whole() {
        let mut w = OutputWindow::new(WindowConfig::default());
        w.write(b"a\nb");
        w.write(b"\n");
        w.finish();
        let s = w.summary();
        assert_eq!(s.text, "a\nb\n");
        assert_eq!(s.total_lines, 2);
        assert!(s.truncation.is_none());
    }

    #[test]
    fn removed_control_bytes_are_counted_in_a_notice() {
        let mut w = OutputWindow::new(WindowConfig::default());
        w.write(b"a\x00\x00b\x07\n");
        w.finish();
        let s = w.summary();
        assert_eq!(s.text, "ab\n");
        assert!(
            s.notices
                .iter()
                .any(|n| n == "3 non-printing control bytes removed"),
            "{:?}",
            s.notices
        );
        let mut clean = OutputWindow::new(WindowConfig::default());
        clean.write(b"tab\there\n");
        clean.finish();
        assert!(clean.summary().notices.is_empty());
    }

    #[test]
    fn large_output_keeps_head_and_tail_with_exact_counts() {
        let mut w = window(20, 20);
        let mut all = String::new();
        for i in 1..=1000 {
            let line = format!("{i}\n");
            all.push_str(&line);
            w.write(line.as_bytes());
        }
        w.finish();
        let s = w.summary();
        assert_eq!(s.total_lines, 1000);
        assert_eq!(s.total_bytes, all.len() as u64);
        assert!(s.text.starts_with("1\n2\n"));
        assert!(s.text.ends_with("999\n1000\n"));
        let t = s.truncation.unwrap();
        assert_eq!(t.direction, "both");
        assert_eq!(t.shown_ranges.last().unwrap().1, 1000);
        let shown: u64 = t.shown_ranges.iter().map(|(a, b)| b - a + 1).sum();
        assert_eq!(shown + t.elided_lines, 1000);
        let shown_bytes = all.len() as u64 - t.elided_bytes;
        let (h, tl) = (t.shown_ranges[0], t.shown_ranges[1]);
        let lines: Vec<&str> = all.lines().collect();
        let expect: usize = lines[..h.1 as usize]
            .iter()
            .chain(&lines[tl.0 as usize - 1..])
            .map(|l| l.len() + 1)
            .sum();
        assert_eq!(shown_bytes, expect as u64);
    }

    #[test]
    fn elided_bytes_are_raw_bytes_even_when_escapes_were_removed() {
        let mut w = window(30, 30);
        let mut raw = Vec::new();
        for i in 1..=200 {
            raw.extend_from_slice(format!("\x1b[31m{i}\x1b[0m\n").as_bytes());
        }
        w.write(&raw);
        w.finish();
        let s = w.summary();
        let t = s.truncation.unwrap();
        let raw_lines: Vec<&[u8]> = raw.split_inclusive(|&b| b == b'\n').collect();
        let (h, tl) = (t.shown_ranges[0], t.shown_ranges[1]);
        let shown: usize = raw_lines[..h.1 as usize]
            .iter()
            .chain(&raw_lines[tl.0 as usize - 1..])
            .map(|l| l.len())
            .sum();
        assert_eq!(t.elided_bytes, (raw.len() - shown) as u64);
        assert!(!s.text.contains('\x1b'));
        assert!(s.text.ends_with("199\n200\n"), "{}", s.text);
    }

    #[test]
    fn trailing_partial_line_counts_and_is_shown_after_finish() {
        let mut w = window(100, 100);
        w.write(b"one\ntwo");
        assert_eq!(w.total_lines(), 2);
        w.finish();
        assert_eq!(w.summary().text, "one\ntwo");
    }

    #[test]
    fn a_zero_window_over_expanded_invalid_bytes_stays_in_range() {
        // Found by fuzzing: two invalid bytes become six bytes of U+FFFD, longer than the raw stream.
        let mut w = window(0, 0);
        w.write(&[0xda, 0xff, b')']);
        w.finish();
        let t = w.summary().truncation.unwrap();
        assert!(t.elided_bytes <= t.total_bytes, "{t:?}");
        // And a capped line of replacement characters (clean text longer than the raw bytes).
        let mut w = OutputWindow::new(WindowConfig {
            max_column: 32,
            ..WindowConfig::default()
        });
        w.write(&[0xfc; 16]);
        w.finish();
        let t = w.summary().truncation.unwrap();
        assert_eq!(t.direction, "none");
        assert!(t.elided_bytes <= t.total_bytes, "{t:?}");
    }

    #[test]
    fn a_capped_line_is_reported_without_elision() {
        let mut w = OutputWindow::new(WindowConfig::default());
        let mut line = vec![b'A'; 300_000];
        line.extend_from_slice(b"\nTAIL\n");
        w.write(&line);
        w.finish();
        assert!(w.overflowed());
        let s = w.summary();
        assert!(s.text.ends_with("TAIL\n"));
        assert!(s.text.len() < 5000);
        let t = s.truncation.unwrap();
        assert_eq!(t.direction, "none");
        assert_eq!(t.elided_bytes, 296_000);
        assert_eq!(s.capped_lines, 1);
    }

    /// Mixed terminal output: plain, coloured, UTF-8, `\r` progress and long lines; `bad` adds
    /// invalid UTF-8 and over-long lines now and then.
    fn mixed(lines: usize, seed: u64, bad: bool) -> Vec<u8> {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut out = Vec::new();
        for n in 0..lines {
            match next() % 100 {
                0..=59 => out.extend_from_slice(format!("{n} plain log line {}", next() % 1000).as_bytes()),
                60..=69 => {
                    out.extend_from_slice(format!("\x1b[1m\x1b[32mok\x1b[0m {n}\x1b]0;t\x07").as_bytes());
                }
                70..=79 => out.extend_from_slice(format!("{n}: café — 日本語 ✓").as_bytes()),
                80..=89 => {
                    for pct in (0..=100).step_by(25) {
                        out.extend_from_slice(format!("\r{pct}%\x08\x1b[K").as_bytes());
                    }
                }
                90..=94 if bad => out.extend_from_slice(&[b'x', 0xff, 0xc3, b'y']),
                95..=96 if bad => out.extend(std::iter::repeat_n(b'L', 130)),
                _ => out.extend(std::iter::repeat_n(b'x', (next() % 90) as usize)),
            }
            out.push(b'\n');
        }
        out
    }

    /// A window that sanitizes every byte, for comparison.
    fn eager(config: &WindowConfig) -> OutputWindow {
        let mut w = OutputWindow::new(config.clone());
        w.model.keep = usize::MAX;
        w
    }

    #[test]
    fn lazy_sanitizing_gives_exactly_the_eager_result() {
        for (seed, bad, tail, cap) in [
            (7, false, 300, 4000),
            (11, true, 300, 100),
            (13, true, 5000, 4000),
        ] {
            let raw = mixed(120_000, seed, bad);
            let config = WindowConfig {
                head_bytes: 200,
                tail_bytes: tail,
                max_column: cap,
            };
            let (mut lazy, mut reference) = (OutputWindow::new(config.clone()), eager(&config));
            let mut at = 0;
            let mut size = 1;
            while at < raw.len() {
                let end = (at + size).min(raw.len());
                lazy.write(&raw[at..end]);
                reference.write(&raw[at..end]);
                at = end;
                size = size * 7 % 70_001 + 1;
                if at > raw.len() / 2 && at - size <= raw.len() / 2 {
                    assert_eq!(lazy.summary(), reference.summary(), "mid-stream, seed {seed}");
                }
            }
            lazy.finish();
            reference.finish();
            assert_eq!(lazy.summary(), reference.summary(), "seed {seed}");
            assert_eq!(lazy.total_lines(), 120_000);
            assert!(
                lazy.model.sanitizer.stats().escape_sequences
                    < reference.model.sanitizer.stats().escape_sequences,
                "some lines were passed over unsanitized (seed {seed})"
            );
        }
    }

    #[test]
    fn held_bytes_that_shrink_below_the_tail_are_all_sanitized() {
        // Progress frames collapse to almost nothing: the newest lines cannot fill the tail.
        let mut raw = mixed(2000, 3, false);
        for i in 0..60_000 {
            raw.extend_from_slice(format!("\r{i:>8} frames\r\x1b[2K").as_bytes());
            if i % 500 == 0 {
                raw.push(b'\n');
            }
        }
        let config = WindowConfig {
            head_bytes: 100,
            tail_bytes: 4000,
            ..WindowConfig::default()
        };
        let (mut lazy, mut reference) = (OutputWindow::new(config.clone()), eager(&config));
        for chunk in raw.chunks(65_536) {
            lazy.write(chunk);
            reference.write(chunk);
        }
        lazy.finish();
        reference.finish();
        assert_eq!(lazy.summary(), reference.summary());
    }

    #[test]
    fn one_huge_chunk_is_held_in_bounded_pieces() {
        let raw = mixed(400_000, 5, false);
        let config = WindowConfig::default();
        let (mut lazy, mut reference) = (OutputWindow::new(config.clone()), eager(&config));
        lazy.write(&raw);
        reference.write(&raw);
        assert!(raw.len() > 6 * DEFER_BYTES);
        // Capacity, not length: it shows the peak (the buffer is emptied after each decision).
        assert!(lazy.model.pending.capacity() < 2 * (2 * DEFER_BYTES + 4 * (config.tail_bytes + 1)));
        lazy.finish();
        reference.finish();
        assert_eq!(lazy.summary(), reference.summary());
    }
}
