//! The line being written: terminal-style editing (carriage return, backspace, erase in line) and the
//! column cap.
//!
//! A line is held until its newline arrives because a later `\r` may overwrite it: a progress bar that
//! redraws itself ends as its final frame, exactly as a terminal would show it. The buffer never grows
//! past the cap, so memory stays bounded whatever the line length.

use std::collections::VecDeque;

use crate::utf8::{char_len, floor_char_boundary, is_continuation};

/// The current line: valid UTF-8, with a cursor on a character boundary (or `pad` blank columns past
/// the end, after a cursor move there). A line longer than the cap keeps its head (in `buf`) and its
/// tail (the last `cap / 2` bytes, in `tail`), and counts the bytes cut between them.
#[derive(Debug, Clone)]
pub(crate) struct LineEditor {
    buf: Vec<u8>,
    cursor: usize,
    /// Columns the cursor stands past the end of `buf` (blank cells a later write fills).
    pad: usize,
    cap: usize,
    /// Bytes cut from the middle of this line.
    dropped: u64,
    /// The end of a line that outgrew the cap.
    tail: VecDeque<u8>,
    /// Writes at the end go to `tail` (the cursor is at the end of an over-long line).
    in_tail: bool,
    /// Blanks came from erasing or cursor moves: a terminal shows no trailing blanks, so none are kept.
    edited: bool,
}

impl LineEditor {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            buf: Vec::new(),
            cursor: 0,
            pad: 0,
            cap,
            dropped: 0,
            tail: VecDeque::new(),
            in_tail: false,
            edited: false,
        }
    }

    /// Nothing written on this line yet: complete lines can bypass the buffer.
    pub(crate) fn is_fresh(&self) -> bool {
        self.buf.is_empty()
            && self.cursor == 0
            && self.pad == 0
            && self.dropped == 0
            && self.tail.is_empty()
            && !self.edited
    }

    /// Whether this line has lost bytes to the cap.
    pub(crate) fn is_capped(&self) -> bool {
        self.dropped > 0
    }

    fn tail_cap(&self) -> usize {
        self.cap / 2
    }

    /// Write text (valid UTF-8, no control characters, no newline) at the cursor.
    pub(crate) fn put(&mut self, text: &[u8]) {
        if text.is_empty() {
            return;
        }
        if self.pad > 0 {
            let pad = std::mem::take(&mut self.pad);
            self.append(&vec![b' '; pad]);
        }
        if self.in_tail || self.cursor == self.buf.len() {
            self.append(text);
        } else {
            self.overwrite(text);
        }
    }

    fn append(&mut self, text: &[u8]) {
        if self.in_tail {
            self.push_tail(text);
            return;
        }
        let room = self.cap.saturating_sub(self.buf.len());
        if text.len() <= room {
            self.buf.extend_from_slice(text);
            self.cursor = self.buf.len();
            return;
        }
        // The line outgrows the cap: keep its head, and from here on its tail.
        let head_cap = self.cap - self.tail_cap();
        let mut rest = text;
        if self.buf.len() > head_cap {
            let head = floor_char_boundary(&self.buf, head_cap);
            let moved: Vec<u8> = self.buf.drain(head..).collect();
            self.push_tail(&moved);
        } else {
            let cut = floor_char_boundary(text, head_cap - self.buf.len());
            self.buf.extend_from_slice(&text[..cut]);
            rest = &text[cut..];
        }
        self.cursor = self.buf.len();
        self.in_tail = true;
        self.push_tail(rest);
    }

    fn push_tail(&mut self, text: &[u8]) {
        let keep = self.tail_cap();
        if text.len() >= keep {
            self.dropped += (self.tail.len() + text.len() - keep) as u64;
            self.tail.clear();
            self.tail.extend(&text[text.len() - keep..]);
        } else {
            self.tail.extend(text);
            let over = self.tail.len().saturating_sub(keep);
            self.tail.drain(..over);
            self.dropped += over as u64;
        }
    }

    fn overwrite(&mut self, text: &[u8]) {
        let over = text.len().min(self.buf.len() - self.cursor);
        let target = &mut self.buf[self.cursor..self.cursor + over];
        if text[..over].is_ascii() && target.is_ascii() {
            target.copy_from_slice(&text[..over]);
            self.cursor += over;
            return self.put(&text[over..]);
        }
        let mut i = 0;
        while i < text.len() {
            if self.cursor == self.buf.len() {
                self.append(&text[i..]);
                return;
            }
            let new_len = char_len(text[i]);
            let old_len = char_len(self.buf[self.cursor]);
            let new = &text[i..i + new_len];
            if new_len == old_len {
                self.buf[self.cursor..self.cursor + new_len].copy_from_slice(new);
            } else {
                self.buf
                    .splice(self.cursor..self.cursor + old_len, new.iter().copied());
                if self.buf.len() > self.cap {
                    // A wider character pushed the end of the line past the cap.
                    let cut = floor_char_boundary(&self.buf, self.cap);
                    self.dropped += (self.buf.len() - cut) as u64;
                    self.buf.truncate(cut);
                }
            }
            self.cursor = (self.cursor + new_len).min(self.buf.len());
            i += new_len;
        }
    }

    /// `\r`: back to the start of the line; what follows overwrites.
    pub(crate) fn carriage_return(&mut self) {
        self.cursor = 0;
        self.pad = 0;
        self.in_tail = false;
    }

    /// Backspace: one character to the left (never past the start).
    pub(crate) fn backspace(&mut self) {
        if self.pad > 0 {
            self.pad -= 1;
            return;
        }
        self.in_tail = false;
        while self.cursor > 0 {
            self.cursor -= 1;
            if !is_continuation(self.buf[self.cursor]) {
                break;
            }
        }
    }

    /// The cursor's column (0-based, one column per character).
    pub(crate) fn column(&self) -> usize {
        char_count(&self.buf[..self.cursor]) + self.pad
    }

    /// Move the cursor to column `col` (0-based): onto a written character, or past the end of the
    /// line (the cells between stay blank).
    pub(crate) fn move_to_column(&mut self, col: usize) {
        self.edited = true;
        self.in_tail = false;
        let mut chars = 0;
        for (i, &b) in self.buf.iter().enumerate() {
            if is_continuation(b) {
                continue;
            }
            if chars == col {
                self.cursor = i;
                self.pad = 0;
                return;
            }
            chars += 1;
        }
        self.cursor = self.buf.len();
        self.pad = col - chars;
    }

    /// `CSI n K`: 0 erases from the cursor to the end, 1 blanks from the start through the cursor,
    /// 2 blanks the whole line (the cursor stays where it is).
    pub(crate) fn erase(&mut self, mode: u16) {
        self.edited = true;
        match mode {
            0 => {
                self.buf.truncate(self.cursor);
                self.forget_tail();
            }
            1 => {
                let end = if self.cursor < self.buf.len() {
                    self.cursor + char_len(self.buf[self.cursor])
                } else {
                    self.cursor
                };
                let before = char_count(&self.buf[..self.cursor]);
                let chars = char_count(&self.buf[..end]);
                self.buf.splice(..end, std::iter::repeat_n(b' ', chars));
                self.cursor = before;
                if self.pad > 0 {
                    self.forget_tail();
                }
            }
            2 => {
                let chars = char_count(&self.buf[..self.cursor]);
                self.buf.clear();
                self.buf.resize(chars, b' ');
                self.cursor = chars;
                self.forget_tail();
            }
            _ => {}
        }
        if self.buf.iter().all(|&b| b == b' ') && self.tail.is_empty() {
            // A cleared line shows none of what was cut from it.
            self.dropped = 0;
        }
    }

    fn forget_tail(&mut self) {
        self.tail.clear();
        self.in_tail = false;
        self.dropped = 0;
    }

    /// Take the finished line (head, cut marker and tail when bytes were cut, and `newline` if it
    /// ended with one) and start a new line. Returns whether the line had been capped.
    pub(crate) fn take(&mut self, newline: bool, out: &mut Vec<u8>) -> bool {
        out.clear();
        out.extend_from_slice(&self.buf);
        // The tail starts on a character boundary: a character cut in half counts as cut.
        while self.tail.front().is_some_and(|&b| is_continuation(b)) {
            self.tail.pop_front();
            self.dropped += 1;
        }
        let capped = self.dropped > 0;
        if capped {
            out.extend_from_slice(cap_marker(self.dropped).as_bytes());
        }
        let (a, b) = self.tail.as_slices();
        out.extend_from_slice(a);
        out.extend_from_slice(b);
        if self.edited {
            while out.last() == Some(&b' ') {
                out.pop();
            }
        }
        if newline {
            out.push(b'\n');
        }
        self.buf.clear();
        self.tail.clear();
        self.cursor = 0;
        self.pad = 0;
        self.dropped = 0;
        self.in_tail = false;
        self.edited = false;
        capped
    }

    /// Bytes cut from the current line so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// The marker between the head and the tail of a line that was cut at the column cap.
