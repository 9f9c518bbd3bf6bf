//! Terminal sizes and their limits.

use serde::{Deserialize, Serialize};

/// Narrowest and widest terminal accepted.
pub const COLS_RANGE: (u16, u16) = (20, 400);
/// Shortest and tallest terminal accepted.
pub const ROWS_RANGE: (u16, u16) = (5, 200);

/// A terminal size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermSize {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
}

impl Default for TermSize {
    /// 120×40.
    fn default() -> Self {
        Self { cols: 120, rows: 40 }
    }
}

impl TermSize {
    /// A size clamped to cols 20–400 and rows 5–200.
    pub fn new(cols: u16, rows: u16) -> Self {
        Self {
            cols: cols.clamp(COLS_RANGE.0, COLS_RANGE.1),
            rows: rows.clamp(ROWS_RANGE.0, ROWS_RANGE.1),
        }
    }

    /// This size clamped to the accepted ranges.
    #[must_use]
    pub fn clamped(self) -> Self {
        Self::new(self.cols, self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps() {
        assert_eq!(TermSize::default(), TermSize { cols: 120, rows: 40 });
        assert_eq!(TermSize::new(0, 0), TermSize { cols: 20, rows: 5 });
        assert_eq!(TermSize::new(1000, 1000), TermSize { cols: 400, rows: 200 });
        assert_eq!(TermSize::new(80, 24), TermSize { cols: 80, rows: 24 });
        assert_eq!(
            TermSize { cols: 19, rows: 201 }.clamped(),
            TermSize { cols: 20, rows: 200 }
        );
    }
}
