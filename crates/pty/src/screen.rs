//! The headless terminal: a vt100 emulator that keeps the screen and scrollback a person would see.

use std::num::NonZeroU16;
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde::{Deserialize, Serialize};

use crate::size::TermSize;

/// What the terminal shows at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenSnapshot {
    /// The visible rows as text, trailing blanks trimmed, rows joined by `\n`.
    pub text: String,
    /// Cursor row, 0-based from the top of the screen.
    pub cursor_row: u16,
    /// Cursor column, 0-based.
    pub cursor_col: u16,
    /// Screen width.
    pub cols: u16,
    /// Screen height.
    pub rows: u16,
    /// Whether the program switched to the alternate screen (full-screen programs do).
    pub alternate_screen: bool,
}

/// A headless terminal emulator fed with a program's raw output.
pub struct Screen {
    parser: vt100::Parser,
    /// Set when the emulator panicked on some input; it is then left alone for good.
    broken: bool,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen")
            .field("size", &self.parser.screen().size())
            .finish_non_exhaustive()
    }
}

/// Sizes below 2 trip edge cases in the emulator, so the grid is never smaller than 2×2.
fn grid_dim(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n.max(2)).unwrap_or(NonZeroU16::MIN)
}

impl Screen {
    /// An empty screen of `size` keeping up to `scrollback` rows that scrolled off the top.
    pub fn new(size: TermSize, scrollback: usize) -> Self {
        Self {
            parser: vt100::Parser::new(grid_dim(size.rows), grid_dim(size.cols), scrollback),
            broken: false,
        }
    }

    /// Feed raw output bytes.
    pub fn process(&mut self, bytes: &[u8]) {
        if self.broken {
            return;
        }
        let parser = &mut self.parser;
        if catch_unwind(AssertUnwindSafe(|| parser.process(bytes))).is_err() {
            tracing::warn!("terminal emulator failed on program output; screen snapshots stop updating");
            self.broken = true;
        }
    }

    /// Change the screen size.
    pub fn resize(&mut self, size: TermSize) {
        if self.broken {
            return;
        }
        let parser = &mut self.parser;
        if catch_unwind(AssertUnwindSafe(|| {
            parser.set_size(grid_dim(size.rows), grid_dim(size.cols));
        }))
        .is_err()
        {
            self.broken = true;
        }
    }

    /// Cursor position (row, col), 0-based.
    pub fn cursor(&self) -> (u16, u16) {
        self.parser.screen().cursor_position()
    }

    /// The current screen.
    pub fn snapshot(&self) -> ScreenSnapshot {
        let screen = self.parser.screen();
        let (rows, cols) = screen.size();
        let (cursor_row, cursor_col) = screen.cursor_position();
        ScreenSnapshot {
            text: screen.contents(),
            cursor_row,
            cursor_col,
            cols: cols.get(),
            rows: rows.get(),
            alternate_screen: screen.alternate_screen(),
        }
    }

    /// The rows that scrolled off the top (oldest first, at most the scrollback capacity), followed by
    /// the visible screen.
    pub fn text_with_scrollback(&mut self) -> String {
        let screen = self.parser.screen_mut();
        let capacity = screen.scrollback_capacity();
        screen.set_scrollback(capacity);
        let back = screen.scrollback();
        let (rows, cols) = screen.size();
        let mut out = String::new();
        // Page upward through the scrollback: each offset shows `rows` rows ending `offset` rows up.
        let mut lines: Vec<String> = Vec::new();
        let mut offset = back;
        loop {
            screen.set_scrollback(offset);
            let page: Vec<String> = screen.rows(0, cols.get()).collect();
            let take = if offset == 0 {
                page.len()
            } else {
                offset.min(usize::from(rows.get()))
            };
            lines.extend(page.into_iter().take(take));
            if offset == 0 {
                break;
            }
            offset = offset.saturating_sub(usize::from(rows.get()));
        }
        screen.set_scrollback(0);
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        for line in lines {
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_what_a_person_sees() {
        let mut s = Screen::new(TermSize::new(20, 5), 100);
        s.process(b"working 10%\rworking 100%\r\ndone");
        let snap = s.snapshot();
        assert_eq!(snap.text, "working 100%\ndone");
        assert_eq!((snap.cursor_row, snap.cursor_col), (1, 4));
        assert_eq!((snap.cols, snap.rows), (20, 5));
    }

    #[test]
    fn keeps_scrollback() {
        let mut s = Screen::new(TermSize::new(20, 5), 100);
        for i in 0..12 {
            s.process(format!("line {i}\r\n").as_bytes());
        }
        assert!(!s.snapshot().text.contains("line 0"));
        let all = s.text_with_scrollback();
        let expected: String = (0..12)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n")
            + "\n";
        assert_eq!(all, expected);
    }

    #[test]
    fn resize_and_tiny_sizes_are_safe() {
        let mut s = Screen::new(TermSize { cols: 0, rows: 0 }, 0);
        s.process(b"\x1b[999;999Hx\x1b[2J\x1b[?1049h");
        s.resize(TermSize { cols: 1, rows: 1 });
        s.process(b"abc\r\ndef");
        assert!(s.snapshot().rows >= 2);
    }
}
