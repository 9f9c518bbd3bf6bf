//! The live view of `shellgate run` on a terminal: the newest lines of clean output in a window of at
//! most [`PREVIEW_LINES`] rows, under a status line with a spinner and the elapsed time. It is drawn on
//! stderr and redrawn in place; [`LiveView::clear`] erases it before the final preview is printed, so
//! nothing transient stays on screen.
//!
//! Every frame is written with autowrap off, so each line takes exactly one row whatever its width and
//! the cursor arithmetic of the next frame stays right.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::{Duration, Instant};

use shellgate::LiveText;

use crate::render::{PREVIEW_LINES, Style, cap_line};

/// Spinner frames on a UTF-8 terminal, and elsewhere.
const SPINNER_UTF8: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const SPINNER_ASCII: [&str; 4] = ["|", "/", "-", "\\"];

/// How often the view is redrawn (the spinner's pace).
pub const REDRAW_INTERVAL: Duration = Duration::from_millis(100);

/// Terminal size assumed when the terminal does not say.
const FALLBACK_SIZE: (usize, usize) = (80, 24);

/// The live window and status line, and what is on screen of them.
#[derive(Debug)]
pub struct LiveView {
    /// The newest complete lines.
    window: VecDeque<String>,
    /// A line still being written (no newline yet).
    partial: String,
    lines_seen: u64,
    skipped_bytes: u64,
    start: Instant,
    frame: usize,
    /// Rows the last frame took (0: nothing on screen); the cursor is on the last of them.
    drawn_rows: usize,
    spinner: &'static [&'static str],
    style: Style,
}

impl LiveView {
    /// A view started now, colours per `style`.
    pub fn new(style: Style) -> Self {
        Self {
            window: VecDeque::with_capacity(PREVIEW_LINES + 1),
            partial: String::new(),
            lines_seen: 0,
            skipped_bytes: 0,
            start: Instant::now(),
            frame: 0,
            drawn_rows: 0,
            spinner: if utf8_locale() {
                &SPINNER_UTF8
            } else {
                &SPINNER_ASCII
            },
            style,
        }
    }

    /// Take in newly printed text.
    pub fn push(&mut self, live: &LiveText) {
        self.skipped_bytes += live.skipped;
        let mut rest = live.text.as_str();
        while let Some(end) = rest.find('\n') {
            self.partial.push_str(&rest[..end]);
            self.window.push_back(std::mem::take(&mut self.partial));
            self.lines_seen += 1;
            if self.window.len() > PREVIEW_LINES {
                self.window.pop_front();
            }
            rest = &rest[end + 1..];
        }
        self.partial.push_str(rest);
    }

    /// The status line: spinner, elapsed time, lines so far.
    pub fn status_line(&self) -> String {
        let spin = self.spinner[self.frame % self.spinner.len()];
        let mut status = format!("running {}", elapsed_text(self.start.elapsed()));
        if self.lines_seen > 0 {
            let plural = if self.lines_seen == 1 { "" } else { "s" };
            let _ = write!(status, " · {} line{plural}", self.lines_seen);
        }
        if self.skipped_bytes > 0 {
            let _ = write!(status, " · {} bytes not shown live", self.skipped_bytes);
        }
        format!("{} {}", self.style.cyan(spin), self.style.dim(&status))
    }

    /// The escape sequences and text that replace what is on screen with the current frame.
    fn frame_bytes(&mut self, (columns, rows): (usize, usize)) -> String {
        let mut out = String::from("\x1b[?7l");
        self.erase_into(&mut out);
        // Leave the terminal's top row alone so the cursor can always climb back over the frame.
        let room = rows.saturating_sub(2).min(PREVIEW_LINES);
        let partial = (!self.partial.is_empty()).then_some(self.partial.as_str());
        let lines: Vec<&str> = self.window.iter().map(String::as_str).chain(partial).collect();
        let shown = &lines[lines.len().saturating_sub(room)..];
        let width = columns.saturating_sub(1).max(1);
        for line in shown {
            out.push_str(&cap_line(line, width));
            out.push_str("\r\n");
        }
        out.push_str(&self.status_line());
        out.push_str("\x1b[?7h");
        self.drawn_rows = shown.len() + 1;
        self.frame += 1;
        out
    }

