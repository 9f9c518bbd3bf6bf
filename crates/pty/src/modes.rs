//! A streaming scanner over a program's terminal output that tracks the input modes it sets
//! (application cursor/keypad, bracketed paste) and spots the queries it expects answered
//! (cursor position `ESC[6n`, device attributes `ESC[c`). State carries across chunks, so sequences
//! split between reads are still seen.

use crate::keys::KeyModes;

/// Longest CSI parameter string kept; longer sequences are ignored.
const MAX_PARAMS: usize = 32;

/// A query in the output that the terminal must answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalQuery {
    /// `ESC[6n` / `ESC[?6n`: report the cursor position (`ESC[<row>;<col>R`).
    CursorPosition,
    /// `ESC[c` / `ESC[0c`: primary device attributes.
    DeviceAttributes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Ground,
    Escape,
    Csi,
    /// Inside an OSC/DCS/APC/PM/SOS string, until BEL or ST.
    String,
    /// Saw ESC inside a string (maybe the start of ST).
    StringEscape,
}

/// Tracks terminal modes from output bytes.
#[derive(Debug, Clone, Default)]
pub struct ModeTracker {
    modes: KeyModes,
    state: State,
    params: Vec<u8>,
    overflow: bool,
}

impl ModeTracker {
    /// A tracker in the power-on state (all modes off).
    pub fn new() -> Self {
        Self::default()
    }

    /// The modes as of the bytes scanned so far.
    pub fn modes(&self) -> KeyModes {
        self.modes
    }

    /// Scan `chunk`; `on_query(end, query)` is called for each complete query, where `end` is the
    /// offset in `chunk` just past its final byte.
    pub fn scan(&mut self, chunk: &[u8], mut on_query: impl FnMut(usize, TerminalQuery)) {
        let mut i = 0;
        while i < chunk.len() {
            if self.state == State::Ground {
                // Fast path: skip to the next ESC.
                match memchr_esc(&chunk[i..]) {
                    Some(p) => {
                        i += p + 1;
                        self.state = State::Escape;
                        continue;
                    }
                    None => return,
                }
            }
            let b = chunk[i];
            i += 1;
            match self.state {
                State::Ground => unreachable!("handled above"),
                State::Escape => match b {
                    b'[' => {
                        self.state = State::Csi;
                        self.params.clear();
                        self.overflow = false;
                    }
                    b']' | b'P' | b'_' | b'^' | b'X' => self.state = State::String,
                    b'=' => {
                        self.modes.application_keypad = true;
                        self.state = State::Ground;
                    }
                    b'>' => {
                        self.modes.application_keypad = false;
                        self.state = State::Ground;
                    }
                    b'c' => {
                        self.modes = KeyModes::default();
                        self.state = State::Ground;
                    }
                    0x1b => {}
                    _ => self.state = State::Ground,
                },
                State::Csi => {
                    if (0x40..=0x7e).contains(&b) {
                        self.state = State::Ground;
                        if !self.overflow
                            && let Some(query) = self.finish_csi(b)
                        {
                            on_query(i, query);
                        }
                    } else if b == 0x1b {
                        self.state = State::Escape;
                    } else if b == 0x18 || b == 0x1a {
                        // CAN / SUB abort the sequence.
                        self.state = State::Ground;
                    } else if self.params.len() < MAX_PARAMS {
                        self.params.push(b);
                    } else {
                        self.overflow = true;
                    }
                }
                State::String => match b {
                    0x07 | 0x18 | 0x1a => self.state = State::Ground,
                    0x1b => self.state = State::StringEscape,
                    _ => {}
                },
                State::StringEscape => {
                    self.state = if b == b'\\' { State::Ground } else { State::String };
                }
            }
        }
    }

    fn finish_csi(&mut self, fin: u8) -> Option<TerminalQuery> {
        let params = self.params.as_slice();
        match fin {
            b'h' | b'l' => {
                let on = fin == b'h';
                let private = params.strip_prefix(b"?")?;
                for p in private.split(|b| *b == b';') {
                    match p {
                        b"1" => self.modes.application_cursor = on,
                        b"66" => self.modes.application_keypad = on,
                        b"2004" => self.modes.bracketed_paste = on,
                        _ => {}
                    }
                }
                None
            }
            b'n' if params == b"6" || params == b"?6" => Some(TerminalQuery::CursorPosition),
            b'c' if params.is_empty() || params == b"0" => Some(TerminalQuery::DeviceAttributes),
            _ => None,
        }
    }
}