pub fn cap_marker(dropped: u64) -> String {
    format!(" … [line truncated: {dropped} bytes cut] … ")
}

fn char_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| !is_continuation(b)).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finish(line: &mut LineEditor) -> String {
        let mut out = Vec::new();
        line.take(false, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn carriage_return_overwrites_like_a_terminal() {
        let mut line = LineEditor::new(100);
        line.put(b"10%");
        line.carriage_return();
        line.put(b"100%");
        assert_eq!(finish(&mut line), "100%");
        line.put(b"abcdef");
        line.carriage_return();
        line.put(b"XY");
        assert_eq!(finish(&mut line), "XYcdef");
    }

    #[test]
    fn backspace_steps_over_whole_characters() {
        let mut line = LineEditor::new(100);
        line.put("a€".as_bytes());
        line.backspace();
        line.put(b"b");
        assert_eq!(finish(&mut line), "ab");
        line.backspace();
        line.put(b"x");
        assert_eq!(finish(&mut line), "x");
    }

    #[test]
    fn overwriting_with_wider_characters_keeps_utf8() {
        let mut line = LineEditor::new(100);
        line.put(b"abc");
        line.carriage_return();
        line.put("é😀".as_bytes());
        assert_eq!(finish(&mut line), "é😀c");
    }

    #[test]
    fn erase_modes() {
        let mut line = LineEditor::new(100);
        line.put(b"hello world");
        line.carriage_return();
        line.erase(2);
        line.put(b"hi");
        assert_eq!(finish(&mut line), "hi");
        line.put(b"hello");
        line.backspace();
        line.backspace();
        line.erase(0);
        assert_eq!(finish(&mut line), "hel");
        line.put(b"hello");
        line.backspace();
        line.backspace();
        line.erase(1);
        assert_eq!(finish(&mut line), "    o");
    }

    #[test]
    fn the_cap_cuts_on_a_character_boundary_and_marks_the_line() {
        let mut line = LineEditor::new(4);
        line.put("ab€".as_bytes());
        line.put(b"zz");
        assert!(line.is_capped());
        assert_eq!(finish(&mut line), format!("ab{}zz", cap_marker(3)));
        assert!(line.is_fresh());
    }
}