    /// Move to the first row of the frame on screen and erase from there down.
    fn erase_into(&mut self, out: &mut String) {
        if self.drawn_rows > 1 {
            let _ = write!(out, "\x1b[{}A", self.drawn_rows - 1);
        }
        if self.drawn_rows > 0 {
            out.push_str("\r\x1b[J");
        }
        self.drawn_rows = 0;
    }

    /// Draw the current frame on stderr.
    pub fn draw(&mut self) {
        let bytes = self.frame_bytes(terminal_size());
        write_stderr(&bytes);
    }

    /// Erase the view from the screen.
    pub fn clear(&mut self) {
        let mut out = String::new();
        self.erase_into(&mut out);
        write_stderr(&out);
    }
}

fn write_stderr(bytes: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(bytes.as_bytes());
    let _ = stderr.flush();
}

/// `0.4s`, `12.0s`, `2m05s`.
pub fn elapsed_text(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    if secs < 60 {
        format!("{:.1}s", elapsed.as_secs_f64())
    } else {
        format!("{}m{:02}s", secs / 60, secs % 60)
    }
}

/// Columns and rows of the terminal on stderr.
fn terminal_size() -> (usize, usize) {
    match rustix::termios::tcgetwinsize(std::io::stderr()) {
        Ok(size) if size.ws_col > 0 && size.ws_row > 0 => {
            (usize::from(size.ws_col), usize::from(size.ws_row))
        }
        _ => FALLBACK_SIZE,
    }
}

/// Whether the locale promises UTF-8 (the first of `LC_ALL`, `LC_CTYPE`, `LANG` that is set).
fn utf8_locale() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> LiveText {
        LiveText {
            text: s.to_owned(),
            skipped: 0,
        }
    }

    #[test]
    fn the_window_keeps_the_newest_lines_and_the_partial_one() {
        let mut view = LiveView::new(Style::new(false));
        view.push(&text("a\nb"));
        view.push(&text("c\n"));
        assert_eq!(view.window, ["a", "bc"]);
        for i in 0..30 {
            view.push(&text(&format!("{i}\n")));
        }
        assert_eq!(view.window.len(), PREVIEW_LINES);
        assert_eq!(view.window.back().map(String::as_str), Some("29"));
        assert_eq!(view.lines_seen, 32);
        view.push(&text("half"));
        assert_eq!(view.partial, "half");
    }

    #[test]
    fn frames_climb_back_over_the_previous_frame_and_fit_the_terminal() {
        let mut view = LiveView::new(Style::new(false));
        let first = view.frame_bytes((80, 24));
        assert!(first.starts_with("\x1b[?7l") && first.ends_with("\x1b[?7h"));
        assert!(!first.contains("\x1b[J"), "nothing to erase yet: {first:?}");
        assert!(first.contains("running "), "{first:?}");
        view.push(&text("one\ntwo\nthree\n"));
        let second = view.frame_bytes((80, 24));
        assert!(
            second.starts_with("\x1b[?7l\r\x1b[J"),
            "one row to erase: {second:?}"
        );
        assert!(second.contains("one\r\ntwo\r\nthree\r\n"), "{second:?}");
        assert!(second.contains("3 lines"), "{second:?}");
        let third = view.frame_bytes((80, 24));
        assert!(third.starts_with("\x1b[?7l\x1b[3A\r\x1b[J"), "{third:?}");
        // A 4-row terminal leaves room for two lines and the status.
        let small = view.frame_bytes((80, 4));
        assert!(
            small.contains("two\r\nthree\r\n") && !small.contains("one"),
            "{small:?}"
        );
        assert_eq!(view.drawn_rows, 3);
        // Lines are cut to the width.
        view.push(&text(&format!("{}\n", "x".repeat(200))));
        let narrow = view.frame_bytes((10, 24));
        assert!(narrow.contains(&format!("{}…\r\n", "x".repeat(9))), "{narrow:?}");
        let mut erase = String::new();
        view.erase_into(&mut erase);
        assert_eq!(erase, "\x1b[4A\r\x1b[J");
        assert_eq!(view.drawn_rows, 0);
    }

    #[test]
    fn elapsed_time_reads_naturally() {
        assert_eq!(elapsed_text(Duration::from_millis(400)), "0.4s");
        assert_eq!(elapsed_text(Duration::from_millis(12_040)), "12.0s");
        assert_eq!(elapsed_text(Duration::from_secs(125)), "2m05s");
    }
}
