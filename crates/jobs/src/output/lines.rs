//! `log`: lines of a job's output by number, from memory or the spill file.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use shellgate_sink::sanitize;

use super::JobOutput;

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

/// Most bytes one `log` call returns.
const LOG_MAX_BYTES: usize = 256 * 1024;
impl JobOutput {
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