fn memchr_esc(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(0x1b, bytes)
}

/// The answer to a cursor position query: `ESC[<row>;<col>R`, 1-based.
pub fn cursor_position_report(row: u16, col: u16) -> Vec<u8> {
    format!("\x1b[{};{}R", u32::from(row) + 1, u32::from(col) + 1).into_bytes()
}

/// The answer to a primary device attributes query: a VT102-class terminal.
pub const DEVICE_ATTRIBUTES_REPORT: &[u8] = b"\x1b[?6c";

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(chunks: &[&[u8]]) -> (KeyModes, Vec<(usize, usize, TerminalQuery)>) {
        let mut t = ModeTracker::new();
        let mut queries = Vec::new();
        for (n, chunk) in chunks.iter().enumerate() {
            t.scan(chunk, |end, q| queries.push((n, end, q)));
        }
        (t.modes(), queries)
    }

    #[test]
    fn tracks_application_cursor_and_last_wins() {
        assert!(scan_all(&[b"\x1b[?1h"]).0.application_cursor);
        assert!(!scan_all(&[b"\x1b[?1h..\x1b[?1l"]).0.application_cursor);
        assert!(scan_all(&[b"\x1b[?1", b"h"]).0.application_cursor);
        assert!(scan_all(&[b"\x1b", b"[", b"?", b"1", b"h"]).0.application_cursor);
        // Non-private `ESC[1h` is a different mode.
        assert!(!scan_all(&[b"\x1b[1h"]).0.application_cursor);
    }

    #[test]
    fn tracks_bracketed_paste_and_keypad() {
        let (m, _) = scan_all(&[b"\x1b[?1049h\x1b[?1;2004h\x1b="]);
        assert!(m.bracketed_paste && m.application_cursor && m.application_keypad);
        let (m, _) = scan_all(&[b"\x1b[?2004h\x1b>\x1b[?2004l"]);
        assert!(!m.bracketed_paste && !m.application_keypad);
        let (m, _) = scan_all(&[b"\x1b[?2004h\x1b[?1h\x1bc"]);
        assert_eq!(m, KeyModes::default());
    }

    #[test]
    fn finds_queries_with_offsets_even_when_split() {
        let (_, q) = scan_all(&[b"abc\x1b[6ndef"]);
        assert_eq!(q, vec![(0, 7, TerminalQuery::CursorPosition)]);
        let (_, q) = scan_all(&[b"ab\x1b[", b"6", b"nx\x1b[?6n"]);
        assert_eq!(
            q,
            vec![
                (2, 1, TerminalQuery::CursorPosition),
                (2, 7, TerminalQuery::CursorPosition)
            ]
        );
        let (_, q) = scan_all(&[b"\x1b[c\x1b[0c\x1b[>c"]);
        assert_eq!(
            q,
            vec![
                (0, 3, TerminalQuery::DeviceAttributes),
                (0, 7, TerminalQuery::DeviceAttributes)
            ]
        );
        let (_, q) = scan_all(&[b"\x1b[5n\x1b[16n"]);
        assert!(q.is_empty());
    }

    #[test]
    fn strings_hide_their_contents() {
        let (m, q) = scan_all(&[b"\x1b]0;\x1b[6n title\x07\x1b]2;x\x1b\\\x1b[6n"]);
        assert_eq!(q.len(), 1);
        assert!(!m.application_cursor);
    }

    #[test]
    fn overlong_and_aborted_sequences_are_ignored() {
        let long = [b"\x1b[".as_slice(), &[b'1'; 100], b"6n"].concat();
        assert!(scan_all(&[&long]).1.is_empty());
        assert!(scan_all(&[b"\x1b[6\x18n"]).1.is_empty());
        let (_, q) = scan_all(&[b"\x1b[6\x1b[6n"]);
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn reports() {
        assert_eq!(cursor_position_report(0, 0), b"\x1b[1;1R");
        assert_eq!(cursor_position_report(11, 33), b"\x1b[12;34R");
        assert_eq!(cursor_position_report(u16::MAX, 0), b"\x1b[65536;1R");
    }
}
