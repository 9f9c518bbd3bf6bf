//! The result of a capture: [`CaptureSummary`] and [`Truncation`] (SPEC S-2, S-6).

use serde::{Deserialize, Serialize};

/// What was elided from the model text, and where the full output is (SPEC S-6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    /// `"both"` (head and tail shown, middle elided), `"head"`, `"tail"`, or `"none"` (no line elided,
    /// but lines were cut at the column cap).
    pub direction: String,
    /// Lines in the whole stream.
    pub total_lines: u64,
    /// Bytes in the whole (raw) stream.
    pub total_bytes: u64,
    /// Shown line ranges, 1-based and inclusive; line numbers are those of the raw stream.
    pub shown_ranges: Vec<(u64, u64)>,
    /// Lines not shown.
    pub elided_lines: u64,
    /// Raw bytes of the stream not represented by the shown lines (for `"none"`: bytes of text cut
    /// by the column cap, at most `total_bytes`).
    pub elided_bytes: u64,
    /// Where the full output is, when it was spilled.
    pub artifact: Option<String>,
}

/// The result of a capture: model text plus exact accounting.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CaptureSummary {
    /// Model text: sanitized, with an elision marker line between head and tail when truncated.
    pub text: String,
    /// Bytes in the whole raw stream.
    pub total_bytes: u64,
    /// Lines in the whole stream (a trailing newline does not add one).
    pub total_lines: u64,
    /// Present when part of the stream is not in `text`.
    pub truncation: Option<Truncation>,
    /// The artifact holding the full raw stream, if any (`artifact://<id>`).
    pub artifact: Option<String>,
    /// Things the reader should know (spill failures, replaced bytes, cut lines).
    pub notices: Vec<String>,
    /// Invalid UTF-8 bytes replaced with U+FFFD.
    pub replaced_bytes: u64,
    /// Lines cut at the column cap.
    pub capped_lines: u64,
}

/// `123B`, `4.0KB`, `1.5MB`, `2.0GB` (1024-based, one decimal).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KB", "MB", "GB"];
    if bytes < 1024 {
        return format!("{bytes}B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1}{}", UNITS[unit])
}

/// The marker line placed where the middle of the output was elided.
pub fn elision_marker(lines: u64, bytes: u64) -> String {
    let plural = if lines == 1 { "" } else { "s" };
    format!("[… {lines} line{plural} elided ({}) …]", format_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_formats() {
        assert_eq!(format_bytes(100), "100B");
        assert_eq!(format_bytes(4096), "4.0KB");
        assert_eq!(format_bytes(3 * 1024 * 1024 / 2), "1.5MB");
        assert_eq!(format_bytes(5 << 30), "5.0GB");
    }

    #[test]
    fn marker_format() {
        assert_eq!(elision_marker(1, 100), "[… 1 line elided (100B) …]");
        assert_eq!(elision_marker(123, 4096), "[… 123 lines elided (4.0KB) …]");
    }
}
